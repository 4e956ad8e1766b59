"""The text layer reads the engine rather than restating it: it takes the engine's records (the
result, the trace, the crossover study's answer) and no physics function; and the crossover
study, which explain calls, answers the same whatever the batch it is given."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
from pathlib import Path

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.studies import crossover

TEXT = Path(importlib.import_module("accelscope.engine.text").__file__).parent


def imported_names(path: Path) -> list[tuple[str, str]]:
    """(module, name) of each ``from … import name`` of a module, relative imports resolved."""
    package = ".".join(("accelscope", *path.relative_to(TEXT.parent.parent).with_suffix("").parts[:-1]))
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module
            found.extend((module, alias.name) for alias in node.names)
    return found


@pytest.mark.parametrize("path", sorted(TEXT.rglob("*.py")), ids=lambda p: str(p.relative_to(TEXT)))
def test_the_text_takes_records_from_the_physics_and_no_function(path):
    """A function of the physics in the text would be its arithmetic done again; records (the
    result, the trace and their parts) and the Engine that gives them are what it may read."""
    for module, name in imported_names(path):
        if not module.startswith("accelscope.engine.physics"):
            continue
        value = getattr(importlib.import_module(module), name)
        allowed = inspect.isclass(value) or value is None
        if name == "ReferenceModel":
            allowed = path.name == "context.py" and path.parent == TEXT
        assert allowed, f"{path.relative_to(TEXT)} imports {module}.{name}"


def test_the_crossover_reads_every_scenario_field_but_the_batch_it_sweeps():
    assert set(crossover.DEPENDS_ON) == {f.name for f in dataclasses.fields(Scenario)} - {"batch"}


@pytest.mark.parametrize("accelerator", ["h100-sxm", "wse-3"])
def test_the_crossover_does_not_depend_on_the_batch(engine, accelerator):
    scenario = Scenario("llama-3.1-8b", accelerator, input_len=128, output_len=32)
    answers = set()
    for batch in (1, 7, 300):
        at = engine.resolve(scenario.with_changes(batch=batch))
        found = crossover.crossovers(engine, at, engine.predict(at))
        answers.add((found.whole_pass.batch, found.linear_layers.batch if found.linear_layers else None))
    assert len(answers) == 1


def test_the_marginal_times_of_a_sweep_are_per_sequence_and_per_step(engine):
    """Past the crossover search's last swept batches, one more sequence adds its own compute
    and KV-cache reads to a decode step (at the default context it never turns compute-bound)."""
    scenario = engine.resolve(Scenario("llama-3.1-8b", "h100-sxm"))
    found = crossover.crossovers(engine, scenario, engine.predict(scenario)).whole_pass
    assert found.batch is None
    marginal = found.marginal(scenario.pp)
    assert marginal is not None and 0 < marginal.compute_s < marginal.memory_s
    assert marginal.at_batch == found.batches[-1] <= found.limit
