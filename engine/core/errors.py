"""Errors the engine raises for bad input: each one names where the problem is."""

from __future__ import annotations


class AccelscopeError(Exception):
    """Base class for every input error the engine reports to a person."""


class CatalogError(AccelscopeError):
    """A catalog or config file is unreadable or has a bad field.

    The message always names the file and, where there is one, the field, so the person
    editing the file knows where to look: ``models/x.toml: architecture.n_layers: must be > 0``.
    """

    def __init__(self, path: object, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.field = field
        self.problem = problem
        where = f"{self.path}: {field}" if field else self.path
        super().__init__(f"{where}: {problem}")


class ScenarioError(AccelscopeError):
    """A scenario asks for something impossible (unknown id, layout that cannot exist)."""
