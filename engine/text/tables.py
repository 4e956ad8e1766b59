"""The data behind each plot, as tables with units in the column headers (for CSV export).

Every value is read from a :class:`~accelscope.engine.physics.frame.Frame`, the same arrays the plots
draw, and scaled to the unit its header names.
"""

from __future__ import annotations

from ..catalog.catalog import Catalog
from ..core import codes
from ..core.precision import PRECISIONS
from ..core.table import Table
from ..physics import kernels as k
from ..physics.frame import Frame


def _fits(frame: Frame, accelerator: str) -> str:
    return "yes" if frame.value(k.O_FITS, accelerator) else "no"


def roofline_table(frame: Frame) -> Table:
    rows = []
    for a in frame.accelerators:
        roof = frame.roofline(a)
        main = roof.main_slope
        rows.append((
            a,
            PRECISIONS[int(frame.value(k.O_COMPUTE_PRECISION, a))],
            roof.peak_flops,
            main.tier_name,
            main.bandwidth_Bps,
            roof.ridge_point,
            frame.value(k.O_PRE_FLOPS, a) / frame.value(k.O_PRE_BYTES, a),
            frame.value(k.O_PRE_FLOPS, a) / frame.value(k.O_PRE_TIME, a),
            codes.BOUNDS[int(frame.value(k.O_PRE_BOUND, a))],
            frame.value(k.O_DEC_FLOPS, a) / frame.value(k.O_DEC_BYTES, a),
            frame.value(k.O_DEC_FLOPS, a) / frame.value(k.O_DEC_TIME, a),
            codes.BOUNDS[int(frame.value(k.O_DEC_BOUND, a))],
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
        weights = frame.value(k.O_WEIGHTS, a)
        far = frame.value(k.O_WEIGHTS_FAR, a)
        offload_needed = frame.value(k.O_OFFLOAD_NEEDED, a)
        rows.append((
            a,
            (weights - far) / 1e9,
            far / 1e9,
            frame.value(k.O_KV, a) / 1e9,
            frame.value(k.O_KV_FAR, a) / 1e9,
            frame.value(k.O_ACTIVATIONS, a) / 1e9,
            frame.value(k.O_OVERHEAD, a) / 1e9,
            frame.value(k.O_USABLE, a) / 1e9,
            frame.value(k.O_CAPACITY, a) / 1e9,
            int(frame.value(k.O_MAX_BATCH, a)),
            _fits(frame, a),
            codes.FIT_REASONS[int(frame.value(k.O_FIT_CODE, a))],
            int(frame.value(k.O_TP_NEEDED, a)) or "",
            offload_needed if offload_needed >= 0 else "",
            int(frame.value(k.O_WAVES, a)),
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
        devices = frame.value(k.O_DEVICES, a)
        rows.append((
            a,
            int(devices),
            frame.value(k.O_TTFT, a) * 1e3,
            frame.value(k.O_ITL, a) * 1e3,
            frame.value(k.O_DEC_T_HOST, a) * 1e3,
            frame.value(k.O_E2E, a),
            frame.value(k.O_THROUGHPUT_OUTPUT, a),
            frame.value(k.O_THROUGHPUT_OUTPUT, a) / devices,
            frame.value(k.O_THROUGHPUT_TOTAL, a),
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
            def value(row: int, index: int = index) -> float:
                return float(frame.sweep_values(row, a)[index])

            rows.append((
                a,
                int(batch),
                value(k.O_E2E),
                value(k.O_THROUGHPUT_OUTPUT),
                value(k.O_ITL) * 1e3,
                value(k.O_TTFT) * 1e3,
                "yes" if value(k.O_FITS) else "no",
                int(value(k.O_WAVES)),
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
            int(frame.value(k.O_DEVICES, a)),
            frame.value(k.O_POWER, a),
            frame.value(k.O_PRE_POWER, a),
            frame.value(k.O_DEC_POWER, a),
            frame.value(k.O_ENERGY, a),
            frame.value(k.O_TOKENS_PER_J, a),
            frame.value(k.O_OUTPUT_TOKENS_PER_J, a),
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
