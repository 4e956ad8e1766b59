"""The schedulers: twins of the reference's ``schedule_vllm``, ``schedule_trtllm`` and
``schedule_static``, and of the admission checks they share with a stretch's planning. Each
fills ``st.scheduled[replica]`` and returns the preemptions."""

from __future__ import annotations

from ....physics.jit import jit
from ..layout import (
    POLICY_TRTLLM_NO_EVICT,
    SET_BLOCK_SIZE,
    SET_KV_BLOCKS_TOTAL,
    SET_LONG_PREFILL_THRESHOLD,
    SET_MAX_BATCHED_TOKENS,
    SET_MAX_MODEL_LEN,
    SET_MAX_NUM_SEQS,
    SET_POLICY,
    SET_STATIC_BATCH,
    STEP_DECODE,
    STEP_PADDING,
)
from .requests import (
    admit,
    allocate,
    blocks_needed,
    ceil_div,
    finished,
    is_generation_step,
    prefix_hit_blocks,
    preempt,
    start_values,
    step_kind,
)
from .state import (
    RP_BLOCKS_USED,
    RP_RESERVED_BLOCKS,
    RP_RUNNING_LENGTH,
    RP_SCHEDULED_LENGTH,
    RP_WAITING_HEAD,
    RP_WAITING_LENGTH,
    RS_BLOCKS_HELD,
    RS_COMPUTED,
    RS_NUM_TOKENS,
    RS_OWN_BLOCKS_TO_COMPLETION,
    RS_SHARED_BLOCKS,
    SCHED_KIND,
    SCHED_REQUEST,
    SCHED_TOKENS,
)


@jit(inline=True)
def add_scheduled(st, replica, request, new_tokens, kind):
    length = st.replica_state[replica, RP_SCHEDULED_LENGTH]
    st.scheduled[replica, length, SCHED_REQUEST] = request
    st.scheduled[replica, length, SCHED_TOKENS] = new_tokens
    st.scheduled[replica, length, SCHED_KIND] = kind
    st.replica_state[replica, RP_SCHEDULED_LENGTH] = length + 1


@jit(inline=True)
def pop_running(st, replica):
    """Remove the last admitted running request (a preemption's victim)."""
    last = st.replica_state[replica, RP_RUNNING_LENGTH] - 1
    st.replica_state[replica, RP_RUNNING_LENGTH] = last
    return st.running[replica, last]


@jit(inline=True)
def vllm_new_tokens(st, request, computed, budget):
    new_tokens = min(st.request_state[request, RS_NUM_TOKENS] - computed, budget,
                     st.settings[SET_MAX_MODEL_LEN] - 1 - computed)
    threshold = st.settings[SET_LONG_PREFILL_THRESHOLD]
    if threshold > 0:
        new_tokens = min(new_tokens, threshold)
    return new_tokens


@jit(internal=True)
def vllm_admits(st, request, replica, budget, free):
    """Whether vLLM's second pass admits the head of waiting with ``budget`` tokens and ``free``
    blocks left (the number of running requests aside)."""
    computed, shared_blocks = start_values(st, request, replica)
    new_tokens = vllm_new_tokens(st, request, computed, budget)
    return ceil_div(computed + new_tokens, st.settings[SET_BLOCK_SIZE]) - shared_blocks <= free


@jit(internal=True)
def trtllm_admits(st, request, replica, available):
    """Whether TensorRT-LLM admits the head of waiting: no-evict, if its blocks to completion fit
    beside the running requests' reservations; max-util, if its next step's blocks fit in
    ``available``."""
    block_size = st.settings[SET_BLOCK_SIZE]
    if st.settings[SET_POLICY] == POLICY_TRTLLM_NO_EVICT:
        own_blocks = ceil_div(st.prompt_tokens[request] + st.output_tokens[request], block_size) - \
            prefix_hit_blocks(st, request, replica)
        return st.replica_state[replica, RP_RESERVED_BLOCKS] + own_blocks <= st.settings[SET_KV_BLOCKS_TOTAL]
    computed, shared_blocks = start_values(st, request, replica)
    step = min(st.request_state[request, RS_NUM_TOKENS] - computed, st.settings[SET_MAX_BATCHED_TOKENS])
    return ceil_div(computed + step, block_size) - shared_blocks <= available


@jit(internal=True)
def schedule_vllm(st, replica, time_s, index, budget):
    """From the running request at ``index`` on, with ``budget`` tokens left (a steady window
    has taken the ones before)."""
    kv_blocks_total = st.settings[SET_KV_BLOCKS_TOTAL]
    preemptions = 0
    running = st.running
    request_state = st.request_state
    replica_state = st.replica_state
    # Pass 1: running requests in admission order.
    while index < replica_state[replica, RP_RUNNING_LENGTH] and budget > 0:
        request = running[replica, index]
        new_tokens = vllm_new_tokens(st, request, request_state[request, RS_COMPUTED], budget)
        if new_tokens <= 0:
            index += 1
            continue
        needed = blocks_needed(st, request, new_tokens)
        preempted_itself = False
        while needed > kv_blocks_total - replica_state[replica, RP_BLOCKS_USED]:
            victim = pop_running(st, replica)
            preempt(st, victim, replica, time_s)
            preemptions += 1
            if victim == request:
                preempted_itself = True
                break
        if preempted_itself:
            break
        allocate(st, request, replica, new_tokens)
        add_scheduled(st, replica, request, new_tokens, step_kind(st, request, new_tokens))
        budget -= new_tokens
        index += 1
    # Pass 2: admit from the head of waiting, only if nothing was preempted.
    if preemptions == 0:
        while (st.replica_state[replica, RP_WAITING_LENGTH] > 0 and budget > 0
               and st.replica_state[replica, RP_RUNNING_LENGTH] < st.settings[SET_MAX_NUM_SEQS]):
            request = st.replica_state[replica, RP_WAITING_HEAD]
            if not vllm_admits(st, request, replica, budget, kv_blocks_total - st.replica_state[replica, RP_BLOCKS_USED]):
                break  # head-of-line: admission never preempts
            computed, _ = start_values(st, request, replica)
            new_tokens = vllm_new_tokens(st, request, computed, budget)
            admit(st, replica)
            allocate(st, request, replica, new_tokens)
            add_scheduled(st, replica, request, new_tokens, step_kind(st, request, new_tokens))
            budget -= new_tokens
    return preemptions


@jit(internal=True)
def schedule_trtllm(st, replica, time_s):
    preemptions = 0
    max_batched_tokens = st.settings[SET_MAX_BATCHED_TOKENS]
    max_num_seqs = st.settings[SET_MAX_NUM_SEQS]
    block_size = st.settings[SET_BLOCK_SIZE]
    if st.settings[SET_POLICY] == POLICY_TRTLLM_NO_EVICT:
        # Capacity: admit while the blocks to completion fit beside every running request's.
        while (st.replica_state[replica, RP_WAITING_LENGTH] > 0
               and st.replica_state[replica, RP_RUNNING_LENGTH] < max_num_seqs):
            request = st.replica_state[replica, RP_WAITING_HEAD]
            if not trtllm_admits(st, request, replica, 0):
                break
            own_blocks = ceil_div(st.prompt_tokens[request] + st.output_tokens[request], block_size) - \
                prefix_hit_blocks(st, request, replica)
            admit(st, replica)
            st.request_state[request, RS_OWN_BLOCKS_TO_COMPLETION] = own_blocks
            st.replica_state[replica, RP_RESERVED_BLOCKS] += own_blocks
    else:
        # Capacity: every running request must get its next step's blocks; pause the most
        # recently started ones until it does.
        available = st.settings[SET_KV_BLOCKS_TOTAL] - st.replica_state[replica, RP_BLOCKS_USED]
        index = 0
        while index < st.replica_state[replica, RP_RUNNING_LENGTH]:
            request = st.running[replica, index]
            if is_generation_step(st, request):
                step = 1
            else:
                step = min(st.request_state[request, RS_NUM_TOKENS] - st.request_state[request, RS_COMPUTED],
                           max_batched_tokens)
            needed = blocks_needed(st, request, step)
            paused_itself = False
            while needed > available:
                victim = pop_running(st, replica)
                available += st.request_state[victim, RS_BLOCKS_HELD] - st.request_state[victim, RS_SHARED_BLOCKS]
                preempt(st, victim, replica, time_s)
                preemptions += 1
                if victim == request:
                    paused_itself = True
                    break
            if paused_itself:
                break
            available -= needed
            index += 1
        if preemptions == 0:
            while (st.replica_state[replica, RP_WAITING_LENGTH] > 0
                   and st.replica_state[replica, RP_RUNNING_LENGTH] < max_num_seqs):
                request = st.replica_state[replica, RP_WAITING_HEAD]
                if not trtllm_admits(st, request, replica, available):
                    break
                computed, shared_blocks = start_values(st, request, replica)
                step = min(st.request_state[request, RS_NUM_TOKENS] - computed, max_batched_tokens)
                admit(st, replica)
                available -= ceil_div(computed + step, block_size) - shared_blocks
    trtllm_micro_batch(st, replica)
    return preemptions


@jit(internal=True)
def trtllm_micro_batch(st, replica):
    """Generation requests first, then context chunks, in admission order, under the budget."""
    budget = st.settings[SET_MAX_BATCHED_TOKENS]
    length = st.replica_state[replica, RP_RUNNING_LENGTH]
    for index in range(length):
        if budget == 0:
            break
        request = st.running[replica, index]
        if is_generation_step(st, request):
            allocate(st, request, replica, 1)
            add_scheduled(st, replica, request, 1, STEP_DECODE)
            budget -= 1
    for index in range(length):
        if budget == 0:
            break
        request = st.running[replica, index]
        if not is_generation_step(st, request):
            new_tokens = min(st.request_state[request, RS_NUM_TOKENS] - st.request_state[request, RS_COMPUTED], budget)
            allocate(st, request, replica, new_tokens)
            add_scheduled(st, replica, request, new_tokens, step_kind(st, request, new_tokens))
            budget -= new_tokens


@jit(internal=True)
def schedule_static(st, replica):
    if st.replica_state[replica, RP_RUNNING_LENGTH] == 0:
        while (st.replica_state[replica, RP_WAITING_LENGTH] > 0
               and st.replica_state[replica, RP_RUNNING_LENGTH] < st.settings[SET_STATIC_BATCH]):
            admit(st, replica)
    for index in range(st.replica_state[replica, RP_RUNNING_LENGTH]):
        request = st.running[replica, index]
        if finished(st, request):
            add_scheduled(st, replica, request, 1, STEP_PADDING)
        else:
            new_tokens = st.request_state[request, RS_NUM_TOKENS] - st.request_state[request, RS_COMPUTED]
            add_scheduled(st, replica, request, new_tokens, step_kind(st, request, new_tokens))
    return 0
