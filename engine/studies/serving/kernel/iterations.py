"""Iterations: twins of the reference's ``start_iteration``, ``start_window_step``,
``iteration_sums``, ``complete_iteration``, ``complete_window_step``, ``complete_scheduled``,
``maybe_cache_prefix`` and ``record_gap``."""

from __future__ import annotations

import math

from ....physics.iteration import UNBOUNDED_STEPS, decode_iteration_cost, iteration_cost, request_positions
from ....physics.jit import jit
from ..layout import (
    BIN_BUSY_S,
    BIN_ENERGY_J,
    BIN_FIRST_TOKENS,
    BIN_OUTPUT_TOKENS,
    BIN_PROMPT_TOKENS,
    BIN_SATURATED_TOKENS,
    CNT_GAPS,
    CNT_GAPS_DROPPED,
    CNT_ITERATIONS,
    POLICY_STATIC,
    POLICY_TRTLLM_NO_EVICT,
    POLICY_VLLM,
    REQ_FIRST_TOKEN_S,
    REQ_TOKENS_EMITTED,
    SET_BLOCK_SIZE,
    SET_KV_BLOCKS_TOTAL,
    SET_MAX_BATCHED_TOKENS,
    SET_POLICY,
    SET_PREFIX_TOKENS,
    SET_STRETCHES,
    STEP_DECODE,
    STEP_PADDING,
    STEP_PREFILL,
)
from .bins import add_at, add_over, integrate_levels
from .records import record_emissions, set_record_cost, write_record
from .requests import finish, finished, prefix_blocks
from .schedulers import schedule_static, schedule_trtllm, schedule_vllm
from .state import (
    RP_BLOCKS_USED,
    RP_BUSY,
    RP_IN_STRETCH,
    RP_IN_WINDOW,
    RP_ITERATION,
    RP_PREFIX_CACHED,
    RP_PREVIOUS_ITERATION,
    RP_RUNNING_LENGTH,
    RP_SCHEDULED_LENGTH,
    RP_STRETCH_ITERATIONS,
    RP_WAITING_LENGTH,
    RP_WAITING_SCHEDULED,
    RP_WINDOW_COMPLETED,
    RP_WINDOW_HOLD,
    RP_WINDOW_LAST_ITERATION,
    RP_WINDOW_LIMIT,
    RP_WINDOW_MEMBERS,
    RP_WINDOW_STARTED,
    RS_COMPUTED,
    RS_EMITTED,
    RS_LAST_EMIT_ITERATION,
    RS_NUM_TOKENS,
    RS_OWN_BLOCKS_TO_COMPLETION,
    RS_RECOMPUTING,
    RS_SHARED_BLOCKS,
    RT_END_S,
    RT_ENERGY_J,
    RT_START_S,
    RT_WINDOW_INCREMENT,
    RT_WINDOW_LAST_TOKEN_S,
    RT_WINDOW_POSITIONS,
    SCHED_KIND,
    SCHED_REQUEST,
    SCHED_TOKENS,
)
from .windows import (
    bring_up_to_date,
    can_join,
    close_window,
    join,
    leave,
    members_changed,
    open_window,
    others_fit,
    refresh_positions,
    start_stretch,
    stretch_iterations,
    stretch_to_bins,
)


@jit(internal=True)
def start_iteration(st, replica, time_s):
    integrate_levels(st, replica, time_s)
    st.replica_state[replica, RP_SCHEDULED_LENGTH] = 0
    if st.settings[SET_STRETCHES] == 1 and st.settings[SET_POLICY] != POLICY_STATIC:
        if st.replica_state[replica, RP_IN_WINDOW] == 1 or open_window(st, replica):
            if start_window_step(st, replica, time_s):
                return
            close_window(st, replica)
    policy = st.settings[SET_POLICY]
    if policy == POLICY_VLLM:
        preemptions = schedule_vllm(st, replica, time_s, 0, st.settings[SET_MAX_BATCHED_TOKENS])
    elif policy == POLICY_STATIC:
        preemptions = schedule_static(st, replica)
    else:
        preemptions = schedule_trtllm(st, replica, time_s)
    scheduled = st.replica_state[replica, RP_SCHEDULED_LENGTH]
    if scheduled == 0:
        return
    tokens, prefill_tokens, prefill_positions, decode_positions, kv_read_positions = iteration_sums(st, replica, 0,
                                                                                                   0.0)
    duration_s, energy_j = iteration_cost(st.cost, float(tokens), float(scheduled), prefill_positions,
                                          decode_positions, kv_read_positions, float(prefill_tokens))
    write_record(st, replica, time_s, scheduled, tokens, prefill_tokens, preemptions)
    set_record_cost(st, replica, duration_s, energy_j)
    st.counters[CNT_ITERATIONS] += 1
@jit(internal=True)
def start_window_step(st, replica, time_s):
    """Start the window's next iteration (or stretch); False if the window ends first (see the
    reference). Under vLLM the other running requests and the admissions are scheduled after
    the members, who cost O(1)."""
    step = st.replica_state[replica, RP_WINDOW_STARTED]
    members = st.replica_state[replica, RP_WINDOW_MEMBERS]
    block_size = st.settings[SET_BLOCK_SIZE]
    max_batched_tokens = st.settings[SET_MAX_BATCHED_TOKENS]
    new_blocks = st.block_phases[replica, step % block_size]
    free = st.settings[SET_KV_BLOCKS_TOTAL] - st.replica_state[replica, RP_BLOCKS_USED] - new_blocks
    mixed = (st.replica_state[replica, RP_WAITING_LENGTH] > 0
             or st.replica_state[replica, RP_RUNNING_LENGTH] > members)
    if free < 0 or members == 0 or members > max_batched_tokens:
        return False
    if mixed and (st.settings[SET_POLICY] != POLICY_VLLM
                  or not others_fit(st, replica, members, max_batched_tokens - members, free)):
        return False
    if step > st.replica_state[replica, RP_WINDOW_HOLD]:
        refresh_positions(st, replica, step)
    iterations = stretch_iterations(st, replica, free)
    if iterations > 1:
        start_stretch(st, replica, time_s, iterations)
        return True
    st.replica_state[replica, RP_BLOCKS_USED] += new_blocks
    positions = st.replica_times[replica, RT_WINDOW_POSITIONS]
    if mixed:
        start_mixed_step(st, replica, time_s, members, positions)
    else:
        # iteration_cost(cost, members, members, 0.0, positions, positions, 0), to the bit.
        duration_s, energy_j = decode_iteration_cost(st.window_terms, replica, positions)
        write_record(st, replica, time_s, members, members, 0, 0)
        set_record_cost(st, replica, duration_s, energy_j)
    st.replica_times[replica, RT_WINDOW_POSITIONS] = positions + st.replica_times[replica, RT_WINDOW_INCREMENT]
    st.replica_state[replica, RP_WINDOW_STARTED] = step + 1
    st.counters[CNT_ITERATIONS] += 1
    return True




@jit(internal=True)
def start_mixed_step(st, replica, time_s, members, positions):
    """A window step with others: the members' decode steps at ``positions``, then the running
    requests behind them and the admissions as vLLM schedules them (it preempts none: the
    caller checked ``others_fit``)."""
    schedule_vllm(st, replica, time_s, members, st.settings[SET_MAX_BATCHED_TOKENS] - members)
    tokens, prefill_tokens, prefill_positions, decode_positions, kv_read_positions = iteration_sums(
        st, replica, members, positions)
    sequences = members + st.replica_state[replica, RP_SCHEDULED_LENGTH]
    duration_s, energy_j = iteration_cost(st.cost, float(tokens), float(sequences), prefill_positions,
                                          decode_positions, kv_read_positions, float(prefill_tokens))
    write_record(st, replica, time_s, sequences, tokens, prefill_tokens, 0)
    set_record_cost(st, replica, duration_s, energy_j)


@jit(internal=True)
def iteration_sums(st, replica, members, member_positions):
    """(tokens, prefill tokens, and the three position sums) of the scheduled steps, after a
    window's ``members`` decode steps at ``member_positions``."""
    # The arrays as locals: a structure's field read inside a loop that calls out pays a
    # reference count each time.
    scheduled = st.scheduled
    request_state = st.request_state
    cost = st.cost
    tokens = members
    prefill_tokens = 0
    prefill_positions = 0.0
    decode_positions = member_positions
    kv_read_positions = member_positions
    for index in range(st.replica_state[replica, RP_SCHEDULED_LENGTH]):
        request = scheduled[replica, index, SCHED_REQUEST]
        new_tokens = scheduled[replica, index, SCHED_TOKENS]
        kind = scheduled[replica, index, SCHED_KIND]
        prefill, decode, kv_read = request_positions(cost, float(request_state[request, RS_COMPUTED]),
                                                     float(new_tokens), kind != STEP_PREFILL)
        prefill_positions += prefill
        decode_positions += decode
        kv_read_positions += kv_read
        tokens += new_tokens
        if kind == STEP_PREFILL:
            prefill_tokens += new_tokens
    return tokens, prefill_tokens, prefill_positions, decode_positions, kv_read_positions


@jit(internal=True)
def complete_iteration(st, replica, time_s):
    integrate_levels(st, replica, time_s)
    iteration = st.replica_state[replica, RP_ITERATION]
    any_finished = False
    if st.replica_state[replica, RP_IN_WINDOW] == 1 and st.replica_state[replica, RP_IN_STRETCH] == 1:
        iterations = st.replica_state[replica, RP_STRETCH_ITERATIONS]
        stretch_to_bins(st, replica, iterations)
        st.replica_state[replica, RP_IN_STRETCH] = 0
        complete_window_step(st, replica, time_s, iterations)
    else:
        start_s = st.replica_times[replica, RT_START_S]
        add_over(st, start_s, time_s, BIN_BUSY_S, time_s - start_s)
        add_over(st, start_s, time_s, BIN_ENERGY_J, st.replica_times[replica, RT_ENERGY_J])
        if st.replica_state[replica, RP_IN_WINDOW] == 1:
            emitted = complete_window_step(st, replica, time_s, 1)
        else:
            decode_tokens, regular_gaps, emitted, any_finished = complete_scheduled(st, replica, time_s)
            record_emissions(st, iteration, decode_tokens, regular_gaps)
        add_at(st, time_s, BIN_OUTPUT_TOKENS, float(emitted))
        if st.replica_state[replica, RP_WAITING_SCHEDULED] > 0:
            add_at(st, time_s, BIN_SATURATED_TOKENS, float(emitted))
    if st.settings[SET_POLICY] == POLICY_STATIC:
        done = True
        for index in range(st.replica_state[replica, RP_RUNNING_LENGTH]):
            if not finished(st, st.running[replica, index]):
                done = False
        if done:
            st.replica_state[replica, RP_RUNNING_LENGTH] = 0
    elif any_finished:
        drop_finished(st, replica)
    st.replica_state[replica, RP_SCHEDULED_LENGTH] = 0
    st.replica_state[replica, RP_BUSY] = 0
    st.replica_times[replica, RT_END_S] = math.inf
    st.replica_state[replica, RP_PREVIOUS_ITERATION] = iteration


@jit(internal=True)
def complete_window_step(st, replica, time_s, completed_steps):
    """Every member emitted ``completed_steps`` tokens, one a step after a regular gap; the
    other scheduled steps complete as ever, after them. Members whose last token it was are
    brought up to date and finish; the requests behind the members that now decode join.
    Returns the tokens each iteration emitted."""
    iteration = st.replica_state[replica, RP_ITERATION]
    completed = st.replica_state[replica, RP_WINDOW_COMPLETED] + completed_steps
    st.replica_state[replica, RP_WINDOW_COMPLETED] = completed
    st.replica_times[replica, RT_WINDOW_LAST_TOKEN_S] = time_s
    st.replica_state[replica, RP_WINDOW_LAST_ITERATION] = iteration
    members = st.replica_state[replica, RP_WINDOW_MEMBERS]
    decode_tokens = members
    regular_gaps = members
    emitted = members
    any_finished = False
    if completed > st.replica_state[replica, RP_WINDOW_LIMIT]:
        limit = UNBOUNDED_STEPS
        for index in range(members):
            request = st.running[replica, index]
            left = st.output_tokens[request] - st.request_state[request, RS_EMITTED]
            if left == completed:
                leave(st, replica, request)
                bring_up_to_date(st, replica, request)
                finish(st, request, replica, time_s)
                any_finished = True
            else:
                limit = min(limit, left - 1)  # the next member to emit its last token
        st.replica_state[replica, RP_WINDOW_LIMIT] = limit
    if st.replica_state[replica, RP_SCHEDULED_LENGTH] > 0:
        others_decoded, others_regular, others_emitted, others_finished = complete_scheduled(st, replica, time_s)
        decode_tokens += others_decoded
        regular_gaps += others_regular
        emitted += others_emitted
        any_finished = any_finished or others_finished
    record_emissions(st, iteration, decode_tokens, regular_gaps)
    if any_finished:
        drop_finished(st, replica)
    while (st.replica_state[replica, RP_WINDOW_MEMBERS] < st.replica_state[replica, RP_RUNNING_LENGTH]
           and can_join(st, st.running[replica, st.replica_state[replica, RP_WINDOW_MEMBERS]], iteration)):
        join(st, replica, st.running[replica, st.replica_state[replica, RP_WINDOW_MEMBERS]])
    if st.replica_state[replica, RP_WINDOW_MEMBERS] != members:
        members_changed(st, replica)
    return emitted


@jit(internal=True)
def drop_finished(st, replica):
    """Remove the finished requests from the running list, keeping its order."""
    kept = 0
    running = st.running
    request_state = st.request_state
    output_tokens = st.output_tokens
    for index in range(st.replica_state[replica, RP_RUNNING_LENGTH]):
        request = running[replica, index]
        if request_state[request, RS_EMITTED] != output_tokens[request]:
            running[replica, kept] = request
            kept += 1
    st.replica_state[replica, RP_RUNNING_LENGTH] = kept


@jit(internal=True)
def complete_scheduled(st, replica, time_s):
    """The scheduled steps compute their tokens and emit; (decode tokens, regular gaps, tokens
    emitted, any finished)."""
    iteration = st.replica_state[replica, RP_ITERATION]
    previous_iteration = st.replica_state[replica, RP_PREVIOUS_ITERATION]
    decode_tokens = 0
    regular_gaps = 0
    emitted_tokens = 0
    any_finished = False
    scheduled = st.scheduled
    request_state = st.request_state
    request_int = st.request_int
    last_token_s = st.last_token_s
    output_tokens = st.output_tokens
    for index in range(st.replica_state[replica, RP_SCHEDULED_LENGTH]):
        request = scheduled[replica, index, SCHED_REQUEST]
        kind = scheduled[replica, index, SCHED_KIND]
        computed = request_state[request, RS_COMPUTED] + scheduled[replica, index, SCHED_TOKENS]
        request_state[request, RS_COMPUTED] = computed
        if kind == STEP_PADDING:
            continue
        maybe_cache_prefix(st, request, replica)
        if computed != request_state[request, RS_NUM_TOKENS]:
            continue
        request_state[request, RS_NUM_TOKENS] = computed + 1
        emitted = request_state[request, RS_EMITTED] + 1
        request_state[request, RS_EMITTED] = emitted
        emitted_tokens += 1
        if kind == STEP_DECODE:
            decode_tokens += 1
        last_emit_iteration = request_state[request, RS_LAST_EMIT_ITERATION]
        if emitted == 1:
            st.request_float[request, REQ_FIRST_TOKEN_S] = time_s
            add_at(st, time_s, BIN_FIRST_TOKENS, 1.0)
            add_at(st, time_s, BIN_PROMPT_TOKENS, float(st.prompt_tokens[request]))
        elif last_emit_iteration >= 0 and last_emit_iteration == previous_iteration:
            regular_gaps += 1  # its gap is exactly this iteration's duration
        else:
            record_gap(st, time_s - last_token_s[request])
        last_token_s[request] = time_s
        request_state[request, RS_LAST_EMIT_ITERATION] = iteration
        request_state[request, RS_RECOMPUTING] = 0
        request_int[request, REQ_TOKENS_EMITTED] = emitted
        if emitted == output_tokens[request]:
            any_finished = True
            finish(st, request, replica, time_s)
    return decode_tokens, regular_gaps, emitted_tokens, any_finished


@jit(internal=True)
def maybe_cache_prefix(st, request, replica):
    """The first request to compute the whole shared prefix pins its full blocks for everyone."""
    blocks = prefix_blocks(st)
    prefix_tokens = st.settings[SET_PREFIX_TOKENS]
    if (blocks > 0 and st.replica_state[replica, RP_PREFIX_CACHED] == 0 and st.prompt_tokens[request] >= prefix_tokens
            and st.request_state[request, RS_COMPUTED] >= prefix_tokens):
        st.replica_state[replica, RP_PREFIX_CACHED] = 1
        st.request_state[request, RS_SHARED_BLOCKS] = blocks
        # Its own reservation shrinks by the blocks that now belong to the pool: the sum
        # (shared prefix + own blocks to completion) is unchanged.
        if st.settings[SET_POLICY] == POLICY_TRTLLM_NO_EVICT:
            st.request_state[request, RS_OWN_BLOCKS_TO_COMPLETION] -= blocks


@jit(internal=True)
def record_gap(st, gap):
    gaps = st.counters[CNT_GAPS]
    if gaps < st.gap_s.shape[0]:
        st.gap_s[gaps] = gap
        st.counters[CNT_GAPS] = gaps + 1
    else:
        st.counters[CNT_GAPS_DROPPED] += 1
