"""The catalog: bundled accelerators, models and prices, plus the user's own files.

User files live in the platformdirs user data folder (``ACCELSCOPE_DATA_DIR`` points
elsewhere, which tests use): ``accelerators/*.toml`` and ``models/*.toml`` in the bundled
format, ``models/*.json`` Hugging Face configs, and ``prices.toml`` (their own prices, laid over
the bundled price book). A bad user file does not stop the rest from loading; its problem is
listed in ``Catalog.problems``.
"""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..core.accelerator import Accelerator
from ..core.errors import CatalogError, ScenarioError
from ..core.model import ModelArch
from ..core.prices import PriceBook
from .accelerators import load_accelerator_file, load_bundled_accelerators
from .folders import DATA_DIR_VARIABLE, user_data_dir
from .hf_config import load_hf_config
from .models import load_bundled_models, load_model_file
from .prices import bundled_price_book, load_price_book

__all__ = ["DATA_DIR_VARIABLE", "Catalog", "load_model_path", "user_data_dir"]


def load_model_path(path: Path) -> ModelArch:
    """A model from a file: a Hugging Face ``config.json`` or a catalog-format ``.toml``."""
    if path.suffix.lower() == ".toml":
        return load_model_file(path)
    return load_hf_config(path)


@dataclass
class Catalog:
    accelerators: dict[str, Accelerator]
    models: dict[str, ModelArch]
    problems: list[str] = field(default_factory=list)
    # A user file that could not be read, by kind and file stem -> its problem: an id asked for
    # and not found is then answered with the file's problem, not "unknown".
    unreadable: dict[tuple[str, str], str] = field(default_factory=dict, compare=False, repr=False)
    # Rental and purchase prices and the site's values (a catalog made by hand gets the bundled book).
    prices: PriceBook = field(default_factory=bundled_price_book)

    @classmethod
    def load(cls, user_dir: Path | None = None, include_user: bool = True) -> Catalog:
        catalog = cls(dict(load_bundled_accelerators()), dict(load_bundled_models()))
        if include_user:
            folder = user_dir or user_data_dir()
            catalog._load_user(folder)
            try:
                catalog.prices = load_price_book(user_dir=folder, accelerator_ids=catalog.accelerators)
            except CatalogError as error:  # the user's prices.toml: the bundled book is used without it
                catalog.problems.append(str(error))
        return catalog

    def _load_user(self, folder: Path) -> None:
        for path in sorted((folder / "accelerators").glob("*.toml")):
            try:
                accelerator = load_accelerator_file(path)
            except CatalogError as error:
                self.problems.append(str(error))
                self.unreadable["accelerator", path.stem] = str(error)
                continue
            self.accelerators[accelerator.id] = accelerator
        for path in sorted((folder / "models").glob("*")):
            if path.suffix.lower() not in (".toml", ".json"):
                continue
            try:
                model = load_model_path(path)
            except CatalogError as error:
                self.problems.append(str(error))
                self.unreadable["model", path.stem] = str(error)
                continue
            self.models[model.id] = model

    def accelerator(self, accelerator_id: str) -> Accelerator:
        try:
            return self.accelerators[accelerator_id]
        except KeyError:
            raise ScenarioError(self._unknown("accelerator", accelerator_id, self.accelerators)) from None

    def model(self, model_id_or_path: str) -> ModelArch:
        """A catalog model by id, or a model file (config.json or .toml) by path."""
        if model_id_or_path in self.models:
            return self.models[model_id_or_path]
        path = Path(model_id_or_path)
        try:
            exists = path.exists()
        except OSError:  # a name too long, or otherwise not a path the system can look up
            exists = False
        if path.suffix.lower() in (".json", ".toml") or os.sep in model_id_or_path or exists:
            if not exists:
                raise ScenarioError(f"model file not found: {_shown(model_id_or_path)}")
            return load_model_path(path)
        raise ScenarioError(self._unknown("model", model_id_or_path, self.models))

    def _unknown(self, kind: str, name: str, known: dict[str, object]) -> str:
        """Why ``name`` is not in the catalog: the problem of the user's file of that name, if it
        could not be read; else that it is unknown, with the closest ids."""
        problem = self.unreadable.get((kind, name))
        if problem is not None:
            return f"{kind} '{_shown(name)}' is not in the catalog because its file could not be read: {problem}"
        return _unknown(kind, name, known)


def _shown(text: str, limit: int = 120) -> str:
    """User input as one short line for a message: escaped, and cut when long."""
    shown = text if len(text) <= limit else text[:limit] + "…"
    return shown.encode("unicode_escape").decode("ascii")


def _unknown(kind: str, name: str, known: dict[str, object]) -> str:
    close = difflib.get_close_matches(name[:200], list(known), n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(known)}"
    return f"unknown {kind} '{_shown(name)}'{hint}"
