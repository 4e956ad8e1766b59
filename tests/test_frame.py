"""The app's frame: one kernel call gives the scenario and the batch sweep on every shown
accelerator, equal to evaluating each scenario alone."""

from __future__ import annotations

import numpy as np
import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.workspace import Workspace
from accelscope.engine.physics.frame import SWEEP_BATCHES, compute_frame
from accelscope.engine.physics.results import N_OUTPUT_ROWS


def test_frame_matches_single_evaluations(engine):
    workspace = Workspace(Scenario("qwen3-32b", "h100-sxm", batch=16), shown=("h100-sxm", "mi300x", "wse-3"))
    frame = compute_frame(engine, workspace)
    assert frame.current.shape == (N_OUTPUT_ROWS, 3)
    assert frame.sweep.shape == (N_OUTPUT_ROWS, 3, len(SWEEP_BATCHES))
    for accelerator in workspace.shown:
        alone = engine.predict(workspace.scenario_on(accelerator))
        assert frame.output(accelerator).itl_s == pytest.approx(alone.itl_s, rel=1e-12)
        assert frame.result(accelerator).memory.max_batch == alone.memory.max_batch
        at_64 = engine.predict(workspace.scenario_on(accelerator).with_changes(batch=64))
        column = list(SWEEP_BATCHES).index(64)
        assert frame.sweep_output(accelerator).throughput_output_tok_s[column] == pytest.approx(
            at_64.throughput_output_tok_s, rel=1e-12
        )
        assert frame.roofline(accelerator).ridge_point == pytest.approx(alone.ridge_point, rel=1e-12)


def test_sweep_covers_batch_1_to_1024():
    assert SWEEP_BATCHES[0] == 1 and SWEEP_BATCHES[-1] == 1024
    assert np.all(np.diff(SWEEP_BATCHES) > 0)
    assert {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024} <= set(SWEEP_BATCHES.tolist())


def test_empty_selection_gives_empty_arrays(engine):
    frame = compute_frame(engine, Workspace(Scenario("llama-3.1-8b", "h100-sxm"), shown=()))
    assert frame.current.shape == (N_OUTPUT_ROWS, 0)


def test_sram_machines_roofline_on_their_sram(engine):
    """WSE-3 keeps the model in on-wafer SRAM: its main slope is the SRAM, not MemoryX."""
    frame = compute_frame(engine, Workspace(Scenario("llama-3.1-8b", "wse-3"), shown=("wse-3", "groq-lpu")))
    for accelerator in frame.accelerators:
        assert frame.roofline(accelerator).main_slope.level == "on-chip"
        assert frame.roofline(accelerator).ridge_point == pytest.approx(frame.result(accelerator).ridge_point)


def test_evaluate_batches_equals_one_scenario_per_batch(engine):
    scenario = engine.resolve(Scenario("mixtral-8x22b", "mi300x", input_len=4096, output_len=512, tp=4, ep=4,
                                       weight_precision="fp8", kv_offload=0.25))
    batches = np.array([1, 3, 17, 250, 1024], dtype=np.int64)
    together = engine.evaluate_batches(scenario, batches)
    one_by_one = engine.evaluate([scenario.with_changes(batch=int(b)) for b in batches])
    np.testing.assert_array_equal(together, one_by_one)
