"""Which ticks of a log axis are labelled: no two labels run together, and the choice is the
one a check of every pair of labels makes (the axis checks only each label's neighbours)."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from accelscope.gui.plotkit.axes import TICK_LABEL_GAP_PX, labelled_log_ticks, log_ticks


def every_pair_labelled(tiers, px_per_decade: float, extent) -> set[float]:
    """The reference: each candidate is checked against every label kept before it."""

    def clear_of(value, chosen):
        return all(abs(value - other) * px_per_decade >= (extent(value) + extent(other)) / 2 + TICK_LABEL_GAP_PX
                   for other in chosen)

    def apart(values):
        return all(clear_of(b, [a]) for a, b in zip(values, values[1:], strict=False))

    decades = sorted(tiers[0])
    step = 1
    while step < len(decades) and not apart([d for d in decades if round(d) % step == 0]):
        step += 1
    chosen = [d for d in decades if round(d) % step == 0]
    if step > 1:
        return set(chosen)
    for tier in tiers[1:]:
        for value in sorted(tier):
            if clear_of(value, chosen):
                chosen.append(value)
    return set(chosen)


def label_width(value: float) -> float:
    """About what the axis measures: ~7 px per character of the plain number ("200", "10k")."""
    number = 10 ** value
    text = f"{number / 1000:g}k" if number >= 1000 else f"{number:.3g}"
    return 7.0 * len(text) + 2.0


@settings(max_examples=300, deadline=None)
@given(low=st.floats(-4, 6), span=st.floats(0.05, 9), px=st.floats(60, 1400))
def test_labels_keep_clear_and_match_a_check_of_every_pair(low, span, px):
    tiers = log_ticks(low, low + span)
    px_per_decade = px / span
    chosen = labelled_log_ticks(tiers, px_per_decade, label_width)
    assert chosen == every_pair_labelled(tiers, px_per_decade, label_width)
    ordered = sorted(chosen)
    for a, b in zip(ordered, ordered[1:], strict=False):
        assert (b - a) * px_per_decade >= (label_width(a) + label_width(b)) / 2 + TICK_LABEL_GAP_PX - 1e-9


def test_a_crowded_axis_labels_every_other_decade():
    # Labels 12 px wide need 12 + 6 px between their centres: 15 px a decade is too little,
    # every other decade (30 px) is enough; a 2 or a 5 is then at most 9 px from a decade.
    chosen = labelled_log_ticks(log_ticks(0.0, 6.0), 15.0, lambda value: 12.0)
    assert chosen == {0.0, 2.0, 4.0, 6.0}
    assert all(math.isclose(value, round(value)) for value in chosen)
