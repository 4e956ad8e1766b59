"""Readable pure-Python model of the serving engine: the reference the kernel is held equal to.

An iteration-level discrete-event simulation. Each replica has a clock, a waiting queue, a
running list and a KV block pool; it schedules only at iteration boundaries. Events at one time
``t`` are handled in a fixed order so that the kernel can reproduce them exactly:

1. replicas whose iteration ends at ``t`` emit tokens and retire finished requests, in replica
   index order;
2. every request issued at or before ``t`` is routed and queued (closed-loop users may issue at
   ``t`` in step 1);
3. every idle replica with work starts an iteration at ``t``, in replica index order.

Times are in seconds, sizes in tokens and KV blocks. The scheduler rules are those of vLLM v1
and TensorRT-LLM described in the package notes.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

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
    SET_KV_BLOCKS_TOTAL,
    SET_LONG_PREFILL_THRESHOLD,
    SET_MAX_BATCHED_TOKENS,
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


def ceil_div(numerator, denominator):
    return -(-numerator // denominator)


class Request:
    """Scheduling state of one request."""

    def __init__(self, index, prompt_tokens, output_tokens, prior_token_s):
        self.index = index
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        # A request arriving with its prompt's KV computed elsewhere (the decode pool of a
        # disaggregated pair) has already emitted its first token at prior_token_s.
        self.kv_ready = not math.isnan(prior_token_s)
        self.num_tokens = prompt_tokens + 1 if self.kv_ready else prompt_tokens
        self.emitted = 1 if self.kv_ready else 0
        self.last_token_s = prior_token_s
        self.last_emit_iteration = -1
        self.computed = 0
        self.blocks_held = 0  # logical blocks, shared prefix blocks included
        self.shared_blocks = 0  # of blocks_held, those of the shared prefix (not charged to it)
        self.recomputing = False
        self.own_blocks_to_completion = 0  # TensorRT-LLM no-evict reservation while running

    @property
    def finished(self):
        return self.emitted == self.output_tokens

    def is_generation_step(self):
        """True when the next step is a decode: one token after the first, not a recompute."""
        return self.num_tokens - self.computed == 1 and self.emitted >= 1 and not self.recomputing


class Replica:
    """One data-parallel copy of the engine."""

    def __init__(self, index):
        self.index = index
        self.waiting = deque()
        self.running = []
        self.busy = False
        self.end_s = math.inf
        self.iteration = -1
        self.previous_iteration = -1
        self.blocks_used = 0
        self.reserved_blocks = 0  # no-evict: shared prefix + running requests' own blocks to completion
        self.prefix_cached = False
        self.outstanding = 0  # routed and not finished
        self.scheduled = []  # (request, new tokens, step kind) of the iteration in flight


class ReferenceEngine:
    """One run of the simulation, writing into caller-allocated output arrays."""

    def __init__(
        self,
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
        request_positions,
        iteration_cost,
    ):
        self.arrival_s = [float(x) for x in arrival_s]
        self.think_s = [float(x) for x in think_s]
        self.policy = int(settings[SET_POLICY])
        self.router = int(settings[SET_ROUTER])
        self.users = int(settings[SET_USERS])
        self.max_num_seqs = int(settings[SET_MAX_NUM_SEQS])
        self.max_batched_tokens = int(settings[SET_MAX_BATCHED_TOKENS])
        self.block_size = int(settings[SET_BLOCK_SIZE])
        self.kv_blocks_total = int(settings[SET_KV_BLOCKS_TOTAL])
        self.long_prefill_threshold = int(settings[SET_LONG_PREFILL_THRESHOLD])
        self.max_model_len = int(settings[SET_MAX_MODEL_LEN])
        self.prefix_tokens = int(settings[SET_PREFIX_TOKENS])
        self.static_batch = int(settings[SET_STATIC_BATCH])
        self.max_time_s = float(max_time_s)
        self.cost = cost
        self.request_positions = request_positions
        self.iteration_cost = iteration_cost
        self.request_float = request_float
        self.request_int = request_int
        self.iteration_float = iteration_float
        self.iteration_int = iteration_int
        self.gap_s = gap_s
        self.counters = counters
        self.max_iterations = iteration_float.shape[0]

        self.requests = [
            Request(i, int(prompt_tokens[i]), int(output_tokens[i]), float(prior_token_s[i]))
            for i in range(len(self.arrival_s))
        ]
        self.replicas = [Replica(r) for r in range(int(settings[SET_REPLICAS]))]
        self.uses_blocks = self.policy != POLICY_STATIC
        # Full blocks of the shared system prompt, reused once some request has computed it.
        self.prefix_blocks = self.prefix_tokens // self.block_size if self.uses_blocks else 0
        self.round_robin_next = 0
        self.iterations_used = 0
        self.stopped = False
        # Issues not yet routed: a pointer into arrival_s (open loop) or a heap of
        # (issue time, request index) with one entry per thinking user (closed loop).
        self.next_open_arrival = 0
        self.pending_issues = []
        self.next_unissued = 0

    # -- lifecycle of a request ------------------------------------------------------------

    def prefix_hit_blocks(self, request, replica):
        """Shared blocks a request starts with when admitted on ``replica``."""
        if request.kv_ready or not replica.prefix_cached or request.prompt_tokens < self.prefix_tokens:
            return 0
        # At least one prompt token must be computed to produce the first output token.
        return min(self.prefix_blocks, (request.prompt_tokens - 1) // self.block_size)

    def can_never_run(self, request):
        if request.prompt_tokens + request.output_tokens > self.max_model_len:
            return True
        if not self.uses_blocks:
            return False
        total = request.prompt_tokens + request.output_tokens
        # vLLM never caches the KV of the last output token; TensorRT-LLM reserves prompt + max output.
        positions = total if self.policy == POLICY_TRTLLM_NO_EVICT else total - 1
        # Judged against the pool left once the shared prefix is pinned, so that an admitted
        # request can always complete alone.
        return ceil_div(positions, self.block_size) > self.kv_blocks_total - self.prefix_blocks

    def issue_next_request(self, time_s):
        """A closed-loop user whose request just ended issues the next unissued one after thinking."""
        if self.users > 0 and self.next_unissued < len(self.requests):
            index = self.next_unissued
            self.next_unissued += 1
            heapq.heappush(self.pending_issues, (time_s + self.think_s[index], index))

    def arrive(self, request, time_s):
        self.request_float[request.index, REQ_ISSUE_S] = time_s
        if self.can_never_run(request):
            self.request_int[request.index, REQ_STATUS] = STATUS_REJECTED
            self.counters[CNT_REJECTED] += 1
            self.issue_next_request(time_s)
            return
        if self.router == ROUTER_ROUND_ROBIN:
            replica = self.replicas[self.round_robin_next % len(self.replicas)]
            self.round_robin_next += 1
        else:
            replica = min(self.replicas, key=lambda candidate: (candidate.outstanding, candidate.index))
        replica.outstanding += 1
        self.request_int[request.index, REQ_REPLICA] = replica.index
        replica.waiting.append(request)

    def admit(self, request, replica):
        """Move the head of waiting to the tail of running, with its prefix hit or ready KV."""
        replica.waiting.popleft()
        if request.kv_ready:
            request.computed = request.prompt_tokens
            request.blocks_held = 0
            request.shared_blocks = 0
        else:
            hit_blocks = self.prefix_hit_blocks(request, replica)
            request.computed = hit_blocks * self.block_size
            request.blocks_held = hit_blocks
            request.shared_blocks = hit_blocks
        replica.running.append(request)

    def start_values(self, request, replica):
        """(computed tokens, shared blocks) the head of waiting would be admitted with."""
        if request.kv_ready:
            return request.prompt_tokens, 0
        hit_blocks = self.prefix_hit_blocks(request, replica)
        return hit_blocks * self.block_size, hit_blocks

    def allocate(self, request, replica, new_tokens):
        """Hold the blocks that cover the request's KV after ``new_tokens`` more are computed."""
        blocks = ceil_div(request.computed + new_tokens, self.block_size)
        if blocks > request.blocks_held:
            replica.blocks_used += blocks - request.blocks_held
            request.blocks_held = blocks

    def release_blocks(self, request, replica):
        replica.blocks_used -= request.blocks_held - request.shared_blocks
        request.blocks_held = 0
        request.shared_blocks = 0

    def preempt(self, request, replica):
        """Evict a running request: free its blocks; it recomputes everything later."""
        self.release_blocks(request, replica)
        request.computed = 0
        request.recomputing = True
        request.kv_ready = False
        replica.waiting.appendleft(request)
        self.request_int[request.index, REQ_PREEMPTIONS] += 1
        self.counters[CNT_PREEMPTIONS] += 1

    def finish(self, request, replica, time_s):
        self.request_int[request.index, REQ_STATUS] = STATUS_FINISHED
        self.request_float[request.index, REQ_END_S] = time_s
        replica.outstanding -= 1
        if self.uses_blocks:
            self.release_blocks(request, replica)
        if self.policy == POLICY_TRTLLM_NO_EVICT:
            replica.reserved_blocks -= request.own_blocks_to_completion
        self.issue_next_request(time_s)

    # -- schedulers: each returns [(request, new tokens, step kind)] and the preemptions -----

    def step_kind(self, request, new_tokens):
        if new_tokens == 1 and request.emitted >= 1 and not request.recomputing:
            return STEP_DECODE
        return STEP_PREFILL

    def schedule_vllm(self, replica):
        scheduled = []
        budget = self.max_batched_tokens
        preemptions = 0
        # Pass 1: running requests in admission order.
        index = 0
        while index < len(replica.running) and budget > 0:
            request = replica.running[index]
            new_tokens = min(request.num_tokens - request.computed, budget, self.max_model_len - 1 - request.computed)
            if self.long_prefill_threshold > 0:
                new_tokens = min(new_tokens, self.long_prefill_threshold)
            if new_tokens <= 0:
                index += 1
                continue
            needed = ceil_div(request.computed + new_tokens, self.block_size) - request.blocks_held
            preempted_itself = False
            while needed > self.kv_blocks_total - replica.blocks_used:
                victim = replica.running.pop()
                self.preempt(victim, replica)
                preemptions += 1
                if victim is request:
                    preempted_itself = True
                    break
            if preempted_itself:
                break
            self.allocate(request, replica, new_tokens)
            scheduled.append((request, new_tokens, self.step_kind(request, new_tokens)))
            budget -= new_tokens
            index += 1
        # Pass 2: admit from the head of waiting, only if nothing was preempted.
        if preemptions == 0:
            while replica.waiting and budget > 0 and len(replica.running) < self.max_num_seqs:
                request = replica.waiting[0]
                computed, shared_blocks = self.start_values(request, replica)
                new_tokens = min(request.num_tokens - computed, budget)
                if self.long_prefill_threshold > 0:
                    new_tokens = min(new_tokens, self.long_prefill_threshold)
                needed = ceil_div(computed + new_tokens, self.block_size) - shared_blocks
                if needed > self.kv_blocks_total - replica.blocks_used:
                    break  # head-of-line: admission never preempts
                self.admit(request, replica)
                self.allocate(request, replica, new_tokens)
                scheduled.append((request, new_tokens, self.step_kind(request, new_tokens)))
                budget -= new_tokens
        return scheduled, preemptions

    def schedule_trtllm(self, replica):
        preemptions = 0
        if self.policy == POLICY_TRTLLM_NO_EVICT:
            # Capacity: admit while the blocks to completion fit beside every running request's.
            while replica.waiting and len(replica.running) < self.max_num_seqs:
                request = replica.waiting[0]
                shared_blocks = self.prefix_hit_blocks(request, replica)
                own_blocks = ceil_div(request.prompt_tokens + request.output_tokens, self.block_size) - shared_blocks
                if replica.reserved_blocks + own_blocks > self.kv_blocks_total:
                    break
                self.admit(request, replica)
                request.own_blocks_to_completion = own_blocks
                replica.reserved_blocks += own_blocks
        else:
            # Capacity: every running request must get its next step's blocks; pause the most
            # recently started ones until it does.
            available = self.kv_blocks_total - replica.blocks_used
            index = 0
            while index < len(replica.running):
                request = replica.running[index]
                if request.is_generation_step():
                    step = 1
                else:
                    step = min(request.num_tokens - request.computed, self.max_batched_tokens)
                needed = ceil_div(request.computed + step, self.block_size) - request.blocks_held
                paused_itself = False
                while needed > available:
                    victim = replica.running.pop()
                    available += victim.blocks_held - victim.shared_blocks
                    self.preempt(victim, replica)
                    preemptions += 1
                    if victim is request:
                        paused_itself = True
                        break
                if paused_itself:
                    break
                available -= needed
                index += 1
            if preemptions == 0:
                while replica.waiting and len(replica.running) < self.max_num_seqs:
                    request = replica.waiting[0]
                    computed, shared_blocks = self.start_values(request, replica)
                    step = min(request.num_tokens - computed, self.max_batched_tokens)
                    needed = ceil_div(computed + step, self.block_size) - shared_blocks
                    if needed > available:
                        break
                    self.admit(request, replica)
                    available -= needed
        # Micro-batch: generation requests first, then context chunks, in admission order.
        scheduled = []
        budget = self.max_batched_tokens
        for request in replica.running:
            if budget == 0:
                break
            if request.is_generation_step():
                self.allocate(request, replica, 1)
                scheduled.append((request, 1, STEP_DECODE))
                budget -= 1
        for request in replica.running:
            if budget == 0:
                break
            if not request.is_generation_step():
                new_tokens = min(request.num_tokens - request.computed, budget)
                self.allocate(request, replica, new_tokens)
                scheduled.append((request, new_tokens, self.step_kind(request, new_tokens)))
                budget -= new_tokens
        return scheduled, preemptions

    def schedule_static(self, replica):
        if not replica.running:
            while replica.waiting and len(replica.running) < self.static_batch:
                self.admit(replica.waiting[0], replica)
        scheduled = []
        for request in replica.running:
            if request.finished:
                scheduled.append((request, 1, STEP_PADDING))
            else:
                new_tokens = request.num_tokens - request.computed
                scheduled.append((request, new_tokens, self.step_kind(request, new_tokens)))
        return scheduled, 0

    # -- iterations --------------------------------------------------------------------------

    def start_iteration(self, replica, time_s):
        if self.policy == POLICY_VLLM:
            scheduled, preemptions = self.schedule_vllm(replica)
        elif self.policy == POLICY_STATIC:
            scheduled, preemptions = self.schedule_static(replica)
        else:
            scheduled, preemptions = self.schedule_trtllm(replica)
        if not scheduled:
            return
        tokens = 0
        prefill_tokens = 0
        prefill_positions = 0.0
        decode_positions = 0.0
        kv_read_positions = 0.0
        for request, new_tokens, kind in scheduled:
            prefill, decode, kv_read = self.request_positions(
                self.cost, request.computed, new_tokens, kind != STEP_PREFILL
            )
            prefill_positions += prefill
            decode_positions += decode
            kv_read_positions += kv_read
            tokens += new_tokens
            if kind == STEP_PREFILL:
                prefill_tokens += new_tokens
        duration_s, energy_j = self.iteration_cost(
            self.cost, tokens, len(scheduled), prefill_positions, decode_positions, kv_read_positions, prefill_tokens
        )
        iteration = self.iterations_used
        self.iterations_used += 1
        record_float = self.iteration_float[iteration]
        record_float[IT_START_S] = time_s
        record_float[IT_DURATION_S] = duration_s
        record_float[IT_ENERGY_J] = energy_j
        record_int = self.iteration_int[iteration]
        record_int[IT_REPLICA] = replica.index
        record_int[IT_SEQUENCES] = len(scheduled)
        record_int[IT_TOKENS] = tokens
        record_int[IT_PREFILL_TOKENS] = prefill_tokens
        record_int[IT_DECODE_TOKENS] = 0
        record_int[IT_ITL_TOKENS] = 0
        record_int[IT_WAITING] = len(replica.waiting)
        record_int[IT_RUNNING] = len(replica.running)
        record_int[IT_KV_BLOCKS] = replica.blocks_used
        record_int[IT_PREEMPTIONS] = preemptions
        replica.scheduled = scheduled
        replica.iteration = iteration
        replica.busy = True
        replica.end_s = time_s + duration_s

    def complete_iteration(self, replica, time_s):
        iteration = replica.iteration
        decode_tokens = 0
        regular_gaps = 0
        any_finished = False
        for request, new_tokens, kind in replica.scheduled:
            request.computed += new_tokens
            if kind == STEP_PADDING:
                continue
            self.maybe_cache_prefix(request, replica)
            if request.computed != request.num_tokens:
                continue
            request.num_tokens += 1
            request.emitted += 1
            if kind == STEP_DECODE:
                decode_tokens += 1
            if request.emitted == 1:
                self.request_float[request.index, REQ_FIRST_TOKEN_S] = time_s
            elif request.last_emit_iteration >= 0 and request.last_emit_iteration == replica.previous_iteration:
                regular_gaps += 1  # its gap is exactly this iteration's duration
            else:
                self.record_gap(time_s - request.last_token_s)
            request.last_token_s = time_s
            request.last_emit_iteration = iteration
            request.recomputing = False
            self.request_int[request.index, REQ_TOKENS_EMITTED] = request.emitted
            if request.finished:
                any_finished = True
                self.finish(request, replica, time_s)
        self.iteration_int[iteration, IT_DECODE_TOKENS] = decode_tokens
        self.iteration_int[iteration, IT_ITL_TOKENS] = regular_gaps
        if self.policy == POLICY_STATIC:
            if all(request.finished for request in replica.running):
                replica.running = []
        elif any_finished:
            replica.running = [request for request in replica.running if not request.finished]
        replica.scheduled = []
        replica.busy = False
        replica.end_s = math.inf
        replica.previous_iteration = iteration

    def maybe_cache_prefix(self, request, replica):
        """The first request to compute the whole shared prefix pins its full blocks for everyone."""
        if (
            self.prefix_blocks > 0
            and not replica.prefix_cached
            and request.prompt_tokens >= self.prefix_tokens
            and request.computed >= self.prefix_tokens
        ):
            replica.prefix_cached = True
            request.shared_blocks = self.prefix_blocks
            # Its own reservation shrinks by the blocks that now belong to the pool: the sum
            # (shared prefix + own blocks to completion) is unchanged.
            if self.policy == POLICY_TRTLLM_NO_EVICT:
                request.own_blocks_to_completion -= self.prefix_blocks

    def record_gap(self, gap):
        if self.counters[CNT_GAPS] < len(self.gap_s):
            self.gap_s[self.counters[CNT_GAPS]] = gap
            self.counters[CNT_GAPS] += 1
        else:
            self.counters[CNT_GAPS_DROPPED] += 1

    # -- the event loop ----------------------------------------------------------------------

    def next_issue_s(self):
        if self.users > 0:
            return self.pending_issues[0][0] if self.pending_issues else math.inf
        if self.next_open_arrival < len(self.requests):
            return self.arrival_s[self.next_open_arrival]
        return math.inf

    def pop_issue(self):
        """(issue time, request) of the earliest pending issue."""
        if self.users > 0:
            issue_s, index = heapq.heappop(self.pending_issues)
            return issue_s, self.requests[index]
        request = self.requests[self.next_open_arrival]
        self.next_open_arrival += 1
        return self.arrival_s[request.index], request

    def run(self):
        self.initialise_outputs()
        if self.users > 0:
            first_users = min(self.users, len(self.requests))
            self.pending_issues = [(0.0, index) for index in range(first_users)]
            self.next_unissued = first_users
        while True:
            busy_end_s = min((replica.end_s for replica in self.replicas if replica.busy), default=math.inf)
            time_s = min(self.next_issue_s(), busy_end_s)
            if time_s == math.inf:
                break
            if time_s > self.max_time_s:
                self.counters[CNT_CAPPED] = 1
                break
            for replica in self.replicas:
                if replica.busy and replica.end_s == time_s:
                    self.complete_iteration(replica, time_s)
            while self.next_issue_s() <= time_s:
                issue_s, request = self.pop_issue()
                self.arrive(request, issue_s)
            for replica in self.replicas:
                if not replica.busy and (replica.waiting or replica.running):
                    if self.iterations_used == self.max_iterations:
                        self.counters[CNT_CAPPED] = 1
                        self.stopped = True
                        break
                    self.start_iteration(replica, time_s)
            if self.stopped:
                break
        self.counters[CNT_ITERATIONS] = self.iterations_used

    def initialise_outputs(self):
        self.request_float[:, :] = math.nan
        self.request_int[:, :] = 0
        self.request_int[:, REQ_REPLICA] = -1
        self.request_int[:, REQ_STATUS] = STATUS_UNFINISHED
        for request in self.requests:
            if request.kv_ready:
                self.request_int[request.index, REQ_TOKENS_EMITTED] = 1
        self.counters[:] = 0


def simulate_reference(
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
    request_positions,
    iteration_cost,
):
    """Run the reference model; fills the output arrays (layouts in ``layout``).

    Inputs: ``arrival_s`` (s, non-decreasing; ignored in closed loop), ``prompt_tokens``,
    ``output_tokens``, ``think_s`` (s, closed loop), ``prior_token_s`` (s; time of an already
    emitted first token for requests whose prompt KV arrives computed, NaN otherwise),
    ``settings`` (int64, ``SET_*``), ``max_time_s``, the ``cost`` coefficients, and the two cost
    functions (``request_positions(cost, ...)``, ``iteration_cost(cost, ...)``).
    """
    ReferenceEngine(
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
        request_positions,
        iteration_cost,
    ).run()
