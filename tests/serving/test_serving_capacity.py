"""Capacity at an SLO by bisection on the rate."""

from __future__ import annotations

import pytest
from serving_cases import Server

from accelscope.engine.studies.serving import (
    Lengths,
    Slo,
    capacity,
    draw_workload,
    meets_slo,
    simulate,
    summarize,
)

PROMPT = Lengths("lognormal", 512, 1.0)
OUTPUT = Lengths("lognormal", 64, 1.0)
SERVER = Server(max_num_seqs=64, kv_blocks_total=3000)


def run_at_rate(rate_per_s):
    return simulate(draw_workload(7, 600, rate_per_s, PROMPT, OUTPUT), SERVER)


def test_capacity_is_monotone_in_the_slo():
    slos = [
        Slo(ttft_p99_s=0.15, tpot_p99_s=0.012),
        Slo(ttft_p99_s=0.3, tpot_p99_s=0.015),
        Slo(ttft_p99_s=1.0, tpot_p99_s=0.02),
        Slo(ttft_p99_s=5.0, tpot_p99_s=0.05),
        Slo(),
    ]
    rates = [capacity(run_at_rate, slo, 0.5, 200.0, steps=8).rate_per_s for slo in slos]
    assert rates == sorted(rates)
    assert rates[0] > 0.0 and rates[-1] > rates[0]
    # The unconstrained SLO still requires stability: far below the 200/s upper bound.
    assert rates[-1] < 100.0


def test_capacity_run_meets_its_slo_and_a_bit_more_does_not():
    slo = Slo(ttft_p99_s=0.5, tpot_p99_s=0.02)
    found = capacity(run_at_rate, slo, 0.5, 200.0, steps=10)
    assert found.runs == 12
    assert meets_slo(found.metrics, slo)
    assert found.metrics.ttft_s.p99 <= 0.5 and found.metrics.tpot_s.p99 <= 0.02
    # The bracket is resolved to (200/0.5) ** (1/1024), about 0.6 %: its upper end fails.
    assert found.rate_per_s < found.failing_rate_per_s <= found.rate_per_s * (200 / 0.5) ** (1 / 1024) * (1 + 1e-12)
    assert not meets_slo(summarize(run_at_rate(found.failing_rate_per_s), 0.5, 0.02), slo)


def test_capacity_reports_zero_when_even_the_lowest_rate_fails():
    found = capacity(run_at_rate, Slo(ttft_p99_s=1e-4), 0.5, 200.0)
    assert found.rate_per_s == 0.0 and found.runs == 2


def test_capacity_needs_an_ordered_bracket():
    with pytest.raises(ValueError):
        capacity(run_at_rate, Slo(), 2.0, 1.0)
