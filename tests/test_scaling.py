"""Scaling strategies, TP vs DP and EP vs TP against hand-worked numbers and the physics."""

from __future__ import annotations

import math

import pytest

from accelscope.engine.catalog.synthetic import dense_1t, moe_1t
from accelscope.engine.core.scenario import Workload
from accelscope.engine.physics.engine import Engine
from accelscope.engine.studies.claims import claims_check
from accelscope.engine.studies.parallelism import ep_tp_table, ep_vs_tp, tp_dp_grid, tp_dp_table
from accelscope.engine.studies.scaling import compare_strategies, scaling_table


@pytest.fixture(scope="module")
def engine():
    return Engine().with_models(dense_1t(), moe_1t())


@pytest.fixture(scope="module")
def dense_1t_h100(engine):
    return compare_strategies(engine, dense_1t().id, "h100-sxm", Workload(batch=8))


def test_1t_dense_bf16_needs_at_least_its_weights_over_usable_memory(engine, dense_1t_h100):
    # 2e12 bytes of BF16 weights over 80e9 · 0.9 usable bytes per device: at least 27.8
    # devices, so 32 as a power of two, for every strategy that splits the weights.
    lower_bound = 2e12 / (80e9 * 0.9)
    for name in ("tp", "pp", "tp-pp"):
        entry = dense_1t_h100.strategy(name)
        assert entry.found and entry.fits
        assert entry.devices >= lower_bound
        assert entry.devices == 32


def test_dense_strategies_have_no_routing_spread(dense_1t_h100):
    assert "ep" not in dense_1t_h100.names and "ep-tp" not in dense_1t_h100.names
    tp = dense_1t_h100.strategy("tp")
    assert not tp.spread.modelled
    assert tp.spread.p50_s == tp.spread.p99_s == tp.itl_s
    assert tp.spread.coefficient_of_variation == 0.0
    assert tp.parameter_to_compute == 1.0


def test_1t_dense_does_not_fit_one_h100_even_with_its_host_memory(dense_1t_h100):
    offload = dense_1t_h100.strategy("offload")
    assert not offload.found and offload.devices == 1  # 2 TB of weights, 250 GB of host memory


def test_tp2_halves_the_weights_per_device(engine):
    comparison = compare_strategies(engine, "llama-3.3-70b", "h100-sxm", Workload(batch=16))
    tp = comparison.strategy("tp")
    assert tp.scenario.tp == 2  # 141 GB of BF16 weights: more than one 80 GB device holds
    one_device = engine.predict(tp.scenario.with_changes(tp=1))
    # Everything but the norms (0.01% of the weights) is split.
    assert tp.result.memory.weights_bytes == pytest.approx(one_device.memory.weights_bytes / 2, rel=1e-4)


def test_parameter_to_compute_of_mixtral(engine):
    comparison = compare_strategies(engine, "mixtral-8x7b", "h100-sxm", Workload(batch=16))
    model = engine.model("mixtral-8x7b")
    for entry in comparison.strategies:
        assert entry.parameter_to_compute == model.total_params / model.active_params
    # Its model card: 46.7B total, 12.9B active per token.
    assert comparison.strategy("ep").parameter_to_compute == pytest.approx(46.7 / 12.9, rel=0.01)


def test_moe_strategies_have_a_routing_spread(engine):
    comparison = compare_strategies(engine, moe_1t().id, "b200", Workload(batch=64, weight_precision="fp8"))
    for name in ("tp", "ep", "ep-tp"):
        entry = comparison.strategy(name)
        assert entry.found
        assert entry.spread.modelled
        assert entry.spread.p99_s > entry.spread.p50_s > 0.0
        assert entry.spread.coefficient_of_variation > 0.0
    # Both split every expert's weights over the same devices: equal devices to fit.
    assert comparison.strategy("ep").devices == comparison.strategy("tp").devices


def test_comparison_is_deterministic(engine):
    first = compare_strategies(engine, "deepseek-r1", "b200", Workload(batch=32, weight_precision="fp8"))
    again = compare_strategies(engine, "deepseek-r1", "b200", Workload(batch=32, weight_precision="fp8"))
    for a, b in zip(first.strategies, again.strategies, strict=True):
        assert a.spread == b.spread and a.result == b.result


def test_pipeline_idle_share_when_the_batch_is_smaller_than_the_stages(engine):
    comparison = compare_strategies(engine, dense_1t().id, "h100-sxm", Workload(batch=4))
    pp = comparison.strategy("pp")
    assert pp.scenario.pp == 32
    assert pp.pipeline_idle_fraction == pytest.approx(1.0 - 4 / 32)


def test_ep_vs_tp_gap_follows_the_physics(engine):
    comparison = ep_vs_tp(engine, "mixtral-8x7b", "h100-sxm", 4, (1, 256))
    one, large = comparison.points
    # Batch 1: two of eight experts. TP reads a quarter of each on every device; under EP
    # the busiest device holds two whole experts and is routed about 1.14 of them, reading
    # more expert weight, so TP wins.
    assert one.expert_weight_bytes_read_ep > one.expert_weight_bytes_read_tp
    assert one.tp_over_ep_throughput > 1.0
    # Batch 256: every expert is touched either way, the expert reads are equal, and EP's
    # all-to-alls send more than TP's all-reduces and take longer.
    assert large.expert_weight_bytes_read_ep == pytest.approx(large.expert_weight_bytes_read_tp, rel=1e-6)
    assert large.all_reduce_bytes_ep + large.all_to_all_bytes_ep > large.all_reduce_bytes_tp
    assert large.ep.decode.communication_time_s > large.tp.decode.communication_time_s
    # The gap is largest where EP's expert reads differ: at batch 1.
    assert one.tp_over_ep_throughput > large.tp_over_ep_throughput
    assert one.experts_per_device_ep == 2 and one.experts_per_device_tp == 8


def test_ep_vs_tp_imbalance_engine_against_simulation(engine):
    comparison = ep_vs_tp(engine, "qwen3-235b-a22b", "h100-sxm", 4, (64,), Workload(weight_precision="fp8"))
    point = comparison.points[0]
    assert point.imbalance_simulated == pytest.approx(point.imbalance_engine, rel=0.05)


def test_tp_beats_dp_where_the_paper_says(engine):
    # Brunetta et al., Sec. IV-B: on 4 H100s Llama 3.3 70B prefers TP 4 over TP 2, and
    # Qwen3 32B scales better with TP 2, because the more replicated layouts lack memory.
    grid = tp_dp_grid(engine, ["qwen3-32b", "llama-3.3-70b"], "h100-sxm", 4, Workload(input_len=350, output_len=190))
    assert grid.cell("llama-3.3-70b", 1).memory_limit == "weights do not fit"
    assert grid.cell("llama-3.3-70b", 4).tp_beats_dp and grid.cell("llama-3.3-70b", 4).because_of_memory
    assert grid.cell("qwen3-32b", 2).tp_beats_dp and grid.cell("qwen3-32b", 2).because_of_memory
    assert "waves" in grid.cell("qwen3-32b", 1).memory_limit
    for cell in grid.cells:
        assert cell.batch_per_replica == 128 * cell.tp


def _check_table(table):
    assert table.rows
    for column, header in enumerate(table.headers):
        values = [row[column] for row in table.rows]
        numbers = [v for v in values if isinstance(v, float)]
        for value in numbers:
            assert math.isfinite(value), (table.view, header, value)
        if numbers:
            assert "[" in header and header.endswith("]"), (table.view, header)
    for row in table.rows:
        assert len(row) == len(table.headers)


def test_tables_have_units_and_finite_values(engine, dense_1t_h100):
    _check_table(scaling_table(dense_1t_h100))
    _check_table(scaling_table(compare_strategies(engine, "mixtral-8x22b", "mi300x", Workload(batch=32))))
    _check_table(tp_dp_table(tp_dp_grid(engine, ["llama-3.1-8b", "llama-3.3-70b"], "a100-80gb", 4)))
    _check_table(ep_tp_table(ep_vs_tp(engine, "llama-4-scout-17b-16e", "h100-sxm", 4, (1, 16, 128))))
    csv_text = scaling_table(dense_1t_h100).to_csv()
    assert csv_text.splitlines()[0].startswith("strategy,description,tp,pp,ep")


def test_claims_put_numbers_beside_the_paper(engine):
    ratio, variance = claims_check(engine)
    model = moe_1t()
    assert ratio.claim_id == "s25-ep-parameter-to-compute-8.4x" and ratio.paper_value == 8.4
    assert ratio.computed_value == pytest.approx(model.total_params / model.active_params)
    assert variance.claim_id == "s25-ep-latency-variance-2.1x" and variance.paper_value == 2.1
    # EP adds the busiest device's share of routing to the distinct-expert spread TP has.
    assert math.isfinite(variance.computed_value) and variance.computed_value > 1.0
    assert "b200" in variance.setup


def test_bad_inputs_are_refused(engine):
    with pytest.raises(ValueError, match="is dense: expert parallelism needs"):
        ep_vs_tp(engine, "llama-3.1-8b", "h100-sxm")
    with pytest.raises(ValueError, match="device_budget must be a power of two"):
        tp_dp_grid(engine, ["llama-3.1-8b"], "h100-sxm", 6)
    with pytest.raises(ValueError, match="exceed the 8 routed experts"):
        ep_vs_tp(engine, "mixtral-8x7b", "h100-sxm", 16)
    with pytest.raises(ValueError, match="hybrid_max_offload must be a fraction"):
        compare_strategies(engine, "llama-3.1-8b", "h100-sxm", hybrid_max_offload=2.0)
