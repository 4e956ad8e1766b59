"""Serving metrics from a run's outputs (either engine's: they are equal), measured as a steady
state (SERVING.md section 8).

A run has a warm-up (the system fills from empty), a steady state and a drain (arrivals stop,
the last replies finish in a shrinking batch). Rates taken over the whole span mix the three and
are biased low, so the figures that say what a deployment serves are read off a **measurement
window** of the steady state:

* **open and closed loop**: the requests issued in the window [start, end). The warm-up it
  leaves out is the later of the caller's (a run sized by ``study.steady_run``) and the
  truncation point MSER-5 finds in the occupancy seen by the arriving requests (Law & Kelton,
  *Simulation Modeling and Analysis*, ch. 9; White 1997); the window ends at the last arrival
  (or the caller's end). Latency percentiles are over the window's requests; throughput,
  goodput, power and the queue lengths are what the time bins record inside the window, rounded
  inward to whole bins.
* **offline** (every request at t = 0): the steady phase is while requests wait, the batch at
  its limit, from the first completion on (before it, the batch is still filling); throughput is
  the tokens emitted in it per second. A run whose requests all fit at once has no such phase:
  its throughput is that of the whole batch running, from its last first token to its first
  completion; latencies are over every request.

Definitions (times in s):

* TTFT = first token - issue; E2E = end - issue; TPOT = (end - first token) / (output - 1) for
  finished requests with more than one output token.
* ITL = every gap between consecutive tokens of a request, over the records that start in the
  window (and every irregular gap). A gap equal to one iteration (the request emitted in that
  replica's previous iteration too) is counted through the record's ``IT_ITL_TOKENS`` weight on
  its iterations' durations (a stretch's rise linearly from its first to its last); every other
  gap (a request skipped by the token budget, preempted and recomputed, or handed over by a
  disaggregated prefill pool) is written by the engine, exactly, into ``gap_s``. ``itl_exact``
  is False if that buffer overflowed.
* Percentiles are the inverted empirical CDF (numpy's ``inverted_cdf``, weighted where samples
  carry weights): the smallest sample v with (weight of samples <= v) >= q * total weight. They
  are always samples, and p50 <= p90 <= p99 <= max.
* **Stability** is judged on the waiting queue: ``queue_growth`` is its mean length in the
  window's last third less its mean in the first third, per request arriving between the two
  (near 0 when the server keeps up, near 1 - 1/load above capacity); the run is unstable when it
  exceeds ``UNSTABLE_QUEUE_GROWTH``. Total occupancy, which grows during every warm-up, is not
  used. ``offered_load`` (rho: the offered rate over the rate the deployment serves saturated)
  is the caller's to give.
* A run simulated for a sample of round-robin replicas (``RunResult.replicas_represented``)
  stands for them all: its extensive figures (throughput, power, energy, queue lengths) are
  scaled to the deployment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import layout

# Share of arrivals left in the queue beyond which a run counts as unstable: 0.1 means the server
# completed under 90 % of what arrived (an effective load above about 1.1).
UNSTABLE_QUEUE_GROWTH = 0.1
# A window shorter than this many bins says nothing steady.
MINIMUM_WINDOW_BINS = 8
# Or with fewer requests than this.
MINIMUM_WINDOW_REQUESTS = 16
# MSER-5 averages the series in batches of this many, and truncates at most this share of it.
MSER_BATCH = 5
MSER_MOST_TRUNCATED = 0.5


@dataclass(frozen=True)
class Distribution:
    """Summary of a sample (the unit of its values); NaN when it is empty."""

    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float


def weighted_percentiles(values, weights, quantiles):
    """Inverted-CDF percentiles of ``values`` weighted by ``weights`` at ``quantiles`` in [0, 1]."""
    values = np.asarray(values, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    # The relative slack keeps q * total from overshooting an exact rank by a rounding error.
    targets = np.asarray(quantiles, dtype=np.float64) * cumulative[-1] * (1.0 - 1e-12)
    ranks = np.minimum(np.searchsorted(cumulative, targets, side="left"), len(values) - 1)
    return values[order][ranks]


def _unweighted_distribution(values):
    """``distribution`` of equally weighted samples: one sort, the inverted-CDF ranks worked
    out directly (the same samples ``weighted_percentiles`` picks with unit weights)."""
    count = values.size
    ordered = np.sort(values)
    # The smallest rank r (1-based) with r >= q * count, with the same relative slack.
    ranks = [min(max(math.ceil(q * count * (1.0 - 1e-12)), 1), count) - 1 for q in (0.5, 0.9, 0.99)]
    return Distribution(count, float(values.sum() / count), float(ordered[ranks[0]]), float(ordered[ranks[1]]),
                        float(ordered[ranks[2]]), float(ordered[-1]))


def distribution(values, weights=None):
    values = np.asarray(values, dtype=np.float64)
    if weights is None:
        if values.size == 0:
            return Distribution(0, math.nan, math.nan, math.nan, math.nan, math.nan)
        return _unweighted_distribution(values)
    weights = np.asarray(weights, dtype=np.float64)
    keep = weights > 0
    values = values[keep]
    weights = weights[keep]
    if values.size == 0:
        return Distribution(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    p50, p90, p99 = weighted_percentiles(values, weights, (0.5, 0.9, 0.99))
    mean = float(np.sum(values * weights) / np.sum(weights))
    return Distribution(int(np.sum(weights)), mean, float(p50), float(p90), float(p99), float(values.max()))


def linear_runs_distribution(first, last, counts, weights):
    """``distribution`` of runs of samples: run i is ``counts[i]`` values evenly spaced from
    ``first[i]`` to ``last[i]``, each of weight ``weights[i]`` (a record's iterations). Each
    percentile is the smallest sample at which the weight at or below it reaches q: found by
    bisection on the value, so that no run is expanded into its samples."""
    first = np.asarray(first, dtype=np.float64)
    last = np.asarray(last, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.float64)
    weights = np.asarray(weights, dtype=np.float64)
    keep = (weights > 0) & (counts > 0)
    # Every run as a rising one: from its smaller end by a step of at least 0.
    low = np.minimum(first, last)[keep]
    high = np.maximum(first, last)[keep]
    counts, weights = counts[keep], weights[keep]
    if low.size == 0:
        return Distribution(0, math.nan, math.nan, math.nan, math.nan, math.nan)
    step = np.where(counts > 1, (high - low) / np.maximum(counts - 1, 1), 0.0)
    spaced = step > 0
    safe_step = np.where(spaced, step, 1.0)
    total = float(np.sum(counts * weights))

    def weight_at_most(value, low, counts, weights, spaced, safe_step):
        below = np.where(spaced, np.floor((value - low) / safe_step) + 1, np.where(low <= value, counts, 0.0))
        return float(np.minimum(np.maximum(below, 0.0), counts) @ weights)

    def smallest_sample_above(value, low, counts, step, spaced, safe_step):
        index = np.where(spaced, np.floor((value - low) / safe_step) + 1, 0.0)
        samples = np.where(index <= 0, low, low + index * step)
        return float(np.where((index < counts) & ((index > 0) | (low > value)), samples, np.inf).min(initial=np.inf))

    ends = np.unique(np.concatenate([low, high]))  # every run's first and last sample
    everything = (low, counts, weights, spaced, safe_step)

    def percentile(q):
        target = q * total * (1.0 - 1e-12)
        # First the ends the answer lies near: the smallest end whose weight reaches the target,
        # by bisection over the sorted ends (a dozen or so sums over every run, not ~60).
        first, last = 0, ends.size - 1
        while first < last:
            middle = (first + last) // 2
            if weight_at_most(ends[middle], *everything) >= target:
                last = middle
            else:
                first = middle + 1
        # The answer lies between the end before and that end, or, where rounding puts a sample
        # of another run on an end, beside it: bisection on the value from one end further out
        # on each side, over the runs that cross that span alone (the runs that end before it
        # count whole), then the smallest sample above the lower bound.
        below = float(ends[first - 2]) if first >= 2 else float(low.min()) - 1.0
        above = float(ends[min(first + 1, ends.size - 1)])
        crossing = (low < above) & (high > below)
        settled = float(np.sum((counts * weights)[~crossing & (high <= below)]))
        part = (low[crossing], counts[crossing], weights[crossing], spaced[crossing], safe_step[crossing])
        for _ in range(100):
            middle = 0.5 * (below + above)
            if middle <= below or middle >= above:
                break
            if settled + weight_at_most(middle, *part) >= target:
                above = middle
            else:
                below = middle
        candidate = smallest_sample_above(below, low[crossing], counts[crossing], step[crossing], spaced[crossing],
                                          safe_step[crossing])
        outside = low[~crossing & (low > below)]  # the runs beyond the span: their first samples
        return min(candidate, float(outside.min(initial=np.inf)), float(high.max()))

    mean = float(np.sum((low + high) / 2.0 * counts * weights) / total)
    return Distribution(int(round(total)), mean, percentile(0.5), percentile(0.9), percentile(0.99),
                        float(high.max()))


@dataclass(frozen=True)
class Window:
    """A measurement window [start_s, end_s) and how it was found: ``note`` says why there is no
    steady state to measure (the window is then the whole run), else None. An offline run
    without a steady phase measures its throughput on [rate_start_s, rate_end_s) when given:
    its whole batch running, from the last first token to the first completion."""

    start_s: float
    end_s: float
    offline: bool = False
    note: str | None = None
    rate_start_s: float | None = None
    rate_end_s: float | None = None
    undrained: bool = False  # stopped with its queue undrained (steady.DRAIN_LIMIT_E2E): unstable

    @property
    def length_s(self):
        return self.end_s - self.start_s

    @property
    def steady(self):
        return self.note is None


def mser5_truncation(series):
    """The number of leading values of ``series`` MSER-5 truncates as warm-up: the batch means
    of five minimise the squared standard error of the mean of what is kept, over truncations
    of at most half of them."""
    series = np.asarray(series, dtype=np.float64)
    batches = series.size // MSER_BATCH
    if batches < 2:
        return 0
    means = series[: batches * MSER_BATCH].reshape(batches, MSER_BATCH).mean(axis=1)
    # Sums over the kept tail means[d:], for every d, from the end.
    tail_sum = np.cumsum(means[::-1])[::-1]
    tail_square = np.cumsum((means * means)[::-1])[::-1]
    kept = np.arange(batches, 0, -1, dtype=np.float64)
    squared_deviations = tail_square - tail_sum * tail_sum / kept
    most = max(1, int(batches * MSER_MOST_TRUNCATED))
    statistic = squared_deviations[:most] / (kept[:most] * kept[:most])
    return int(np.argmin(statistic)) * MSER_BATCH


def occupancy_at_arrivals(issue_s, departure_s):
    """(arrival times in order, requests in the system each finds: issued before it and not yet
    departed)."""
    issued = np.isfinite(issue_s)
    arrivals = np.sort(issue_s[issued], kind="stable")
    departures = np.sort(departure_s[issued])
    in_system = np.arange(arrivals.size) - np.searchsorted(departures, arrivals, side="right")
    return arrivals, in_system


def _departures(result):
    finished = result.status == layout.STATUS_FINISHED
    departure_s = np.where(finished, result.end_s, np.inf)
    return np.where(result.status == layout.STATUS_REJECTED, result.issue_s, departure_s)


def _is_offline(issue_s):
    issued = issue_s[np.isfinite(issue_s)]
    return issued.size > 1 and issued.min() == issued.max()


def steady_window(result, warmup_s=None, end_s=None):
    """The run's measurement window (see the module notes): ``warmup_s`` is the least warm-up
    (MSER-5 may find a longer one), ``end_s`` the window's end (default: the last arrival)."""
    issue_s = result.issue_s
    issued = np.isfinite(issue_s)
    if not issued.any():
        return Window(0.0, 0.0, note="no request was issued")
    if _is_offline(issue_s):
        return _offline_window(result)
    arrivals, in_system = occupancy_at_arrivals(issue_s, _departures(result))
    truncated = mser5_truncation(in_system)
    start_s = float(arrivals[truncated])
    if warmup_s is not None:
        start_s = max(start_s, float(warmup_s))
    end = float(arrivals[-1]) if end_s is None else float(end_s)
    measured = int(np.sum((arrivals >= start_s) & (arrivals < end)))
    note = None
    if truncated >= MSER_MOST_TRUNCATED * arrivals.size - MSER_BATCH:
        note = "the occupancy never levelled off: no steady state in this run"
    elif measured < MINIMUM_WINDOW_REQUESTS or (end - start_s) < MINIMUM_WINDOW_BINS * result.bin_width_s:
        note = f"too few requests for a steady state ({measured} after the warm-up)"
    if note is not None:
        # Nothing steady to measure: the whole run, from its first issue to its last event.
        return Window(float(arrivals[0]), max(result.run_end_s, float(arrivals[-1])), note=note)
    return Window(start_s, end)


def whole_run(result):
    """The window of the whole run, first issue to last event: what a measurement of N requests
    end to end reads (a paper's served run), not a steady state."""
    issued = result.issue_s[np.isfinite(result.issue_s)]
    start_s = float(issued.min()) if issued.size else 0.0
    return Window(start_s, max(result.run_end_s, start_s), offline=_is_offline(result.issue_s),
                  note="the whole run, end to end")


def _offline_window(result):
    """Offline: while requests wait, from the first completion on; else the whole run, its
    throughput that of the whole batch running where it ran long enough to be measured."""
    bins = result.bins
    width = result.bin_width_s
    finished = result.status == layout.STATUS_FINISHED
    whole_end = max(result.run_end_s, 0.0)
    if not finished.any():
        return Window(0.0, whole_end, offline=True, note="no request finished")
    first_end = float(result.end_s[finished].min())
    saturated = bins[:, layout.BIN_SATURATED_S] >= 0.999 * result.replicas * width
    edges = np.arange(bins.shape[0] + 1) * width
    steady = np.flatnonzero(saturated & (edges[:-1] >= first_end))
    if steady.size >= MINIMUM_WINDOW_BINS:
        # The first run of whole saturated bins after the first completion.
        breaks = np.flatnonzero(np.diff(steady) > 1)
        last = steady[breaks[0]] if breaks.size else steady[-1]
        if last - steady[0] + 1 >= MINIMUM_WINDOW_BINS:
            return Window(float(edges[steady[0]]), float(edges[last + 1]), offline=True)
    last_first_token = float(np.nanmax(result.first_token_s))
    if first_end - last_first_token >= MINIMUM_WINDOW_BINS * width:
        return Window(0.0, whole_end, offline=True, note="every request ran in one batch: no queue, no steady phase",
                      rate_start_s=last_first_token, rate_end_s=first_end)
    return Window(0.0, whole_end, offline=True, note="too few requests for a steady phase")


def _window_bins(result, window):
    """(first bin, end bin) of the window: its whole bins (rounded inward), or for a whole run
    (no steady state) every bin it touches."""
    width = result.bin_width_s
    if window.steady:
        first = int(math.ceil(window.start_s / width - 1e-9))
        end = int(math.floor(window.end_s / width + 1e-9))
    else:
        first = int(math.floor(window.start_s / width))
        end = int(math.ceil(window.end_s / width)) + (1 if window.end_s == window.start_s else 0)
    return first, max(first, min(end, result.bins.shape[0]))


@dataclass(frozen=True)
class _Measured:
    """What both summaries read of a window: its requests and the bins' sums over it."""

    window: Window
    length_s: float  # the window's whole bins (a whole run: its own span)
    requests: np.ndarray  # bool per request: its latencies count
    sums: np.ndarray  # the bins' columns summed over the window (scaled to the deployment)
    first_bin: int
    end_bin: int
    output_tokens_per_s: float  # where it is measured: the window, an offline steady phase or batch


def _measure(result, window):
    first, end = _window_bins(result, window)
    width = result.bin_width_s
    length_s = (end - first) * width if window.steady else window.length_s
    scale = result.replicas_represented / result.replicas
    issue_s = result.issue_s
    if window.offline or not window.steady:
        requests = np.isfinite(issue_s)
    else:
        requests = (issue_s >= first * width) & (issue_s < end * width)
    sums = result.bins[first:end].sum(axis=0) * scale
    output_rate = _per_second(sums[layout.BIN_OUTPUT_TOKENS], length_s)
    if window.offline and window.steady:
        # The steady phase: the tokens of the iterations scheduled with requests waiting, per
        # second a replica had requests waiting, for every replica.
        output_rate = _per_second(sums[layout.BIN_SATURATED_TOKENS], sums[layout.BIN_SATURATED_S]) * \
            result.replicas_represented
    elif window.rate_start_s is not None:
        rate_first, rate_end = _window_bins(result, Window(window.rate_start_s, window.rate_end_s))
        output_rate = _per_second(result.bins[rate_first:rate_end, layout.BIN_OUTPUT_TOKENS].sum() * scale,
                                  (rate_end - rate_first) * width)
    return _Measured(window, length_s, requests, sums, first, end, float(output_rate))


def queue_growth(result, measured):
    """Mean waiting queue of the window's last third less its first third's, per request
    arriving between their middles (see the module notes); the window ends with the arrivals
    (a whole run's drain empties every queue)."""
    issued = result.issue_s[np.isfinite(result.issue_s)]
    last_arrival_bin = int(issued.max() / result.bin_width_s) + 1 if issued.size else measured.end_bin
    bins = result.bins[measured.first_bin:min(measured.end_bin, last_arrival_bin)]
    third = bins.shape[0] // 3
    if bins.shape[0] < MINIMUM_WINDOW_BINS:
        # Arrivals within a few bins: the trend of the occupancy each arrival finds, between the
        # arrivals' third and last quarters (the share of them that stayed).
        arrivals, in_system = occupancy_at_arrivals(result.issue_s, _departures(result))
        quarter = arrivals.size // 4
        if quarter < MSER_BATCH:
            return 0.0
        return float((in_system[-quarter:].mean() - in_system[2 * quarter:3 * quarter].mean()) / quarter)
    width = result.bin_width_s
    early = bins[:third, layout.BIN_WAITING_S].sum() / (third * width)
    late = bins[-third:, layout.BIN_WAITING_S].sum() / (third * width)
    between = bins[third // 2: bins.shape[0] - third + third // 2, layout.BIN_ARRIVALS].sum()
    arrivals = max(float(between), 1.0)
    return float((late - early) / arrivals)


@dataclass(frozen=True)
class Metrics:
    """Summary of one run, measured on its window (see the module notes). Times in s, rates
    per s, energy in J, power in W; counts and means over all replicas of the deployment."""

    requests: int
    finished: int
    rejected: int
    unfinished: int
    capped: bool
    window_start_s: float
    window_end_s: float
    window_s: float  # the window's length (its whole bins)
    measured_requests: int  # requests whose latencies count
    steady: bool
    steady_note: str | None  # why no steady state was measured
    ttft_s: Distribution
    tpot_s: Distribution
    e2e_s: Distribution
    itl_s: Distribution
    itl_exact: bool
    span_s: float  # first issue to last completion, the whole run
    output_tokens_per_s: float
    total_tokens_per_s: float  # output tokens and the prompt tokens of the requests that got a first token
    request_rate_per_s: float  # completions
    goodput_per_s: float  # measured requests within both limits, per second of window
    slo_attainment: float  # share of the measured requests within both limits
    batch_max: int  # largest iteration of one replica (sequences scheduled)
    batch_mean: float  # scheduled sequences per iteration, weighted by duration
    running_mean: float  # running requests, time-weighted over the window, all replicas
    queue_mean: float  # waiting requests, time-weighted over the window, all replicas
    kv_blocks_max: int  # largest per-replica block use after scheduling
    kv_blocks_mean: float  # time-weighted over the window's records, all simulated replicas
    preemptions: int
    queue_growth: float
    unstable: bool
    energy_j: float  # in the window
    average_power_w: float
    tokens_per_joule: float  # input + output tokens per joule, as predict counts
    output_tokens_per_joule: float
    requests_in_system_mean: float  # time-weighted over the window
    littles_law_ratio: float  # requests_in_system_mean / (completion rate x mean E2E)
    offered_load: float = math.nan  # rho, when the caller knows the saturated rate


def _request_times(result, measured, ttft_limit_s, tpot_limit_s):
    """Over the measured requests: finished, TTFT, E2E, multi-token, TPOT, meeting the SLO."""
    finished = (result.status == layout.STATUS_FINISHED) & measured.requests
    issue_s = result.issue_s
    first_s = result.first_token_s
    end_s = result.end_s
    output = result.output_tokens
    ttft = np.where(measured.requests, first_s - issue_s, np.nan)
    e2e = end_s - issue_s
    multi_token = finished & (output > 1)
    tpot = np.full(finished.shape, math.nan)
    tpot[multi_token] = (end_s[multi_token] - first_s[multi_token]) / (output[multi_token] - 1)
    meets = finished.copy()
    if ttft_limit_s is not None:
        meets &= ttft <= ttft_limit_s
    if tpot_limit_s is not None:
        meets &= ~multi_token | (tpot <= tpot_limit_s)
    return finished, ttft, e2e, multi_token, tpot, meets


def _span(result):
    issued = np.isfinite(result.issue_s)
    finished = result.status == layout.STATUS_FINISHED
    start_s = float(result.issue_s[issued].min()) if issued.any() else 0.0
    last_s = float(result.end_s[finished].max()) if finished.any() else start_s
    return last_s - start_s


def _per_second(amount, length_s):
    return amount / length_s if length_s > 0.0 else math.nan


@dataclass(frozen=True)
class SloCheck:
    """What a capacity search and a rate curve read of a run: the fields of ``Metrics`` they
    use, computed as ``summarize`` computes them, without the records' summaries."""

    finished: int
    capped: bool
    unstable: bool
    steady: bool
    measured_requests: int
    ttft_s: Distribution
    tpot_s: Distribution
    output_tokens_per_s: float
    goodput_per_s: float
    queue_growth: float


def slo_check(result, ttft_limit_s=None, tpot_limit_s=None, window=None):
    """The ``SloCheck`` of a ``RunResult`` on ``window`` (default ``steady_window``): equal to
    the same fields of ``summarize``'s."""
    window = window if window is not None else steady_window(result)
    measured = _measure(result, window)
    finished, ttft, _e2e, multi_token, tpot, meets = _request_times(result, measured, ttft_limit_s, tpot_limit_s)
    growth = 0.0 if window.offline else queue_growth(result, measured)
    scale = result.replicas_represented / result.replicas
    return SloCheck(
        finished=int((result.status == layout.STATUS_FINISHED).sum()),
        capped=result.capped and not window.undrained,
        unstable=growth > UNSTABLE_QUEUE_GROWTH or window.undrained,
        steady=window.steady,
        measured_requests=int(measured.requests.sum()),
        ttft_s=distribution(ttft[np.isfinite(ttft)]),
        tpot_s=distribution(tpot[multi_token]),
        output_tokens_per_s=measured.output_tokens_per_s,
        goodput_per_s=_per_second(float(meets.sum()) * scale, measured.length_s),
        queue_growth=growth,
    )


def summarize(result, ttft_limit_s=None, tpot_limit_s=None, *, window=None, offered_load=math.nan):
    """Metrics of a ``RunResult`` on ``window`` (default ``steady_window``); the SLO limits (s)
    are optional, each one independently; ``offered_load`` is reported as given."""
    if not result.iterations_recorded:
        raise ValueError("summarize needs the run's iteration records: simulate it with record_iterations=True "
                         "(slo_check needs none)")
    window = window if window is not None else steady_window(result)
    measured = _measure(result, window)
    status = result.status
    finished, ttft, e2e, multi_token, tpot, meets = _request_times(result, measured, ttft_limit_s, tpot_limit_s)
    scale = result.replicas_represented / result.replicas
    sums = measured.sums
    length_s = measured.length_s

    # The records of the window (of a whole run, all of them): ITL, batch and KV summaries.
    starts = result.iteration_start_s
    width = result.bin_width_s
    in_window = ((starts >= measured.first_bin * width) & (starts < measured.end_bin * width) if window.steady
                 else np.ones(starts.shape, dtype=bool))
    durations = result.iteration_duration_s[in_window]
    counts = result.iterations_per_record[in_window]
    gaps = result.gap_s
    itl = linear_runs_distribution(
        np.concatenate([result.iteration_float[in_window, layout.IT_FIRST_DURATION_S], gaps]),
        np.concatenate([result.iteration_float[in_window, layout.IT_LAST_DURATION_S], gaps]),
        np.concatenate([counts, np.ones(gaps.size)]),
        np.concatenate([result.iteration_int[in_window, layout.IT_ITL_TOKENS].astype(np.float64), np.ones(gaps.size)]),
    )
    sequences = result.iteration_int[in_window, layout.IT_SEQUENCES]
    busy_s = float(durations.sum())
    all_sequences = result.iteration_column(layout.IT_SEQUENCES)

    growth = 0.0 if window.offline else queue_growth(result, measured)
    idle_s = max(result.replicas_represented * length_s - float(sums[layout.BIN_BUSY_S]), 0.0)
    energy_j = float(sums[layout.BIN_ENERGY_J]) + result.idle_power_w * idle_s
    emitted = float(sums[layout.BIN_OUTPUT_TOKENS])
    prompt = float(sums[layout.BIN_PROMPT_TOKENS])
    # Input + output tokens as the output throughput counts them (the same share of prompts).
    total_rate = measured.output_tokens_per_s * (emitted + prompt) / emitted if emitted > 0.0 else math.nan
    in_system_mean = _per_second(float(sums[layout.BIN_WAITING_S] + sums[layout.BIN_RUNNING_S]), length_s)
    completion_rate = _per_second(float(sums[layout.BIN_FINISHED]), length_s)
    e2e_measured = e2e[finished]
    littles = (in_system_mean / (completion_rate * float(e2e_measured.mean()))
               if e2e_measured.size and completion_rate > 0.0 else math.nan)
    measured_count = int(measured.requests.sum())

    return Metrics(
        requests=int(status.size),
        finished=int(np.sum(status == layout.STATUS_FINISHED)),
        rejected=int(np.sum(status == layout.STATUS_REJECTED)),
        unfinished=int(np.sum(status == layout.STATUS_UNFINISHED)),
        capped=result.capped and not window.undrained,
        window_start_s=window.start_s if not window.steady else measured.first_bin * width,
        window_end_s=window.end_s if not window.steady else measured.end_bin * width,
        window_s=length_s,
        measured_requests=measured_count,
        steady=window.steady,
        steady_note=window.note,
        ttft_s=distribution(ttft[np.isfinite(ttft)]),
        tpot_s=distribution(tpot[multi_token]),
        e2e_s=distribution(e2e_measured),
        itl_s=itl,
        itl_exact=result.gaps_dropped == 0,
        span_s=_span(result),
        output_tokens_per_s=measured.output_tokens_per_s,
        total_tokens_per_s=total_rate,
        request_rate_per_s=completion_rate,
        goodput_per_s=_per_second(float(meets.sum()) * scale, length_s),
        slo_attainment=float(meets.sum() / measured_count) if measured_count else math.nan,
        batch_max=int(all_sequences.max()) if all_sequences.size else 0,
        batch_mean=float(np.sum(sequences * durations) / busy_s) if busy_s > 0.0 else math.nan,
        running_mean=_per_second(float(sums[layout.BIN_RUNNING_S]), length_s),
        queue_mean=_per_second(float(sums[layout.BIN_WAITING_S]), length_s),
        kv_blocks_max=int(result.iteration_column(layout.IT_KV_BLOCKS).max()) if all_sequences.size else 0,
        kv_blocks_mean=_per_second(float(np.sum(result.iteration_int[in_window, layout.IT_KV_BLOCKS] * durations)),
                                   length_s),
        preemptions=int(round(float(sums[layout.BIN_PREEMPTIONS]))),
        queue_growth=growth,
        unstable=growth > UNSTABLE_QUEUE_GROWTH or window.undrained,
        energy_j=energy_j,
        average_power_w=_per_second(energy_j, length_s),
        tokens_per_joule=(emitted + prompt) / energy_j if energy_j > 0.0 else math.nan,
        output_tokens_per_joule=emitted / energy_j if energy_j > 0.0 else math.nan,
        requests_in_system_mean=in_system_mean,
        littles_law_ratio=littles,
        offered_load=float(offered_load),
    )
