"""The data behind each plot, as tables with units in the column headers (for CSV export).

Every value is read from a :class:`~accelscope.engine.physics.frame.Frame`, the same arrays the plots
draw, and scaled to the unit its header names.
"""

from __future__ import annotations

import math

from ..catalog.catalog import Catalog
from ..core import codes
from ..core.cost import Pricing
from ..core.fields import comment_lines
from ..core.precision import PRECISIONS
from ..core.prices import SITE_FIELDS, Price
from ..core.table import Table
from ..physics.frame import Frame
from ..studies.cost import frame_costs


def _fits(frame: Frame, accelerator: str) -> str:
    return "yes" if frame.output(accelerator).fits else "no"


def roofline_table(frame: Frame) -> Table:
    rows = []
    for a in frame.accelerators:
        roof = frame.roofline(a)
        main = roof.main_slope
        rows.append((
            a,
            PRECISIONS[int(frame.output(a).compute_precision)],
            roof.peak_flops,
            main.tier_name,
            main.bandwidth_Bps,
            roof.ridge_point,
            frame.output(a).prefill.operational_intensity,
            frame.output(a).prefill.achieved_flops_per_s,
            codes.BOUNDS[int(frame.output(a).prefill.bound)],
            frame.output(a).decode.operational_intensity,
            frame.output(a).decode.achieved_flops_per_s,
            codes.BOUNDS[int(frame.output(a).decode.bound)],
            _fits(frame, a),
        ))
    headers = (
        "accelerator", "compute_precision", "peak [FLOP/s]", "main_memory_tier", "bandwidth [B/s]",
        "ridge_point [FLOP/byte]", "prefill_intensity [FLOP/byte]", "prefill_achieved [FLOP/s per device]",
        "prefill_bound", "decode_intensity [FLOP/byte]", "decode_achieved [FLOP/s per device]", "decode_bound",
        "fits",
    )
    return Table("roofline", headers, tuple(rows))


def memory_table(frame: Frame) -> Table:
    rows = []
    for a in frame.accelerators:
        memory = frame.output(a).memory
        offload_needed = frame.output(a).offload_needed
        rows.append((
            a,
            memory.weights_near_bytes / 1e9,
            memory.weights_far_bytes / 1e9,
            frame.output(a).memory.kv_cache_bytes / 1e9,
            frame.output(a).memory.kv_cache_far_bytes / 1e9,
            frame.output(a).memory.activation_bytes / 1e9,
            frame.output(a).memory.overhead_bytes / 1e9,
            frame.output(a).memory.usable_bytes / 1e9,
            frame.output(a).memory.capacity_bytes / 1e9,
            int(frame.output(a).memory.max_batch),
            _fits(frame, a),
            codes.FIT_REASONS[int(frame.output(a).fit_code)],
            int(frame.output(a).tp_needed) or "",
            offload_needed if offload_needed >= 0 else "",
            int(frame.output(a).waves),
        ))
    headers = (
        "accelerator", "weights_in_device_memory [GB per device]", "weights_offloaded [GB per device]",
        "kv_cache [GB per device]", "kv_cache_offloaded [GB per device]", "activations [GB per device]", "runtime_overhead [GB per device]",
        "usable_memory [GB per device]", "physical_memory [GB per device]", "max_batch [sequences]", "fits",
        "fit_reason", "tp_needed [devices]", "offload_needed [fraction of weights]", "kv_waves",
    )
    return Table("memory", headers, tuple(rows))


def latency_table(frame: Frame) -> Table:
    rows = []
    for a in frame.accelerators:
        devices = frame.output(a).devices
        rows.append((
            a,
            int(devices),
            frame.output(a).ttft_s * 1e3,
            frame.output(a).itl_s * 1e3,
            frame.output(a).decode.host_time_s * 1e3,
            frame.output(a).e2e_latency_s,
            frame.output(a).throughput_output_tok_s,
            frame.output(a).throughput_output_tok_s / devices,
            frame.output(a).throughput_total_tok_s,
            _fits(frame, a),
        ))
    headers = (
        "accelerator", "devices", "ttft [ms]", "itl [ms]", "itl_of_which_host [ms]", "end_to_end_latency [s]",
        "output_throughput [tokens/s, system]", "output_throughput [tokens/s per device]",
        "input_plus_output_throughput [tokens/s, system]", "fits",
    )
    return Table("latency", headers, tuple(rows))


def sweep_table(frame: Frame) -> Table:
    rows = []
    for a in frame.accelerators:
        for index, batch in enumerate(frame.sweep_batches):
            def value(name: str, index: int = index) -> float:
                return float(frame.sweep_output(a).row(name)[index])

            rows.append((
                a,
                int(batch),
                value("e2e_latency_s"),
                value("throughput_output_tok_s"),
                value("itl_s") * 1e3,
                value("ttft_s") * 1e3,
                "yes" if value("fits") else "no",
                int(value("waves")),
            ))
    headers = (
        "accelerator", "batch [sequences]", "end_to_end_latency [s]", "output_throughput [tokens/s, system]",
        "itl [ms]", "ttft [ms]", "fits", "kv_waves",
    )
    return Table("sweep", headers, tuple(rows))


def energy_table(frame: Frame, catalog: Catalog) -> Table:
    rows = []
    for a in frame.accelerators:
        rows.append((
            a,
            catalog.accelerator(a).power_scope,
            int(frame.output(a).devices),
            frame.output(a).power_W,
            frame.output(a).prefill.power_per_device_W,
            frame.output(a).decode.power_per_device_W,
            frame.output(a).energy_J,
            frame.output(a).tokens_per_joule,
            frame.output(a).output_tokens_per_joule,
            _fits(frame, a),
        ))
    headers = (
        "accelerator", "power_scope", "devices", "mean_power [W, all devices]", "prefill_power [W per device]",
        "decode_power [W per device]", "energy_of_run [J]", "input_plus_output_tokens_per_joule [tokens/J]",
        "output_tokens_per_joule [tokens/J]", "fits",
    )
    return Table("energy", headers, tuple(rows))


def frame_tables(frame: Frame, catalog: Catalog) -> dict[str, Table]:
    """One table per view, keyed like engine.workspace.VIEWS."""
    return {
        "roofline": roofline_table(frame),
        "memory": memory_table(frame),
        "latency": latency_table(frame),
        "sweep": sweep_table(frame),
        "energy": energy_table(frame, catalog),
    }


def scenario_comments(frame: Frame, preset_name: str | None = None) -> list[str]:
    """Comment lines that tie an exported table to its inputs."""
    s = frame.workspace.scenario
    lines = ["accelscope export"]
    if preset_name:
        lines.append(f"preset: {preset_name}")
    lines += [
        *comment_lines(s),
        "static batch: all prompts arrive together; decode at the mean context; see the sidecar preset for every input",
    ]
    return lines


# ---- cost: rented and owned, beside energy -------------------------------------------------------


def _cell(value: float) -> object:
    """A cost's cell: the number, or empty where it is unknown (never 0)."""
    return float(value) if math.isfinite(value) else ""


def _price_cells(price: Price | None) -> tuple[object, ...]:
    if price is None:
        return ("", "", "", "")
    return (price.value, price.citation if price.own else price.source, price.date, price.grade)


def frame_pricing(frame: Frame) -> Pricing:
    """The prices a frame is costed at: its engine's price book with its workspace's settings."""
    return Pricing(frame.engine.catalog.prices, frame.workspace.cost)


def cost_tables(frame: Frame, pricing: Pricing | None = None) -> dict[str, Table]:
    """``cost``: each shown accelerator's scenario rented and owned, with the prices used and
    their sources; ``cost_sweep``: cost per million output tokens at every batch of the sweep.
    ``pricing`` defaults to the frame's own (:func:`frame_pricing`)."""
    costs = frame_costs(frame, pricing or frame_pricing(frame))
    rows = []
    for j, a in enumerate(frame.accelerators):
        output = frame.output(a)
        rental, ownership = costs.current.rental, costs.current.ownership
        rows.append((
            a,
            int(output.devices),
            _fits(frame, a),
            float(output.throughput_output_tok_s),
            float(output.power_W),
            *_price_cells(costs.rentals[j]),
            _cell(rental.usd_per_hour[j]),
            _cell(rental.usd_per_mtok_output[j]),
            _cell(rental.usd_per_mtok_total[j]),
            _cell(rental.tco_usd_per_year[j]),
            *_price_cells(costs.purchases[j]),
            _cell(ownership.capital_usd_per_hour[j]),
            _cell(ownership.energy_usd_per_hour[j]),
            _cell(ownership.hosting_usd_per_hour[j]),
            _cell(ownership.usd_per_hour[j]),
            _cell(ownership.usd_per_mtok_output[j]),
            _cell(ownership.usd_per_mtok_total[j]),
            _cell(ownership.energy_share[j]),
            _cell(ownership.tco_usd_per_year[j]),
        ))
    price_headers = ("{} [USD per {}]", "{}_source", "{}_date", "{}_grade")
    headers = (
        "accelerator", "devices", "fits", "output_throughput [tokens/s, system]", "mean_power [W, all devices]",
        *(h.format("rental_price", "device-hour") for h in price_headers),
        "rental [USD per hour]", "rental [USD per million output tokens]",
        "rental [USD per million input+output tokens]", "rental [USD per year in use]",
        *(h.format("purchase_price", "device") for h in price_headers),
        "ownership_capital [USD per hour served]", "ownership_energy [USD per hour served]",
        "ownership_hosting [USD per hour served]", "ownership [USD per hour served]",
        "ownership [USD per million output tokens]", "ownership [USD per million input+output tokens]",
        "ownership_energy_share [fraction]", "ownership_tco [USD per year]",
    )
    sweep_rows = []
    for j, a in enumerate(frame.accelerators):
        sweep = frame.sweep_output(a)
        for index, batch in enumerate(frame.sweep_batches):
            sweep_rows.append((
                a,
                int(batch),
                float(sweep.e2e_latency_s[index]),
                float(sweep.throughput_output_tok_s[index]),
                "yes" if sweep.fits[index] else "no",
                _cell(costs.sweep.rental.usd_per_mtok_output[j, index]),
                _cell(costs.sweep.ownership.usd_per_mtok_output[j, index]),
                _cell(costs.sweep.ownership.energy_share[j, index]),
            ))
    sweep_headers = (
        "accelerator", "batch [sequences]", "end_to_end_latency [s]", "output_throughput [tokens/s, system]", "fits",
        "rental [USD per million output tokens]", "ownership [USD per million output tokens]",
        "ownership_energy_share [fraction]",
    )
    return {"cost": Table("cost", headers, tuple(rows)), "cost_sweep": Table("cost_sweep", sweep_headers,
                                                                               tuple(sweep_rows))}


def cost_comments(frame: Frame, preset_name: str | None = None) -> list[str]:
    """The cost tables' comment lines: the scenario's, then how the costs were worked and from
    which site values."""
    site = frame_pricing(frame).site
    lines = [
        "Cost: what a million tokens cost, rented and owned",
        *scenario_comments(frame, preset_name),
        "rental: devices x price per device-hour, rented for the hours it serves (the rent includes energy and "
        "hosting); ownership: purchase / (amortisation years x 8,760 h x utilisation) + energy x PUE x electricity "
        "+ hosting per device-year / (8,760 h x utilisation); per million tokens: per hour / (3,600 s x tokens/s) "
        "x 10^6; empty: unknown (no price)",
    ]
    for name in SITE_FIELDS:
        value = getattr(site, name)
        lines.append(f"{name}: {value.value:g} ({value.citation})")
    return lines
