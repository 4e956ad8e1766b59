"""Capacity at an SLO: the largest request rate whose run meets it, by bisection on a log scale."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .metrics import slo_check, summarize


@dataclass(frozen=True)
class Slo:
    """Service-level objective on p99 TTFT and p99 TPOT (s); ``None`` leaves one unconstrained."""

    ttft_p99_s: float | None = None
    tpot_p99_s: float | None = None


@dataclass(frozen=True)
class CapacityResult:
    """``rate_per_s`` is the largest rate found to meet the SLO (0 when even ``low`` fails);
    ``result`` and ``metrics`` are those of the run at that rate (at ``low`` when it failed).
    ``failing_rate_per_s`` is the smallest rate tried above it that failed (inf when ``high``
    met the SLO): the capacity lies between the two. Meeting an SLO is not strictly monotone
    in the rate (a p99 over finitely many requests moves with the draw), so a rate above the
    bracket may meet it again; the bracket is what the search established."""

    rate_per_s: float
    result: object
    metrics: object
    runs: int
    failing_rate_per_s: float = math.inf


def meets_slo(metrics, slo):
    """True when a run is stable, not capped and within both p99 limits (``metrics``: a
    ``Metrics`` or the ``SloCheck`` of the run)."""
    if metrics.unstable or metrics.capped or metrics.finished == 0:
        return False
    if slo.ttft_p99_s is not None and not metrics.ttft_s.p99 <= slo.ttft_p99_s:
        return False
    # A run whose requests all have one output token has no TPOT and meets any TPOT limit.
    no_tpot_limit = slo.tpot_p99_s is None or metrics.tpot_s.count == 0
    return no_tpot_limit or metrics.tpot_s.p99 <= slo.tpot_p99_s


def capacity(run_at_rate, slo, low, high, steps=10, *, recorded_run_at_rate=None):
    """Largest rate (requests/s) in [low, high] at which ``run_at_rate(rate)`` meets ``slo``.

    ``run_at_rate`` must return a ``RunResult`` and be deterministic (seeded), which also makes
    the answer monotone in the SLO: a looser SLO never gives a lower rate. At most ``steps + 2``
    runs; the bracket shrinks to (high / low) ** (1 / 2 ** steps).

    The search reads only per-request outputs (``slo_check``). When ``recorded_run_at_rate``
    is given, ``run_at_rate``'s runs may lack iteration records (``record_iterations=False``)
    and the run the answer stands on is simulated once more by ``recorded_run_at_rate`` (the
    same run, with its records) for the whole summary: one run more than ``runs`` counts, and
    no search run's records held meanwhile.
    """
    if not 0.0 < low < high:
        raise ValueError("need 0 < low < high")

    def evaluate(rate):
        result = run_at_rate(rate)
        ok = meets_slo(slo_check(result, slo.ttft_p99_s, slo.tpot_p99_s), slo)
        return ok, (result if recorded_run_at_rate is None else None)

    def found(rate, result, runs, failing=math.inf):
        if recorded_run_at_rate is not None:
            result = recorded_run_at_rate(rate if rate > 0.0 else low)
        # The whole summary only for the run the answer stands on.
        return CapacityResult(rate, result, summarize(result, slo.ttft_p99_s, slo.tpot_p99_s), runs, failing)

    ok, result = evaluate(high)
    if ok:
        return found(high, result, 1)
    ok, result = evaluate(low)
    if not ok:
        return found(0.0, result, 2, low)
    best_rate, best_result = low, result
    lower, upper = low, high
    runs = 2
    for _ in range(steps):
        middle = math.sqrt(lower * upper)
        ok, result = evaluate(middle)
        runs += 1
        if ok:
            lower = middle
            best_rate, best_result = middle, result
        else:
            upper = middle
    return found(best_rate, best_result, runs, upper)
