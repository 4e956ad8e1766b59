"""Drawing request streams: arrival times (s) and prompt/output lengths (tokens).

Every draw takes a seeded ``numpy.random.Generator`` so a run is reproducible. A workload drawn
for a seed uses one random stream for the lengths and another for the arrival gaps, and the
gaps are drawn at rate 1 and scaled: the same seed at two request rates gives the same requests
arriving in the same pattern, only faster, so a sweep over rates compares like with like
(common random numbers) instead of adding a fresh draw's noise to every point. A trace read
elsewhere comes in as arrays through ``trace_workload``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Workload:
    """Requests of one run, already drawn.

    ``arrival_s`` (float64[n], s, non-decreasing) is used in open loop (``users == 0``). In closed
    loop the first ``users`` requests are issued at t = 0 and each finished request's user issues
    the next unissued one ``think_s`` (float64[n], s, of that next request) later. ``replica``
    names each request's replica when the server routes by assignment.
    """

    arrival_s: np.ndarray
    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    think_s: np.ndarray
    users: int = 0
    replica: np.ndarray | None = None  # int64[n]: each request's replica, for the assigned router

    @property
    def requests(self):
        return self.arrival_s.shape[0]


@dataclass(frozen=True)
class Lengths:
    """A length distribution: ``kind`` is fixed, uniform, exponential or lognormal; ``mean`` in
    tokens; ``cv`` (standard deviation / mean) for uniform and lognormal."""

    kind: str
    mean: float
    cv: float = 0.0


def poisson_arrivals(rng, requests, rate_per_s):
    """Poisson arrivals at ``rate_per_s``; an infinite rate puts every request at t = 0."""
    return gamma_arrivals(rng, requests, rate_per_s, 1.0)


def gamma_arrivals(rng, requests, rate_per_s, cv):
    """Arrivals with Gamma inter-arrival gaps of mean 1/rate and coefficient of variation ``cv``
    (cv = 1 is Poisson, larger is burstier). The first request arrives after one gap."""
    if rate_per_s <= 0.0:
        raise ValueError("rate_per_s must be positive")
    if math.isinf(rate_per_s):
        return np.zeros(requests)
    if cv <= 0.0:
        return np.arange(1, requests + 1) / rate_per_s
    shape = 1.0 / (cv * cv)
    gaps = rng.gamma(shape, 1.0 / (rate_per_s * shape), size=requests)
    return np.cumsum(gaps)


def exponential_think_times(rng, requests, mean_think_s):
    """Exponential think times of a closed-loop user (zero when the mean is zero)."""
    if mean_think_s <= 0.0:
        return np.zeros(requests)
    return rng.exponential(mean_think_s, size=requests)


def draw_lengths(rng, requests, lengths):
    """Integer lengths (tokens, at least 1) from a ``Lengths`` distribution."""
    mean = float(lengths.mean)
    if lengths.kind == "fixed":
        values = np.full(requests, mean)
    elif lengths.kind == "uniform":
        # A uniform law of standard deviation cv * mean spans mean * (1 +- sqrt(3) cv).
        half_width = math.sqrt(3.0) * lengths.cv * mean
        if half_width > mean:
            raise ValueError("uniform lengths need cv <= 1/sqrt(3) to stay positive")
        values = rng.uniform(mean - half_width, mean + half_width, size=requests)
    elif lengths.kind == "exponential":
        values = rng.exponential(mean, size=requests)
    elif lengths.kind == "lognormal":
        sigma_squared = math.log1p(lengths.cv * lengths.cv)
        values = rng.lognormal(math.log(mean) - sigma_squared / 2.0, math.sqrt(sigma_squared), size=requests)
    else:
        raise ValueError(f"unknown length distribution {lengths.kind!r}")
    return np.maximum(np.rint(values), 1).astype(np.int64)


def cap_lengths(prompt_tokens, output_tokens, max_context_tokens):
    """Cap so that prompt + output <= max context and both stay >= 1: the prompt is cut first to
    leave room for one output token, then the output to what the prompt leaves. None caps
    nothing: a request longer than the context is the simulator's to reject, as a trace's is."""
    if max_context_tokens is None:
        return prompt_tokens, output_tokens
    if max_context_tokens < 2:
        raise ValueError("max_context_tokens must be at least 2")
    prompt = np.clip(prompt_tokens, 1, max_context_tokens - 1).astype(np.int64)
    output = np.clip(output_tokens, 1, max_context_tokens - prompt).astype(np.int64)
    return prompt, output


def draw_workload(
    seed,
    requests,
    rate_per_s,
    prompt=Lengths("fixed", 1024),
    output=Lengths("fixed", 256),
    max_context_tokens=8192,
    arrival_cv=1.0,
):
    """Open-loop workload: Gamma arrivals at ``rate_per_s`` (cv 1 = Poisson, inf = all at t = 0).
    The lengths and the arrival pattern come from two streams of the seed; the pattern is drawn
    at rate 1 and divided by the rate, so only the rate differs between two rates' workloads."""
    lengths_rng, arrivals_rng = (np.random.default_rng([seed, stream]) for stream in (0, 1))
    prompt_tokens, output_tokens = cap_lengths(
        draw_lengths(lengths_rng, requests, prompt), draw_lengths(lengths_rng, requests, output), max_context_tokens
    )
    if math.isinf(rate_per_s):
        arrival_s = np.zeros(requests)
    else:
        if rate_per_s <= 0.0:
            raise ValueError("rate_per_s must be positive")
        arrival_s = gamma_arrivals(arrivals_rng, requests, 1.0, arrival_cv) / rate_per_s
    return Workload(arrival_s, prompt_tokens, output_tokens, np.zeros(requests))


def draw_closed_loop_workload(
    seed,
    requests,
    users,
    mean_think_s,
    prompt=Lengths("fixed", 1024),
    output=Lengths("fixed", 256),
    max_context_tokens=8192,
):
    """Closed loop of ``users`` users with exponential think times of mean ``mean_think_s``."""
    if users < 1:
        raise ValueError("a closed loop needs at least one user")
    lengths_rng, think_rng = (np.random.default_rng([seed, stream]) for stream in (0, 1))
    prompt_tokens, output_tokens = cap_lengths(
        draw_lengths(lengths_rng, requests, prompt), draw_lengths(lengths_rng, requests, output), max_context_tokens
    )
    think_s = exponential_think_times(think_rng, requests, mean_think_s)
    return Workload(np.zeros(requests), prompt_tokens, output_tokens, think_s, users)


def trace_workload(arrival_s, prompt_tokens, output_tokens):
    """Open-loop workload from a trace's arrays (s, tokens, tokens)."""
    arrival_s = np.asarray(arrival_s, dtype=np.float64)
    return Workload(
        arrival_s,
        np.asarray(prompt_tokens, dtype=np.int64),
        np.asarray(output_tokens, dtype=np.int64),
        np.zeros(arrival_s.shape[0]),
    )
