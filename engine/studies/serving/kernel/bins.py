"""Time bins (``..layout.BIN_*``): twins of the reference's ``bin_of``, ``add_at``, ``add_over``
and ``integrate_levels``."""

from __future__ import annotations

from ....physics.jit import jit
from ..layout import BIN_RUNNING_S, BIN_SATURATED_S, BIN_WAITING_S
from .state import LF_BIN_WIDTH_S, RP_RUNNING_LENGTH, RP_WAITING_LENGTH, RT_LEVELS_S


@jit(inline=True)
def bin_of(st, time_s):
    """The bin of ``time_s``, the bins first widened (pairs merged) until they reach it."""
    bins = st.bins
    count = bins.shape[0]
    while time_s >= count * st.loop_float[LF_BIN_WIDTH_S]:
        half = count // 2
        for index in range(half):
            for column in range(bins.shape[1]):
                bins[index, column] = bins[2 * index, column] + bins[2 * index + 1, column]
        for index in range(half, count):
            for column in range(bins.shape[1]):
                bins[index, column] = 0.0
        st.loop_float[LF_BIN_WIDTH_S] *= 2.0
    # Division, not numba's floor division (which goes through fmod); the last bin takes a
    # quotient that rounds up to the bins' end.
    return min(int(time_s / st.loop_float[LF_BIN_WIDTH_S]), count - 1)


@jit(inline=True)
def add_at(st, time_s, column, amount):
    st.bins[bin_of(st, time_s), column] += amount


@jit(internal=True)
def add_over(st, start_s, end_s, column, amount):
    """``amount`` spread evenly over [start_s, end_s) (at ``start_s`` when empty)."""
    if end_s <= start_s:
        add_at(st, start_s, column, amount)
        return
    last = bin_of(st, end_s)
    first = bin_of(st, start_s)
    width = st.loop_float[LF_BIN_WIDTH_S]
    rate = amount / (end_s - start_s)
    for index in range(first, last + 1):
        low = max(start_s, index * width)
        high = min(end_s, (index + 1) * width)
        if high > low:
            st.bins[index, column] += rate * (high - low)


@jit(internal=True)
def integrate_levels(st, replica, time_s):
    """The replica's queue lengths since they were last integrated, up to ``time_s``: call
    before anything changes them."""
    start_s = st.replica_times[replica, RT_LEVELS_S]
    if time_s > start_s:
        span = time_s - start_s
        waiting = st.replica_state[replica, RP_WAITING_LENGTH]
        running = st.replica_state[replica, RP_RUNNING_LENGTH]
        if waiting > 0:
            add_over(st, start_s, time_s, BIN_WAITING_S, waiting * span)
            add_over(st, start_s, time_s, BIN_SATURATED_S, span)
        if running > 0:
            add_over(st, start_s, time_s, BIN_RUNNING_S, running * span)
        st.replica_times[replica, RT_LEVELS_S] = time_s
