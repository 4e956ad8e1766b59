"""Heterogeneous memory: weights and KV cache placed across HBM and a far tier.

The engine already charges offloaded weights (``Scenario.offload``) and offloaded KV cache
(``Scenario.kv_offload``) at the far tier's effective bandwidth x link efficiency. This module
lets that far tier be the device's own (:func:`own_far_tier`) or any of
``resources/far_tiers.toml`` (``catalog/far_tiers.py``) in its place, and answers two
questions for a model, an accelerator and a workload:

- how much slower decode and the whole run get as weight and KV fractions move to the tier
  (:func:`sweep_offload`, slowdowns against everything in device memory);
- how large a model fits with the tier, and the capacity multiple over device memory alone
  (:func:`largest_model`).

The closed forms at the end (:func:`slowdown_closed_form` and its inverses) are what the first
paper's "5-10x larger models at 15-30% slowdown" is checked against (``claims.py``).

Slowdowns are ratios of times: 1.25 means 25% slower (ITL / ITL all-in-HBM; throughput
all-in-HBM / throughput).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..catalog.catalog import Catalog
from ..catalog.far_tiers import FarTierOption, load_far_tiers
from ..core import codes
from ..core.errors import CatalogError
from ..core.scenario import Scenario
from ..physics.engine import Engine
from ..physics.results import Outputs

OWN_TIER = "own"  # the device's own far tier (the workspace's "far_tier" default)
FALLBACK_TIER = "host-ddr5-pcie5"  # for a device without a far tier of its own


# ---- the far tier to use ---------------------------------------------------------------------


def own_far_tier(engine: Engine, accelerator_id: str) -> FarTierOption | None:
    """The accelerator's own far tier as a far-tier option (same numbers and sources), or
    None where it has none. A tier without a separate link is read at its own bandwidth."""
    accelerator = engine.catalog.accelerator(accelerator_id)
    tier = accelerator.far_tier
    if tier is None or tier.bandwidth_Bps is None:
        return None
    return FarTierOption(
        id=OWN_TIER,
        name=tier.name or f"{accelerator.name} far memory",
        kind=tier.kind,
        capacity_bytes=tier.capacity_bytes,
        bandwidth_Bps=tier.bandwidth_Bps,
        link_bandwidth_Bps=tier.link_bandwidth_Bps or tier.bandwidth_Bps,
    )


def resolve_far_tier(
    engine: Engine, accelerator_id: str, choice: str, far_tiers: Mapping[str, FarTierOption]
) -> tuple[str, FarTierOption]:
    """(id, tier) to use on an accelerator for a choice of :data:`OWN_TIER` or a far-tier id:
    the chosen one, or :data:`FALLBACK_TIER` where the choice is the device's own and it has none."""
    if choice == OWN_TIER:
        own = own_far_tier(engine, accelerator_id)
        if own is not None:
            return OWN_TIER, own
        return FALLBACK_TIER, far_tiers[FALLBACK_TIER]
    if choice not in far_tiers:
        raise CatalogError("far_tiers.toml", None, f"unknown far tier {choice!r}; known: {', '.join(far_tiers)}")
    return choice, far_tiers[choice]


def engine_with_far_tier(engine: Engine, accelerator_id: str, tier: FarTierOption) -> tuple[Engine, str]:
    """An engine whose catalog holds the accelerator with ``tier`` in place of its own far tier
    (or as its first one), under the id ``<accelerator>+<tier>``; and that id."""
    accelerator = engine.catalog.accelerator(accelerator_id)
    memory = tuple(t for t in accelerator.memory if t.level != "far") + (tier.memory_tier(),)
    tiered_id = f"{accelerator.id}+{tier.id}"
    tiered = replace(accelerator, id=tiered_id, name=f"{accelerator.name} + {tier.name}", memory=memory)
    constants = engine.constants
    if tier.kind not in constants.memory_energy_J_per_byte:
        if tier.energy_J_per_byte is None:
            raise CatalogError("far_tiers.toml", tier.id, f"kind {tier.kind!r} needs energy_J_per_byte")
        constants = replace(
            constants, memory_energy_J_per_byte={**constants.memory_energy_J_per_byte, tier.kind: tier.energy_J_per_byte}
        )
    catalog = Catalog({tiered_id: tiered}, dict(engine.catalog.models))
    return Engine(catalog, constants), tiered_id


# ---- sweeping the offloaded fractions -------------------------------------------------------


@dataclass(frozen=True)
class LargestModel:
    """The largest model of this model's shape (all weight terms scaled together) that fits one
    device's share, with the workload's KV cache and workspace, per device."""

    device_only_bytes: float  # weights that fit in device memory alone
    with_tier_bytes: float  # weights that fit across device memory and the far tier
    device_only_params: float  # the same, as parameters of the whole model (all devices)
    with_tier_params: float
    capacity_multiple: float  # with_tier / device_only
    offload_fraction: float  # of the largest model's weights, the share in the far tier


@dataclass(frozen=True)
class OffloadSweep:
    """Decode and run times over weight fractions (rows) x KV fractions (columns) in the far tier."""

    model: str
    accelerator: str  # the catalog accelerator the tier was attached to
    tier: FarTierOption
    scenario: Scenario  # the workload, with no offload
    weight_fractions: np.ndarray
    kv_fractions: np.ndarray
    itl_s: np.ndarray  # [weights, kv]
    throughput_output_tok_s: np.ndarray
    fits: np.ndarray  # bool
    fit_codes: np.ndarray  # int, codes.FIT_*
    baseline_itl_s: float  # everything in device memory
    baseline_throughput_output_tok_s: float
    baseline_fits: bool
    near_bandwidth_Bps: float  # sustained: effective x memory efficiency x stack
    far_bandwidth_Bps: float  # sustained: effective x link efficiency x stack
    largest: LargestModel

    @property
    def itl_slowdown(self) -> np.ndarray:
        return self.itl_s / self.baseline_itl_s

    @property
    def throughput_slowdown(self) -> np.ndarray:
        return self.baseline_throughput_output_tok_s / self.throughput_output_tok_s

    @property
    def bandwidth_ratio(self) -> float:
        """Sustained near over far bandwidth: how many times slower a far byte is."""
        return self.near_bandwidth_Bps / self.far_bandwidth_Bps

    def fit_reason(self, weight_index: int, kv_index: int) -> str:
        return codes.FIT_REASONS[int(self.fit_codes[weight_index, kv_index])]


DEFAULT_WEIGHT_FRACTIONS: tuple[float, ...] = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1.0)
DEFAULT_KV_FRACTIONS: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 1.0)


def sweep_offload(
    engine: Engine,
    scenario: Scenario,
    tier: FarTierOption | str,
    weight_fractions: Sequence[float] = DEFAULT_WEIGHT_FRACTIONS,
    kv_fractions: Sequence[float] = DEFAULT_KV_FRACTIONS,
) -> OffloadSweep:
    """Evaluate ``scenario`` (its model, accelerator, workload and layout) with ``tier`` as the
    far tier, for every weight x KV fraction, in one kernel call. The scenario's own offload
    fields are ignored: the baseline is everything in device memory."""
    if isinstance(tier, str):
        tiers = load_far_tiers()
        if tier not in tiers:
            raise CatalogError("far_tiers.toml", None, f"unknown far tier {tier!r}; known: {', '.join(tiers)}")
        tier = tiers[tier]
    scenario = engine.resolve(scenario).with_changes(offload=0.0, kv_offload=0.0)
    for name, fractions in (("weight_fractions", weight_fractions), ("kv_fractions", kv_fractions)):
        if not fractions or not all(0.0 <= float(f) <= 1.0 for f in fractions):
            raise ValueError(f"{name} must be a non-empty list of fractions between 0 and 1")
    tiered_engine, tiered_id = engine_with_far_tier(engine, scenario.accelerator, tier)
    base = scenario.with_changes(accelerator=tiered_id)
    tiered_engine = tiered_engine.with_models(engine.model(scenario.model))
    grid = [base.with_changes(offload=float(w), kv_offload=float(v)) for w in weight_fractions for v in kv_fractions]
    out = tiered_engine.evaluate([base, *grid])
    shape = (len(weight_fractions), len(kv_fractions))

    def rows(name: str) -> np.ndarray:
        return Outputs(out[:, 1:]).row(name).reshape(shape)

    accelerator = engine.catalog.accelerator(scenario.accelerator)
    cls = engine.constants.for_class(accelerator.architecture_class)
    stack = float(accelerator.software_efficiency)
    device = accelerator.tier("device") or accelerator.near_tiers[0]
    return OffloadSweep(
        model=scenario.model,
        accelerator=scenario.accelerator,
        tier=tier,
        scenario=scenario,
        weight_fractions=np.asarray(weight_fractions, dtype=float),
        kv_fractions=np.asarray(kv_fractions, dtype=float),
        itl_s=rows("itl_s"),
        throughput_output_tok_s=rows("throughput_output_tok_s"),
        fits=rows("fits").astype(bool),
        fit_codes=rows("fit_code").astype(int),
        baseline_itl_s=float(Outputs(out).itl_s[0]),
        baseline_throughput_output_tok_s=float(Outputs(out).throughput_output_tok_s[0]),
        baseline_fits=bool(Outputs(out).fits[0]),
        near_bandwidth_Bps=device.effective_bandwidth_Bps * cls.memory_efficiency * stack,
        far_bandwidth_Bps=tier.effective_bandwidth_Bps * cls.link_efficiency * stack,
        largest=largest_model(out[:, 0], engine.model(scenario.model).total_params),
    )


def nearest_index(fractions: np.ndarray, value: float) -> int:
    """The index of the sweep fraction nearest ``value`` (a scenario's own share)."""
    return int(np.argmin(np.abs(fractions - value)))


def largest_model(column: np.ndarray, total_params: float) -> LargestModel:
    """From one kernel output column (the workload, nothing offloaded): the weights one device
    can hold beside the workload's full-context KV cache, workspace and runtime, with and
    without the far tier (KV cache kept in device memory), and as parameters of a model of the
    same shape (every per-device weight term scales with the parameter count)."""
    memory = Outputs(column).memory
    device_only = max(memory.weights_room_bytes, 0.0)
    far_room = Outputs(column).memory.far_usable_bytes
    with_tier = device_only + far_room if device_only > 0.0 else 0.0
    params_per_byte = total_params / Outputs(column).memory.weights_bytes
    return LargestModel(
        device_only_bytes=float(device_only),
        with_tier_bytes=float(with_tier),
        device_only_params=float(device_only * params_per_byte),
        with_tier_params=float(with_tier * params_per_byte),
        capacity_multiple=float(with_tier / device_only) if device_only > 0.0 else 0.0,
        offload_fraction=float(far_room / with_tier) if with_tier > 0.0 else 0.0,
    )


# ---- the closed forms -------------------------------------------------------------------------


def slowdown_closed_form(fraction: float, bandwidth_ratio: float) -> float:
    """Memory-bound decode that reads every weight each step: time ∝ (1 − f)/B_near + f/B_far,
    so against all in device memory the step is (1 − f) + f·(B_near/B_far) times longer."""
    return (1.0 - fraction) + fraction * bandwidth_ratio


def far_bandwidth_share_needed(fraction: float, slowdown: float) -> float:
    """B_far / B_near at which offloading ``fraction`` of the weights costs exactly ``slowdown``:
    f / (S − 1 + f), from (1 − f) + f·r = S."""
    return fraction / (slowdown - 1.0 + fraction)


def largest_fraction_within(slowdown: float, bandwidth_ratio: float) -> float:
    """The largest offloaded fraction whose closed-form slowdown stays within ``slowdown``:
    (S − 1) / (r − 1), all of it when the far tier is as fast as the near one."""
    if bandwidth_ratio <= 1.0:
        return 1.0
    return min(1.0, (slowdown - 1.0) / (bandwidth_ratio - 1.0))


# ---- the three curves of a sweep ---------------------------------------------------------------

# Weights offloaded (KV cache kept in device memory), KV cache offloaded (weights kept) and both
# at the same share: a sweep's first column, its first row and its diagonal.
OFFLOAD_CURVES: tuple[str, ...] = ("weights", "kv", "both")


def offload_curves(sweep: OffloadSweep) -> tuple[np.ndarray, dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]]:
    """(shares, {curve: (ITL s, slowdown, fits)}) along the sweep's rows, columns and diagonal;
    the sweep's weight and KV fractions must be the same list."""
    shares = sweep.weight_fractions
    slowdown = sweep.itl_slowdown
    diagonal = np.arange(len(shares))
    return shares, {
        "weights": (sweep.itl_s[:, 0], slowdown[:, 0], sweep.fits[:, 0]),
        "kv": (sweep.itl_s[0, :], slowdown[0, :], sweep.fits[0, :]),
        "both": (sweep.itl_s[diagonal, diagonal], slowdown[diagonal, diagonal], sweep.fits[diagonal, diagonal]),
    }
