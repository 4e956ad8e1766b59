"""Steady windows and stretches: twins of the reference's methods of the same names.

A window's members are the head of the running list; their state is kept as at the window's
start (computed and emitted less the steps completed since), so that the window's step count
brings all of them up to date at once, and their part of an iteration costs O(1): positions by
increment, new blocks by ``block_phases`` (members by the step, modulo the block size, at which
each fills its last block). A pure window's steps run as a stretch, costed in closed form over
the linear pieces of the physics (``physics.iteration``); the end of its m-th iteration is its
start plus the sum of the first m durations, found by bisection where a time must be placed."""

from __future__ import annotations

from ....physics.iteration import (
    ST_FIRST_DURATION,
    ST_LAST_DURATION,
    UNBOUNDED_STEPS,
    decode_iteration_cost,
    decode_iteration_terms,
    decode_positions,
    stretch_pieces,
    stretch_sums,
)
from ....physics.jit import jit
from ..layout import (
    BIN_BUSY_S,
    BIN_ENERGY_J,
    BIN_OUTPUT_TOKENS,
    BIN_SATURATED_TOKENS,
    CNT_ITERATIONS,
    CNT_STRETCHES,
    IT_DURATION_S,
    IT_ENERGY_J,
    IT_FIRST_DURATION_S,
    IT_ITERATIONS,
    IT_KV_BLOCKS,
    IT_LAST_DURATION_S,
    POLICY_VLLM,
    REQ_TOKENS_EMITTED,
    SET_BLOCK_SIZE,
    SET_KV_BLOCKS_TOTAL,
    SET_MAX_BATCHED_TOKENS,
    SET_MAX_NUM_SEQS,
    SET_POLICY,
)
from .bins import add_over, bin_of
from .records import record_emissions, write_record
from .requests import ceil_div, is_generation_step
from .schedulers import vllm_admits, vllm_new_tokens
from .state import (
    LF_BIN_WIDTH_S,
    RP_BLOCKS_USED,
    RP_IN_STRETCH,
    RP_IN_WINDOW,
    RP_ITERATION,
    RP_PREVIOUS_ITERATION,
    RP_RUNNING_LENGTH,
    RP_STRETCH_ITERATIONS,
    RP_STRETCH_PIECES,
    RP_WAITING_HEAD,
    RP_WAITING_LENGTH,
    RP_WAITING_SCHEDULED,
    RP_WINDOW_COMPLETED,
    RP_WINDOW_HOLD,
    RP_WINDOW_LAST_ITERATION,
    RP_WINDOW_LIMIT,
    RP_WINDOW_MEMBERS,
    RP_WINDOW_STARTED,
    RS_BLOCKS_HELD,
    RS_COMPUTED,
    RS_EMITTED,
    RS_LAST_EMIT_ITERATION,
    RS_NUM_TOKENS,
    RT_END_S,
    RT_START_S,
    RT_STRETCH_FIRST_POSITIONS,
    RT_WINDOW_INCREMENT,
    RT_WINDOW_LAST_TOKEN_S,
    RT_WINDOW_POSITIONS,
)


@jit(inline=True)
def block_phase(st, request):
    """The window step, modulo the block size, at which a member next needs a block."""
    block_size = st.settings[SET_BLOCK_SIZE]
    return (st.request_state[request, RS_BLOCKS_HELD] * block_size - st.request_state[request, RS_COMPUTED]) % block_size


@jit(internal=True)
def can_join(st, request, iteration):
    """It emitted in ``iteration`` (so it decodes next, after a regular gap) and its KV ends in
    its last block."""
    first_block_step = (st.request_state[request, RS_BLOCKS_HELD] * st.settings[SET_BLOCK_SIZE]
                        - st.request_state[request, RS_COMPUTED])
    return (st.request_state[request, RS_LAST_EMIT_ITERATION] == iteration and iteration >= 0
            and is_generation_step(st, request) and 0 <= first_block_step < st.settings[SET_BLOCK_SIZE])


@jit(internal=True)
def join(st, replica, request):
    """The request becomes the window's last member, its state set back to the window's start;
    its decode positions join the window's sums."""
    completed = st.replica_state[replica, RP_WINDOW_COMPLETED]
    computed = st.request_state[request, RS_COMPUTED]
    positions, increment, steps = decode_positions(st.cost, float(computed))
    st.replica_times[replica, RT_WINDOW_POSITIONS] += positions
    st.replica_times[replica, RT_WINDOW_INCREMENT] += increment
    st.replica_state[replica, RP_WINDOW_HOLD] = min(st.replica_state[replica, RP_WINDOW_HOLD], completed + steps)
    computed -= completed
    st.request_state[request, RS_COMPUTED] = computed
    st.request_state[request, RS_NUM_TOKENS] = computed + 1
    emitted = st.request_state[request, RS_EMITTED] - completed
    st.request_state[request, RS_EMITTED] = emitted
    st.replica_state[replica, RP_WINDOW_LIMIT] = min(st.replica_state[replica, RP_WINDOW_LIMIT],
                                                     st.output_tokens[request] - emitted - 1)
    st.block_phases[replica, block_phase(st, request)] += 1
    st.replica_state[replica, RP_WINDOW_MEMBERS] += 1


@jit(internal=True)
def leave(st, replica, request):
    """A member that emitted its last token leaves the window's sums (its hold stays: at worst
    the window refreshes its positions a step early)."""
    positions, increment, _ = decode_positions(
        st.cost, float(st.request_state[request, RS_COMPUTED] + st.replica_state[replica, RP_WINDOW_COMPLETED]))
    st.replica_times[replica, RT_WINDOW_POSITIONS] -= positions
    st.replica_times[replica, RT_WINDOW_INCREMENT] -= increment
    st.block_phases[replica, block_phase(st, request)] -= 1
    st.replica_state[replica, RP_WINDOW_MEMBERS] -= 1


@jit(internal=True)
def open_window(st, replica):
    """A window over the longest head of the running list whose requests all emitted in the
    replica's last iteration (see the reference); True if one opened."""
    length = st.replica_state[replica, RP_RUNNING_LENGTH]
    previous = st.replica_state[replica, RP_PREVIOUS_ITERATION]
    members = 0
    while members < length and can_join(st, st.running[replica, members], previous):
        members += 1
    if members == 0 or members > st.settings[SET_MAX_BATCHED_TOKENS]:
        return False
    if st.settings[SET_POLICY] != POLICY_VLLM and (members < length or st.replica_state[replica, RP_WAITING_LENGTH] > 0):
        return False
    st.replica_state[replica, RP_IN_WINDOW] = 1
    st.replica_state[replica, RP_IN_STRETCH] = 0
    st.replica_state[replica, RP_WINDOW_MEMBERS] = 0
    st.replica_state[replica, RP_WINDOW_STARTED] = 0
    st.replica_state[replica, RP_WINDOW_COMPLETED] = 0
    st.replica_state[replica, RP_WINDOW_LAST_ITERATION] = -1
    st.replica_state[replica, RP_WINDOW_LIMIT] = UNBOUNDED_STEPS
    st.replica_state[replica, RP_WINDOW_HOLD] = UNBOUNDED_STEPS
    st.replica_times[replica, RT_WINDOW_POSITIONS] = 0.0
    st.replica_times[replica, RT_WINDOW_INCREMENT] = 0.0
    for phase in range(st.block_phases.shape[1]):
        st.block_phases[replica, phase] = 0
    for index in range(members):
        join(st, replica, st.running[replica, index])
    members_changed(st, replica)
    return True


@jit(internal=True)
def members_changed(st, replica):
    """The terms of an iteration of the members' decode steps, for their new number."""
    members = st.replica_state[replica, RP_WINDOW_MEMBERS]
    if members > 0:
        decode_iteration_terms(st.cost, float(members), st.window_terms, replica)


@jit(internal=True)
def refresh_positions(st, replica, step):
    """The members' decode positions at the window's step ``step``, their increment and how
    long it holds."""
    positions = 0.0
    increment = 0.0
    hold = UNBOUNDED_STEPS
    cost = st.cost
    request_state = st.request_state
    running = st.running
    for index in range(st.replica_state[replica, RP_WINDOW_MEMBERS]):
        request_positions, request_increment, steps = decode_positions(
            cost, float(request_state[running[replica, index], RS_COMPUTED] + step))
        positions += request_positions
        increment += request_increment
        hold = min(hold, steps)
    st.replica_times[replica, RT_WINDOW_POSITIONS] = positions
    st.replica_times[replica, RT_WINDOW_INCREMENT] = increment
    st.replica_state[replica, RP_WINDOW_HOLD] = step + hold


@jit(internal=True)
def others_fit(st, replica, index, budget, free):
    """Whether vLLM's first pass takes the running requests from ``index`` on with ``budget``
    tokens and ``free`` blocks left without preempting one."""
    block_size = st.settings[SET_BLOCK_SIZE]
    while index < st.replica_state[replica, RP_RUNNING_LENGTH] and budget > 0:
        request = st.running[replica, index]
        index += 1
        computed = st.request_state[request, RS_COMPUTED]
        new_tokens = vllm_new_tokens(st, request, computed, budget)
        if new_tokens <= 0:
            continue
        needed = ceil_div(computed + new_tokens, block_size) - st.request_state[request, RS_BLOCKS_HELD]
        if needed > free:
            return False
        free -= max(needed, 0)
        budget -= new_tokens
    return True


@jit(internal=True)
def window_new_blocks(st, replica, first_step, iterations):
    """Blocks the members take in the window's steps first_step .. first_step + iterations - 1:
    whole turns of the block phases, then the rest."""
    block_size = st.settings[SET_BLOCK_SIZE]
    turns = iterations // block_size
    blocks = 0
    if turns > 0:
        for phase in range(block_size):
            blocks += st.block_phases[replica, phase]
        blocks *= turns
    for step in range(first_step + turns * block_size, first_step + iterations):
        blocks += st.block_phases[replica, step % block_size]
    return blocks


@jit(internal=True)
def admission_blocked(st, replica, free):
    """Whether vLLM, with only the members running and ``free`` blocks left after their step,
    admits no one now, and so at no later step of a stretch (see the reference)."""
    running = st.replica_state[replica, RP_RUNNING_LENGTH]
    if st.replica_state[replica, RP_WAITING_LENGTH] == 0 or running >= st.settings[SET_MAX_NUM_SEQS]:
        return True
    budget = st.settings[SET_MAX_BATCHED_TOKENS] - running
    return budget <= 0 or not vllm_admits(st, st.replica_state[replica, RP_WAITING_HEAD], replica, budget, free)


@jit(internal=True)
def stretch_iterations(st, replica, free):
    """The iterations a pure window may run as one stretch from its next step (1: a single
    step): until a member emits its last token or the positions' growth changes, while the
    members' new blocks are free."""
    members = st.replica_state[replica, RP_WINDOW_MEMBERS]
    if st.replica_state[replica, RP_RUNNING_LENGTH] != members or not admission_blocked(st, replica, free):
        return 1
    step = st.replica_state[replica, RP_WINDOW_STARTED]
    iterations = min(st.replica_state[replica, RP_WINDOW_LIMIT], st.replica_state[replica, RP_WINDOW_HOLD]) - step + 1
    room = st.settings[SET_KV_BLOCKS_TOTAL] - st.replica_state[replica, RP_BLOCKS_USED]
    if iterations > 1 and window_new_blocks(st, replica, step, iterations) > room:
        # The most iterations whose new blocks fit (their count only grows with the iterations).
        low = 1
        high = iterations
        while low < high:
            middle = (low + high + 1) // 2
            if window_new_blocks(st, replica, step, middle) <= room:
                low = middle
            else:
                high = middle - 1
        iterations = low
    return iterations


@jit(internal=True)
def start_stretch(st, replica, time_s, iterations):
    """The window's next ``iterations`` steps as one event: the linear pieces of their cost."""
    members = st.replica_state[replica, RP_WINDOW_MEMBERS]
    step = st.replica_state[replica, RP_WINDOW_STARTED]
    first = st.replica_times[replica, RT_WINDOW_POSITIONS]
    increment = st.replica_times[replica, RT_WINDOW_INCREMENT]
    st.replica_state[replica, RP_BLOCKS_USED] += window_new_blocks(st, replica, step, iterations)
    st.replica_times[replica, RT_STRETCH_FIRST_POSITIONS] = first
    st.replica_state[replica, RP_STRETCH_PIECES] = stretch_pieces(
        st.window_terms, replica, first, increment, iterations, st.stretch_starts[replica], st.stretch_table[replica])
    st.replica_state[replica, RP_IN_STRETCH] = 1
    st.replica_state[replica, RP_STRETCH_ITERATIONS] = iterations
    write_record(st, replica, time_s, members, members, 0, 0)
    st.replica_times[replica, RT_WINDOW_POSITIONS] = first + iterations * increment
    st.replica_state[replica, RP_WINDOW_STARTED] = step + iterations
    st.counters[CNT_STRETCHES] += 1
    st.counters[CNT_ITERATIONS] += iterations
    update_stretch_record(st, replica)


@jit(internal=True)
def stretch_end(st, replica, iterations):
    """When the stretch's first ``iterations`` iterations have ended."""
    if iterations == 0:
        return st.replica_times[replica, RT_START_S]
    duration, _ = stretch_sums(st.stretch_starts[replica], st.stretch_table[replica],
                               st.replica_state[replica, RP_STRETCH_PIECES], iterations)
    return st.replica_times[replica, RT_START_S] + duration


@jit(internal=True)
def ends_before(st, replica, time_s, or_at):
    """How many of the stretch's iterations end before ``time_s`` (or at it, with ``or_at``)."""
    low = 0
    high = st.replica_state[replica, RP_STRETCH_ITERATIONS]
    while low < high:
        middle = (low + high + 1) // 2
        end_s = stretch_end(st, replica, middle)
        if end_s < time_s or (or_at and end_s == time_s):
            low = middle
        else:
            high = middle - 1
    return low


@jit(internal=True)
def update_stretch_record(st, replica):
    """The record of the stretch in flight: its iterations as planned so far."""
    iterations = st.replica_state[replica, RP_STRETCH_ITERATIONS]
    starts = st.stretch_starts[replica]
    table = st.stretch_table[replica]
    pieces = st.replica_state[replica, RP_STRETCH_PIECES]
    _, energy = stretch_sums(starts, table, pieces, iterations)
    end_s = stretch_end(st, replica, iterations)
    row = st.replica_state[replica, RP_ITERATION] % st.iteration_float.shape[0]
    record = st.iteration_float[row]
    record[IT_DURATION_S] = end_s - st.replica_times[replica, RT_START_S]
    record[IT_ENERGY_J] = energy
    record[IT_FIRST_DURATION_S] = table[0, ST_FIRST_DURATION]
    # The last iteration kept: the end of its piece, or on the piece's line when the stretch was cut.
    last_piece = pieces - 1
    while starts[last_piece] >= iterations:
        last_piece -= 1
    length = starts[last_piece + 1] - starts[last_piece]
    taken = iterations - starts[last_piece]
    if taken == length:
        record[IT_LAST_DURATION_S] = table[last_piece, ST_LAST_DURATION]
    else:
        record[IT_LAST_DURATION_S] = decode_iteration_cost(
            st.window_terms, replica, st.replica_times[replica, RT_STRETCH_FIRST_POSITIONS]
            + (iterations - 1) * st.replica_times[replica, RT_WINDOW_INCREMENT])[0]
    st.iteration_int[row, IT_ITERATIONS] = iterations
    st.iteration_int[row, IT_KV_BLOCKS] = st.replica_state[replica, RP_BLOCKS_USED]
    st.replica_times[replica, RT_END_S] = end_s


@jit(internal=True)
def cut_stretch(st, replica, keep):
    """Keep the stretch's first ``keep`` iterations: the members' later steps are not started."""
    dropped = st.replica_state[replica, RP_STRETCH_ITERATIONS] - keep
    if dropped <= 0:
        return
    started = st.replica_state[replica, RP_WINDOW_STARTED] - dropped
    st.replica_state[replica, RP_BLOCKS_USED] -= window_new_blocks(st, replica, started, dropped)
    st.replica_state[replica, RP_WINDOW_STARTED] = started
    st.replica_times[replica, RT_WINDOW_POSITIONS] -= dropped * st.replica_times[replica, RT_WINDOW_INCREMENT]
    st.replica_state[replica, RP_STRETCH_ITERATIONS] = keep
    st.counters[CNT_ITERATIONS] -= dropped
    update_stretch_record(st, replica)


@jit(internal=True)
def cut_stretch_at(st, replica, time_s):
    """A request arrived for the replica at ``time_s``: the stretch ends with the iteration in
    progress then (the first whose end is at or after ``time_s``)."""
    cut_stretch(st, replica, min(ends_before(st, replica, time_s, False) + 1,
                                 st.replica_state[replica, RP_STRETCH_ITERATIONS]))


@jit(internal=True)
def stretch_to_bins(st, replica, iterations):
    """The stretch's first ``iterations`` into the bins: each one's tokens in the bin of its end,
    its busy time and energy spread over its span (at the stretch's mean power)."""
    members = float(st.replica_state[replica, RP_WINDOW_MEMBERS])
    saturated = st.replica_state[replica, RP_WAITING_SCHEDULED] > 0
    start_s = st.replica_times[replica, RT_START_S]
    end_s = stretch_end(st, replica, iterations)
    if iterations > 0:
        last = bin_of(st, end_s)  # widens the bins first where needed
        first = bin_of(st, stretch_end(st, replica, 1))
        width = st.loop_float[LF_BIN_WIDTH_S]
        before = 0
        for index in range(first, last + 1):
            upto = iterations if index == last else min(ends_before(st, replica, (index + 1) * width, False),
                                                        iterations)
            if upto > before:
                st.bins[index, BIN_OUTPUT_TOKENS] += (upto - before) * members
                if saturated:
                    st.bins[index, BIN_SATURATED_TOKENS] += (upto - before) * members
            before = upto
    add_over(st, start_s, end_s, BIN_BUSY_S, end_s - start_s)
    energy = 0.0
    if iterations > 0:
        energy = stretch_sums(st.stretch_starts[replica], st.stretch_table[replica],
                              st.replica_state[replica, RP_STRETCH_PIECES], iterations)[1]
    add_over(st, start_s, end_s, BIN_ENERGY_J, energy)


@jit(internal=True)
def bring_up_to_date(st, replica, request):
    """A member takes the steps the window completed (and the blocks of those it started)."""
    started = st.replica_state[replica, RP_WINDOW_STARTED]
    completed = st.replica_state[replica, RP_WINDOW_COMPLETED]
    computed = st.request_state[request, RS_COMPUTED]
    st.request_state[request, RS_BLOCKS_HELD] = max(st.request_state[request, RS_BLOCKS_HELD],
                                                    ceil_div(computed + started, st.settings[SET_BLOCK_SIZE]))
    st.request_state[request, RS_COMPUTED] = computed + completed
    st.request_state[request, RS_NUM_TOKENS] = computed + completed + 1
    st.request_state[request, RS_EMITTED] += completed
    if completed > 0:
        st.last_token_s[request] = st.replica_times[replica, RT_WINDOW_LAST_TOKEN_S]
        st.request_state[request, RS_LAST_EMIT_ITERATION] = st.replica_state[replica, RP_WINDOW_LAST_ITERATION]
        st.request_int[request, REQ_TOKENS_EMITTED] = st.request_state[request, RS_EMITTED]


@jit(internal=True)
def close_window(st, replica):
    """Bring the members up to date; the replica steps again."""
    for index in range(st.replica_state[replica, RP_WINDOW_MEMBERS]):
        bring_up_to_date(st, replica, st.running[replica, index])
    st.replica_state[replica, RP_IN_WINDOW] = 0


@jit(internal=True)
def stop_stretch(st, replica, stop_s):
    """The run stops at ``stop_s`` with a stretch in flight: its iterations that ended by then
    are completed (none finishes a member: a finish ends a stretch), and its record keeps those
    started by then."""
    completed = ends_before(st, replica, stop_s, True)
    cut_stretch(st, replica, min(completed + 1, st.replica_state[replica, RP_STRETCH_ITERATIONS]))
    stretch_to_bins(st, replica, completed)
    st.replica_state[replica, RP_IN_STRETCH] = 0
    if completed > 0:
        st.replica_times[replica, RT_WINDOW_LAST_TOKEN_S] = stretch_end(st, replica, completed)
        st.replica_state[replica, RP_WINDOW_COMPLETED] += completed
        iteration = st.replica_state[replica, RP_ITERATION]
        st.replica_state[replica, RP_WINDOW_LAST_ITERATION] = iteration
        members = st.replica_state[replica, RP_WINDOW_MEMBERS]
        record_emissions(st, iteration, members, members)
