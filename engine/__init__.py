"""The engine, for notebooks and scripts: scenarios in, typed results and named arrays out.

    from accelscope.engine import Engine, Scenario

    engine = Engine()
    result = engine.predict(Scenario("llama-3.1-8b", "h100-sxm", batch=64))
    result.itl_s, result.decode.bound, result.memory.max_batch

The names below are the public face; each is imported on first use (importing, say, only the
catalog does not load numba). Layers, bottom up: ``core`` (plain values), ``catalog`` (the
files), ``physics`` (the reference model and its numba twin), ``studies`` (questions that run the
engine many times), ``text`` and ``validation``.
"""

from __future__ import annotations

import importlib
from typing import Any

# Public name -> the module that defines it.
_PUBLIC: dict[str, str] = {
    "Engine": "accelscope.engine.physics.engine",
    "Scenario": "accelscope.engine.core.scenario",
    "Workload": "accelscope.engine.core.scenario",
    "Workspace": "accelscope.engine.core.workspace",
    "ServingSpec": "accelscope.engine.core.serving",
    "CostSettings": "accelscope.engine.core.cost",
    "Pricing": "accelscope.engine.core.cost",
    "Catalog": "accelscope.engine.catalog.catalog",
    "Result": "accelscope.engine.physics.results",
    "PhaseResult": "accelscope.engine.physics.results",
    "MemoryResult": "accelscope.engine.physics.results",
    "Outputs": "accelscope.engine.physics.results",
    "OUTPUT_FIELDS": "accelscope.engine.physics.results",
    "Frame": "accelscope.engine.physics.frame",
    "compute_frame": "accelscope.engine.physics.frame",
    "explain": "accelscope.engine.text.explain",
    "formula_sheet": "accelscope.engine.text.formulas",
    "AccelscopeError": "accelscope.engine.core.errors",
    "CatalogError": "accelscope.engine.core.errors",
    "ScenarioError": "accelscope.engine.core.errors",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'accelscope.engine' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
