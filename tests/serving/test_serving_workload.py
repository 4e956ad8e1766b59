"""Seeded workload drawing."""

from __future__ import annotations

import numpy as np
import pytest

from accelscope.engine.studies.serving import (
    Lengths,
    cap_lengths,
    draw_closed_loop_workload,
    draw_lengths,
    draw_workload,
    gamma_arrivals,
    poisson_arrivals,
)


def test_poisson_arrivals_have_the_rate_and_unit_cv():
    arrival_s = poisson_arrivals(np.random.default_rng(0), 200_000, 50.0)
    gaps = np.diff(arrival_s)
    assert np.all(gaps >= 0.0)
    assert gaps.mean() == pytest.approx(1 / 50.0, rel=0.01)
    assert gaps.std() / gaps.mean() == pytest.approx(1.0, rel=0.02)


def test_gamma_arrivals_have_the_requested_cv():
    gaps = np.diff(gamma_arrivals(np.random.default_rng(1), 200_000, 10.0, 3.0))
    assert gaps.mean() == pytest.approx(0.1, rel=0.03)
    assert gaps.std() / gaps.mean() == pytest.approx(3.0, rel=0.05)


def test_infinite_rate_puts_everything_at_zero():
    assert np.all(poisson_arrivals(np.random.default_rng(2), 10, np.inf) == 0.0)


@pytest.mark.parametrize(
    "lengths, expected_cv",
    [
        (Lengths("fixed", 300), 0.0),
        (Lengths("uniform", 300, 0.4), 0.4),
        (Lengths("exponential", 300), 1.0),
        (Lengths("lognormal", 300, 1.5), 1.5),
    ],
)
def test_length_distributions_have_their_mean_and_cv(lengths, expected_cv):
    values = draw_lengths(np.random.default_rng(3), 400_000, lengths)
    assert values.dtype == np.int64 and values.min() >= 1
    assert values.mean() == pytest.approx(300, rel=0.02)
    assert values.std() / values.mean() == pytest.approx(expected_cv, abs=0.05)


def test_caps_keep_prompt_plus_output_within_the_context():
    prompt, output = cap_lengths(np.array([10, 5000, 9000, 1]), np.array([10, 5000, 5, 0]), 8192)
    assert list(prompt) == [10, 5000, 8191, 1]
    assert list(output) == [10, 3192, 1, 1]
    workload = draw_workload(4, 5000, 10.0, Lengths("lognormal", 3000, 2.0), Lengths("lognormal", 2000, 2.0), 4096)
    assert np.all(workload.prompt_tokens + workload.output_tokens <= 4096)
    assert workload.prompt_tokens.min() >= 1 and workload.output_tokens.min() >= 1


def test_draws_are_reproducible_from_the_seed():
    first = draw_workload(5, 100, 3.0, Lengths("lognormal", 100, 1.0), Lengths("exponential", 20))
    again = draw_workload(5, 100, 3.0, Lengths("lognormal", 100, 1.0), Lengths("exponential", 20))
    other = draw_workload(6, 100, 3.0, Lengths("lognormal", 100, 1.0), Lengths("exponential", 20))
    assert np.array_equal(first.arrival_s, again.arrival_s)
    assert np.array_equal(first.prompt_tokens, again.prompt_tokens)
    assert not np.array_equal(first.arrival_s, other.arrival_s)


def test_closed_loop_workload_draws_exponential_think_times():
    workload = draw_closed_loop_workload(7, 100_000, 8, 2.0)
    assert workload.users == 8
    assert workload.think_s.mean() == pytest.approx(2.0, rel=0.02)
    assert np.all(workload.arrival_s == 0.0)


def test_unknown_distribution_is_refused():
    with pytest.raises(ValueError):
        draw_lengths(np.random.default_rng(0), 3, Lengths("pareto", 10))
    with pytest.raises(ValueError):
        draw_lengths(np.random.default_rng(0), 3, Lengths("uniform", 10, 0.9))
