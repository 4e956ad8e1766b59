"""The numba kernels equal the reference model to 1e-9 on randomly drawn scenarios, over
every catalog model and accelerator, including layouts that do not fit or do not divide."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics import kernels, layout
from accelscope.engine.physics.pack import pack_scenarios
from accelscope.engine.physics.results import OUTPUT_FIELDS, OUTPUT_ROW, result_from_column, result_to_column

from scenario_generator import random_scenario

RELATIVE = 1e-9


def _flatten(value: object, prefix: str = "") -> dict[str, object]:
    flat: dict[str, object] = {}
    for field in dataclasses.fields(value):
        if field.name == "scenario":
            continue
        item = getattr(value, field.name)
        if dataclasses.is_dataclass(item):
            flat.update(_flatten(item, f"{prefix}{field.name}."))
        else:
            flat[prefix + field.name] = item
    return flat


def assert_same(reference, kernel, scenario) -> None:
    expected, actual = _flatten(reference), _flatten(kernel)
    assert expected.keys() == actual.keys()
    for key, want in expected.items():
        got = actual[key]
        if isinstance(want, str | bool) or (isinstance(want, float) and math.isinf(want)):
            assert got == want, f"{key}: kernel {got!r} != reference {want!r} for {scenario}"
        else:
            scale = max(abs(want), abs(got), 1e-300)
            assert abs(want - got) <= RELATIVE * scale, f"{key}: kernel {got!r} != reference {want!r} for {scenario}"


def assert_finite_or_unpublished(out: np.ndarray) -> None:
    """Every output is finite, but the ridge point of a scenario whose compute peak is not
    published (a roofline without a roof): infinite, and never a scenario that fits."""
    finite = np.isfinite(out)
    roofless = np.isposinf(out[layout.O_RIDGE_POINT])
    finite[layout.O_RIDGE_POINT] |= roofless
    assert finite.all()
    assert not (out[layout.O_FITS][roofless] != 0).any()


def random_scenarios(engine, count: int, seed: int) -> list[Scenario]:
    rng = random.Random(seed)
    models = list(engine.catalog.models)
    moe = {model.id for model in engine.catalog.models.values() if model.moe}

    def ep(rng, values):
        if values["model"] in moe:
            return rng.choice([1, 1, 2, 4, values["tp"]])
        return rng.choice([1, 1, 1, 2])

    draws = {
        "batch": lambda rng, _: rng.choice([1, 2, 7, 64, 256, 1024, rng.randint(1, 100_000)]),
        "input_len": lambda rng, _: rng.choice([1, 128, 1000, 8192, 32768, 131072, rng.randint(1, 2_000_000)]),
        "output_len": lambda rng, _: rng.choice([1, 2, 256, 4096, rng.randint(1, 100_000)]),
        "tp": lambda rng, _: rng.choice([1, 1, 2, 3, 4, 8, 16, 64, 256]),
        "pp": lambda rng, _: rng.choice([1, 1, 2, 3, 4, 8, 200]),
        "ep": ep,
        "dp": lambda rng, _: rng.choice([1, 1, 4]),
        "offload": lambda rng, _: rng.choice([0.0, 0.0, 0.25, 0.9, 1.0]),
        "kv_offload": lambda rng, _: rng.choice([0.0, 0.0, 0.5, 1.0, rng.random()]),
    }
    return [random_scenario(rng, models, list(engine.catalog.accelerators), draws) for _ in range(count)]


def test_kernels_equal_reference_on_random_scenarios(engine):
    scenarios = random_scenarios(engine, 3000, seed=20261122)
    out = engine.evaluate(scenarios)
    assert_finite_or_unpublished(out)
    for column, scenario in enumerate(scenarios):
        reference = engine.reference(scenario)
        assert_same(reference, result_from_column(out, column, scenario), scenario)


def test_every_model_on_every_accelerator_answers_finitely(engine):
    """The issue's "done when": every pair answers with finite numbers or a reason."""
    for model in engine.catalog.models:
        for accelerator in engine.catalog.accelerators:
            result = engine.predict(Scenario(model, accelerator, batch=8))
            numbers = {k: v for k, v in _flatten(result).items() if isinstance(v, float | int)}
            if numbers["ridge_point"] == math.inf:  # no published peak for this format: no roof
                numbers.pop("ridge_point")
                assert not result.fits
            assert all(math.isfinite(v) for v in numbers.values()), (model, accelerator)
            assert result.itl_s > 0 and result.ttft_s > 0 and result.tokens_per_joule > 0
            if not result.fits:
                assert result.fit_reason and result.fit_reason != "fits"


def test_sweep_in_one_call_matches_single_calls(engine):
    """One kernel call over a batch sweep gives what separate calls give."""
    sweep = [Scenario("qwen3-32b", "mi300x", batch=b) for b in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)]
    together = engine.evaluate(sweep)
    for column, scenario in enumerate(sweep):
        alone = engine.evaluate([scenario])
        np.testing.assert_array_equal(together[:, column], alone[:, 0])


def test_kernels_with_jit_disabled_match(engine, tmp_path):
    """The kernel source run as plain Python (NUMBA_DISABLE_JIT=1) gives the same numbers."""
    scenarios = random_scenarios(engine, 40, seed=7)
    expected = engine.evaluate(scenarios)
    payload = tmp_path / "scenarios.json"
    payload.write_text(json.dumps([dataclasses.asdict(s) for s in scenarios]))
    code = (
        "import json, sys, numpy\n"
        "from accelscope.engine.physics.engine import Engine\n"
        "from accelscope.engine.core.scenario import Scenario\n"
        "scenarios = [Scenario(**item) for item in json.load(open(sys.argv[1]))]\n"
        "numpy.save(sys.argv[2], Engine().evaluate(scenarios))\n"
    )
    result_file = tmp_path / "out.npy"
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", code, str(payload), str(result_file)], check=True, env=environment)
    np.testing.assert_allclose(np.load(result_file), expected, rtol=RELATIVE, atol=0)


def test_table_rows_are_distinct_and_complete():
    for prefix, count in (("O_", layout.N_OUTPUT_ROWS), ("M_", layout.N_MODEL_ROWS), ("A_", layout.N_ACCEL_ROWS),
                          ("S_", layout.N_SCENARIO_ROWS), ("K_", layout.N_CONSTANTS), ("C_", layout.N_COST_ROWS)):
        rows = [value for name, value in vars(layout).items() if name.startswith(prefix) and isinstance(value, int)]
        assert sorted(rows) == list(range(count)), prefix


def test_output_rows_follow_the_result_fields():
    """One row per leaf field of Result, in order, named after it."""
    assert layout.O_TTFT_S == OUTPUT_ROW["ttft_s"]
    assert layout.O_PREFILL_FLOPS_PER_DEVICE == OUTPUT_ROW["prefill.flops_per_device"]
    assert layout.O_MEMORY_MAX_BATCH == OUTPUT_ROW["memory.max_batch"]
    assert len(OUTPUT_FIELDS) == layout.N_OUTPUT_ROWS == len(set(OUTPUT_FIELDS))


def test_the_kernel_writes_every_output_row(engine):
    """A row the kernel forgets stays NaN here (evaluate_table allocates without filling)."""
    scenarios = [engine.resolve(s) for s in random_scenarios(engine, 50, 7)]
    table = pack_scenarios(scenarios, engine.model_index, engine.accelerator_index)
    out = np.full((layout.N_OUTPUT_ROWS, len(scenarios)), np.nan)
    kernels.evaluate_many(table, engine._model_table, engine._accelerator_table, engine._peaks, engine._fallback,
                          engine._constant_vector, out, np.empty((layout.N_COST_ROWS, 0)))
    unwritten = [OUTPUT_FIELDS[row] for row in range(layout.N_OUTPUT_ROWS) if np.isnan(out[row]).all()]
    assert not unwritten


def test_a_result_round_trips_through_its_column(engine):
    result = engine.predict(Scenario("qwen3-235b-a22b", "h100-sxm", batch=8, tp=8, ep=8))
    assert result_from_column(result_to_column(result)[:, None], 0, result.scenario) == result


@pytest.mark.parametrize("seed", [1, 2])
def test_scenario_table_round_trip(engine, seed):
    """Packing keeps every scenario field where the kernel reads it."""
    from accelscope.engine.physics.pack import PRECISION_CODE

    scenarios = random_scenarios(engine, 20, seed)
    table = pack_scenarios(scenarios, engine.model_index, engine.accelerator_index)
    for column, s in enumerate(scenarios):
        assert table[layout.S_BATCH, column] == s.batch
        assert table[layout.S_P_KV, column] == PRECISION_CODE[s.kv_precision]
        assert table[layout.S_OFFLOAD, column] == s.offload
        assert table[layout.S_KV_OFFLOAD, column] == s.kv_offload
        assert table[layout.S_MODEL, column] == engine.model_index[s.model]
