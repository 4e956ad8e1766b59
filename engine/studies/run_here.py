"""Will it run here? Every model the engine knows on one device, at the scenario's precisions
and context: does it fit, how large a batch, how fast at batch 1, and, where it does not fit,
what would run it.

For each model, on one device (no parallelism, no offloading), at batch 1:

- **fits**: the weights and one sequence at the full context (input + output) fit the device's
  usable memory (the engine's memory fit, ``Result.fits``);
- **largest batch**: the most sequences whose KV cache at that context fits beside the weights
  (``memory.max_batch``);
- **decode tokens/s**: one sequence's decode rate, 1 / inter-token latency (``itl_s``).

Where a model does not fit, two ways to run it are tried, and the first that runs is its answer:

1. a **lower precision on this device**: weights at 8 bits, then KV cache at 8 bits as well,
   then weights at 4 bits, then both (the least narrowing first; 8-bit as FP8 where the device
   has FP8 units, else INT8; 4-bit as FP4 where it has FP4 units, else INT4);
2. **more devices of this kind**: tensor parallelism over the fewest devices (a power of two)
   that hold the weights and one sequence (the engine's ``tp_needed``).

Rows are sorted: fits, then runs at a lower precision, then needs more devices, then runs
nowhere; within each, the fastest first. The whole study is two kernel calls.

Use::

    study = run_here(Engine(), "rtx-4090", Workload(input_len=1024, output_len=256))
    study.row("llama-3.1-8b").max_batch
    run_here_table(study).to_csv()          # run_here.csv
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..core import codes
from ..core.accelerator import Accelerator
from ..core.precision import PRECISION_LABELS, bytes_per_element
from ..core.scenario import Scenario, Workload
from ..core.table import Table
from ..physics.engine import Engine
from ..physics.results import Outputs

# A model's answer on the device, in the order rows are sorted.
VERDICTS: tuple[str, ...] = ("fits", "lower_precision", "more_devices", "none")
VERDICT_TEXTS: dict[str, str] = {
    "fits": "yes",
    "lower_precision": "at a lower precision",
    "more_devices": "needs more devices",
    "none": "no",
}


@dataclass(frozen=True)
class RunOption:
    """A way to run a model that does not fit on one device at the scenario's settings."""

    weight_precision: str
    kv_precision: str
    devices: int  # tensor-parallel devices of this kind (1: this device alone)
    fits: bool
    max_batch: int  # sequences per replica at the full context
    itl_s: float  # batch 1
    fit_reason: str  # why it does not fit ("" where it does)

    @property
    def decode_tok_s(self) -> float:
        return 1.0 / self.itl_s if self.itl_s > 0 else 0.0

    def label(self, workload: Workload) -> str:
        """What changes from the scenario's settings, in a few words: "FP8 weights",
        "INT4 weights, FP8 KV cache", "TP 4 (4 devices)"."""
        if self.devices > 1:
            return f"TP {self.devices} ({self.devices} devices)"
        changed = []
        if self.weight_precision != workload.weight_precision:
            changed.append(f"{PRECISION_LABELS[self.weight_precision]} weights")
        if self.kv_precision != workload.kv_precision:
            changed.append(f"{PRECISION_LABELS[self.kv_precision]} KV cache")
        return ", ".join(changed)


@dataclass(frozen=True)
class ModelRun:
    """One model on the device, at batch 1 and the scenario's precisions and context."""

    model: str  # id
    name: str
    total_params: float
    verdict: str  # one of VERDICTS
    fit_reason: str  # why it does not fit on one device ("" where it fits)
    max_batch: int  # on one device (0 where it does not fit)
    itl_s: float  # one device, batch 1 (what the engine computes even where it does not fit)
    weights_bytes: float  # on one device
    kv_cache_bytes: float  # one sequence at the full context, on one device
    usable_bytes: float  # the device's usable memory
    lower_precision: RunOption | None  # where it does not fit: the first narrowing that fits here
    more_devices: RunOption | None  # where it does not fit: the fewest devices that hold it (None: none up to 65,536)
    warnings: tuple[str, ...]  # the engine's warnings for one device at the settings

    @property
    def fits(self) -> bool:
        return self.verdict == "fits"

    @property
    def option(self) -> RunOption | None:
        """What runs it where it does not fit at the settings: the lower precision, else more devices."""
        if self.verdict == "lower_precision":
            return self.lower_precision
        if self.verdict == "more_devices":
            return self.more_devices
        return None

    @property
    def decode_tok_s(self) -> float:
        """Batch-1 decode tokens/s of what runs: this device at the settings where it fits,
        else its option; 0 where nothing runs it."""
        if self.fits:
            return 1.0 / self.itl_s
        option = self.option
        return option.decode_tok_s if option is not None else 0.0

    @property
    def runs_max_batch(self) -> int:
        """The largest batch of what runs (per replica for more devices); 0 where nothing does."""
        if self.fits:
            return self.max_batch
        option = self.option
        return option.max_batch if option is not None else 0


@dataclass(frozen=True)
class RunHere:
    accelerator: str  # id
    accelerator_name: str
    workload: Workload  # batch 1, the scenario's lengths and precisions
    usable_bytes: float  # one device's usable memory
    rows: tuple[ModelRun, ...]  # sorted: VERDICTS order, then the fastest first

    @property
    def context(self) -> int:
        """The longest context a sequence reaches (the memory fit's): input + output tokens."""
        return self.workload.input_len + self.workload.output_len

    def row(self, model_id: str) -> ModelRun:
        for row in self.rows:
            if row.model == model_id:
                return row
        raise KeyError(f"no model {model_id!r} in the study")

    def count(self, verdict: str) -> int:
        return sum(1 for row in self.rows if row.verdict == verdict)


def lower_precisions(workload: Workload, accelerator: Accelerator) -> tuple[tuple[str, str], ...]:
    """(weight, KV cache) precisions narrower than the workload's, the least narrowing first:
    8-bit weights, 8-bit weights and KV cache, 4-bit weights, 4-bit weights and 8-bit KV cache.
    A format the workload already has at that width or narrower is kept."""
    eight = "fp8" if accelerator.peak("fp8") > 0 else "int8"
    four = "fp4" if accelerator.peak("fp4") > 0 else "int4"
    weights, kv = workload.weight_precision, workload.kv_precision

    def at_most(current: str, narrower: str) -> str:
        return current if bytes_per_element(current) <= bytes_per_element(narrower) else narrower

    candidates = (
        (at_most(weights, eight), kv),
        (at_most(weights, eight), at_most(kv, eight)),
        (at_most(weights, four), kv),
        (at_most(weights, four), at_most(kv, eight)),
    )
    return tuple(pair for pair in dict.fromkeys(candidates) if pair != (weights, kv))


def run_here(engine: Engine, accelerator_id: str, workload: Workload,
             model_ids: Sequence[str] | None = None) -> RunHere:
    """Every model (default: all the engine knows) on one ``accelerator_id`` device at
    ``workload``'s lengths and precisions, at batch 1; sorted as the module says."""
    accelerator = engine.catalog.accelerator(accelerator_id)
    workload = replace(workload, batch=1)
    models = [engine.model(m) for m in (model_ids if model_ids is not None else engine.model_index)]
    narrower = lower_precisions(workload, accelerator)

    # One call: each model at the settings, then at each narrower precision.
    scenarios = []
    for model in models:
        scenarios.append(Scenario.from_workload(model.id, accelerator.id, workload))
        scenarios += [Scenario.from_workload(model.id, accelerator.id,
                                             replace(workload, weight_precision=w, kv_precision=kv))
                      for w, kv in narrower]
    out = Outputs(engine.evaluate(scenarios))
    stride = 1 + len(narrower)
    base = np.arange(len(models)) * stride

    # A second call: the fewest devices that hold each model that does not fit at the settings.
    tensor_parallel: dict[int, int] = {}  # model index -> its column in the second call
    tp_scenarios = []
    for index, column in enumerate(base):
        tp = int(out.tp_needed[column])
        if not out.fits[column] and tp > 1:
            tensor_parallel[index] = len(tp_scenarios)
            tp_scenarios.append(Scenario.from_workload(models[index].id, accelerator.id, workload, tp=tp))
    tp_out = Outputs(engine.evaluate(tp_scenarios)) if tp_scenarios else None

    rows = []
    for index, model in enumerate(models):
        column = int(base[index])
        fits = bool(out.fits[column])
        lower = None
        if not fits:
            for offset, (w, kv) in enumerate(narrower, start=1):
                if out.fits[column + offset]:
                    lower = _option(out, column + offset, w, kv, 1)
                    break
        more = None
        if index in tensor_parallel:
            tp_column = tensor_parallel[index]
            more = _option(tp_out, tp_column, workload.weight_precision, workload.kv_precision,
                           int(tp_scenarios[tp_column].tp))
        if fits:
            verdict = "fits"
        elif lower is not None:
            verdict = "lower_precision"
        elif more is not None and more.fits:
            verdict = "more_devices"
        else:
            verdict = "none"
        rows.append(ModelRun(
            model=model.id,
            name=model.name,
            total_params=float(model.total_params),
            verdict=verdict,
            fit_reason="" if fits else codes.FIT_REASONS[int(out.fit_code[column])],
            max_batch=int(out.memory.max_batch[column]) if fits else 0,
            itl_s=float(out.itl_s[column]),
            weights_bytes=float(out.memory.weights_bytes[column]),
            kv_cache_bytes=float(out.memory.kv_cache_bytes[column]),
            usable_bytes=float(out.memory.usable_bytes[column]),
            lower_precision=None if fits else lower,
            more_devices=None if fits else more,
            warnings=tuple(codes.warning_texts(int(out.warning_bits[column]))),
        ))
    rows.sort(key=lambda row: (VERDICTS.index(row.verdict), -row.decode_tok_s, row.name))
    usable = float(out.memory.usable_bytes[0]) if len(models) else 0.0
    return RunHere(accelerator.id, accelerator.name, workload, usable, tuple(rows))


def _option(out: Outputs, column: int, weight_precision: str, kv_precision: str, devices: int) -> RunOption:
    fits = bool(out.fits[column])
    return RunOption(
        weight_precision=weight_precision,
        kv_precision=kv_precision,
        devices=devices,
        fits=fits,
        max_batch=int(out.memory.max_batch[column]) if fits else 0,
        itl_s=float(out.itl_s[column]),
        fit_reason="" if fits else codes.FIT_REASONS[int(out.fit_code[column])],
    )


def run_here_table(study: RunHere) -> Table:
    """run_here.csv: one row per model, in the study's order. Performance cells are empty
    where nothing runs; the option columns where the model fits at the settings."""
    rows = []
    for row in study.rows:
        option = row.option
        rows.append((
            study.accelerator_name,
            row.name,
            row.model,
            row.total_params / 1e9,
            VERDICT_TEXTS[row.verdict],
            row.fit_reason,
            row.max_batch if row.fits else "",
            1.0 / row.itl_s if row.fits else "",
            row.itl_s * 1e3 if row.fits else "",
            row.weights_bytes / 1e9,
            row.usable_bytes / 1e9,
            option.label(study.workload) if option is not None else "",
            option.devices if option is not None else "",
            option.weight_precision if option is not None else "",
            option.kv_precision if option is not None else "",
            option.max_batch if option is not None else "",
            option.decode_tok_s if option is not None else "",
        ))
    headers = (
        "device", "model", "model_id", "parameters [billion]", "runs_here", "why_not",
        "largest_batch [sequences]", "decode_batch_1 [tokens/s]", "itl_batch_1 [ms]",
        "weights [GB per device]", "usable_memory [GB per device]",
        "runs_with", "runs_with: devices", "runs_with: weight_precision", "runs_with: kv_precision",
        "runs_with: largest_batch [sequences per replica]", "runs_with: decode_batch_1 [tokens/s]",
    )
    return Table("run_here", headers, tuple(rows))
