"""The data behind each plot, as tables with units in the column headers (for CSV export).

Every value is read from a :class:`~accelscope.engine.physics.frame.Frame`, the same arrays the plots
draw, and scaled to the unit its header names.
"""

from __future__ import annotations

from ..catalog.catalog import Catalog
from ..core import codes
from ..core.precision import PRECISIONS
from ..core.table import Table
from ..physics.frame import Frame


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
            frame.output(a).prefill.flops_per_device / frame.output(a).prefill.bytes_per_device,
            frame.output(a).prefill.flops_per_device / frame.output(a).prefill.time_s,
            codes.BOUNDS[int(frame.output(a).prefill.bound)],
            frame.output(a).decode.flops_per_device / frame.output(a).decode.bytes_per_device,
            frame.output(a).decode.flops_per_device / frame.output(a).decode.time_s,
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
        weights = frame.output(a).memory.weights_bytes
        far = frame.output(a).memory.weights_far_bytes
        offload_needed = frame.output(a).offload_needed
        rows.append((
            a,
            (weights - far) / 1e9,
            far / 1e9,
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
        f"model: {s.model}; batch {s.batch}; input {s.input_len} tokens; output {s.output_len} tokens",
        f"precision: weights {s.weight_precision}, activations {s.activation_precision}, KV cache {s.kv_precision}",
        f"layout: TP {s.tp}, PP {s.pp}, EP {s.ep}, DP {s.dp}, offload {s.offload:g}, KV offload {s.kv_offload:g}",
        "static batch: all prompts arrive together; decode at the mean context; see the sidecar preset for every input",
    ]
    return lines
