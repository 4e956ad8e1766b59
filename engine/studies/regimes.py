"""Regime fitness: every accelerator scored on the first paper's operational regimes.

Sharma 2025 (Sec. IV-A/B, Fig. 8) grades seven accelerators on eight regimes in words
(Excellent ... Limited). Here each regime is a concrete model, workload, layout rule and metric
(``resources/regimes.toml``, which says why each was chosen; read by ``catalog/regimes.py``),
computed by the engine's kernels for every accelerator of the catalog and normalised per
regime to the best one (1.0 = best, direction aware). Where an accelerator cannot run a regime
under its layout rule, the cell says so (``fits`` false, score 0, value 0, and the reason)
rather than holding NaN.

Use::

    grid = regime_scores(Engine())          # all accelerators of the engine's catalog
    grid.cell("h100-sxm", "single_stream")  # raw value, unit, metric text, fit, reason, grade
    regimes_table(grid).to_csv()            # regimes.csv

The whole grid costs two kernel calls: one to find each layout, one for every scenario of
every regime (a few thousand columns).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..catalog.regimes import LayoutRule, Regime, RegimeDefinitions, load_regimes
from ..core import codes
from ..core.scenario import Scenario
from ..core.table import Table
from ..core.units import format_time
from ..physics.engine import Engine
from ..physics.results import N_OUTPUT_ROWS, Outputs


@dataclass(frozen=True)
class RegimeCell:
    """One accelerator on one regime."""

    accelerator: str
    regime: str
    value: float  # the metric's raw value in ``unit``; 0.0 where it does not fit
    unit: str
    metric_text: str
    score: float  # value normalised to the best accelerator of the regime, 0..1
    fits: bool  # the regime's model runs on the accelerator under its layout rule
    reason: str  # why it does not fit, or why the value is 0; "" otherwise
    paper_rating: str | None  # the paper's grade, where it grades this accelerator
    devices: int  # devices the layout uses (0 where none holds the model)
    tp: int
    pp: int
    batch: int  # the batch the value was taken at (0 where none)
    detail: str  # the numbers behind the value, in a sentence
    switch_time_s: float | None = None  # multi-model: time to load one model's weights from the far tier


@dataclass(frozen=True)
class RegimeGrid:
    """Accelerators x regimes. Arrays are indexed [accelerator, regime] in the order of
    ``accelerators`` and ``regimes``."""

    regimes: tuple[Regime, ...]
    accelerators: tuple[str, ...]
    scores: np.ndarray  # float, 0..1
    values: np.ndarray  # float, raw metric values (0 where it does not fit)
    fits: np.ndarray  # bool
    cells: tuple[tuple[RegimeCell, ...], ...]
    paper_source: str
    layout: LayoutRule
    elapsed_s: float  # wall time of regime_scores, kernel calls included

    def cell(self, accelerator: str, regime: str) -> RegimeCell:
        return self.cells[self.accelerators.index(accelerator)][self.regime_index(regime)]

    def regime_index(self, regime: str) -> int:
        for index, item in enumerate(self.regimes):
            if item.id == regime:
                return index
        raise KeyError(f"unknown regime {regime!r}; known: {', '.join(r.id for r in self.regimes)}")

    def best(self, regime: str) -> str | None:
        """The accelerator scoring 1.0 on a regime (None if none runs it)."""
        column = self.scores[:, self.regime_index(regime)]
        if not np.any(column > 0.0):
            return None
        return self.accelerators[int(np.argmax(column))]


# ---- scoring ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Layout:
    tp: int
    pp: int
    reason: str = ""  # why there is no layout; "" when there is one

    @property
    def devices(self) -> int:
        return self.tp * self.pp


def split_devices(devices: int, layers: int, max_tp: int) -> tuple[int, int]:
    """(tp, pp) for a power-of-two device count: tensor parallelism up to ``max_tp``, pipeline
    stages for the rest, never more stages than the largest power of two not above ``layers``."""
    tp = min(devices, max_tp)
    pp = devices // tp
    stage_cap = 2 ** math.floor(math.log2(layers))
    if pp > stage_cap:
        pp = stage_cap
        tp = devices // pp
    return tp, pp


def row_order(engine: Engine, definitions: RegimeDefinitions) -> tuple[str, ...]:
    """The engine's accelerators, the paper's graded ones first in its order, then the rest of
    the catalog in its own."""
    catalog_ids = tuple(engine.catalog.accelerators)
    graded = tuple(a for a in definitions.paper_ratings if a in catalog_ids)
    return graded + tuple(a for a in catalog_ids if a not in graded)


def regime_scores(
    engine: Engine, accelerator_ids: Sequence[str] | None = None, definitions: RegimeDefinitions | None = None
) -> RegimeGrid:
    """Score every accelerator (default: all of the engine's catalog) on every regime."""
    started = time.perf_counter()
    definitions = definitions or load_regimes()
    accelerators = tuple(accelerator_ids) if accelerator_ids is not None else tuple(engine.catalog.accelerators)
    for accelerator in accelerators:
        engine.catalog.accelerator(accelerator)  # a clear error for an unknown id
    regimes = definitions.regimes
    for regime in regimes:
        engine.model(regime.model)  # a clear error for a model id the catalog lacks

    layouts = _layouts(engine, regimes, accelerators, definitions.layout)
    raw = _measure_all(engine, regimes, accelerators, layouts)
    shape = (len(accelerators), len(regimes))
    values = np.array([[cell.value for cell in row] for row in raw], dtype=float).reshape(shape)
    fits = np.array([[cell.fits for cell in row] for row in raw], dtype=bool).reshape(values.shape)
    scores = _scores(regimes, values, fits)
    cells = tuple(
        tuple(
            _cell(accelerator, regime, raw[a][r], layouts[a][r], float(scores[a, r]), definitions)
            for r, regime in enumerate(regimes)
        )
        for a, accelerator in enumerate(accelerators)
    )
    return RegimeGrid(
        regimes=regimes,
        accelerators=accelerators,
        scores=scores,
        values=values,
        fits=fits,
        cells=cells,
        paper_source=definitions.paper_source,
        layout=definitions.layout,
        elapsed_s=time.perf_counter() - started,
    )


def _measure_all(
    engine: Engine, regimes: Sequence[Regime], accelerators: Sequence[str], layouts: list[list[_Layout]]
) -> list[list[_Raw]]:
    """Every cell's raw metric, [accelerator][regime], from one kernel call over every scenario
    of every cell that has a layout."""
    scenarios: list[Scenario] = []
    columns: dict[tuple[int, int], list[int]] = {}
    short_columns: dict[tuple[int, int], list[int]] = {}
    for a_index, accelerator in enumerate(accelerators):
        for r_index, regime in enumerate(regimes):
            layout = layouts[a_index][r_index]
            if layout.reason:
                continue
            cell_columns = columns.setdefault((a_index, r_index), [])
            for batch in regime.batches:
                cell_columns.append(len(scenarios))
                scenarios.append(regime.scenario(accelerator, batch, layout.tp, layout.pp))
            if regime.short_input_len is not None:
                short = short_columns.setdefault((a_index, r_index), [])
                for batch in regime.batches:
                    short.append(len(scenarios))
                    scenarios.append(regime.scenario(accelerator, batch, layout.tp, layout.pp, regime.short_input_len))
    out = engine.evaluate(scenarios) if scenarios else np.empty((N_OUTPUT_ROWS, 0))

    raw: list[list[_Raw]] = []
    for a_index, accelerator in enumerate(accelerators):
        row = []
        for r_index, regime in enumerate(regimes):
            layout = layouts[a_index][r_index]
            if layout.reason:
                row.append(_Raw(0.0, False, layout.reason, 0, ""))
                continue
            row.append(
                _measure(
                    engine, regime, accelerator, layout, out,
                    columns[(a_index, r_index)], short_columns.get((a_index, r_index), []),
                )
            )
        raw.append(row)
    return raw


def _scores(regimes: Sequence[Regime], values: np.ndarray, fits: np.ndarray) -> np.ndarray:
    """Each value over the best of its regime (best over it where lower is better), among the
    accelerators that run the regime with a value above 0; 0 elsewhere."""
    usable = fits & (values > 0.0)
    scores = np.zeros(values.shape)
    for r_index, regime in enumerate(regimes):
        column = values[:, r_index]
        ok = usable[:, r_index]
        if not ok.any():
            continue
        if regime.direction == "higher":
            scores[ok, r_index] = column[ok] / column[ok].max()
        else:
            scores[ok, r_index] = column[ok].min() / column[ok]
    return scores


def _cell(
    accelerator: str, regime: Regime, raw: _Raw, layout: _Layout, score: float, definitions: RegimeDefinitions
) -> RegimeCell:
    return RegimeCell(
        accelerator=accelerator,
        regime=regime.id,
        value=float(raw.value),
        unit=regime.unit,
        metric_text=regime.metric_text,
        score=score,
        fits=bool(raw.fits),
        reason=raw.reason,
        paper_rating=definitions.paper_ratings.get(accelerator, {}).get(regime.id),
        devices=layout.devices if not layout.reason else 0,
        tp=layout.tp,
        pp=layout.pp,
        batch=raw.batch,
        detail=raw.detail,
        switch_time_s=raw.switch_time_s,
    )


def _layouts(
    engine: Engine, regimes: Sequence[Regime], accelerators: Sequence[str], rule: LayoutRule
) -> list[list[_Layout]]:
    """Each cell's layout, from one kernel call over batch-1 probes: for a "smallest" regime,
    every power-of-two device count up to the rule's maximum, split by ``split_devices``; the
    smallest that holds the weights and one sequence at full context wins."""
    counts = [2**i for i in range(math.floor(math.log2(rule.max_devices)) + 1)]
    probes: list[Scenario] = []
    starts: list[list[int]] = []
    for accelerator in accelerators:
        row = []
        for regime in regimes:
            row.append(len(probes))
            if regime.layout == "one-device":
                probes.append(regime.scenario(accelerator, 1))
                continue
            layers = engine.model(regime.model).n_layers
            for n in counts:
                tp, pp = split_devices(n, layers, rule.max_tp)
                probes.append(regime.scenario(accelerator, 1, tp, pp))
        starts.append(row)
    out = engine.evaluate(probes) if probes else np.empty((N_OUTPUT_ROWS, 0))

    layouts: list[list[_Layout]] = []
    for a_index in range(len(accelerators)):
        row = []
        for r_index, regime in enumerate(regimes):
            first = starts[a_index][r_index]
            if regime.layout == "one-device":
                if Outputs(out).fits[first]:
                    row.append(_Layout(1, 1))
                    continue
                needed = Outputs(out).memory.weights_and_runtime_bytes[first]
                row.append(_Layout(1, 1, (
                    f"does not fit on one device: {codes.FIT_REASONS[int(Outputs(out).fit_code[first])]} "
                    f"({needed / 1e9:.1f} GB of weights and runtime, "
                    f"{Outputs(out).memory.usable_bytes[first] / 1e9:.1f} GB usable)"
                )))
                continue
            layers = engine.model(regime.model).n_layers
            for offset, n in enumerate(counts):
                if Outputs(out).fits[first + offset]:
                    row.append(_Layout(*split_devices(n, layers, rule.max_tp)))
                    break
            else:
                last = first + len(counts) - 1
                row.append(_Layout(1, 1, (
                    f"does not fit on up to {counts[-1]:,} devices (TP x PP): "
                    f"{codes.FIT_REASONS[int(Outputs(out).fit_code[last])]}"
                )))
        layouts.append(row)
    return layouts


@dataclass(frozen=True)
class _Raw:
    value: float
    fits: bool
    reason: str
    batch: int
    detail: str
    switch_time_s: float | None = None


def _layout_text(layout: _Layout) -> str:
    if layout.devices == 1:
        return "one device"
    return f"{layout.devices:,} devices (TP {layout.tp} x PP {layout.pp})"


@dataclass(frozen=True)
class _CellRun:
    """One cell's scenarios, evaluated: what its metric is taken from."""

    engine: Engine
    regime: Regime
    accelerator: str
    devices: int
    where: str  # the layout, in words
    out: Outputs
    columns: list[int]  # the regime's batches, in order
    short_columns: list[int]  # the same at the short prompt (long_context_tokens only)
    fitting: list[tuple[int, int]]  # (batch, column) of the batches that fit


def _measure(
    engine: Engine,
    regime: Regime,
    accelerator: str,
    layout: _Layout,
    out: np.ndarray,
    columns: list[int],
    short_columns: list[int],
) -> _Raw:
    outputs = Outputs(out)
    where = _layout_text(layout)
    fitting = [(b, j) for b, j in zip(regime.batches, columns, strict=True) if outputs.fits[j]]
    if not fitting:
        code = int(outputs.fit_code[columns[0]])
        return _Raw(0.0, False, f"does not fit on {where}: {codes.FIT_REASONS[code]}", 0, "")
    if regime.metric not in _MEASURES:
        raise ValueError(f"unknown metric {regime.metric!r}")  # load_regimes admits only METRICS
    run = _CellRun(engine, regime, accelerator, layout.devices, where, outputs, columns, short_columns, fitting)
    return _MEASURES[regime.metric](run)


def _ttft(run: _CellRun) -> _Raw:
    batch, j = run.fitting[0]
    ttft_ms = run.out.ttft_s[j] * 1e3
    return _Raw(ttft_ms, True, "", batch, f"TTFT {ttft_ms:.4g} ms on {run.where}")


def _decode_tokens(run: _CellRun) -> _Raw:
    batch, j = run.fitting[0]
    rate = 1.0 / run.out.itl_s[j]
    return _Raw(rate, True, "", batch, f"ITL {run.out.itl_s[j] * 1e3:.4g} ms on {run.where}")


def _requests_within_itl(run: _CellRun) -> _Raw:
    out, regime = run.out, run.regime
    target = regime.itl_target_s
    best = (0.0, 0)
    for batch, j in run.fitting:
        if out.waves[j] == 1 and out.itl_s[j] <= target:
            rate = out.throughput_output_tok_s[j] / regime.output_len / run.devices
            if rate > best[0]:
                best = (rate, batch)
    if best[1] == 0:
        first_itl = out.itl_s[run.fitting[0][1]]
        return _Raw(0.0, True, (
            f"no batch keeps the inter-token latency within {target * 1e3:g} ms on {run.where} "
            f"(batch {run.fitting[0][0]}: {format_time(first_itl)})"
        ), 0, "")
    j = run.columns[regime.batches.index(best[1])]
    return _Raw(best[0], True, "", best[1], (
        f"{best[0]:.4g} requests/s per device at batch {best[1]} (ITL {format_time(out.itl_s[j])}) on {run.where}"
    ))


def _peak_tokens(run: _CellRun) -> _Raw:
    """peak_output_tokens and peak_prefill_tokens: the best rate per device over the batches."""
    out, regime = run.out, run.regime
    best = (0.0, 0)
    for batch, j in run.fitting:
        if regime.metric == "peak_output_tokens":
            rate = out.throughput_output_tok_s[j] / run.devices
        else:
            rate = batch * regime.input_len / out.e2e_latency_s[j] / run.devices
        if rate > best[0]:
            best = (rate, batch)
    j = run.columns[regime.batches.index(best[1])]
    waves = int(out.waves[j])
    in_waves = f", in {waves} waves" if waves > 1 else ""
    detail = f"{best[0]:.4g} tokens/s per device at batch {best[1]}{in_waves} on {run.where}"
    return _Raw(best[0], True, "", best[1], detail)


def _long_context_tokens(run: _CellRun) -> _Raw:
    out, regime = run.out, run.regime
    batch, j = run.fitting[0]
    short_j = run.short_columns[regime.batches.index(batch)]
    long_rate = out.throughput_output_tok_s[j] / run.devices
    waves = int(out.waves[j])
    in_waves = f" (in {waves} waves)" if waves > 1 else ""
    detail = (f"{long_rate:.4g} tokens/s per device at {regime.input_len:,}-token prompts{in_waves}, batch {batch}, "
              f"on {run.where}")
    if out.fits[short_j]:
        short_rate = out.throughput_output_tok_s[short_j] / run.devices
        detail += f": {long_rate / short_rate:.1%} of its {short_rate:.4g} at {regime.short_input_len:,}-token prompts"
    return _Raw(long_rate, True, "", batch, detail)


def _models_resident(run: _CellRun) -> _Raw:
    memory = run.out.memory
    batch, j = run.fitting[0]
    per_copy = memory.per_copy_bytes[j]
    room = memory.room_for_copies_bytes[j]
    copies = math.floor(room / per_copy)
    switch = _switch_time(run.engine, run.accelerator, memory.weights_bytes[j])
    switch_text = (
        f"; loading one from {run.engine.catalog.accelerator(run.accelerator).tier('far').name} takes {switch:.3g} s"
        if switch is not None else "; no far tier in the catalog to load a model from"
    )
    detail = f"{per_copy / 1e9:.3g} GB per copy in {room / 1e9:.3g} GB usable{switch_text}"
    if copies < 1:
        return _Raw(0.0, True, f"one copy runs, but not with the KV cache of {batch} sequences", batch, detail, switch)
    return _Raw(float(copies), True, "", batch, detail, switch)


# How each metric of catalog/regimes.py's METRICS is taken from a cell's evaluated scenarios.
_MEASURES = {
    "ttft": _ttft,
    "requests_within_itl": _requests_within_itl,
    "peak_output_tokens": _peak_tokens,
    "long_context_tokens": _long_context_tokens,
    "models_resident": _models_resident,
    "peak_prefill_tokens": _peak_tokens,
    "decode_tokens": _decode_tokens,
}


def _switch_time(engine: Engine, accelerator_id: str, weights_bytes: float) -> float | None:
    """Seconds to stream one copy of the weights in from the far tier at its sustained link
    rate (the rate offloaded weights are read at), or None without a far tier."""
    accelerator = engine.catalog.accelerator(accelerator_id)
    far = accelerator.far_tier
    if far is None or far.effective_bandwidth_Bps <= 0.0:
        return None
    link = engine.constants.for_class(accelerator.architecture_class).link_efficiency
    return weights_bytes / (far.effective_bandwidth_Bps * link * float(accelerator.software_efficiency))


# ---- table -----------------------------------------------------------------------------------


def regimes_table(grid: RegimeGrid) -> Table:
    """regimes.csv: one row per accelerator; per regime its raw value (empty where it does not
    fit), its score, the devices used, the paper's grade and a note (why it does not fit)."""
    headers: list[str] = ["accelerator"]
    for regime in grid.regimes:
        headers += [
            f"{regime.id}: {regime.metric} [{regime.unit}]",
            f"{regime.id}: score [fraction of best]",
            f"{regime.id}: devices [count]",
            f"{regime.id}: paper_rating",
            f"{regime.id}: note",
        ]
        if regime.metric == "models_resident":
            headers.append(f"{regime.id}: switch_time [s]")
    rows = []
    for a_index, accelerator in enumerate(grid.accelerators):
        row: list[object] = [accelerator]
        for r_index, regime in enumerate(grid.regimes):
            cell = grid.cells[a_index][r_index]
            row += [
                cell.value if cell.fits and cell.value > 0.0 else "",
                cell.score,
                cell.devices or "",
                cell.paper_rating or "",
                cell.reason,
            ]
            if regime.metric == "models_resident":
                row.append(cell.switch_time_s if cell.switch_time_s is not None else "")
        rows.append(tuple(row))
    return Table("regimes", tuple(headers), tuple(rows))


# ---- the first paper's "3.7x" --------------------------------------------------------------


@dataclass(frozen=True)
class RegimeSpread:
    """How far apart the paper's graded accelerators are on one regime."""

    regime: str
    ratio: float  # best value over worst, whichever direction is better
    best: str
    worst: str
    accelerators: int  # of the graded ones, those that run the regime


def times_text(ratio: float) -> str:
    """A ratio as '5.21x' or, from 100 up, '2,157x'."""
    return f"{ratio:,.0f}x" if ratio >= 100 else f"{ratio:.3g}x"


def architecture_spreads(grid: RegimeGrid, accelerators: Sequence[str]) -> tuple[RegimeSpread, ...]:
    """Per regime, the best of ``accelerators`` over the worst in the regime's own metric, among
    those that run it (a value of 0, such as no model resident, does not count as running)."""
    spreads = []
    for regime in grid.regimes:
        cells = [grid.cell(accelerator, regime.id) for accelerator in accelerators]
        running = [(cell.value, cell.accelerator) for cell in cells if cell.fits and cell.value > 0.0]
        if len(running) < 2:
            continue
        low, high = min(running), max(running)
        best, worst = (low, high) if regime.direction == "lower" else (high, low)
        spreads.append(RegimeSpread(regime.id, high[0] / low[0], best[1], worst[1], len(running)))
    return tuple(spreads)
