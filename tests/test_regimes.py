"""Regime fitness: scores normalised per regime, the layout rule, raw values equal to the
engine's own for the same scenario, and "does not fit" flagged with its reason."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from accelscope.engine.catalog.regimes import METRICS, load_regimes
from accelscope.engine.core.errors import CatalogError, ScenarioError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.studies.regimes import regime_scores, regimes_table, split_devices

PAPER_ACCELERATORS = ("b200", "tpu-v7", "mi300x", "gaudi3", "inferentia2", "wse-3", "groq-lpu")


@pytest.fixture(scope="module")
def definitions():
    return load_regimes()


@pytest.fixture(scope="module")
def grid(engine, definitions):
    return regime_scores(engine, definitions=definitions)


def test_every_regime_of_the_paper_is_defined_with_metric_unit_and_reason(definitions):
    names = [r.name for r in definitions.regimes]
    assert len(names) == 8 and "Long context processing" in names and "Embedding generation" in names
    for regime in definitions.regimes:
        assert regime.metric in METRICS and regime.unit and regime.reason and regime.metric_text
        assert regime.direction in ("lower", "higher")


def test_the_papers_grades_are_recorded_for_its_seven_accelerators(definitions):
    ratings = definitions.paper_ratings
    assert set(ratings) == set(PAPER_ACCELERATORS)
    for accelerator in PAPER_ACCELERATORS:
        assert set(ratings[accelerator]) == {r.id for r in definitions.regimes}
    assert ratings["b200"]["single_stream"] == "Very Good"
    assert ratings["groq-lpu"]["long_context"] == "Limited"
    assert ratings["inferentia2"]["multi_model"] == "Excellent"
    assert "Fig. 8" in definitions.paper_source


def test_grid_covers_every_accelerator_and_regime(engine, grid):
    assert grid.accelerators == tuple(engine.catalog.accelerators)
    shape = (len(grid.accelerators), len(grid.regimes))
    assert grid.scores.shape == grid.values.shape == grid.fits.shape == shape
    assert np.isfinite(grid.scores).all() and np.isfinite(grid.values).all()
    assert ((grid.scores >= 0.0) & (grid.scores <= 1.0)).all()
    assert grid.elapsed_s > 0.0


def test_the_best_of_each_regime_scores_one(grid):
    for r_index, regime in enumerate(grid.regimes):
        column, values = grid.scores[:, r_index], grid.values[:, r_index]
        running = column > 0.0
        assert running.any(), regime.id
        assert column.max() == 1.0
        best = grid.best(regime.id)
        best_value = grid.cell(best, regime.id).value
        if regime.direction == "higher":
            assert best_value == values[running].max()
        else:
            assert best_value == values[running].min()


def test_lower_is_better_scores_invert_the_raw_ratio(grid):
    """TTFT is lower-is-better: score = best TTFT / own TTFT, so two accelerators' scores
    stand in the inverse ratio of their TTFTs."""
    regime = next(r for r in grid.regimes if r.id == "single_stream")
    assert regime.direction == "lower" and regime.unit == "ms"
    h100, b200 = grid.cell("h100-sxm", "single_stream"), grid.cell("b200", "single_stream")
    assert h100.score / b200.score == pytest.approx(b200.value / h100.value, rel=1e-12)


def test_higher_is_better_scores_follow_the_raw_ratio(grid):
    h100, b200 = grid.cell("h100-sxm", "highly_quantized"), grid.cell("b200", "highly_quantized")
    assert h100.score / b200.score == pytest.approx(h100.value / b200.value, rel=1e-12)


def test_a_70b_model_that_does_not_fit_one_device_is_flagged(grid, engine):
    """Highly quantized: Llama-3.3-70B with INT4 weights on one device. Its linear layers
    alone are more than 65e9 parameters x 0.5 B = 32.5 GB; Inferentia2 has 0.9 x 32 GiB =
    30.9 GB usable, so it cannot hold them. An H100 (0.9 x 80 GiB = 77.3 GB) can."""
    model = engine.model("llama-3.3-70b")
    assert model.block_params_fixed * 0.5 > 0.9 * 32 * 2**30
    cell = grid.cell("inferentia2", "highly_quantized")
    assert not cell.fits and cell.score == 0.0 and cell.value == 0.0
    assert "does not fit on one device" in cell.reason and "weights" in cell.reason
    assert cell.paper_rating == "Very Good"  # the paper's grade stays beside the computed flag
    assert grid.cell("h100-sxm", "highly_quantized").fits


def test_raw_ttft_equals_the_engines_for_the_same_scenario(grid, engine):
    """Llama-2-70B in BF16 (~138 GB) does not fit one H100 (77.3 GB usable); two do, so the
    smallest layout is TP 2 and the value is that scenario's TTFT."""
    base = Scenario("llama-2-70b", "h100-sxm", batch=1, input_len=1024, output_len=256)
    assert not engine.predict(base).fits
    two = engine.predict(base.with_changes(tp=2))
    cell = grid.cell("h100-sxm", "single_stream")
    assert (cell.tp, cell.pp, cell.devices) == (2, 1, 2)
    assert cell.value == pytest.approx(two.ttft_s * 1e3, rel=1e-12)


def test_raw_quantized_decode_rate_equals_the_engines(grid, engine):
    result = engine.predict(
        Scenario("llama-3.3-70b", "h100-sxm", batch=1, input_len=1024, output_len=256, weight_precision="int4")
    )
    assert grid.cell("h100-sxm", "highly_quantized").value == pytest.approx(1.0 / result.itl_s, rel=1e-12)


def test_moderate_batch_takes_the_best_batch_within_the_itl_target(grid, engine, definitions):
    regime = next(r for r in definitions.regimes if r.id == "moderate_batch")
    cell = grid.cell("h100-sxm", "moderate_batch")
    assert cell.fits and cell.devices == 1 and cell.batch in regime.batches
    chosen = engine.predict(regime.scenario("h100-sxm", cell.batch))
    assert chosen.itl_s <= regime.itl_target_s and chosen.waves == 1
    assert cell.value == pytest.approx(chosen.throughput_output_tok_s / regime.output_len, rel=1e-12)
    # Every larger batch of the sweep either misses the target or runs in waves.
    for batch in regime.batches[regime.batches.index(cell.batch) + 1 :]:
        larger = engine.predict(regime.scenario("h100-sxm", batch))
        rate = larger.throughput_output_tok_s / regime.output_len
        assert larger.itl_s > regime.itl_target_s or larger.waves > 1 or rate <= cell.value


def test_models_resident_is_the_memory_quotient(grid, engine, definitions):
    """Copies of Llama-3.1-8B that fit one H100 with 8 sequences of 4,352 tokens each:
    weights 16.06 GB + KV 8 x 4352 x 131,072 B = 4.56 GB + workspace, in 77.3 - 1.5 GB."""
    regime = next(r for r in definitions.regimes if r.id == "multi_model")
    result = engine.predict(regime.scenario("h100-sxm", 8))
    assert result.memory.kv_cache_bytes == pytest.approx(8 * 4352 * 131_072, rel=1e-12)
    per_copy = result.memory.weights_bytes + result.memory.kv_cache_bytes + result.memory.activation_bytes
    copies = math.floor((result.memory.usable_bytes - result.memory.overhead_bytes) / per_copy)
    cell = grid.cell("h100-sxm", "multi_model")
    assert cell.value == copies == 3
    # Switch cost: 16.06 GB over the 64 GB/s PCIe Gen5 link at link efficiency 0.85.
    assert cell.switch_time_s == pytest.approx(result.memory.weights_bytes / (64e9 * 0.85), rel=1e-9)
    assert grid.cell("tpu-v7", "multi_model").switch_time_s is None  # no far tier in the catalog


def test_split_devices_keeps_tensor_parallelism_within_a_node():
    assert split_devices(1, 80, 8) == (1, 1)
    assert split_devices(4, 80, 8) == (4, 1)
    assert split_devices(128, 32, 8) == (8, 16)
    # 1,024 devices over 80 layers: at most 64 stages, so TP grows to 16.
    assert split_devices(1024, 80, 8) == (16, 64)


def test_a_subset_of_accelerators_is_scored_among_itself(engine, definitions):
    small = regime_scores(engine, ["h100-sxm", "a100-80gb"], definitions)
    assert small.accelerators == ("h100-sxm", "a100-80gb")
    assert small.scores.max(axis=0).tolist() == [1.0] * len(small.regimes)


def test_an_unknown_accelerator_is_refused_by_name(engine, definitions):
    with pytest.raises(ScenarioError, match="h100-sxn"):
        regime_scores(engine, ["h100-sxn"], definitions)


def test_regimes_table_has_units_in_headers_and_blank_values_where_it_does_not_fit(grid):
    table = regimes_table(grid)
    assert table.view == "regimes" and table.headers[0] == "accelerator"
    assert "single_stream: ttft [ms]" in table.headers
    assert "multi_model: switch_time [s]" in table.headers
    assert len(table.rows) == len(grid.accelerators)
    for header in table.headers:
        if ": score" in header or ": devices" in header:
            assert header.endswith("]")
    row = table.rows[grid.accelerators.index("inferentia2")]
    value_column = table.headers.index("highly_quantized: decode_tokens [tokens/s]")
    assert row[value_column] == ""
    assert "does not fit" in row[value_column + 4]
    assert table.to_csv().startswith("accelerator,single_stream: ttft [ms]")


def test_a_bad_regimes_file_names_the_field(tmp_path, definitions):
    from accelscope.engine.catalog.regimes import default_regimes_path

    text = Path(default_regimes_path()).read_text(encoding="utf-8")
    bad = tmp_path / "regimes.toml"
    bad.write_text(text.replace('direction = "lower"', 'direction = "sideways"', 1), encoding="utf-8")
    with pytest.raises(CatalogError, match=r"regime\[0\]\.direction"):
        load_regimes(bad)
    bad.write_text(text.replace('single_stream = "Very Good"', 'single_stream = "Superb"', 1), encoding="utf-8")
    with pytest.raises(CatalogError, match="Superb"):
        load_regimes(bad)
