"""The event loop: twin of the reference's ``run``, ``arrive``, ``next_issue_s``, ``pop_issue``
and ``initialise_outputs``; ``simulate_kernel`` is the compiled simulation's entry point."""

from __future__ import annotations

import math

import numpy as np

from ....physics.iteration import DECODE_TERMS, MAX_STRETCH_BENDS, STRETCH_TABLE_SIZE
from ....physics.jit import jit
from ..layout import (
    BIN_ARRIVALS,
    CNT_CAPPED,
    CNT_MEASURED_DONE,
    CNT_RECORDS,
    CNT_REJECTED,
    REQ_ISSUE_S,
    REQ_REPLICA,
    REQ_STATUS,
    REQ_TOKENS_EMITTED,
    ROUTER_ASSIGNED,
    ROUTER_ROUND_ROBIN,
    RUN_BIN_WIDTH_S,
    RUN_END_S,
    SET_BLOCK_SIZE,
    SET_MAX_RECORDS,
    SET_MEASURED_REQUESTS,
    SET_REPLICAS,
    SET_ROUTER,
    SET_USERS,
    STATUS_REJECTED,
    STATUS_UNFINISHED,
    TS_BIN_WIDTH_S,
    TS_MAX_TIME_S,
)
from .bins import add_at, integrate_levels
from .iterations import complete_iteration, start_iteration
from .queues import heap_pop, waiting_push_back
from .requests import can_never_run, issue_next_request, left
from .state import (
    LF_BIN_WIDTH_S,
    LOOP_MEASURED_LEFT,
    LOOP_NEXT_OPEN_ARRIVAL,
    LOOP_NEXT_UNISSUED,
    LOOP_PENDING,
    LOOP_RECORDS,
    LOOP_ROUND_ROBIN,
    RP_BUSY,
    RP_IN_STRETCH,
    RP_IN_WINDOW,
    RP_ITERATION,
    RP_OUTSTANDING,
    RP_PREVIOUS_ITERATION,
    RP_RUNNING_LENGTH,
    RP_WAITING_HEAD,
    RP_WAITING_LENGTH,
    RP_WAITING_TAIL,
    RS_EMITTED,
    RS_KV_READY,
    RS_LAST_EMIT_ITERATION,
    RS_NUM_TOKENS,
    RS_RECOMPUTING,
    LOOP_FLOAT_SIZE,
    LOOP_SIZE,
    RP_SIZE,
    RS_SIZE,
    RT_END_S,
    RT_SIZE,
    SCHED_SIZE,
    State,
)
from .windows import close_window, cut_stretch_at, stop_stretch


@jit(internal=True)
def arrive(st, request, time_s):
    st.request_float[request, REQ_ISSUE_S] = time_s
    add_at(st, time_s, BIN_ARRIVALS, 1.0)
    if can_never_run(st, request):
        st.request_int[request, REQ_STATUS] = STATUS_REJECTED
        st.counters[CNT_REJECTED] += 1
        left(st, request)
        issue_next_request(st, time_s)
        return
    router = st.settings[SET_ROUTER]
    if router == ROUTER_ROUND_ROBIN:
        replica = st.loop[LOOP_ROUND_ROBIN] % st.settings[SET_REPLICAS]
        st.loop[LOOP_ROUND_ROBIN] += 1
    elif router == ROUTER_ASSIGNED:
        replica = st.assigned_replica[request]
    else:
        replica = 0
        for candidate in range(1, st.settings[SET_REPLICAS]):
            if st.replica_state[candidate, RP_OUTSTANDING] < st.replica_state[replica, RP_OUTSTANDING]:
                replica = candidate
    st.replica_state[replica, RP_OUTSTANDING] += 1
    st.request_int[request, REQ_REPLICA] = replica
    integrate_levels(st, replica, time_s)
    waiting_push_back(st, replica, request)
    if st.replica_state[replica, RP_IN_WINDOW] == 1 and st.replica_state[replica, RP_IN_STRETCH] == 1:
        cut_stretch_at(st, replica, time_s)


@jit(internal=True)
def next_issue_s(st):
    if st.settings[SET_USERS] > 0:
        return st.heap_s[0] if st.loop[LOOP_PENDING] > 0 else math.inf
    index = st.loop[LOOP_NEXT_OPEN_ARRIVAL]
    if index < st.arrival_s.shape[0]:
        return st.arrival_s[index]
    return math.inf


@jit(internal=True)
def pop_issue(st):
    """(issue time, request) of the earliest pending issue."""
    if st.settings[SET_USERS] > 0:
        time_s = st.heap_s[0]
        request = st.heap_request[0]
        heap_pop(st)
        return time_s, request
    request = st.loop[LOOP_NEXT_OPEN_ARRIVAL]
    st.loop[LOOP_NEXT_OPEN_ARRIVAL] = request + 1
    return st.arrival_s[request], request


@jit(internal=True)
def initialise(st):
    """The outputs as the reference starts them, and the scratch state empty."""
    requests = st.arrival_s.shape[0]
    for request in range(requests):
        for column in range(st.request_float.shape[1]):
            st.request_float[request, column] = math.nan
        for column in range(st.request_int.shape[1]):
            st.request_int[request, column] = 0
        st.request_int[request, REQ_REPLICA] = -1
        st.request_int[request, REQ_STATUS] = STATUS_UNFINISHED
        kv_ready = not math.isnan(st.prior_token_s[request])
        st.request_state[request, :] = 0
        st.request_state[request, RS_KV_READY] = 1 if kv_ready else 0
        st.request_state[request, RS_NUM_TOKENS] = st.prompt_tokens[request] + (1 if kv_ready else 0)
        st.request_state[request, RS_EMITTED] = 1 if kv_ready else 0
        st.request_state[request, RS_LAST_EMIT_ITERATION] = -1
        st.request_state[request, RS_RECOMPUTING] = 0
        st.last_token_s[request] = st.prior_token_s[request]
        if kv_ready:
            st.request_int[request, REQ_TOKENS_EMITTED] = 1
    st.replica_state[:, :] = 0
    st.replica_times[:, :] = 0.0
    for replica in range(st.replica_state.shape[0]):
        st.replica_state[replica, RP_WAITING_HEAD] = -1
        st.replica_state[replica, RP_WAITING_TAIL] = -1
        st.replica_state[replica, RP_ITERATION] = -1
        st.replica_state[replica, RP_PREVIOUS_ITERATION] = -1
        st.replica_times[replica, RT_END_S] = math.inf
    st.counters[:] = 0
    st.bins[:, :] = 0.0
    st.loop[:] = 0
    st.loop_float[LF_BIN_WIDTH_S] = st.time_settings[TS_BIN_WIDTH_S]
    users = st.settings[SET_USERS]
    if users > 0:
        # The first users issue at t = 0, in request order (already a heap).
        first_users = min(users, requests)
        for index in range(first_users):
            st.heap_s[index] = 0.0
            st.heap_request[index] = index
        st.loop[LOOP_PENDING] = first_users
        st.loop[LOOP_NEXT_UNISSUED] = first_users


@jit(inline=True)
def run(st):
    """The event loop (see the reference's notes for the order of events at one time)."""
    initialise(st)
    replicas = st.settings[SET_REPLICAS]
    measured = st.settings[SET_MEASURED_REQUESTS]
    max_time_s = st.time_settings[TS_MAX_TIME_S]
    max_records = st.settings[SET_MAX_RECORDS]
    last_s = 0.0
    stop_s = -1.0
    while True:
        if measured > 0 and st.loop[LOOP_MEASURED_LEFT] >= measured:
            st.counters[CNT_MEASURED_DONE] = 1
            stop_s = last_s
            break
        time_s = next_issue_s(st)
        for replica in range(replicas):
            if st.replica_state[replica, RP_BUSY] == 1 and st.replica_times[replica, RT_END_S] < time_s:
                time_s = st.replica_times[replica, RT_END_S]
        if time_s == math.inf:
            break
        if time_s > max_time_s:
            st.counters[CNT_CAPPED] = 1
            stop_s = max_time_s
            break
        last_s = time_s
        for replica in range(replicas):
            if st.replica_state[replica, RP_BUSY] == 1 and st.replica_times[replica, RT_END_S] == time_s:
                complete_iteration(st, replica, time_s)
        while next_issue_s(st) <= time_s:
            issue_s, request = pop_issue(st)
            arrive(st, request, issue_s)
        stopped = False
        for replica in range(replicas):
            if st.replica_state[replica, RP_BUSY] == 0 and (st.replica_state[replica, RP_WAITING_LENGTH] > 0
                                                           or st.replica_state[replica, RP_RUNNING_LENGTH] > 0):
                if st.loop[LOOP_RECORDS] == max_records:
                    st.counters[CNT_CAPPED] = 1
                    stopped = True
                    break
                start_iteration(st, replica, time_s)
        if stopped:
            stop_s = time_s
            break
    for replica in range(replicas):
        if st.replica_state[replica, RP_IN_WINDOW] == 1:
            if st.replica_state[replica, RP_IN_STRETCH] == 1:
                stop_stretch(st, replica, stop_s)
            close_window(st, replica)
    # A run stopped by a bound ends at its stop (a stretch's iterations are no events).
    end_s = last_s if stop_s < 0.0 else stop_s
    for replica in range(replicas):
        integrate_levels(st, replica, end_s)
    st.counters[CNT_RECORDS] = st.loop[LOOP_RECORDS]
    st.run_float[RUN_BIN_WIDTH_S] = st.loop_float[LF_BIN_WIDTH_S]
    st.run_float[RUN_END_S] = end_s


@jit
def simulate_kernel(arrival_s, prompt_tokens, output_tokens, think_s, prior_token_s, assigned_replica, settings,
                    time_settings, cost, request_float, request_int, iteration_float, iteration_int, gap_s, counters,
                    bins, run_float, running_capacity):
    """Run the compiled simulation; fills the outputs (layouts in ``..layout``) as
    ``simulate_reference`` does. ``running_capacity`` bounds the running requests of a replica.
    The state is made here, in compiled code (cached with it): made from Python, a structure's
    constructor would be compiled afresh in every process."""
    requests = arrival_s.shape[0]
    replicas = settings[SET_REPLICAS]
    heap_capacity = max(1, min(settings[SET_USERS], requests))
    run(State(
        arrival_s, prompt_tokens, output_tokens, think_s, prior_token_s, assigned_replica, settings, time_settings,
        cost, request_float, request_int, iteration_float, iteration_int, gap_s, counters, bins, run_float,
        np.empty((requests, RS_SIZE), dtype=np.int64),
        np.empty(requests, dtype=np.float64),
        np.empty((replicas, RP_SIZE), dtype=np.int64),
        np.empty((replicas, RT_SIZE), dtype=np.float64),
        np.empty((replicas, running_capacity), dtype=np.int64),
        np.empty((replicas, running_capacity, SCHED_SIZE), dtype=np.int64),
        np.empty(heap_capacity, dtype=np.float64),
        np.empty(heap_capacity, dtype=np.int64),
        np.empty(LOOP_SIZE, dtype=np.int64),
        np.empty(LOOP_FLOAT_SIZE, dtype=np.float64),
        np.empty((replicas, settings[SET_BLOCK_SIZE]), dtype=np.int64),
        np.empty((replicas, DECODE_TERMS), dtype=np.float64),
        np.empty((replicas, MAX_STRETCH_BENDS + 2), dtype=np.int64),
        np.empty((replicas, MAX_STRETCH_BENDS + 1, STRETCH_TABLE_SIZE), dtype=np.float64),
    ))
