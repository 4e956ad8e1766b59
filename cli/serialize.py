"""Results and catalog entries as JSON-ready dicts and as text. Presentation only: every
number comes from the engine; here it is only scaled to the unit its key names."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accelscope.engine.catalog.groups import accelerator_group
from accelscope.engine.core.accelerator import Accelerator
from accelscope.engine.core.constants import Constants
from accelscope.engine.core.fields import scenario_document
from accelscope.engine.core.model import ModelArch
from accelscope.engine.core.prices import SITE_FIELDS, Price
from accelscope.engine.core.sourced import Sourced
from accelscope.engine.core.units import format_price, format_usd
from accelscope.engine.physics.reference.closed_forms import RecurrentLayers
from accelscope.engine.physics.results import PhaseResult, Result

if TYPE_CHECKING:  # the cost study loads the engine; the catalog command needs none of it
    from accelscope.engine.studies.cost import SystemCost, ViewCost

GB = 1e9  # decimal, as vendors count


def _phase(phase: PhaseResult) -> dict[str, object]:
    return {
        "per": "device (the busiest one)",
        "flops": phase.flops_per_device,
        "bytes": phase.bytes_per_device,
        "operational_intensity": phase.operational_intensity,
        "time_ms": phase.time_s * 1e3,
        # The serving stack's host work over the phase (the whole prefill, or one decode step),
        # outside the stage passes: time_ms = passes × stage pass + transfers + host.
        "host_ms": phase.host_time_s * 1e3,
        "bound": phase.bound,
        "achieved_flops_per_s": phase.achieved_flops_per_s,
        "stage_pass_ms": {
            "compute": phase.compute_time_s * 1e3,
            "memory": phase.memory_time_s * 1e3,
            "attention_compute": phase.attention_compute_time_s * 1e3,
            "attention_memory": phase.attention_memory_time_s * 1e3,
            # compute and memory together, as the class overlaps its operators: a pass is
            # execution + communication + overhead
            "execution": phase.execution_time_s * 1e3,
            "communication": phase.communication_time_s * 1e3,
            "overhead": phase.overhead_time_s * 1e3,
        },
        "power_per_device_w": phase.power_per_device_W,
    }


def result_to_dict(result: Result, model: ModelArch, accelerator: Accelerator, constants: Constants,
                   cost: SystemCost | None = None) -> dict[str, object]:
    """The result as JSON-ready values; with ``cost``, what the system costs rented and owned."""
    s = result.scenario
    decode_share = (result.e2e_latency_s - result.waves * result.prefill.time_s) / result.e2e_latency_s
    bound_phase = "decode" if decode_share >= 0.5 else "prefill"
    cls = constants.for_class(accelerator.architecture_class)
    memory = result.memory
    needs: dict[str, object] = {
        "tp": result.tp_needed or None,
        "devices": result.tp_needed * s.pp * s.dp if result.tp_needed else None,
        "offload_fraction": result.offload_needed if result.offload_needed >= 0 else None,
    }
    return {
        "model": model.id,
        "accelerator": accelerator.id,
        "scenario": scenario_document(s, leave_out=("model", "accelerator")),
        "batching": "static: all prompts arrive together, are prefilled, then decoded together",
        "devices": result.devices,
        "fits": result.fits,
        "fit_reason": result.fit_reason,
        "needs": needs,
        "warnings": result.warnings,
        "compute_precision": result.compute_precision,
        "ttft_ms": result.ttft_s * 1e3,
        "itl_ms": result.itl_s * 1e3,
        "e2e_latency_s": result.e2e_latency_s,
        "throughput_output_tok_s": result.throughput_output_tok_s,
        "throughput_total_tok_s": result.throughput_total_tok_s,
        "power_w": result.power_W,
        "power_scope": f"{accelerator.power_scope} ({'each chip or board' if accelerator.power_scope == 'device' else 'whole system'}), summed over {result.devices}",
        "energy_j": result.energy_J,
        "tokens_per_joule": result.tokens_per_joule,
        "output_tokens_per_joule": result.output_tokens_per_joule,
        "bound": result.decode.bound if bound_phase == "decode" else result.prefill.bound,
        "bound_phase": bound_phase,
        "kv_waves": result.waves,
        "prefill": _phase(result.prefill),
        "decode": _phase(result.decode),
        "memory": {
            "per": "device",
            "weights_gb": memory.weights_bytes / GB,
            "weights_offloaded_gb": memory.weights_far_bytes / GB,
            "kv_cache_gb": memory.kv_cache_bytes / GB,
            "kv_cache_offloaded_gb": result.memory.kv_cache_far_bytes / GB,
            "recurrent_state_gb": memory.recurrent_state_bytes / GB,
            "activations_gb": memory.activation_bytes / GB,
            "overhead_gb": memory.overhead_bytes / GB,
            "capacity_gb": memory.capacity_bytes / GB,
            "usable_gb": memory.usable_bytes / GB,
            "fits": result.fits,
            "max_batch": memory.max_batch,
            "resident_batch": memory.resident_batch,
        },
        "ridge_point_flop_per_byte": result.ridge_point,
        "assumptions": {
            "architecture_class": accelerator.architecture_class,
            "compute_efficiency": cls.compute_efficiency,
            "memory_efficiency": cls.memory_efficiency,
            "link_efficiency": cls.link_efficiency,
            "interconnect_efficiency": cls.interconnect_efficiency,
            "per_layer_overhead_s": cls.per_layer_overhead_s,
            "step_overhead_s": cls.step_overhead_s,
            "sequence_overhead_s": cls.sequence_overhead_s,
            "operator_overlap": cls.operator_overlap,
            "busy_power_fraction": cls.busy_power_fraction,
            "usable_memory_fraction": cls.usable_memory_fraction,
            "runtime_overhead_gb": cls.runtime_overhead_bytes / GB,
            "software_efficiency": float(accelerator.software_efficiency),
            "prefill_chunk_tokens": constants.prefill_chunk_tokens,
            "decode_context": "each decode step is taken at the mean context of the generation, input_len + output_len / 2",
            "throughput_total_tok_s": "counts input + output tokens, as Brunetta et al. 2025 do",
            "tokens_per_joule": "counts input + output tokens per joule of all devices",
        },
        **({"cost": cost_to_dict(cost)} if cost is not None else {}),
    }


def result_to_text(result: Result, model: ModelArch, accelerator: Accelerator,
                   cost: SystemCost | None = None) -> str:
    s = result.scenario
    memory = result.memory
    lines = [
        f"{model.name} on {result.devices} x {accelerator.name}",
        f"  batch {s.batch}, {s.input_len} in / {s.output_len} out; weights {s.weight_precision}, "
        f"activations {s.activation_precision} (computed in {result.compute_precision}), KV {s.kv_precision}; "
        f"TP {s.tp} PP {s.pp} EP {s.ep} DP {s.dp}" + (f", offload {s.offload:.0%}" if s.offload else ""),
    ]
    if result.fits:
        lines.append(f"  fits: largest batch {memory.max_batch:,} per replica")
    else:
        lines.append(f"  DOES NOT FIT: {result.fit_reason}")
        options = []
        if result.tp_needed:
            options.append(f"TP={result.tp_needed} ({result.tp_needed * s.pp * s.dp} devices)")
        if result.offload_needed >= 0:
            options.append(f"{result.offload_needed:.0%} of weights offloaded")
        if options:
            lines.append("  would fit with " + " or ".join(options) + "; numbers below assume it ran as given")
    lines += [
        f"  memory per device: weights {memory.weights_bytes / GB:.2f} GB"
        + (f" ({memory.weights_far_bytes / GB:.2f} offloaded)" if memory.weights_far_bytes else "")
        + f", KV cache {memory.kv_cache_bytes / GB:.2f} GB"
        + (f" ({result.memory.kv_cache_far_bytes / GB:.2f} offloaded)" if result.memory.kv_cache_far_bytes else "")
        + (f", recurrent state {memory.recurrent_state_bytes / GB:.2f} GB" if memory.recurrent_state_bytes else "")
        + f", activations {memory.activation_bytes / GB:.2f} GB, "
        f"runtime {memory.overhead_bytes / GB:.2f} GB of {memory.usable_bytes / GB:.1f} GB usable",
        f"  TTFT {result.ttft_s * 1e3:.2f} ms   ITL {result.itl_s * 1e3:.3f} ms   end-to-end {result.e2e_latency_s:.3f} s",
        f"  throughput {result.throughput_output_tok_s:,.0f} output tok/s, {result.throughput_total_tok_s:,.0f} input+output tok/s",
        f"  power {result.power_W:,.0f} W ({accelerator.power_scope} level, all devices), "
        f"{result.tokens_per_joule:.3f} tokens/J (input+output)",
        *(
            [(f"  serving stack's host time: {result.decode.host_time_s * 1e3:.3f} ms of each decode step, "
              f"{result.prefill.host_time_s * 1e3:.2f} ms of the prefill")]
            if result.decode.host_time_s > 0 else []
        ),
        f"  prefill: {result.prefill.bound}-bound, OI {result.prefill.operational_intensity:.1f} FLOP/byte; "
        f"decode: {result.decode.bound}-bound, OI {result.decode.operational_intensity:.2f} FLOP/byte; "
        f"ridge point {result.ridge_point:.0f} FLOP/byte",
    ]
    if cost is not None:
        lines += cost_to_text(cost)
    lines += [f"  warning: {text}" for text in result.warnings]
    return "\n".join(lines) + "\n"


def accelerator_summary(a: Accelerator) -> dict[str, object]:
    device = a.tier("device") or a.near_tiers[0]
    return {
        "id": a.id,
        "name": a.name,
        "vendor": a.vendor,
        "architecture_class": a.architecture_class,
        "group": accelerator_group(a),
        "year": a.year.value,
        "process_node": a.process_node.value,
        "peak_flops": {key: float(value) for key, value in a.peak_flops.items()},
        "memory": [
            {
                "kind": t.kind,
                "level": t.level,
                "name": t.name,
                "capacity_bytes": float(t.capacity_bytes),
                "bandwidth_Bps": float(t.bandwidth_Bps) if t.bandwidth_Bps is not None else None,
                "link_bandwidth_Bps": float(t.link_bandwidth_Bps) if t.link_bandwidth_Bps is not None else None,
                "placement": t.placement,
                # Unified memory: the share of it the OS lets the accelerator use; None elsewhere.
                "host_shared": float(t.host_shared) if t.host_shared is not None else None,
            }
            for t in a.memory
        ],
        "memory_gb": float(device.capacity_bytes) / GB,
        "memory_bandwidth_Bps": device.effective_bandwidth_Bps,
        "interconnect": {
            "name": a.interconnect.name,
            "bandwidth_per_direction_Bps": float(a.interconnect.bandwidth_per_direction_Bps),
            "latency_s": float(a.interconnect.latency_s),
            "domain_size": int(float(a.interconnect.domain_size)),
            # Switchless meshes: the one link joining a pair of devices; None through a switch.
            "peer_bandwidth_per_direction_Bps": (
                float(a.interconnect.peer_bandwidth_per_direction_Bps)
                if a.interconnect.peer_bandwidth_per_direction_Bps is not None else None
            ),
        },
        "tdp_w": float(a.tdp_W),
        "idle_w": float(a.idle_W),
        "power_scope": a.power_scope,
        "software_efficiency": float(a.software_efficiency),
        "grades": accelerator_grades(a),
    }


def _grade(value: Sourced | None) -> str | None:
    return value.grade if value is not None else None


def accelerator_grades(a: Accelerator) -> dict[str, object]:
    """The source grade of each value accelerator_summary gives, under the same keys."""
    device = a.tier("device") or a.near_tiers[0]
    device_bandwidth = device.bandwidth_Bps
    if device.link_bandwidth_Bps is not None and (
        device_bandwidth is None or float(device.link_bandwidth_Bps) < float(device_bandwidth)
    ):
        device_bandwidth = device.link_bandwidth_Bps  # the link sets the effective bandwidth
    network = a.interconnect
    return {
        "year": a.year.grade,
        "process_node": a.process_node.grade,
        "peak_flops": {key: value.grade for key, value in a.peak_flops.items()},
        "memory": [
            {
                "capacity_bytes": t.capacity_bytes.grade,
                "bandwidth_Bps": _grade(t.bandwidth_Bps),
                "link_bandwidth_Bps": _grade(t.link_bandwidth_Bps),
                "host_shared": _grade(t.host_shared),
            }
            for t in a.memory
        ],
        "memory_gb": device.capacity_bytes.grade,
        "memory_bandwidth_Bps": _grade(device_bandwidth),
        "interconnect": {
            "bandwidth_per_direction_Bps": network.bandwidth_per_direction_Bps.grade,
            "latency_s": network.latency_s.grade,
            "domain_size": network.domain_size.grade,
            "peer_bandwidth_per_direction_Bps": _grade(network.peer_bandwidth_per_direction_Bps),
        },
        "tdp_w": a.tdp_W.grade,
        "idle_w": a.idle_W.grade,
        "software_efficiency": a.software_efficiency.grade,
    }


def model_summary(m: ModelArch) -> dict[str, object]:
    return {
        "id": m.id,
        "name": m.name,
        "family": m.family,
        "total_params": m.total_params,
        "active_params": m.active_params,
        "nominal_total_params": m.nominal_total_params,
        "nominal_active_params": m.nominal_active_params,
        "n_layers": m.n_layers,
        "hidden_size": m.hidden_size,
        "n_heads": m.n_heads,
        "n_kv_heads": m.n_kv_heads,
        "attention": "mla" if m.mla else "gqa" if m.n_kv_heads < m.n_heads else "mha",
        "moe": (
            {
                "routed_experts": m.moe.n_routed_experts,
                "experts_per_token": m.moe.experts_per_token,
                "shared_experts": m.moe.n_shared_experts,
                "moe_layers": m.n_moe_layers,
            }
            if m.moe
            else None
        ),
        "max_context": m.max_context,
        "kv_cache_bytes_per_token_bf16": 2.0 * m.kv_elements_per_token_per_layer
        * (m.n_full_attention_layers + m.n_window_attention_layers),
        # Gated DeltaNet and Mamba-2 layers: their fixed-size state, whatever the context.
        "recurrent_layers": m.n_deltanet_layers + m.n_mamba_layers,
        "recurrent_state_bytes_per_sequence": RecurrentLayers.of(m).state_bytes(1),
        "native_weight_precision": m.native_weight_precision or None,
    }


# ---- cost ------------------------------------------------------------------------------------------

COST_BASIS = (
    "rental: devices x the price per device-hour, rented for the hours it serves (the rent includes energy and "
    "hosting); ownership: the purchase written off over amortisation_years x 8,760 h x utilisation, plus the "
    "energy (mean power of the run, and idle power over the hours it does not serve) x PUE x electricity, plus "
    "hosting per device-year; per million tokens = per hour / (3,600 s x tokens/s) x 10^6; tco_usd_per_year = "
    "per hour x 8,760 h x utilisation. A value without a known price is null, never 0."
)
# What to type to give a missing price, by view.
_PRICE_FLAG = {"rental": "--price-per-hour", "ownership": "--purchase-price"}


def _price(price: Price | None, per: str) -> dict[str, object] | None:
    if price is None:
        return None
    return {"usd": price.value, "per": per, "source": price.source, "date": price.date, "grade": price.grade,
            **({"kind": price.kind, "provider": price.provider} if price.kind else {}),
            **({"includes": price.includes} if price.includes else {})}


def _view_cost(view: ViewCost) -> dict[str, object]:
    entry: dict[str, object] = {
        "known": view.known,
        "usd_per_hour": view.usd_per_hour,
        "usd_per_mtok_output": view.usd_per_mtok_output,
        "usd_per_mtok_total": view.usd_per_mtok_total,
        "energy_share": view.energy_share,
        "tco_usd_per_year": view.tco_usd_per_year,
        "price": _price(view.price, "device-hour" if view.view == "rental" else "device"),
        "unknown": view.unknown or None,
    }
    if view.view == "ownership":
        entry.update(capital_usd_per_hour=view.capital_usd_per_hour, energy_usd_per_hour=view.energy_usd_per_hour,
                     hosting_usd_per_hour=view.hosting_usd_per_hour)
    return entry


def cost_to_dict(cost: SystemCost) -> dict[str, object]:
    """A system's cost, rented and owned, each figure null where its price is not known."""
    site = cost.site
    return {
        "devices": cost.devices,
        "rental": _view_cost(cost.rental),
        "ownership": _view_cost(cost.ownership),
        "site": {name: {"value": getattr(site, name).value, "source": getattr(site, name).source,
                        "date": getattr(site, name).date, "grade": getattr(site, name).grade} for name in SITE_FIELDS},
        "basis": COST_BASIS,
    }


def cost_to_text(cost: SystemCost, label: str = "cost") -> list[str]:
    """Two lines, rented and owned: what an hour, a million tokens and a year cost, or why unknown."""
    site = cost.site
    utilisation = float(site.utilisation.value)
    lines = []
    for view in (cost.rental, cost.ownership):
        head = f"  {label}, {'rented' if view.view == 'rental' else 'owned'}: "
        if not view.known:
            known_hour = f"{format_usd(view.usd_per_hour)} per hour; " if view.usd_per_hour is not None else ""
            flag = f" ({_PRICE_FLAG[view.view]})" if view.price is None else ""
            lines.append(f"{head}{known_hour}per token unknown: {view.unknown}{flag}")
            continue
        price = view.price
        per = "device-hour" if view.view == "rental" else "device"
        text = (f"{head}{format_price(price.value)} per {per} ({price.citation}) -> {format_usd(view.usd_per_hour)} "
                f"per hour, {format_usd(view.usd_per_mtok_output)} per million output tokens, "
                f"{format_usd(view.usd_per_mtok_total)} per million input+output")
        if view.view == "ownership":
            text += (f" (energy {view.energy_share:.0%}; {float(site.amortisation_years.value):g} years, "
                     f"PUE {float(site.pue.value):g}, {format_price(site.electricity_usd_per_kwh.value)} per kWh)")
        text += f"; {format_usd(view.tco_usd_per_year)} a year at {utilisation:.0%} in use"
        lines.append(text)
    return lines
