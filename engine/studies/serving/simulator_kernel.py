"""Compiled twin of ``simulator_reference``: the same simulation on flat arrays.

Every rule, event order and floating-point operation follows the reference model step for
step; the tests hold the two equal. Data structures are chosen so that an iteration costs
O(scheduled requests): each replica's waiting queue is a singly linked FIFO threaded through
the request table (O(1) push at either end and pop at the head, O(n) memory for all replicas
together), its running list is an ordered array with O(1) pop from the tail, and closed-loop
users waiting to issue sit in a binary heap. The kernel allocates nothing: the caller passes
the outputs and a workspace from ``allocate_workspace``.

The iteration's time and energy are the engine's (``physics.iteration``, inlined).

Fast-forward (``SET_FAST_FORWARD``), as in the reference: a replica whose running requests
all emitted in its last iteration, with none waiting, opens a steady window whose members (the
head of the running list) decode one token in each of its iterations. Their part of an
iteration costs O(1): the decode positions follow by an increment (``decode_positions``), the
iteration's cost by ``decode_iteration_cost`` over terms worked out once per batch size, the
new KV blocks of a step come from a count of the members by the step at which each next needs
a block (the position of its KV within its last block), and the members' own state is kept as
at the window's start and brought up to date when they leave or the window closes. Members
that emit their last token leave in one pass over the others; under vLLM, requests routed to
the replica are scheduled behind the members one by one and join them once they decode. The
event loop is unchanged, so arrivals, the other replicas and the caps interleave with a
window's iterations exactly as with stepping.
"""

from __future__ import annotations

import numpy as np

from ...physics.iteration import (
    DECODE_TERMS,
    UNBOUNDED_STEPS,
    decode_iteration_cost,
    decode_iteration_terms,
    decode_positions,
    iteration_cost,
    request_positions,
)
from ...physics.jit import jit
from .layout import (
    CNT_CAPPED,
    CNT_GAPS,
    CNT_GAPS_DROPPED,
    CNT_ITERATIONS,
    CNT_PREEMPTIONS,
    CNT_REJECTED,
    IT_DECODE_TOKENS,
    IT_DURATION_S,
    IT_ENERGY_J,
    IT_ITL_TOKENS,
    IT_KV_BLOCKS,
    IT_PREEMPTIONS,
    IT_PREFILL_TOKENS,
    IT_REPLICA,
    IT_RUNNING,
    IT_SEQUENCES,
    IT_START_S,
    IT_TOKENS,
    IT_WAITING,
    POLICY_STATIC,
    POLICY_TRTLLM_NO_EVICT,
    POLICY_VLLM,
    REQ_END_S,
    REQ_FIRST_TOKEN_S,
    REQ_ISSUE_S,
    REQ_PREEMPTIONS,
    REQ_REPLICA,
    REQ_STATUS,
    REQ_TOKENS_EMITTED,
    ROUTER_ROUND_ROBIN,
    SET_BLOCK_SIZE,
    SET_FAST_FORWARD,
    SET_KV_BLOCKS_TOTAL,
    SET_LONG_PREFILL_THRESHOLD,
    SET_MAX_BATCHED_TOKENS,
    SET_MAX_ITERATIONS,
    SET_MAX_MODEL_LEN,
    SET_MAX_NUM_SEQS,
    SET_POLICY,
    SET_PREFIX_TOKENS,
    SET_REPLICAS,
    SET_ROUTER,
    SET_STATIC_BATCH,
    SET_USERS,
    STATUS_FINISHED,
    STATUS_REJECTED,
    STATUS_UNFINISHED,
    STEP_DECODE,
    STEP_PADDING,
    STEP_PREFILL,
)

# Request table columns, int64[n, RS_SIZE].
RS_COMPUTED = 0
RS_NUM_TOKENS = 1  # prompt + generated tokens
RS_BLOCKS_HELD = 2  # logical blocks, shared prefix blocks included
RS_SHARED_BLOCKS = 3
RS_EMITTED = 4
RS_RECOMPUTING = 5
RS_KV_READY = 6  # prompt KV computed elsewhere; the first token is already emitted
RS_LAST_EMIT_ITERATION = 7
RS_NEXT_WAITING = 8  # next request in its replica's waiting queue, -1 at the tail
RS_OWN_BLOCKS_TO_COMPLETION = 9  # no-evict reservation while running
RS_SIZE = 10

# Replica table columns, int64[replicas, RP_SIZE].
RP_WAITING_HEAD = 0
RP_WAITING_TAIL = 1
RP_WAITING_LENGTH = 2
RP_RUNNING_LENGTH = 3
RP_BUSY = 4
RP_ITERATION = 5
RP_PREVIOUS_ITERATION = 6
RP_BLOCKS_USED = 7
RP_RESERVED_BLOCKS = 8
RP_PREFIX_CACHED = 9
RP_OUTSTANDING = 10
RP_SCHEDULED_LENGTH = 11
RP_STEADY = 12  # 1: in a steady window (its members' state lags, see exit_steady)
RP_STEADY_STEPS = 13  # iterations started in the window
RP_STEADY_LIMIT = 14  # the window's next step at which a request emits its last token
RP_STEADY_HOLD = 15  # last window step whose positions follow by increment from the last refresh
RP_STEADY_PHASE = 16  # window steps modulo the block size: the block_phases slot of the next step
RP_STEADY_MEMBERS = 17  # the window's requests: the head of the running list
RP_SIZE = 18

# Steady window sums, float64[replicas, SF_SIZE].
SF_POSITIONS = 0  # decode positions of the window's next step
SF_INCREMENT = 1  # and their change per step until RP_STEADY_HOLD
SF_LAST_TOKEN_S = 2  # when the window's last completed step emitted
SF_SIZE = 3

# Scheduled entries, int64[replicas, capacity, SCHED_SIZE].
SCHED_REQUEST = 0
SCHED_TOKENS = 1
SCHED_KIND = 2
SCHED_SIZE = 3

# Event-loop scalars, int64[LOOP_SIZE].
LOOP_NEXT_OPEN_ARRIVAL = 0
LOOP_NEXT_UNISSUED = 1
LOOP_PENDING = 2  # closed-loop issues in the heap
LOOP_ROUND_ROBIN = 3
LOOP_ITERATIONS = 4
LOOP_FAST_FORWARDED = 5  # iterations started in steady windows
LOOP_SIZE = 6


WORKSPACE_LOOP_STATE = 7  # loop_state's place in allocate_workspace's tuple


def allocate_workspace(requests, replicas, running_capacity, users, block_size):
    """Scratch arrays for one kernel run (contents need no initialisation)."""
    heap_capacity = max(1, min(users, requests))
    return (
        np.empty((requests, RS_SIZE), dtype=np.int64),
        np.empty((replicas, RP_SIZE), dtype=np.int64),
        np.empty(replicas, dtype=np.float64),
        np.empty((replicas, running_capacity), dtype=np.int64),
        np.empty((replicas, running_capacity, SCHED_SIZE), dtype=np.int64),
        np.empty(heap_capacity, dtype=np.float64),
        np.empty(heap_capacity, dtype=np.int64),
        np.empty(LOOP_SIZE, dtype=np.int64),
        np.empty((replicas, SF_SIZE), dtype=np.float64),
        np.empty((replicas, block_size), dtype=np.int64),
        np.empty((replicas, DECODE_TERMS), dtype=np.float64),
        np.empty(requests, dtype=np.float64),
    )


@jit
def _ceil_div(numerator, denominator):
    return -(-numerator // denominator)


@jit
def _heap_before(time_a, request_a, time_b, request_b):
    """Order of the closed-loop issue heap: by time, then request index."""
    return time_a < time_b or (time_a == time_b and request_a < request_b)


@jit
def simulate_kernel(
    arrival_s,
    prompt_tokens,
    output_tokens,
    think_s,
    prior_token_s,
    settings,
    max_time_s,
    cost,
    request_float,
    request_int,
    iteration_float,
    iteration_int,
    gap_s,
    counters,
    request_state,
    replica_state,
    replica_end_s,
    running,
    scheduled,
    heap_s,
    heap_request,
    loop_state,
    steady_float,
    block_phases,
    steady_terms,
    last_token_s,
):
    """Run the simulation; fills the output arrays (layouts in ``layout``) like ``simulate_reference``.

    The workspace arrays after ``counters`` come from ``allocate_workspace``.
    """
    requests = arrival_s.shape[0]
    replicas = settings[SET_REPLICAS]
    users = settings[SET_USERS]
    policy = settings[SET_POLICY]
    block_size = settings[SET_BLOCK_SIZE]
    kv_blocks_total = settings[SET_KV_BLOCKS_TOTAL]
    max_batched_tokens = settings[SET_MAX_BATCHED_TOKENS]
    max_num_seqs = settings[SET_MAX_NUM_SEQS]
    long_prefill_threshold = settings[SET_LONG_PREFILL_THRESHOLD]
    max_model_len = settings[SET_MAX_MODEL_LEN]
    prefix_tokens = settings[SET_PREFIX_TOKENS]
    max_iterations = settings[SET_MAX_ITERATIONS]
    record_rows = iteration_float.shape[0]  # iteration i writes row i % record_rows (layout)
    prefix_blocks = 0
    if policy != POLICY_STATIC:
        prefix_blocks = prefix_tokens // block_size
    # A static batch keeps its finished members as padding: its iterations are never steady.
    fast_forward = settings[SET_FAST_FORWARD] == 1 and policy != POLICY_STATIC

    # Helpers are closures over the arrays: numba inlines them, while module-level functions
    # taking arrays would pay reference counting on every array argument at every call.

    # -- closed-loop issue heap ----------------------------------------------------------------

    def heap_push(time_s, request):
        position = loop_state[LOOP_PENDING]
        loop_state[LOOP_PENDING] = position + 1
        while position > 0:
            parent = (position - 1) // 2
            if not _heap_before(time_s, request, heap_s[parent], heap_request[parent]):
                break
            heap_s[position] = heap_s[parent]
            heap_request[position] = heap_request[parent]
            position = parent
        heap_s[position] = time_s
        heap_request[position] = request

    def heap_pop():
        """Remove the root; the caller has read it."""
        last = loop_state[LOOP_PENDING] - 1
        loop_state[LOOP_PENDING] = last
        time_s = heap_s[last]
        request = heap_request[last]
        position = 0
        while True:
            child = 2 * position + 1
            if child >= last:
                break
            if child + 1 < last and _heap_before(
                heap_s[child + 1], heap_request[child + 1], heap_s[child], heap_request[child]
            ):
                child += 1
            if not _heap_before(heap_s[child], heap_request[child], time_s, request):
                break
            heap_s[position] = heap_s[child]
            heap_request[position] = heap_request[child]
            position = child
        if last > 0:
            heap_s[position] = time_s
            heap_request[position] = request

    # -- waiting queues: singly linked FIFOs through RS_NEXT_WAITING ---------------------------

    def waiting_push_back(replica, request):
        request_state[request, RS_NEXT_WAITING] = -1
        tail = replica_state[replica, RP_WAITING_TAIL]
        if tail == -1:
            replica_state[replica, RP_WAITING_HEAD] = request
        else:
            request_state[tail, RS_NEXT_WAITING] = request
        replica_state[replica, RP_WAITING_TAIL] = request
        replica_state[replica, RP_WAITING_LENGTH] += 1

    def waiting_push_front(replica, request):
        request_state[request, RS_NEXT_WAITING] = replica_state[replica, RP_WAITING_HEAD]
        replica_state[replica, RP_WAITING_HEAD] = request
        if replica_state[replica, RP_WAITING_TAIL] == -1:
            replica_state[replica, RP_WAITING_TAIL] = request
        replica_state[replica, RP_WAITING_LENGTH] += 1

    def waiting_pop_front(replica):
        request = replica_state[replica, RP_WAITING_HEAD]
        following = request_state[request, RS_NEXT_WAITING]
        replica_state[replica, RP_WAITING_HEAD] = following
        if following == -1:
            replica_state[replica, RP_WAITING_TAIL] = -1
        replica_state[replica, RP_WAITING_LENGTH] -= 1
        return request

    # -- lifecycle of a request ----------------------------------------------------------------

    def can_never_run(request):
        prompt = prompt_tokens[request]
        output = output_tokens[request]
        if prompt + output > max_model_len:
            return True
        if policy == POLICY_STATIC:
            return False
        # vLLM never caches the last output token's KV; TensorRT-LLM reserves prompt + max output.
        positions = prompt + output
        if policy != POLICY_TRTLLM_NO_EVICT:
            positions -= 1
        # Judged against the pool left once the shared prefix is pinned, so that an admitted
        # request can always complete alone.
        return _ceil_div(positions, block_size) > kv_blocks_total - prefix_blocks

    def prefix_hit_blocks(replica, request):
        """Shared prefix blocks a request starts with when admitted on ``replica``."""
        if (
            request_state[request, RS_KV_READY] == 1
            or replica_state[replica, RP_PREFIX_CACHED] == 0
            or prompt_tokens[request] < prefix_tokens
        ):
            return 0
        # At least one prompt token must be computed to produce the first output token.
        return min(prefix_blocks, (prompt_tokens[request] - 1) // block_size)

    def start_computed(request, shared_blocks):
        """Computed tokens the head of waiting would be admitted with."""
        if request_state[request, RS_KV_READY] == 1:
            return prompt_tokens[request]
        return shared_blocks * block_size

    def admit(replica):
        """Move the head of waiting to the tail of running, with its prefix hit or ready KV."""
        request = waiting_pop_front(replica)
        if request_state[request, RS_KV_READY] == 1:
            request_state[request, RS_COMPUTED] = prompt_tokens[request]
            request_state[request, RS_BLOCKS_HELD] = 0
            request_state[request, RS_SHARED_BLOCKS] = 0
        else:
            hit = prefix_hit_blocks(replica, request)
            request_state[request, RS_COMPUTED] = hit * block_size
            request_state[request, RS_BLOCKS_HELD] = hit
            request_state[request, RS_SHARED_BLOCKS] = hit
        length = replica_state[replica, RP_RUNNING_LENGTH]
        running[replica, length] = request
        replica_state[replica, RP_RUNNING_LENGTH] = length + 1
        return request

    def blocks_needed(request, new_tokens):
        """Blocks to add so the KV covers ``new_tokens`` more: ceil((computed + new) / block) - held."""
        end = request_state[request, RS_COMPUTED] + new_tokens
        held = request_state[request, RS_BLOCKS_HELD]
        # Most steps stay inside the last block; skip the integer division for them.
        if end <= held * block_size:
            return 0
        return _ceil_div(end, block_size) - held

    def hold_blocks(replica, request, blocks):
        if blocks > 0:
            replica_state[replica, RP_BLOCKS_USED] += blocks
            request_state[request, RS_BLOCKS_HELD] += blocks

    def release_blocks(replica, request):
        replica_state[replica, RP_BLOCKS_USED] -= (
            request_state[request, RS_BLOCKS_HELD] - request_state[request, RS_SHARED_BLOCKS]
        )
        request_state[request, RS_BLOCKS_HELD] = 0
        request_state[request, RS_SHARED_BLOCKS] = 0

    def preempt(replica, request):
        """Evict a running request: free its blocks; it recomputes everything later."""
        release_blocks(replica, request)
        request_state[request, RS_COMPUTED] = 0
        request_state[request, RS_RECOMPUTING] = 1
        request_state[request, RS_KV_READY] = 0
        waiting_push_front(replica, request)
        request_int[request, REQ_PREEMPTIONS] += 1
        counters[CNT_PREEMPTIONS] += 1

    def step_kind(request, new_tokens):
        if new_tokens == 1 and request_state[request, RS_EMITTED] >= 1 and request_state[request, RS_RECOMPUTING] == 0:
            return STEP_DECODE
        return STEP_PREFILL

    def is_generation_step(request):
        """True when the next step is a decode: one token after the first, not a recompute."""
        return (
            request_state[request, RS_NUM_TOKENS] - request_state[request, RS_COMPUTED] == 1
            and request_state[request, RS_EMITTED] >= 1
            and request_state[request, RS_RECOMPUTING] == 0
        )

    def add_scheduled(replica, request, new_tokens, kind):
        length = replica_state[replica, RP_SCHEDULED_LENGTH]
        scheduled[replica, length, SCHED_REQUEST] = request
        scheduled[replica, length, SCHED_TOKENS] = new_tokens
        scheduled[replica, length, SCHED_KIND] = kind
        replica_state[replica, RP_SCHEDULED_LENGTH] = length + 1

    # -- arrivals ------------------------------------------------------------------------------

    def issue_next_request(time_s):
        """A closed-loop user whose request just ended issues the next unissued one after thinking."""
        index = loop_state[LOOP_NEXT_UNISSUED]
        if users > 0 and index < requests:
            loop_state[LOOP_NEXT_UNISSUED] = index + 1
            heap_push(time_s + think_s[index], index)

    def arrive(request, time_s):
        request_float[request, REQ_ISSUE_S] = time_s
        if can_never_run(request):
            request_int[request, REQ_STATUS] = STATUS_REJECTED
            counters[CNT_REJECTED] += 1
            issue_next_request(time_s)
            return
        if settings[SET_ROUTER] == ROUTER_ROUND_ROBIN:
            replica = loop_state[LOOP_ROUND_ROBIN] % replicas
            loop_state[LOOP_ROUND_ROBIN] += 1
        else:
            replica = 0
            for candidate in range(1, replicas):
                if replica_state[candidate, RP_OUTSTANDING] < replica_state[replica, RP_OUTSTANDING]:
                    replica = candidate
        replica_state[replica, RP_OUTSTANDING] += 1
        request_int[request, REQ_REPLICA] = replica
        waiting_push_back(replica, request)

    # -- schedulers: fill scheduled[replica] and return the preemptions ----------------------

    def schedule_vllm(replica, index, budget):
        """From the running request at ``index`` on, with ``budget`` tokens left (a steady
        window has taken the ones before)."""
        preemptions = 0
        # Pass 1: running requests in admission order.
        while index < replica_state[replica, RP_RUNNING_LENGTH] and budget > 0:
            request = running[replica, index]
            computed = request_state[request, RS_COMPUTED]
            new_tokens = min(request_state[request, RS_NUM_TOKENS] - computed, budget, max_model_len - 1 - computed)
            if long_prefill_threshold > 0:
                new_tokens = min(new_tokens, long_prefill_threshold)
            if new_tokens <= 0:
                index += 1
                continue
            needed = blocks_needed(request, new_tokens)
            preempted_itself = False
            while needed > kv_blocks_total - replica_state[replica, RP_BLOCKS_USED]:
                last = replica_state[replica, RP_RUNNING_LENGTH] - 1
                victim = running[replica, last]
                replica_state[replica, RP_RUNNING_LENGTH] = last
                preempt(replica, victim)
                preemptions += 1
                if victim == request:
                    preempted_itself = True
                    break
            if preempted_itself:
                break
            hold_blocks(replica, request, needed)
            add_scheduled(replica, request, new_tokens, step_kind(request, new_tokens))
            budget -= new_tokens
            index += 1
        # Pass 2: admit from the head of waiting, only if nothing was preempted.
        if preemptions == 0:
            while (
                replica_state[replica, RP_WAITING_LENGTH] > 0
                and budget > 0
                and replica_state[replica, RP_RUNNING_LENGTH] < max_num_seqs
            ):
                request = replica_state[replica, RP_WAITING_HEAD]
                shared_blocks = prefix_hit_blocks(replica, request)
                computed = start_computed(request, shared_blocks)
                new_tokens = min(request_state[request, RS_NUM_TOKENS] - computed, budget)
                if long_prefill_threshold > 0:
                    new_tokens = min(new_tokens, long_prefill_threshold)
                needed = _ceil_div(computed + new_tokens, block_size) - shared_blocks
                if needed > kv_blocks_total - replica_state[replica, RP_BLOCKS_USED]:
                    break  # head-of-line: admission never preempts
                admit(replica)
                hold_blocks(replica, request, needed)
                add_scheduled(replica, request, new_tokens, step_kind(request, new_tokens))
                budget -= new_tokens
        return preemptions

    def schedule_trtllm(replica):
        preemptions = 0
        if policy == POLICY_TRTLLM_NO_EVICT:
            # Capacity: admit while the blocks to completion fit beside every running request's.
            while (
                replica_state[replica, RP_WAITING_LENGTH] > 0
                and replica_state[replica, RP_RUNNING_LENGTH] < max_num_seqs
            ):
                request = replica_state[replica, RP_WAITING_HEAD]
                shared_blocks = prefix_hit_blocks(replica, request)
                own_blocks = _ceil_div(prompt_tokens[request] + output_tokens[request], block_size) - shared_blocks
                if replica_state[replica, RP_RESERVED_BLOCKS] + own_blocks > kv_blocks_total:
                    break
                admit(replica)
                request_state[request, RS_OWN_BLOCKS_TO_COMPLETION] = own_blocks
                replica_state[replica, RP_RESERVED_BLOCKS] += own_blocks
        else:
            # Capacity: every running request must get its next step's blocks; pause the most
            # recently started ones until it does.
            available = kv_blocks_total - replica_state[replica, RP_BLOCKS_USED]
            index = 0
            while index < replica_state[replica, RP_RUNNING_LENGTH]:
                request = running[replica, index]
                if is_generation_step(request):
                    step = 1
                else:
                    step = min(
                        request_state[request, RS_NUM_TOKENS] - request_state[request, RS_COMPUTED], max_batched_tokens
                    )
                needed = blocks_needed(request, step)
                paused_itself = False
                while needed > available:
                    last = replica_state[replica, RP_RUNNING_LENGTH] - 1
                    victim = running[replica, last]
                    replica_state[replica, RP_RUNNING_LENGTH] = last
                    available += request_state[victim, RS_BLOCKS_HELD] - request_state[victim, RS_SHARED_BLOCKS]
                    preempt(replica, victim)
                    preemptions += 1
                    if victim == request:
                        paused_itself = True
                        break
                if paused_itself:
                    break
                available -= needed
                index += 1
            if preemptions == 0:
                while (
                    replica_state[replica, RP_WAITING_LENGTH] > 0
                    and replica_state[replica, RP_RUNNING_LENGTH] < max_num_seqs
                ):
                    request = replica_state[replica, RP_WAITING_HEAD]
                    shared_blocks = prefix_hit_blocks(replica, request)
                    computed = start_computed(request, shared_blocks)
                    step = min(request_state[request, RS_NUM_TOKENS] - computed, max_batched_tokens)
                    needed = _ceil_div(computed + step, block_size) - shared_blocks
                    if needed > available:
                        break
                    admit(replica)
                    available -= needed
        # Micro-batch: generation requests first, then context chunks, in admission order.
        budget = max_batched_tokens
        length = replica_state[replica, RP_RUNNING_LENGTH]
        for index in range(length):
            if budget == 0:
                break
            request = running[replica, index]
            if is_generation_step(request):
                hold_blocks(replica, request, blocks_needed(request, 1))
                add_scheduled(replica, request, 1, STEP_DECODE)
                budget -= 1
        for index in range(length):
            if budget == 0:
                break
            request = running[replica, index]
            if not is_generation_step(request):
                new_tokens = min(request_state[request, RS_NUM_TOKENS] - request_state[request, RS_COMPUTED], budget)
                hold_blocks(replica, request, blocks_needed(request, new_tokens))
                add_scheduled(replica, request, new_tokens, step_kind(request, new_tokens))
                budget -= new_tokens
        return preemptions

    def schedule_static(replica):
        if replica_state[replica, RP_RUNNING_LENGTH] == 0:
            while (
                replica_state[replica, RP_WAITING_LENGTH] > 0
                and replica_state[replica, RP_RUNNING_LENGTH] < settings[SET_STATIC_BATCH]
            ):
                admit(replica)
        for index in range(replica_state[replica, RP_RUNNING_LENGTH]):
            request = running[replica, index]
            if request_state[request, RS_EMITTED] == output_tokens[request]:
                add_scheduled(replica, request, 1, STEP_PADDING)
            else:
                new_tokens = request_state[request, RS_NUM_TOKENS] - request_state[request, RS_COMPUTED]
                add_scheduled(replica, request, new_tokens, step_kind(request, new_tokens))
        return 0

    # -- iterations ----------------------------------------------------------------------------

    def finish(replica, request, time_s):
        """A request emitted its last token: it leaves, freeing its blocks (and reservation)."""
        request_int[request, REQ_STATUS] = STATUS_FINISHED
        request_float[request, REQ_END_S] = time_s
        replica_state[replica, RP_OUTSTANDING] -= 1
        if policy != POLICY_STATIC:
            release_blocks(replica, request)
        if policy == POLICY_TRTLLM_NO_EVICT:
            replica_state[replica, RP_RESERVED_BLOCKS] -= request_state[request, RS_OWN_BLOCKS_TO_COMPLETION]
        issue_next_request(time_s)

    def drop_finished(replica):
        """Remove the finished requests from the running list, keeping its order."""
        kept = 0
        for index in range(replica_state[replica, RP_RUNNING_LENGTH]):
            request = running[replica, index]
            if request_state[request, RS_EMITTED] != output_tokens[request]:
                running[replica, kept] = request
                kept += 1
        replica_state[replica, RP_RUNNING_LENGTH] = kept

    def complete_scheduled(replica, time_s, iteration):
        """The scheduled steps compute their tokens and emit; (decode tokens, regular gaps, any
        finished)."""
        previous_iteration = replica_state[replica, RP_PREVIOUS_ITERATION]
        decode_tokens = 0
        regular_gaps = 0
        any_finished = False
        for index in range(replica_state[replica, RP_SCHEDULED_LENGTH]):
            request = scheduled[replica, index, SCHED_REQUEST]
            kind = scheduled[replica, index, SCHED_KIND]
            computed = request_state[request, RS_COMPUTED] + scheduled[replica, index, SCHED_TOKENS]
            request_state[request, RS_COMPUTED] = computed
            if kind == STEP_PADDING:
                continue
            # The first request to compute the whole shared prefix pins its full blocks for everyone.
            if (
                prefix_blocks > 0
                and replica_state[replica, RP_PREFIX_CACHED] == 0
                and prompt_tokens[request] >= prefix_tokens
                and computed >= prefix_tokens
            ):
                replica_state[replica, RP_PREFIX_CACHED] = 1
                request_state[request, RS_SHARED_BLOCKS] = prefix_blocks
                if policy == POLICY_TRTLLM_NO_EVICT:
                    request_state[request, RS_OWN_BLOCKS_TO_COMPLETION] -= prefix_blocks
            if computed != request_state[request, RS_NUM_TOKENS]:
                continue
            request_state[request, RS_NUM_TOKENS] = computed + 1
            emitted = request_state[request, RS_EMITTED] + 1
            request_state[request, RS_EMITTED] = emitted
            if kind == STEP_DECODE:
                decode_tokens += 1
            last_emit_iteration = request_state[request, RS_LAST_EMIT_ITERATION]
            if emitted == 1:
                request_float[request, REQ_FIRST_TOKEN_S] = time_s
            elif last_emit_iteration >= 0 and last_emit_iteration == previous_iteration:
                regular_gaps += 1  # its gap is exactly this iteration's duration
            else:
                gaps = counters[CNT_GAPS]
                if gaps < gap_s.shape[0]:
                    gap_s[gaps] = time_s - last_token_s[request]
                    counters[CNT_GAPS] = gaps + 1
                else:
                    counters[CNT_GAPS_DROPPED] += 1
            request_state[request, RS_LAST_EMIT_ITERATION] = iteration
            last_token_s[request] = time_s
            request_state[request, RS_RECOMPUTING] = 0
            if emitted == output_tokens[request]:
                any_finished = True
                finish(replica, request, time_s)
        return decode_tokens, regular_gaps, any_finished

    # -- steady windows (fast-forward) ---------------------------------------------------------

    def scheduled_sums(replica, tokens, prefill_tokens, prefill_positions, decode_positions, kv_read_positions):
        """The sums ``iteration_cost`` takes, with the scheduled steps' added to those given."""
        for index in range(replica_state[replica, RP_SCHEDULED_LENGTH]):
            request = scheduled[replica, index, SCHED_REQUEST]
            new_tokens = scheduled[replica, index, SCHED_TOKENS]
            kind = scheduled[replica, index, SCHED_KIND]
            prefill, decode, kv_read = request_positions(
                cost, request_state[request, RS_COMPUTED], new_tokens, kind != STEP_PREFILL
            )
            prefill_positions += prefill
            decode_positions += decode
            kv_read_positions += kv_read
            tokens += new_tokens
            if kind == STEP_PREFILL:
                prefill_tokens += new_tokens
        return tokens, prefill_tokens, prefill_positions, decode_positions, kv_read_positions

    def record_emissions(iteration, decode_tokens, regular_gaps):
        """Complete an iteration's record with the tokens it emitted, once it has ended."""
        row = iteration % record_rows
        iteration_int[row, IT_DECODE_TOKENS] = decode_tokens
        iteration_int[row, IT_ITL_TOKENS] = regular_gaps

    def record_iteration(replica, time_s, duration_s, energy_j, sequences, tokens, prefill_tokens, preemptions):
        """Write the record of an iteration starting now; the replica is busy until it ends."""
        iteration = loop_state[LOOP_ITERATIONS]
        loop_state[LOOP_ITERATIONS] = iteration + 1
        row = iteration % record_rows
        iteration_float[row, IT_START_S] = time_s
        iteration_float[row, IT_DURATION_S] = duration_s
        iteration_float[row, IT_ENERGY_J] = energy_j
        iteration_int[row, IT_REPLICA] = replica
        iteration_int[row, IT_SEQUENCES] = sequences
        iteration_int[row, IT_TOKENS] = tokens
        iteration_int[row, IT_PREFILL_TOKENS] = prefill_tokens
        iteration_int[row, IT_DECODE_TOKENS] = 0
        iteration_int[row, IT_ITL_TOKENS] = 0
        iteration_int[row, IT_WAITING] = replica_state[replica, RP_WAITING_LENGTH]
        iteration_int[row, IT_RUNNING] = replica_state[replica, RP_RUNNING_LENGTH]
        iteration_int[row, IT_KV_BLOCKS] = replica_state[replica, RP_BLOCKS_USED]
        iteration_int[row, IT_PREEMPTIONS] = preemptions
        replica_state[replica, RP_ITERATION] = iteration
        replica_state[replica, RP_BUSY] = 1
        replica_end_s[replica] = time_s + duration_s

    # -- steady windows (fast-forward) ---------------------------------------------------------
    # A window's requests (its members) are the head of the running list; their state is kept
    # as at the window's start (computed and emitted less the steps completed since), so that
    # the window's step count brings all of them up to date at once. Under vLLM, requests
    # routed to the replica are admitted behind them and scheduled one by one, and join the
    # window once they decode.

    def block_phase(request):
        """The window step, modulo the block size, at which a member next needs a block."""
        return (request_state[request, RS_BLOCKS_HELD] * block_size - request_state[request, RS_COMPUTED]) % block_size

    def join_window(replica, request, completed, positions, increment, hold, remaining):
        """A running request that decodes next, with a regular gap, becomes a member; the
        window's sums with it."""
        computed = request_state[request, RS_COMPUTED]
        request_state[request, RS_COMPUTED] = computed - completed
        request_state[request, RS_NUM_TOKENS] = computed - completed + 1
        request_state[request, RS_EMITTED] -= completed
        block_phases[replica, block_phase(request)] += 1
        request_positions_now, request_increment, steps = decode_positions(cost, computed)
        left = output_tokens[request] - request_state[request, RS_EMITTED] - completed
        return (positions + request_positions_now, increment + request_increment, min(hold, completed + steps),
                min(remaining, completed + left - 1))

    def can_join(replica, request, iteration):
        """It emitted in the iteration just completed and its KV ends in its last block."""
        first_block_step = request_state[request, RS_BLOCKS_HELD] * block_size - request_state[request, RS_COMPUTED]
        return (
            request_state[request, RS_LAST_EMIT_ITERATION] == iteration
            and iteration >= 0
            and is_generation_step(request)
            and 0 <= first_block_step < block_size
        )

    def refresh_positions(replica, step):
        """Decode positions of the window's step ``step``, their increment and how long it holds."""
        positions = 0.0
        increment = 0.0
        hold = UNBOUNDED_STEPS
        for index in range(replica_state[replica, RP_STEADY_MEMBERS]):
            request = running[replica, index]
            request_positions_now, request_increment, steps = decode_positions(
                cost, request_state[request, RS_COMPUTED] + step
            )
            positions += request_positions_now
            increment += request_increment
            hold = min(hold, steps)
        steady_float[replica, SF_POSITIONS] = positions
        steady_float[replica, SF_INCREMENT] = increment
        replica_state[replica, RP_STEADY_HOLD] = step + hold

    def enter_steady(replica):
        """Open a window over the longest head of the running list whose requests all emitted
        in the replica's last iteration (so each decodes next, after a regular gap); under vLLM
        the requests behind them and those waiting are scheduled after them, under the other
        policies the window needs every running request and none waiting. True if opened."""
        length = replica_state[replica, RP_RUNNING_LENGTH]
        previous_iteration = replica_state[replica, RP_PREVIOUS_ITERATION]
        members = 0
        while members < length and can_join(replica, running[replica, members], previous_iteration):
            members += 1
        if members == 0 or members > max_batched_tokens:
            return False
        if policy != POLICY_VLLM and (members < length or replica_state[replica, RP_WAITING_LENGTH] > 0):
            return False
        positions = 0.0
        increment = 0.0
        hold = UNBOUNDED_STEPS
        remaining = UNBOUNDED_STEPS
        for index in range(members):
            positions, increment, hold, remaining = join_window(
                replica, running[replica, index], 0, positions, increment, hold, remaining
            )
        steady_float[replica, SF_POSITIONS] = positions
        steady_float[replica, SF_INCREMENT] = increment
        decode_iteration_terms(cost, members, steady_terms, replica)
        replica_state[replica, RP_STEADY_HOLD] = hold
        replica_state[replica, RP_STEADY] = 1
        replica_state[replica, RP_STEADY_MEMBERS] = members
        replica_state[replica, RP_STEADY_STEPS] = 0
        replica_state[replica, RP_STEADY_LIMIT] = remaining  # the step of the first last token
        replica_state[replica, RP_STEADY_PHASE] = 0
        return True

    def others_fit(replica, index, budget, free):
        """Whether vLLM's first pass takes the running requests from ``index`` on with
        ``budget`` tokens and ``free`` blocks left without preempting one."""
        while index < replica_state[replica, RP_RUNNING_LENGTH] and budget > 0:
            request = running[replica, index]
            computed = request_state[request, RS_COMPUTED]
            new_tokens = min(request_state[request, RS_NUM_TOKENS] - computed, budget, max_model_len - 1 - computed)
            if long_prefill_threshold > 0:
                new_tokens = min(new_tokens, long_prefill_threshold)
            index += 1
            if new_tokens <= 0:
                continue
            needed = blocks_needed(request, new_tokens)
            if needed > free:
                return False
            free -= needed
            budget -= new_tokens
        return True

    def start_steady(replica, time_s):
        """Start the window's next iteration: its members' steps in O(1); under vLLM the other
        running requests and the admissions as the scheduler takes them after the members.
        False if the window ends before it: the members' new blocks are not free, the others'
        steps would preempt, or (other policies) a request waits."""
        step = replica_state[replica, RP_STEADY_STEPS]
        phase = replica_state[replica, RP_STEADY_PHASE]
        members = replica_state[replica, RP_STEADY_MEMBERS]
        new_blocks = block_phases[replica, phase]
        blocks_used = replica_state[replica, RP_BLOCKS_USED]
        free = kv_blocks_total - blocks_used - new_blocks
        mixed = replica_state[replica, RP_WAITING_LENGTH] > 0 or replica_state[replica, RP_RUNNING_LENGTH] > members
        if free < 0 or members == 0 or members > max_batched_tokens:
            return False
        if mixed and (policy != POLICY_VLLM or not others_fit(replica, members, max_batched_tokens - members, free)):
            return False
        if step > replica_state[replica, RP_STEADY_HOLD]:
            refresh_positions(replica, step)
        positions = steady_float[replica, SF_POSITIONS]
        replica_state[replica, RP_BLOCKS_USED] = blocks_used + new_blocks
        replica_state[replica, RP_SCHEDULED_LENGTH] = 0
        if not mixed:
            # iteration_cost(cost, members, members, 0.0, positions, positions, 0), to the bit.
            duration_s, energy_j = decode_iteration_cost(steady_terms, replica, positions)
            record_iteration(replica, time_s, duration_s, energy_j, members, members, 0, 0)
        else:
            schedule_vllm(replica, members, max_batched_tokens - members)  # preempts none
            tokens, prefill_tokens, prefill_positions, decode_positions_sum, kv_read_positions = scheduled_sums(
                replica, members, 0, 0.0, positions, positions
            )
            sequences = members + replica_state[replica, RP_SCHEDULED_LENGTH]
            duration_s, energy_j = iteration_cost(
                cost, tokens, sequences, prefill_positions, decode_positions_sum, kv_read_positions, prefill_tokens
            )
            record_iteration(replica, time_s, duration_s, energy_j, sequences, tokens, prefill_tokens, 0)
        replica_state[replica, RP_STEADY_STEPS] = step + 1
        loop_state[LOOP_FAST_FORWARDED] += 1
        phase += 1
        if phase == block_size:
            phase = 0
        replica_state[replica, RP_STEADY_PHASE] = phase
        steady_float[replica, SF_POSITIONS] = positions + steady_float[replica, SF_INCREMENT]
        return True

    def complete_steady(replica, time_s):
        """Every member decoded one token, each a regular gap; the other scheduled steps as
        ever, after them. At the window's limit some members emitted their last: they are
        brought up to date and finish; the window goes on with the others, and with the
        requests behind them that now decode."""
        iteration = replica_state[replica, RP_ITERATION]
        members = replica_state[replica, RP_STEADY_MEMBERS]
        completed = replica_state[replica, RP_STEADY_STEPS]
        steady_float[replica, SF_LAST_TOKEN_S] = time_s
        changed = False
        any_finished = False
        positions = steady_float[replica, SF_POSITIONS]
        increment = steady_float[replica, SF_INCREMENT]
        hold = replica_state[replica, RP_STEADY_HOLD]
        remaining = replica_state[replica, RP_STEADY_LIMIT]
        if completed > remaining:
            changed = True
            kept = 0
            remaining = UNBOUNDED_STEPS
            positions = 0.0
            increment = 0.0
            hold = UNBOUNDED_STEPS
            for index in range(members):
                request = running[replica, index]
                computed = request_state[request, RS_COMPUTED]  # as at the window's start
                left = output_tokens[request] - request_state[request, RS_EMITTED] - completed
                if left == 0:
                    block_phases[replica, block_phase(request)] -= 1
                    request_state[request, RS_BLOCKS_HELD] = max(
                        request_state[request, RS_BLOCKS_HELD], _ceil_div(computed + completed, block_size)
                    )
                    request_state[request, RS_COMPUTED] = computed + completed
                    request_state[request, RS_NUM_TOKENS] = computed + completed + 1
                    request_state[request, RS_EMITTED] += completed
                    request_state[request, RS_LAST_EMIT_ITERATION] = iteration
                    last_token_s[request] = time_s
                    finish(replica, request, time_s)
                    any_finished = True
                else:
                    kept += 1
                    remaining = min(remaining, completed + left - 1)
                    request_positions_now, request_increment, steps = decode_positions(cost, computed + completed)
                    positions += request_positions_now
                    increment += request_increment
                    hold = min(hold, completed + steps)
            members = kept
        decode_tokens = replica_state[replica, RP_STEADY_MEMBERS]
        regular_gaps = decode_tokens
        if replica_state[replica, RP_SCHEDULED_LENGTH] > 0:
            others_decoded, others_regular, others_finished = complete_scheduled(replica, time_s, iteration)
            decode_tokens += others_decoded
            regular_gaps += others_regular
            any_finished = any_finished or others_finished
        record_emissions(iteration, decode_tokens, regular_gaps)
        if any_finished:
            drop_finished(replica)
        # The requests behind the members join once they decode, in order.
        while members < replica_state[replica, RP_RUNNING_LENGTH] and can_join(replica, running[replica, members], iteration):
            positions, increment, hold, remaining = join_window(
                replica, running[replica, members], completed, positions, increment, hold, remaining
            )
            members += 1
            changed = True
        if changed:
            replica_state[replica, RP_STEADY_MEMBERS] = members
            if members > 0:
                decode_iteration_terms(cost, members, steady_terms, replica)
            steady_float[replica, SF_POSITIONS] = positions
            steady_float[replica, SF_INCREMENT] = increment
            replica_state[replica, RP_STEADY_HOLD] = hold
            replica_state[replica, RP_STEADY_LIMIT] = remaining
        replica_state[replica, RP_SCHEDULED_LENGTH] = 0
        replica_state[replica, RP_BUSY] = 0
        replica_end_s[replica] = np.inf
        replica_state[replica, RP_PREVIOUS_ITERATION] = iteration

    def exit_steady(replica):
        """Close the window: each member takes the steps the window completed (and the blocks
        of those it started); its block_phases slot is cleared for the next window."""
        started = replica_state[replica, RP_STEADY_STEPS]
        completed = started - replica_state[replica, RP_BUSY]
        last_iteration = replica_state[replica, RP_PREVIOUS_ITERATION]
        for index in range(replica_state[replica, RP_STEADY_MEMBERS]):
            request = running[replica, index]
            block_phases[replica, block_phase(request)] = 0
            computed = request_state[request, RS_COMPUTED]
            request_state[request, RS_BLOCKS_HELD] = max(
                request_state[request, RS_BLOCKS_HELD], _ceil_div(computed + started, block_size)
            )
            request_state[request, RS_COMPUTED] = computed + completed
            request_state[request, RS_NUM_TOKENS] = computed + completed + 1
            request_state[request, RS_EMITTED] += completed
            if completed > 0:
                request_state[request, RS_LAST_EMIT_ITERATION] = last_iteration
                last_token_s[request] = steady_float[replica, SF_LAST_TOKEN_S]
        replica_state[replica, RP_STEADY] = 0

    def start_iteration(replica, time_s):
        if fast_forward and (replica_state[replica, RP_STEADY] == 1 or enter_steady(replica)):
            if start_steady(replica, time_s):
                return
            exit_steady(replica)
        replica_state[replica, RP_SCHEDULED_LENGTH] = 0
        if policy == POLICY_VLLM:
            preemptions = schedule_vllm(replica, 0, max_batched_tokens)
        elif policy == POLICY_STATIC:
            preemptions = schedule_static(replica)
        else:
            preemptions = schedule_trtllm(replica)
        sequences = replica_state[replica, RP_SCHEDULED_LENGTH]
        if sequences == 0:
            return
        tokens, prefill_tokens, prefill_positions, decode_positions_sum, kv_read_positions = scheduled_sums(
            replica, 0, 0, 0.0, 0.0, 0.0
        )
        duration_s, energy_j = iteration_cost(
            cost, tokens, sequences, prefill_positions, decode_positions_sum, kv_read_positions, prefill_tokens
        )
        record_iteration(replica, time_s, duration_s, energy_j, sequences, tokens, prefill_tokens, preemptions)

    def complete_iteration(replica, time_s):
        if replica_state[replica, RP_STEADY] == 1:
            complete_steady(replica, time_s)
            return
        iteration = replica_state[replica, RP_ITERATION]
        decode_tokens, regular_gaps, any_finished = complete_scheduled(replica, time_s, iteration)
        record_emissions(iteration, decode_tokens, regular_gaps)
        length = replica_state[replica, RP_RUNNING_LENGTH]
        if policy == POLICY_STATIC:
            batch_done = True
            for index in range(length):
                request = running[replica, index]
                if request_state[request, RS_EMITTED] != output_tokens[request]:
                    batch_done = False
                    break
            if batch_done:
                replica_state[replica, RP_RUNNING_LENGTH] = 0
        elif any_finished:
            drop_finished(replica)
        replica_state[replica, RP_SCHEDULED_LENGTH] = 0
        replica_state[replica, RP_BUSY] = 0
        replica_end_s[replica] = np.inf
        replica_state[replica, RP_PREVIOUS_ITERATION] = iteration

    # -- initial state -------------------------------------------------------------------------

    for request in range(requests):
        request_float[request, REQ_ISSUE_S] = np.nan
        request_float[request, REQ_FIRST_TOKEN_S] = np.nan
        request_float[request, REQ_END_S] = np.nan
        request_int[request, REQ_REPLICA] = -1
        request_int[request, REQ_STATUS] = STATUS_UNFINISHED
        request_int[request, REQ_PREEMPTIONS] = 0
        kv_ready = prior_token_s[request] == prior_token_s[request]  # not NaN
        request_state[request, RS_COMPUTED] = 0
        request_state[request, RS_BLOCKS_HELD] = 0
        request_state[request, RS_SHARED_BLOCKS] = 0
        request_state[request, RS_RECOMPUTING] = 0
        request_state[request, RS_LAST_EMIT_ITERATION] = -1
        # A request whose first token came with its KV (before this pool) has it at prior_token_s.
        last_token_s[request] = prior_token_s[request]
        request_state[request, RS_NEXT_WAITING] = -1
        request_state[request, RS_OWN_BLOCKS_TO_COMPLETION] = 0
        if kv_ready:
            request_state[request, RS_KV_READY] = 1
            request_state[request, RS_NUM_TOKENS] = prompt_tokens[request] + 1
            request_state[request, RS_EMITTED] = 1
        else:
            request_state[request, RS_KV_READY] = 0
            request_state[request, RS_NUM_TOKENS] = prompt_tokens[request]
            request_state[request, RS_EMITTED] = 0
    for replica in range(replicas):
        for column in range(RP_SIZE):
            replica_state[replica, column] = 0
        for phase in range(block_size):
            block_phases[replica, phase] = 0  # and again whenever a steady window closes
        replica_state[replica, RP_WAITING_HEAD] = -1
        replica_state[replica, RP_WAITING_TAIL] = -1
        replica_state[replica, RP_ITERATION] = -1
        replica_state[replica, RP_PREVIOUS_ITERATION] = -1
        replica_end_s[replica] = np.inf
    for column in range(counters.shape[0]):
        counters[column] = 0
    for column in range(loop_state.shape[0]):
        loop_state[column] = 0
    if users > 0:
        first_users = min(users, requests)
        for request in range(first_users):
            heap_push(0.0, request)
        loop_state[LOOP_NEXT_UNISSUED] = first_users

    # -- the event loop ------------------------------------------------------------------------

    def next_issue():
        """When the next request is issued (s; inf when none is pending)."""
        if users > 0:
            if loop_state[LOOP_PENDING] > 0:
                return heap_s[0]
        elif loop_state[LOOP_NEXT_OPEN_ARRIVAL] < requests:
            return arrival_s[loop_state[LOOP_NEXT_OPEN_ARRIVAL]]
        return np.inf

    def run_lone_window():
        """The event loop's rounds while the next event is, alone, the end of a steady window's
        step that ends no request: the round at that time would complete it, route nothing and
        start that replica's next iteration only (every other replica busy until later, or
        without work). Here those rounds skip the loop's scans; at anything else, the loop."""
        lone = -1
        lone_end_s = np.inf
        others_end_s = np.inf
        for replica in range(replicas):
            if replica_state[replica, RP_BUSY] == 1:
                if replica_end_s[replica] < lone_end_s:
                    others_end_s = lone_end_s
                    lone_end_s = replica_end_s[replica]
                    lone = replica
                else:
                    others_end_s = min(others_end_s, replica_end_s[replica])
            elif replica_state[replica, RP_WAITING_LENGTH] > 0 or replica_state[replica, RP_RUNNING_LENGTH] > 0:
                return  # idle with work: the loop tries it again at every round
        if lone < 0:
            return
        bound_s = min(next_issue(), others_end_s)
        while (
            replica_state[lone, RP_STEADY] == 1
            and replica_state[lone, RP_BUSY] == 1
            and replica_state[lone, RP_SCHEDULED_LENGTH] == 0  # the members' steps alone
            and replica_state[lone, RP_STEADY_STEPS] <= replica_state[lone, RP_STEADY_LIMIT]  # none ends
            and replica_end_s[lone] < bound_s
            and replica_end_s[lone] <= max_time_s
            and loop_state[LOOP_ITERATIONS] < max_iterations
        ):
            end_s = replica_end_s[lone]
            complete_steady(lone, end_s)
            start_iteration(lone, end_s)

    stopped = False
    while not stopped:
        next_issue_s = np.inf
        if users > 0:
            if loop_state[LOOP_PENDING] > 0:
                next_issue_s = heap_s[0]
        elif loop_state[LOOP_NEXT_OPEN_ARRIVAL] < requests:
            next_issue_s = arrival_s[loop_state[LOOP_NEXT_OPEN_ARRIVAL]]
        time_s = next_issue_s
        for replica in range(replicas):
            if replica_state[replica, RP_BUSY] == 1 and replica_end_s[replica] < time_s:
                time_s = replica_end_s[replica]
        if time_s == np.inf:
            break
        if time_s > max_time_s:
            counters[CNT_CAPPED] = 1
            break
        # 1. iterations ending now emit their tokens, in replica order;
        for replica in range(replicas):
            if replica_state[replica, RP_BUSY] == 1 and replica_end_s[replica] == time_s:
                complete_iteration(replica, time_s)
        # 2. every request issued by now is routed and queued;
        while True:
            if users > 0:
                if loop_state[LOOP_PENDING] == 0 or heap_s[0] > time_s:
                    break
                issue_s = heap_s[0]
                request = heap_request[0]
                heap_pop()
            else:
                request = loop_state[LOOP_NEXT_OPEN_ARRIVAL]
                if request >= requests or arrival_s[request] > time_s:
                    break
                issue_s = arrival_s[request]
                loop_state[LOOP_NEXT_OPEN_ARRIVAL] = request + 1
            arrive(request, issue_s)
        # 3. idle replicas with work start an iteration, in replica order.
        for replica in range(replicas):
            if replica_state[replica, RP_BUSY] == 0 and (
                replica_state[replica, RP_WAITING_LENGTH] > 0 or replica_state[replica, RP_RUNNING_LENGTH] > 0
            ):
                if loop_state[LOOP_ITERATIONS] == max_iterations:
                    counters[CNT_CAPPED] = 1
                    stopped = True
                    break
                start_iteration(replica, time_s)
        if fast_forward and not stopped:
            run_lone_window()
    counters[CNT_ITERATIONS] = loop_state[LOOP_ITERATIONS]
    for replica in range(replicas):
        if replica_state[replica, RP_STEADY] == 1:
            exit_steady(replica)
    for request in range(requests):
        request_int[request, REQ_TOKENS_EMITTED] = request_state[request, RS_EMITTED]
