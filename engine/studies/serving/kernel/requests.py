"""The lifecycle of a request: twins of the reference's methods of the same names (routing,
``arrive``, is the event loop's, as it may cut a stretch)."""

from __future__ import annotations

from ....physics.jit import jit
from ..layout import (
    BIN_FINISHED,
    BIN_PREEMPTIONS,
    CNT_PREEMPTIONS,
    POLICY_STATIC,
    POLICY_TRTLLM_NO_EVICT,
    REQ_END_S,
    REQ_PREEMPTIONS,
    REQ_STATUS,
    SET_BLOCK_SIZE,
    SET_KV_BLOCKS_TOTAL,
    SET_MAX_MODEL_LEN,
    SET_MEASURED_REQUESTS,
    SET_POLICY,
    SET_PREFIX_TOKENS,
    SET_USERS,
    STATUS_FINISHED,
    STEP_DECODE,
    STEP_PREFILL,
)
from .bins import add_at
from .queues import heap_push, waiting_pop_front, waiting_push_front
from .state import (
    LOOP_MEASURED_LEFT,
    LOOP_NEXT_UNISSUED,
    RP_BLOCKS_USED,
    RP_OUTSTANDING,
    RP_PREFIX_CACHED,
    RP_RESERVED_BLOCKS,
    RP_RUNNING_LENGTH,
    RS_BLOCKS_HELD,
    RS_COMPUTED,
    RS_EMITTED,
    RS_KV_READY,
    RS_NUM_TOKENS,
    RS_OWN_BLOCKS_TO_COMPLETION,
    RS_RECOMPUTING,
    RS_SHARED_BLOCKS,
)


@jit(inline=True)
def ceil_div(numerator, denominator):
    return -(-numerator // denominator)


@jit(inline=True)
def prefix_blocks(st):
    """Full blocks of the shared system prompt, reused once some request has computed it."""
    if st.settings[SET_POLICY] == POLICY_STATIC:
        return 0
    return st.settings[SET_PREFIX_TOKENS] // st.settings[SET_BLOCK_SIZE]


@jit(internal=True)
def prefix_hit_blocks(st, request, replica):
    """Shared blocks a request starts with when admitted on ``replica``."""
    if (st.request_state[request, RS_KV_READY] == 1 or st.replica_state[replica, RP_PREFIX_CACHED] == 0
            or st.prompt_tokens[request] < st.settings[SET_PREFIX_TOKENS]):
        return 0
    # At least one prompt token must be computed to produce the first output token.
    return min(prefix_blocks(st), (st.prompt_tokens[request] - 1) // st.settings[SET_BLOCK_SIZE])


@jit(internal=True)
def can_never_run(st, request):
    total = st.prompt_tokens[request] + st.output_tokens[request]
    if total > st.settings[SET_MAX_MODEL_LEN]:
        return True
    policy = st.settings[SET_POLICY]
    if policy == POLICY_STATIC:
        return False
    # vLLM never caches the KV of the last output token; TensorRT-LLM reserves prompt + max output.
    positions = total if policy == POLICY_TRTLLM_NO_EVICT else total - 1
    # Judged against the pool left once the shared prefix is pinned, so that an admitted
    # request can always complete alone.
    return ceil_div(positions, st.settings[SET_BLOCK_SIZE]) > st.settings[SET_KV_BLOCKS_TOTAL] - prefix_blocks(st)


@jit(internal=True)
def issue_next_request(st, time_s):
    """A closed-loop user whose request just ended issues the next unissued one after thinking."""
    index = st.loop[LOOP_NEXT_UNISSUED]
    if st.settings[SET_USERS] > 0 and index < st.arrival_s.shape[0]:
        st.loop[LOOP_NEXT_UNISSUED] = index + 1
        heap_push(st, time_s + st.think_s[index], index)


@jit(inline=True)
def left(st, request):
    """A request finished or was rejected: count it if it is one of the measured ones."""
    if request < st.settings[SET_MEASURED_REQUESTS]:
        st.loop[LOOP_MEASURED_LEFT] += 1


@jit(inline=True)
def start_values(st, request, replica):
    """(computed tokens, shared blocks) the head of waiting would be admitted with."""
    if st.request_state[request, RS_KV_READY] == 1:
        return st.prompt_tokens[request], 0
    hit_blocks = prefix_hit_blocks(st, request, replica)
    return hit_blocks * st.settings[SET_BLOCK_SIZE], hit_blocks


@jit(internal=True)
def admit(st, replica):
    """Move the head of waiting to the tail of running, with its prefix hit or ready KV."""
    request = waiting_pop_front(st, replica)
    computed, hit_blocks = start_values(st, request, replica)
    st.request_state[request, RS_COMPUTED] = computed
    st.request_state[request, RS_BLOCKS_HELD] = hit_blocks
    st.request_state[request, RS_SHARED_BLOCKS] = hit_blocks
    length = st.replica_state[replica, RP_RUNNING_LENGTH]
    st.running[replica, length] = request
    st.replica_state[replica, RP_RUNNING_LENGTH] = length + 1
    return request


@jit(inline=True)
def blocks_needed(st, request, new_tokens):
    """Blocks to add so the KV covers ``new_tokens`` more: ceil((computed + new) / block) - held."""
    end = st.request_state[request, RS_COMPUTED] + new_tokens
    held = st.request_state[request, RS_BLOCKS_HELD]
    block_size = st.settings[SET_BLOCK_SIZE]
    # Most steps stay inside the last block; skip the integer division for them.
    if end <= held * block_size:
        return 0
    return ceil_div(end, block_size) - held


@jit(internal=True)
def allocate(st, request, replica, new_tokens):
    """Hold the blocks that cover the request's KV after ``new_tokens`` more are computed."""
    blocks = blocks_needed(st, request, new_tokens)
    if blocks > 0:
        st.replica_state[replica, RP_BLOCKS_USED] += blocks
        st.request_state[request, RS_BLOCKS_HELD] += blocks


@jit(internal=True)
def release_blocks(st, request, replica):
    st.replica_state[replica, RP_BLOCKS_USED] -= (st.request_state[request, RS_BLOCKS_HELD]
                                                  - st.request_state[request, RS_SHARED_BLOCKS])
    st.request_state[request, RS_BLOCKS_HELD] = 0
    st.request_state[request, RS_SHARED_BLOCKS] = 0


@jit(internal=True)
def preempt(st, request, replica, time_s):
    """Evict a running request: free its blocks; it recomputes everything later."""
    release_blocks(st, request, replica)
    st.request_state[request, RS_COMPUTED] = 0
    st.request_state[request, RS_RECOMPUTING] = 1
    st.request_state[request, RS_KV_READY] = 0
    waiting_push_front(st, replica, request)
    st.request_int[request, REQ_PREEMPTIONS] += 1
    st.counters[CNT_PREEMPTIONS] += 1
    add_at(st, time_s, BIN_PREEMPTIONS, 1.0)


@jit(internal=True)
def finish(st, request, replica, time_s):
    st.request_int[request, REQ_STATUS] = STATUS_FINISHED
    st.request_float[request, REQ_END_S] = time_s
    add_at(st, time_s, BIN_FINISHED, 1.0)
    st.replica_state[replica, RP_OUTSTANDING] -= 1
    policy = st.settings[SET_POLICY]
    if policy != POLICY_STATIC:
        release_blocks(st, request, replica)
    if policy == POLICY_TRTLLM_NO_EVICT:
        st.replica_state[replica, RP_RESERVED_BLOCKS] -= st.request_state[request, RS_OWN_BLOCKS_TO_COMPLETION]
    left(st, request)
    issue_next_request(st, time_s)


@jit(inline=True)
def finished(st, request):
    return st.request_state[request, RS_EMITTED] == st.output_tokens[request]


@jit(inline=True)
def is_generation_step(st, request):
    """True when the next step is a decode: one token after the first, not a recompute."""
    return (st.request_state[request, RS_NUM_TOKENS] - st.request_state[request, RS_COMPUTED] == 1
            and st.request_state[request, RS_EMITTED] >= 1 and st.request_state[request, RS_RECOMPUTING] == 0)


@jit(inline=True)
def step_kind(st, request, new_tokens):
    if (new_tokens == 1 and st.request_state[request, RS_EMITTED] >= 1
            and st.request_state[request, RS_RECOMPUTING] == 0):
        return STEP_DECODE
    return STEP_PREFILL
