"""The decode crossover: the smallest batch at which batching turns decode compute-bound.

One decode step's compute time grows with the batch while its weight reads do not, so past
some batch its compute time reaches its memory time (both as the engine computes them). Where
a class runs operators one after another, the linear layers take their own roofline, and the
batch at which their compute reaches their weight and activation reads is where batching stops
amortising those reads. A KV cache that grows with every sequence can keep that from ever
happening, and so can memory, by capping the batch first.

The search: one kernel call over a log-spaced batch sweep up to the largest batch that fits
(or up to :data:`CROSSOVER_MAX_BATCH` for a scenario that does not fit, whose numbers are
hypothetical), then a few calls that narrow the bracket where the condition first holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..core.scenario import Scenario
from ..physics.engine import Engine
from ..physics.results import Outputs, Result

CROSSOVER_MAX_BATCH = 2**20
_SWEEP_POINTS = 61
_REFINE_POINTS = 31  # batches per narrowing call: a bracket shrinks 32-fold per call

# The Scenario fields the search reads: all but the batch, which it sweeps.
DEPENDS_ON: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Scenario) if f.name != "batch")


@dataclass(frozen=True)
class Marginal:
    """Decode compute and memory time per step that one more sequence adds, from the two
    largest batches swept (each at least pp, so split into pp micro-batches)."""

    compute_s: float
    memory_s: float
    at_batch: int  # the larger of the two


@dataclass(frozen=True)
class Crossover:
    batch: int | None  # smallest batch where the compared compute time reaches the memory time
    batches: np.ndarray  # the log-spaced sweep
    sweep: np.ndarray  # kernel outputs over the sweep [N_OUTPUT_ROWS, len(batches)]
    limit: int  # the largest batch searched

    def marginal(self, pp: int) -> Marginal | None:
        """What one more sequence adds per decode step near the end of the sweep; None if
        fewer than two swept batches reach ``pp``."""
        index = np.flatnonzero(self.batches >= pp)
        if len(index) < 2:
            return None
        i, j = index[-2], index[-1]
        micro = np.minimum(self.batches, pp)
        decode = Outputs(self.sweep).decode
        compute = micro * decode.compute_time_s
        memory = micro * decode.memory_time_s
        width = float(self.batches[j] - self.batches[i])
        return Marginal(float((compute[j] - compute[i]) / width), float((memory[j] - memory[i]) / width),
                        int(self.batches[j]))


def compute_reaches_memory(out: np.ndarray) -> np.ndarray:
    """The whole decode pass: all its compute time against all its memory time (the bound)."""
    decode = Outputs(out).decode
    return decode.compute_time_s >= decode.memory_time_s


def linear_compute_reaches_reads(out: np.ndarray) -> np.ndarray:
    """The decode pass's linear layers: their compute time against their weight and activation
    reads, attention and its KV cache taken out (what sets their time where operators run one
    after another)."""
    decode = Outputs(out).decode
    return (decode.compute_time_s - decode.attention_compute_time_s
            >= decode.memory_time_s - decode.attention_memory_time_s)


def sweep_limit(result: Result) -> int:
    """The largest batch worth trying. Beyond the largest batch that fits, a batch runs in
    waves of at most that many sequences and the engine reports one of those waves' steps, so
    a scenario that fits turns compute-bound within its largest batch or not at all."""
    if result.fits:
        return min(result.memory.max_batch, CROSSOVER_MAX_BATCH)
    return CROSSOVER_MAX_BATCH


def find_crossover(
    engine: Engine,
    scenario: Scenario,
    limit: int,
    reached_at: Callable[[np.ndarray], np.ndarray] = compute_reaches_memory,
    swept: Crossover | None = None,
) -> Crossover:
    """Sweep the batch on a log scale up to ``limit`` in one kernel call (or reuse ``swept``'s
    sweep), then narrow the first bracket where ``reached_at`` holds with a few more calls.
    ``scenario`` must be resolved."""
    if swept is None:
        batches = np.unique(np.round(np.geomspace(1, limit, _SWEEP_POINTS)).astype(np.int64))
        sweep = engine.evaluate_batches(scenario, batches)
    else:
        batches, sweep = swept.batches, swept.sweep
    reached = reached_at(sweep)
    if not reached.any():
        return Crossover(None, batches, sweep, limit)
    first = int(np.argmax(reached))
    if first == 0:
        return Crossover(int(batches[0]), batches, sweep, limit)
    low, high = int(batches[first - 1]), int(batches[first])  # not reached at low, reached at high
    while high - low > 1:
        points = np.unique(np.round(np.linspace(low, high, _REFINE_POINTS + 2)).astype(np.int64))
        points = points[(points > low) & (points < high)]
        reached = reached_at(engine.evaluate_batches(scenario, points))
        if reached.any():
            index = int(np.argmax(reached))
            high = int(points[index])
            low = int(points[index - 1]) if index > 0 else low
        else:
            low = int(points[-1])
    return Crossover(high, batches, sweep, limit)


@dataclass(frozen=True)
class Crossovers:
    """Both searches of one scenario, sharing one sweep."""

    whole_pass: Crossover
    linear_layers: Crossover | None  # only where the class runs operators (partly) one after another


def crossovers(engine: Engine, scenario: Scenario, result: Result) -> Crossovers:
    """The whole decode pass's crossover and, where operators do not fully overlap, the linear
    layers'. ``scenario`` must be resolved and ``result`` its prediction."""
    limit = sweep_limit(result)
    whole_pass = find_crossover(engine, scenario, limit)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    linear_layers = None
    if engine.constants.for_class(accelerator.architecture_class).operator_overlap < 1.0:
        linear_layers = find_crossover(engine, scenario, limit, linear_compute_reaches_reads, swept=whole_pass)
    return Crossovers(whole_pass, linear_layers)


def decode_crossover_batch(engine: Engine, scenario: Scenario) -> int | None:
    """The smallest batch at which one decode step's compute time reaches its memory time
    (both as the engine computes them), searched up to the largest batch that fits (up to
    ``CROSSOVER_MAX_BATCH`` for a scenario that does not fit, whose numbers are hypothetical);
    None if it never does: the KV cache grows with the batch, or the batch stops fitting first."""
    scenario = engine.resolve(scenario)
    return find_crossover(engine, scenario, sweep_limit(engine.predict(scenario))).batch


def linear_layers_crossover_batch(engine: Engine, scenario: Scenario) -> int | None:
    """As :func:`decode_crossover_batch` for the decode pass's linear layers alone: the smallest
    batch at which their compute time reaches the time of their weight and activation reads.
    Where a class runs operators one after another, batching amortises the weight reads up to
    here and no further."""
    scenario = engine.resolve(scenario)
    limit = sweep_limit(engine.predict(scenario))
    return find_crossover(engine, scenario, limit, linear_compute_reaches_reads).batch
