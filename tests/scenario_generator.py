"""The tests' one scenario generator, made from ``fields.SCENARIO_FIELDS``: each field drawn by
its kind unless a test names its own choices for it, so that a new field is varied by every
kernel/reference, formula and property comparison without a test having to know of it."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from accelscope.engine.core.fields import SCENARIO_FIELDS
from accelscope.engine.core.precision import PRECISIONS
from accelscope.engine.core.scenario import Scenario

# A draw: the random source and the values drawn so far (ep depends on tp, say) -> a value.
Draw = Callable[[random.Random, dict[str, Any]], Any]


def _log_count(high: int) -> Draw:
    return lambda rng, _: int(math.exp(rng.uniform(0.0, math.log(high))))


# How a field of each kind is drawn when a test gives no choices for it.
KIND_DRAWS: dict[str, Draw] = {
    "count": _log_count(64),
    "precision": lambda rng, _: rng.choice(PRECISIONS),
    "fraction": lambda rng, _: rng.choice([0.0, 0.0, 1.0, round(rng.random(), 3)]),
}


def random_scenario(rng: random.Random, models, accelerators, draws: Mapping[str, Draw] = {}) -> Scenario:
    """One scenario: the model and accelerator from the lists given, each other field by
    ``draws[name]`` or its kind's draw, in the fields' order."""
    values: dict[str, Any] = {"model": rng.choice(models), "accelerator": rng.choice(accelerators)}
    for field in SCENARIO_FIELDS:
        if field.kind == "id":
            continue
        values[field.name] = draws.get(field.name, KIND_DRAWS[field.kind])(rng, values)
    return Scenario(**values)


# The same for hypothesis: each field's strategy by kind unless given.
KIND_STRATEGIES: dict[str, st.SearchStrategy] = {
    "count": st.integers(1, 64),
    "precision": st.sampled_from(PRECISIONS),
    "fraction": st.one_of(st.sampled_from((0.0, 1.0, 5e-324, 0.5)), st.floats(0.0, 1.0)),
}


@st.composite
def scenario_strategy(draw, models, accelerators, strategies: Mapping[str, Any] = {}) -> Scenario:
    """A hypothesis scenario: each field from ``strategies[name]`` (a strategy, or a function of
    the values drawn so far that returns one) or its kind's strategy."""
    values: dict[str, Any] = {"model": draw(st.sampled_from(models)), "accelerator": draw(st.sampled_from(accelerators))}
    for field in SCENARIO_FIELDS:
        if field.kind == "id":
            continue
        strategy = strategies.get(field.name, KIND_STRATEGIES[field.kind])
        if callable(strategy) and not isinstance(strategy, st.SearchStrategy):
            strategy = strategy(values)
        values[field.name] = draw(strategy)
    return Scenario(**values)
