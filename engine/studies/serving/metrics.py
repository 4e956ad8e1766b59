"""Serving metrics from a run's outputs (either engine's: they are equal).

Definitions (times in s):

* TTFT = first token - issue; E2E = end - issue; TPOT = (end - first token) / (output - 1) for
  finished requests with more than one output token.
* ITL = every gap between consecutive tokens of a request. A gap equal to one iteration (the
  request emitted in that replica's previous iteration too) is counted through the iteration's
  ``IT_ITL_TOKENS`` weight on its duration; every other gap (a request skipped by the token
  budget, preempted and recomputed, or handed over by a disaggregated prefill pool) is written
  by the engine, exactly, into ``gap_s``. ``itl_exact`` is False if that buffer overflowed.
* Percentiles are the inverted empirical CDF (numpy's ``inverted_cdf``, weighted where samples
  carry weights): the smallest sample v with (weight of samples <= v) >= q * total weight. They
  are always samples, and p50 <= p90 <= p99 <= max.
* Rates use the span from the first issue to the last completion. Time-weighted means use the
  window from the first issue to the end of the last iteration (the same span unless capped);
  queue and running counts are summed over replicas.
* Unstable: the number of requests in the system seen by each arriving request (issued and not
  yet departed; rejected requests depart at once, unfinished ones never) is compared between the
  third and the last quarter of the requests in issue order. ``backlog_growth`` = (mean of the
  last quarter - mean of the third) / (requests per quarter) is the share of arrivals that stayed:
  near 0 when the system keeps up (after warm-up), near 1 - 1/load above capacity. The run is
  unstable when it exceeds ``UNSTABLE_BACKLOG_GROWTH``. This needs the third quarter to start
  after warm-up: runs at least several times longer than one E2E.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import layout

# Share of arrivals left in the system beyond which a run counts as unstable: 0.1 means the
# server completed under 90 % of what arrived (an effective load above about 1.1).
UNSTABLE_BACKLOG_GROWTH = 0.1
# Quarters with fewer requests than this say nothing about a trend.
MINIMUM_REQUESTS_FOR_TREND = 8


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


@dataclass(frozen=True)
class Metrics:
    """Summary of one run. Times in s, rates per s, energy in J, power in W."""

    requests: int
    finished: int
    rejected: int
    unfinished: int
    capped: bool
    ttft_s: Distribution
    tpot_s: Distribution
    e2e_s: Distribution
    itl_s: Distribution
    itl_exact: bool
    span_s: float
    output_tokens_per_s: float
    total_tokens_per_s: float
    request_rate_per_s: float
    goodput_per_s: float
    slo_attainment: float
    batch_max: int
    batch_mean: float  # scheduled sequences per iteration, weighted by iteration duration
    running_mean: float  # running requests, time-weighted over the window, all replicas
    queue_mean: float  # waiting requests, time-weighted over the window, all replicas
    kv_blocks_max: int  # largest per-replica block use after scheduling
    kv_blocks_mean: float  # time-weighted over the window, all replicas
    preemptions: int
    backlog_growth: float
    unstable: bool
    energy_j: float
    average_power_w: float
    tokens_per_joule: float  # input + output tokens of the finished requests per joule, as predict counts
    output_tokens_per_joule: float  # every emitted token per joule
    requests_in_system_mean: float  # time-weighted, from the iteration records
    littles_law_ratio: float  # requests_in_system_mean / (completion rate x mean E2E)


def backlog_growth(issue_s, departure_s):
    """Share of the arrivals of the last quarter that stayed in the system (see module notes)."""
    issued = np.isfinite(issue_s)
    issue_s = issue_s[issued]
    departure_s = departure_s[issued]
    quarter = issue_s.size // 4
    if issue_s.size < MINIMUM_REQUESTS_FOR_TREND:
        return 0.0
    order = np.argsort(issue_s, kind="stable")
    arrivals = issue_s[order]
    departures = np.sort(departure_s)
    # Requests ahead of each arrival minus those that have left by then.
    in_system = np.arange(arrivals.size) - np.searchsorted(departures, arrivals, side="right")
    third = in_system[2 * quarter : 3 * quarter].mean()
    last = in_system[arrivals.size - quarter :].mean()
    return float((last - third) / quarter)


@dataclass(frozen=True)
class SloCheck:
    """What a capacity search and a rate curve read of a run: the fields of ``Metrics`` they
    use, computed as ``summarize`` computes them, without the ITL distribution and the time
    means (sorting every iteration of a run is most of ``summarize``'s time)."""

    finished: int
    capped: bool
    unstable: bool
    ttft_s: Distribution
    tpot_s: Distribution
    output_tokens_per_s: float
    goodput_per_s: float


def _request_times(result, ttft_limit_s, tpot_limit_s):
    """Per request: finished, TTFT, E2E, multi-token, TPOT and meeting the SLO; and the span."""
    finished = result.status == layout.STATUS_FINISHED
    issue_s = result.issue_s
    first_s = result.first_token_s
    end_s = result.end_s
    output = result.output_tokens
    ttft = first_s - issue_s
    e2e = end_s - issue_s
    multi_token = finished & (output > 1)
    tpot = np.full(finished.shape, math.nan)
    tpot[multi_token] = (end_s[multi_token] - first_s[multi_token]) / (output[multi_token] - 1)
    meets = finished.copy()
    if ttft_limit_s is not None:
        meets &= ttft <= ttft_limit_s
    if tpot_limit_s is not None:
        meets &= ~multi_token | (tpot <= tpot_limit_s)
    issued = np.isfinite(issue_s)
    start_s = float(issue_s[issued].min()) if issued.any() else 0.0
    last_completion_s = float(end_s[finished].max()) if finished.any() else start_s
    return finished, ttft, e2e, multi_token, tpot, meets, start_s, last_completion_s


def _backlog_growth_of(result, finished):
    departure_s = np.where(finished, result.end_s, np.inf)
    departure_s = np.where(result.status == layout.STATUS_REJECTED, result.issue_s, departure_s)
    return backlog_growth(result.issue_s, departure_s)


def slo_check(result, ttft_limit_s=None, tpot_limit_s=None):
    """The ``SloCheck`` of a ``RunResult``: equal to the same fields of ``summarize``'s."""
    finished, ttft, _e2e, multi_token, tpot, meets, start_s, last_completion_s = _request_times(
        result, ttft_limit_s, tpot_limit_s)
    span_s = last_completion_s - start_s
    growth = _backlog_growth_of(result, finished)
    return SloCheck(
        finished=int(finished.sum()),
        capped=result.capped,
        unstable=growth > UNSTABLE_BACKLOG_GROWTH,
        ttft_s=distribution(ttft[np.isfinite(ttft)]),
        tpot_s=distribution(tpot[multi_token]),
        output_tokens_per_s=float(result.output_tokens[finished].sum()) / span_s if span_s > 0.0 else math.nan,
        goodput_per_s=float(meets.sum()) / span_s if span_s > 0.0 else math.nan,
    )


def summarize(result, ttft_limit_s=None, tpot_limit_s=None):
    """Metrics of a ``RunResult``; the SLO limits (s) are optional, each one independently."""
    if not result.iterations_recorded:
        raise ValueError("summarize needs the run's iteration records: simulate it with record_iterations=True "
                         "(slo_check needs none)")
    status = result.status
    output = result.output_tokens
    prompt = result.prompt_tokens
    finished, ttft, e2e, multi_token, tpot, meets, start_s, last_completion_s = _request_times(
        result, ttft_limit_s, tpot_limit_s)

    durations = result.iteration_duration_s
    itl_values = np.concatenate([durations, result.gap_s])
    itl_weights = np.concatenate(
        [result.iteration_column(layout.IT_ITL_TOKENS).astype(np.float64), np.ones(result.gap_s.size)]
    )

    span_s = last_completion_s - start_s
    iteration_ends = result.iteration_start_s + durations
    window_end_s = max(last_completion_s, float(iteration_ends.max()) if durations.size else start_s)
    window_s = window_end_s - start_s

    def per_span(amount):
        return amount / span_s if span_s > 0.0 else math.nan

    def time_mean(column):
        if window_s <= 0.0:
            return math.nan
        return float(np.sum(result.iteration_column(column) * durations) / window_s)

    sequences = result.iteration_column(layout.IT_SEQUENCES)
    busy_s = float(durations.sum())
    energy_j = float(result.iteration_energy_j.sum()) + result.idle_power_w * max(
        result.replicas * window_s - busy_s, 0.0
    )
    emitted = float(result.tokens_emitted.sum())

    growth = _backlog_growth_of(result, finished)

    in_system = result.iteration_column(layout.IT_WAITING) + result.iteration_column(layout.IT_RUNNING)
    in_system_mean = float(np.sum(in_system * durations) / window_s) if window_s > 0.0 else math.nan
    e2e_total = float(np.sum(e2e[finished]))
    littles = in_system_mean * window_s / e2e_total if e2e_total > 0.0 else math.nan

    return Metrics(
        requests=int(status.size),
        finished=int(finished.sum()),
        rejected=int(np.sum(status == layout.STATUS_REJECTED)),
        unfinished=int(np.sum(status == layout.STATUS_UNFINISHED)),
        capped=result.capped,
        ttft_s=distribution(ttft[np.isfinite(ttft)]),
        tpot_s=distribution(tpot[multi_token]),
        e2e_s=distribution(e2e[finished]),
        itl_s=distribution(itl_values, itl_weights),
        itl_exact=result.gaps_dropped == 0,
        span_s=span_s,
        output_tokens_per_s=per_span(float(output[finished].sum())),
        total_tokens_per_s=per_span(float(output[finished].sum() + prompt[finished].sum())),
        request_rate_per_s=per_span(float(finished.sum())),
        goodput_per_s=per_span(float(meets.sum())),
        slo_attainment=float(meets.sum() / status.size) if status.size else math.nan,
        batch_max=int(sequences.max()) if sequences.size else 0,
        batch_mean=float(np.sum(sequences * durations) / busy_s) if busy_s > 0.0 else math.nan,
        running_mean=time_mean(layout.IT_RUNNING),
        queue_mean=time_mean(layout.IT_WAITING),
        kv_blocks_max=int(result.iteration_column(layout.IT_KV_BLOCKS).max()) if sequences.size else 0,
        kv_blocks_mean=time_mean(layout.IT_KV_BLOCKS),
        preemptions=result.total_preemptions,
        backlog_growth=growth,
        unstable=growth > UNSTABLE_BACKLOG_GROWTH,
        energy_j=energy_j,
        average_power_w=energy_j / window_s if window_s > 0.0 else math.nan,
        tokens_per_joule=float(prompt[finished].sum() + output[finished].sum()) / energy_j if energy_j > 0.0 else math.nan,
        output_tokens_per_joule=emitted / energy_j if energy_j > 0.0 else math.nan,
        requests_in_system_mean=in_system_mean,
        littles_law_ratio=littles,
    )
