"""Capacity at an SLO: the largest request rate a deployment serves in a steady state within
the SLO, given as a bracket found by search (SERVING.md section 8).

Each rate is judged on a run sized for a steady state (``steady.py``): it meets the SLO when
the run is steady and stable (its waiting queue does not grow) and the p99 TTFT and TPOT of the
requests of its window are within the limits. The search:

1. a trickle (``TRICKLE_SHARE`` of the scale: every request alone): if even it misses the SLO,
   no rate meets it, and the capacity is 0 with that reason;
2. from the scale (what the deployment finishes as a static batch), doubling or halving until
   one rate meets the SLO and the next does not;
3. bisection on a log scale until the bracket's ends are within ``BRACKET`` of each other.

A run that reaches one of the simulator's safety bounds says nothing about its rate: the
search then stops and the capacity is undetermined, with the reason, never 0. With common
random numbers across rates, meeting the SLO is monotone in the rate but for the draw's noise
near the capacity, where the bracket is narrow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .metrics import slo_check, summarize

# The bracket's relative width at which the search stops: the capacity is known within it.
BRACKET = 0.03
# A trickle: requests this far apart meet no one in the system.
TRICKLE_SHARE = 1e-3
# Doublings or halvings from the scale before the search gives up on finding a bracket.
MOST_SCALINGS = 24

FOUND = "found"
NONE = "none"  # no rate meets the SLO: a request alone misses it
UNDETERMINED = "undetermined"  # a run reached a safety bound


@dataclass(frozen=True)
class Slo:
    """Service-level objective on p99 TTFT and p99 TPOT (s); ``None`` leaves one unconstrained."""

    ttft_p99_s: float | None = None
    tpot_p99_s: float | None = None


@dataclass(frozen=True)
class CapacityResult:
    """``rate_per_s`` is the largest rate found to meet the SLO and ``failing_rate_per_s`` the
    smallest found to miss it (inf when none did): the capacity lies between the two. ``status``
    is ``FOUND``, ``NONE`` (0: a request alone misses the SLO; ``reason`` says how) or
    ``UNDETERMINED`` (``reason`` says why; ``rate_per_s`` is then the largest rate known to meet
    the SLO, 0 if none). ``result`` and ``metrics`` are those of the run at ``rate_per_s`` (at
    the trickle when none meets it)."""

    rate_per_s: float
    result: object
    metrics: object
    runs: int
    failing_rate_per_s: float = math.inf
    status: str = FOUND
    reason: str | None = None

    @property
    def determined(self) -> bool:
        return self.status != UNDETERMINED


def verdict(check, slo):
    """(meets the SLO, why not or None, undetermined) for a run's ``SloCheck``."""
    if check.capped:
        return False, "the run reached the simulator's safety bound before its requests finished", True
    if check.unstable:
        return False, "the waiting queue grew: more arrive than the deployment serves", False
    if not check.steady:
        return False, "no steady state: the occupancy never levelled off", False
    if check.measured_requests == 0 or check.finished == 0:
        return False, "no request finished", False
    if slo.ttft_p99_s is not None and not check.ttft_s.p99 <= slo.ttft_p99_s:
        return False, f"p99 TTFT {check.ttft_s.p99 * 1e3:.4g} ms over {slo.ttft_p99_s * 1e3:g} ms", False
    # A run whose requests all have one output token has no TPOT and meets any TPOT limit.
    if slo.tpot_p99_s is not None and check.tpot_s.count and not check.tpot_s.p99 <= slo.tpot_p99_s:
        return False, f"p99 TPOT {check.tpot_s.p99 * 1e3:.4g} ms over {slo.tpot_p99_s * 1e3:g} ms", False
    return True, None, False


def meets_slo(check, slo):
    """True when a run is steady, stable, not capped and within both p99 limits (``check``: a
    ``Metrics`` or the ``SloCheck`` of the run)."""
    return verdict(check, slo)[0]


def capacity(run_at_rate, slo, scale, *, recorded_run_at_rate=None, bracket=BRACKET):
    """The capacity of a deployment at ``slo`` (``CapacityResult``), searching about ``scale``
    (requests/s, > 0). ``run_at_rate(rate)`` returns (``RunResult``, ``Window``) of a run sized
    for a steady state and must be deterministic (seeded). The search reads only per-request
    outputs and bins (``slo_check``); when ``recorded_run_at_rate`` is given, ``run_at_rate``'s
    runs may lack iteration records and the run the answer stands on is simulated once more,
    with its records, for the whole summary."""
    if not scale > 0.0 or not math.isfinite(scale):
        raise ValueError("the search needs a finite, positive scale")
    runs = 0

    def evaluate(rate):
        nonlocal runs
        runs += 1
        result, window = run_at_rate(rate)
        meets, why, undetermined = verdict(slo_check(result, slo.ttft_p99_s, slo.tpot_p99_s, window), slo)
        return meets, why, undetermined, (result, window)

    def answer(rate, run_rate, run, status=FOUND, reason=None, failing=math.inf):
        """The result at ``rate``, standing on the run at ``run_rate`` (the trickle's when 0)."""
        result, window = run
        if recorded_run_at_rate is not None:
            result, window = recorded_run_at_rate(run_rate)
        metrics = summarize(result, slo.ttft_p99_s, slo.tpot_p99_s, window=window)
        return CapacityResult(rate, result, metrics, runs, failing, status, reason)

    trickle = TRICKLE_SHARE * scale
    meets, why, undetermined, run = evaluate(trickle)
    if undetermined:
        return answer(0.0, trickle, run, UNDETERMINED, f"at {trickle:.3g} requests/s: {why}")
    if not meets:
        return answer(0.0, trickle, run, NONE, f"a request alone misses the SLO: {why}", trickle)
    passing, passing_run = trickle, run
    failing = math.inf
    rate = scale
    for _ in range(MOST_SCALINGS):
        if rate <= passing or rate >= failing:
            break
        meets, why, undetermined, run = evaluate(rate)
        if undetermined:
            return answer(passing, passing, passing_run, UNDETERMINED, f"at {rate:.3g} requests/s: {why}", failing)
        if meets:
            passing, passing_run = rate, run
            if failing < math.inf:
                break
            rate *= 2.0
        else:
            failing = rate
            rate = max(rate / 2.0, passing)
    if failing == math.inf:
        return answer(passing, passing, passing_run, UNDETERMINED,
                      f"every rate up to {passing:.3g} requests/s meets the SLO", failing)
    while failing / passing > 1.0 + bracket:
        rate = math.sqrt(passing * failing)
        meets, why, undetermined, run = evaluate(rate)
        if undetermined:
            return answer(passing, passing, passing_run, UNDETERMINED, f"at {rate:.3g} requests/s: {why}", failing)
        if meets:
            passing, passing_run = rate, run
        else:
            failing = rate
    return answer(passing, passing, passing_run, FOUND, None, failing)
