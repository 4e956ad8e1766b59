"""Heterogeneous memory: far-tier options, offload sweeps against hand-worked decode times,
the largest model that fits, and the first paper's 5-10x-at-15-30% claim.

Hand numbers (tests/test_reference_hand.py): Llama-3.1-8B BF16 on an H100 at batch 1, prompt
1,024, output 256 reads 15,009,849,344 B of weights and 151,126,016 B of KV cache per decode
step, 15,163,858,944 B in all; HBM3 3.35 TB/s x 0.85; 32 layers x 30 us of overhead and the
serving stack's host time, 1.0 ms + 25 us for the one sequence, per step.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from accelscope.engine.catalog.far_tiers import default_far_tiers_path, load_far_tiers
from accelscope.engine.core import codes
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.sourced import Sourced
from accelscope.engine.studies.claims import heterogeneous_claim_check
from accelscope.engine.studies.tiering import (
    engine_with_far_tier,
    far_bandwidth_share_needed,
    largest_fraction_within,
    slowdown_closed_form,
    sweep_offload,
)
from accelscope.engine.text.explain import explain

WEIGHT_BYTES = 15_009_849_344
KV_BYTES = 150_994_944 + 131_072
STEP_BYTES = 15_163_858_944
HBM = 3.35e12 * 0.85
OVERHEAD = 32 * 30e-6 + 1.0e-3 + 25e-6  # per-layer overhead and host time of one step
LLAMA_8B = Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=1024, output_len=256)


@pytest.fixture(scope="module")
def tiers():
    return load_far_tiers()


def test_every_far_tier_number_has_a_source(tiers):
    assert {"host-ddr5-pcie5", "grace-lpddr5x-c2c", "cxl2-expander-x16", "cxl3-x16", "nvme-gen4", "nvme-gen5"} <= set(
        tiers
    )
    for tier in tiers.values():
        for value in (tier.capacity_bytes, tier.bandwidth_Bps, tier.link_bandwidth_Bps):
            assert float(value) > 0 and value.source
    assert tiers["host-ddr5-pcie5"].effective_bandwidth_Bps == 64e9  # the PCIe link, not the DDR5
    assert tiers["nvme-gen4"].energy_J_per_byte is not None  # a kind efficiency.toml lacks


def test_a_bad_far_tier_file_names_the_field(tmp_path):
    text = Path(default_far_tiers_path()).read_text(encoding="utf-8")
    bad = tmp_path / "far_tiers.toml"
    bad.write_text(text.replace('source = "Samsung 990 PRO data sheet (2022)", note = "The 4 TB', 'note = "The 4 TB', 1))
    with pytest.raises(CatalogError, match=r"tier\[4\]\.capacity_bytes\.source"):
        load_far_tiers(bad)


def test_the_tier_replaces_the_devices_own(engine, tiers):
    tiered, tiered_id = engine_with_far_tier(engine, "h100-sxm", tiers["nvme-gen5"])
    far = [t for t in tiered.catalog.accelerator(tiered_id).memory if t.level == "far"]
    assert tiered_id == "h100-sxm+nvme-gen5" and len(far) == 1 and far[0].kind == "nvme"
    # A device without a far tier (TPU v7) gets one.
    _, tpu_id = engine_with_far_tier(engine, "tpu-v7", tiers["cxl2-expander-x16"])
    assert tpu_id == "tpu-v7+cxl2-expander-x16"


def test_nothing_offloaded_leaves_every_number_unchanged(engine, tiers):
    sweep = sweep_offload(engine, LLAMA_8B, tiers["host-ddr5-pcie5"])
    plain = engine.predict(LLAMA_8B)
    assert sweep.itl_s[0, 0] == sweep.baseline_itl_s == plain.itl_s
    assert sweep.throughput_output_tok_s[0, 0] == plain.throughput_output_tok_s
    assert sweep.itl_s[0, 0] == pytest.approx(STEP_BYTES / HBM + OVERHEAD, rel=1e-9)
    assert sweep.itl_slowdown[0, 0] == 1.0


def test_memory_bound_decode_slowdown_worked_by_hand(engine, tiers):
    """Decode time = near bytes / near bandwidth + far bytes / far bandwidth + overhead (the
    linear layers and attention are both memory-bound, so their times add up to this): moving
    f of the weights and v of the KV cache to PCIe Gen5 (64 GB/s x 0.85) adds
    (f·W + v·KV)·(1/(64e9·0.85) − 1/(3.35e12·0.85))."""
    tier = tiers["host-ddr5-pcie5"]
    sweep = sweep_offload(engine, LLAMA_8B, tier, weight_fractions=(0.0, 0.5, 0.8), kv_fractions=(0.0, 1.0))
    far = 64e9 * 0.85
    for i, f in enumerate((0.0, 0.5, 0.8)):
        for j, v in enumerate((0.0, 1.0)):
            moved = f * WEIGHT_BYTES + v * KV_BYTES
            expected = (STEP_BYTES - moved) / HBM + moved / far + OVERHEAD
            assert sweep.itl_s[i, j] == pytest.approx(expected, rel=1e-9), (f, v)
            assert sweep.fits[i, j]
    # 80% of the weights: 0.8·15.01 GB / 54.4 GB/s = 221 ms against 7.31 ms, ~31x.
    assert sweep.itl_slowdown[2, 0] == pytest.approx(
        ((STEP_BYTES - 0.8 * WEIGHT_BYTES) / HBM + 0.8 * WEIGHT_BYTES / far + OVERHEAD) / (STEP_BYTES / HBM + OVERHEAD),
        rel=1e-9,
    )
    assert 30.0 < sweep.itl_slowdown[2, 0] < 31.0
    assert sweep.bandwidth_ratio == pytest.approx(3.35e12 / 64e9, rel=1e-12)


@pytest.mark.parametrize("tier_id", ["host-ddr5-pcie5", "grace-lpddr5x-c2c", "cxl3-x16", "nvme-gen4"])
@pytest.mark.parametrize("batch", [1, 64])
def test_more_offload_is_never_faster_when_the_far_tier_is_slower(engine, tiers, tier_id, batch):
    sweep = sweep_offload(engine, LLAMA_8B.with_changes(batch=batch), tiers[tier_id])
    assert sweep.far_bandwidth_Bps < sweep.near_bandwidth_Bps
    assert sweep.fits.all()
    itl = sweep.itl_s
    assert (np.diff(itl, axis=0) >= -1e-12 * itl[1:, :]).all()  # more weights offloaded
    assert (np.diff(itl, axis=1) >= -1e-12 * itl[:, 1:]).all()  # more KV cache offloaded
    assert (sweep.itl_slowdown >= 1.0 - 1e-12).all()


def test_a_far_tier_too_small_is_flagged(engine, tiers):
    """A 10 GB tier (9 GB usable) cannot take 16.06 GB of weights, but takes half of them."""
    small = dataclasses.replace(tiers["cxl2-expander-x16"], capacity_bytes=Sourced(10e9, "test: a small tier"))
    sweep = sweep_offload(engine, LLAMA_8B, small, weight_fractions=(0.5, 1.0), kv_fractions=(0.0,))
    assert sweep.fits[0, 0]
    assert not sweep.fits[1, 0] and sweep.fit_codes[1, 0] == codes.FIT_FAR_TIER_TOO_SMALL
    assert "far memory tier" in sweep.fit_reason(1, 0)


def test_largest_model_adds_the_far_tiers_usable_capacity(engine, tiers):
    """Device memory alone: usable − runtime − workspace − KV cache is left for weights; the
    256 GB host tier adds its usable 0.9 x 256 GB = 230.4 GB."""
    sweep = sweep_offload(engine, LLAMA_8B, tiers["host-ddr5-pcie5"])
    memory = engine.predict(LLAMA_8B).memory
    device_only = memory.usable_bytes - memory.overhead_bytes - memory.activation_bytes - memory.kv_cache_bytes
    largest = sweep.largest
    assert largest.device_only_bytes == pytest.approx(device_only, rel=1e-12)
    assert largest.with_tier_bytes - largest.device_only_bytes == pytest.approx(230.4e9, rel=1e-12)
    assert largest.capacity_multiple == pytest.approx(largest.with_tier_bytes / device_only, rel=1e-12)
    # In parameters of Llama-3.1-8B's shape: bytes x (8.03e9 parameters / 16.06e9 bytes), about 37.8B alone.
    params_per_byte = engine.model("llama-3.1-8b").total_params / memory.weights_bytes
    assert largest.device_only_params == pytest.approx(device_only * params_per_byte, rel=1e-12)
    assert 37e9 < largest.device_only_params < 38.5e9


def test_kv_offload_appears_in_the_explanation(engine):
    decode = explain(engine, LLAMA_8B.with_changes(kv_offload=0.5)).section("Decode")
    assert any("of the KV cache (the 50% offloaded) stream from Host DDR5" in line for line in decode)
    memory = explain(engine, LLAMA_8B.with_changes(kv_offload=0.5)).section("Memory")
    assert any("50% of the KV cache" in line and "counts against device memory" in line for line in memory)


def test_closed_form_of_the_claim():
    """5x larger: f = 0.8. Slowdown (1 − f) + f·r ≤ 1.30 needs r ≤ 1.1/0.8 = 1.375, i.e. the far
    tier at ≥ 0.8/1.1 = 72.7% of device bandwidth; at 10x (f = 0.9), 0.9/1.2 = 75%."""
    assert slowdown_closed_form(0.8, 52.34375) == pytest.approx(0.2 + 0.8 * 52.34375)
    assert far_bandwidth_share_needed(0.8, 1.30) == pytest.approx(0.8 / 1.1)
    assert far_bandwidth_share_needed(0.9, 1.30) == pytest.approx(0.75)
    assert far_bandwidth_share_needed(0.8, 1.15) == pytest.approx(0.8 / 0.95)
    # PCIe Gen5 under an H100: r = 3.35e12 / 64e9 = 52.3, so 30% allows 0.3 / 51.3 = 0.58%.
    assert largest_fraction_within(1.30, 3.35e12 / 64e9) == pytest.approx(0.3 / (3.35e12 / 64e9 - 1.0))
    assert largest_fraction_within(1.30, 1.0) == 1.0
    assert slowdown_closed_form(0.9, 1.0 / far_bandwidth_share_needed(0.9, 1.30)) == pytest.approx(1.30)


def test_the_claim_does_not_hold_for_the_listed_tiers(engine, tiers):
    check = heterogeneous_claim_check(engine, tiers=[tiers["host-ddr5-pcie5"], tiers["grace-lpddr5x-c2c"]])
    assert check.fractions == pytest.approx((0.8, 0.9))
    assert check.far_share_needed[0, 1] == pytest.approx(0.8 / 1.1)
    host, c2c = check.tiers
    assert host.bandwidth_ratio == pytest.approx(3.35e12 / 64e9, rel=1e-12)
    assert c2c.bandwidth_ratio == pytest.approx(3.35e12 / 450e9, rel=1e-12)
    assert not host.holds and not c2c.holds
    assert host.engine_slowdown.shape == (2, 2) and (host.engine_slowdown > 15.0).all()
    assert host.capacity_multiple_within == pytest.approx(1.0 / (1.0 - 0.3 / (3.35e12 / 64e9 - 1.0)))
    assert "does not hold" in check.sentence and "73%-75%" in check.sentence
    # The accelerator by the name the interface shows, not its catalog id.
    assert "larger than the NVIDIA H100 SXM5 80GB's memory holds" in check.sentence
    assert "h100-sxm" not in check.sentence


def test_the_claim_holds_for_a_far_tier_at_the_bandwidth_it_needs(engine, tiers):
    """A far tier sustaining 75% of HBM (2.51 TB/s) gives (1 − 0.9) + 0.9/0.75 = 1.30 on the
    weights; KV reads and per-layer overhead that stay in HBM only dilute it."""
    fast_Bps = 0.75 * 3.35e12
    fast = dataclasses.replace(
        tiers["cxl3-x16"], bandwidth_Bps=Sourced(fast_Bps, "test"), link_bandwidth_Bps=Sourced(fast_Bps, "test")
    )
    check = heterogeneous_claim_check(engine, tiers=[fast])
    row = check.tiers[0]
    assert row.bandwidth_ratio == pytest.approx(1.0 / 0.75)
    assert row.closed_form_slowdown == pytest.approx([0.2 + 0.8 / 0.75, 1.30])
    assert (row.engine_slowdown <= 1.30 + 1e-12).all() and row.holds
    assert "holds" in check.sentence
