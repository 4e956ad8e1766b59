"""The analysis tabs' studies as functions of a Workspace: each reads only the inputs it
declares (its tab recomputes on nothing else), and their tables are the analysis CSVs."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.core.workspace import ANALYSIS_VIEWS, VIEW_OPTION_DEFAULTS, Workspace
from accelscope.engine.studies.analysis import (
    ANALYSIS_STUDIES,
    SCENARIO_FIELDS,
    WORKSPACE_INPUTS,
    analysis_tables,
    study_inputs,
)

BASE = Workspace(
    Scenario("mixtral-8x7b", "h100-sxm", batch=16, input_len=512, output_len=128, tp=2),
    shown=("h100-sxm", "mi300x"),
    view="scaling",
    serving=ServingSpec(requests=200, rate_rps=4.0),
)
# Another value for every Scenario field and view option, each valid on its own beside BASE.
OTHER: dict[str, object] = {
    "model": "llama-3.1-8b",
    "accelerator": "mi300x",
    "batch": 48,
    "input_len": 700,
    "output_len": 99,
    "weight_precision": "fp8",
    "activation_precision": "fp8",
    "kv_precision": "fp8",
    "tp": 4,
    "pp": 2,
    "ep": 2,
    "dp": 2,
    "offload": 0.1,
    "kv_offload": 0.2,
    "routing_skew": 1.5,
    "device_budget": 8,
    "far_tier": "cxl3-x16",
    "shown": ("b200",),
    "serving": ServingSpec(requests=150, rate_rps=2.0),
}
# What a study computes in, not what it computes.
WALL_TIMES = {"compute_seconds", "elapsed_s"}


def changed(name: str) -> Workspace:
    if name in SCENARIO_FIELDS:
        return BASE.with_scenario(**{name: OTHER[name]})
    if name in WORKSPACE_INPUTS:
        return BASE.with_changes(**{name: OTHER[name]})
    return BASE.with_options(**{name: OTHER[name]})


def assert_same(a: object, b: object, where: str = "result") -> None:
    """Equal values throughout (arrays element by element), wall times aside."""
    assert type(a) is type(b), where
    if dataclasses.is_dataclass(a):
        for field in dataclasses.fields(a):
            if field.compare and field.name not in WALL_TIMES:
                assert_same(getattr(a, field.name), getattr(b, field.name), f"{where}.{field.name}")
    elif isinstance(a, np.ndarray):
        assert a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    elif isinstance(a, tuple | list):
        assert len(a) == len(b), where
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            assert_same(x, y, f"{where}[{index}]")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, float) and np.isnan(a):
        assert np.isnan(b), where
    else:
        assert a == b, where


def test_every_analysis_view_has_a_study_declaring_only_fields_and_options():
    assert tuple(ANALYSIS_STUDIES) == ANALYSIS_VIEWS
    assert set(OTHER) == {*SCENARIO_FIELDS, *VIEW_OPTION_DEFAULTS, *WORKSPACE_INPUTS}
    for study in ANALYSIS_STUDIES.values():
        assert set(study.depends_on) <= set(OTHER), study.view
        assert len(set(study.depends_on)) == len(study.depends_on), study.view


@pytest.mark.parametrize("view", ANALYSIS_VIEWS)
def test_a_study_reads_no_input_it_does_not_declare(engine, view):
    """Evaluated on workspaces that differ from BASE in one undeclared field or option (or in
    what is shown and which tab), a study gives BASE's result exactly: its tab, which
    recomputes only when a declared input changes, can never show a stale study."""
    study = ANALYSIS_STUDIES[view]
    expected = study.run(engine, BASE)
    undeclared = [name for name in OTHER if name not in study.depends_on]
    variants = {name: changed(name) for name in undeclared}
    variants["view"] = BASE.with_changes(view="memory")
    for name, workspace in variants.items():
        assert study_inputs(study.depends_on, workspace) == study_inputs(study.depends_on, BASE), name
        assert_same(study.run(engine, workspace), expected, f"{view} with {name} changed")


@pytest.mark.parametrize("view", [v for v in ANALYSIS_VIEWS if ANALYSIS_STUDIES[v].depends_on])
def test_a_declared_input_is_one_the_study_reads(engine, view):
    """The other direction, loosely: a study's result changes with at least one of its inputs."""
    study = ANALYSIS_STUDIES[view]
    expected = study.run(engine, BASE)
    differs = []
    for name in study.depends_on:
        try:
            assert_same(study.run(engine, changed(name)), expected)
        except AssertionError:
            differs.append(name)
    assert differs, view


def test_the_analysis_tables_are_the_tabs_csvs(engine):
    tables = analysis_tables(engine, BASE)
    assert list(tables) == ["serving", "scaling", "tp_dp", "ep_tp", "regimes", "memory_tiers"]
    for name, table in tables.items():
        assert table.view == name and table.rows and all(len(row) == len(table.headers) for row in table.rows)
        assert table.to_csv().startswith(",".join(table.headers[:2]))
