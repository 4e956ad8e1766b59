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

Fast-forward (setting ``SET_FAST_FORWARD``) changes no output, only the work: once every
running request of a replica has emitted in its last iteration and none waits, its next
iterations repeat that one's composition (the same requests, one token each). Such iterations
form a steady window (:class:`SteadyWindow`): the members' part of each is costed from running
sums (the decode positions change by an increment, ``decode_positions``; the members needing a
new block at a step are counted ahead by the step at which each fills its last block), and
their own state is brought up to date when they leave or the window closes. A member that
emits its last token leaves and the others go on; under vLLM, requests routed to the replica
are scheduled behind the members one by one, as ever, and join once they decode. The window
closes when the members' new KV blocks are not free or the others' steps would preempt one
(and, under TensorRT-LLM's policies, when a request waits). The event loop is the same, so
arrivals, the other replicas and the caps interleave with a window's iterations as they do
with the iterations stepped one request at a time.
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
        self.window = None  # a SteadyWindow while its iterations repeat


class SteadyWindow:
    """A replica's iterations that repeat its last one: its members, the head of its running
    list, decode one token each in every one; those that emit their last token leave. While it
    is open the members' own state lags: computed and emitted are as at the window's start (a
    request that joined later is set back by the steps before it joined), and ``completed``
    brings them all up to date (``ReferenceEngine.bring_up_to_date``). Under vLLM the requests
    routed to the replica are admitted behind the members and scheduled one by one as ever,
    and join once they decode."""

    def __init__(self, block_size):
        self.members = 0
        self.started = 0  # iterations started in the window
        self.completed = 0
        self.limit = math.inf  # the step at which a member next emits its last token
        # block_phases[step % block size]: members whose KV fills their last block at that step
        # of the window, so that they take a new block then (and every block-size steps after).
        self.block_phases = [0] * block_size
        self.positions = 0.0  # the members' decode positions at the next step
        self.increment = 0.0  # their change per step, up to step `hold`
        self.hold = 0
        self.last_token_s = math.nan  # when the window's last completed step emitted
        self.last_iteration = -1


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
        decode_positions=None,
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
        # A static batch keeps its finished members as padding: its iterations are never steady.
        self.fast_forward = bool(settings[SET_FAST_FORWARD]) and self.policy != POLICY_STATIC
        if self.fast_forward and decode_positions is None:
            raise ValueError("fast-forward needs decode_positions(cost, context) beside request_positions")
        self.max_time_s = float(max_time_s)
        self.cost = cost
        self.request_positions = request_positions
        self.iteration_cost = iteration_cost
        self.decode_positions = decode_positions
        self.request_float = request_float
        self.request_int = request_int
        self.iteration_float = iteration_float
        self.iteration_int = iteration_int
        self.gap_s = gap_s
        self.counters = counters
        self.max_iterations = int(settings[SET_MAX_ITERATIONS])
        self.record_rows = iteration_float.shape[0]  # iteration i writes row i % record_rows (layout)

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
        self.fast_forwarded = 0  # iterations started in steady windows
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

    def schedule_vllm(self, replica, index=0, budget=None):
        """From the running request at ``index`` on, with ``budget`` tokens left (a steady
        window has taken the ones before)."""
        scheduled = []
        budget = self.max_batched_tokens if budget is None else budget
        preemptions = 0
        # Pass 1: running requests in admission order.
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

    # -- steady windows (fast-forward) -------------------------------------------------------

    def can_join(self, request, iteration):
        """It emitted in ``iteration`` (so it decodes next, after a regular gap) and its KV ends
        in its last block."""
        first_block_step = request.blocks_held * self.block_size - request.computed
        return (request.last_emit_iteration == iteration >= 0 and request.is_generation_step()
                and 0 <= first_block_step < self.block_size)

    def block_phase(self, request):
        """The window step, modulo the block size, at which a member next needs a block."""
        return (request.blocks_held * self.block_size - request.computed) % self.block_size

    def join(self, window, request):
        """The request becomes the window's last member, its state set back to the window's start."""
        request.computed -= window.completed
        request.num_tokens = request.computed + 1
        request.emitted -= window.completed
        window.block_phases[self.block_phase(request)] += 1
        window.members += 1

    def open_window(self, replica):
        """A window over the longest head of the running list whose requests all emitted in the
        replica's last iteration; under vLLM the requests behind them and those waiting are
        scheduled after them, under the other policies it needs every running request and none
        waiting. None if there is none."""
        members = 0
        while members < len(replica.running) and self.can_join(replica.running[members], replica.previous_iteration):
            members += 1
        if members == 0 or members > self.max_batched_tokens:
            return None
        if self.policy != POLICY_VLLM and (members < len(replica.running) or replica.waiting):
            return None
        window = SteadyWindow(self.block_size)
        for request in replica.running[:members]:
            self.join(window, request)
        self.window_changed(window, replica)
        return window

    def window_changed(self, window, replica):
        """After members joined or left: the step of the next last token, and the positions."""
        members = replica.running[: window.members]
        window.limit = min((request.output_tokens - request.emitted - 1 for request in members), default=math.inf)
        self.refresh_positions(window, replica, window.completed)

    def refresh_positions(self, window, replica, step):
        """The members' decode positions at the window's step ``step``, their increment and how
        long it holds."""
        window.positions = 0.0
        window.increment = 0.0
        hold = math.inf
        for request in replica.running[: window.members]:
            positions, increment, steps = self.decode_positions(self.cost, request.computed + step)
            window.positions += positions
            window.increment += increment
            hold = min(hold, steps)
        window.hold = step + hold

    def others_fit(self, replica, index, budget, free):
        """Whether vLLM's first pass takes the running requests from ``index`` on with
        ``budget`` tokens and ``free`` blocks left without preempting one."""
        for request in replica.running[index:]:
            if budget <= 0:
                break
            new_tokens = min(request.num_tokens - request.computed, budget, self.max_model_len - 1 - request.computed)
            if self.long_prefill_threshold > 0:
                new_tokens = min(new_tokens, self.long_prefill_threshold)
            if new_tokens <= 0:
                continue
            needed = ceil_div(request.computed + new_tokens, self.block_size) - request.blocks_held
            if needed > free:
                return False
            free -= max(needed, 0)
            budget -= new_tokens
        return True

    def start_window_step(self, replica, time_s):
        """Start the window's next iteration: the members' steps from the window's sums; under
        vLLM the other running requests and the admissions as the scheduler takes them after
        the members. False if the window ends first: the members' new blocks are not free, the
        others' steps would preempt, or (other policies) a request waits."""
        window = replica.window
        step = window.started
        members = window.members
        new_blocks = window.block_phases[step % self.block_size]
        free = self.kv_blocks_total - replica.blocks_used - new_blocks
        mixed = bool(replica.waiting) or len(replica.running) > members
        if free < 0 or members == 0 or members > self.max_batched_tokens:
            return False
        if mixed and (self.policy != POLICY_VLLM
                      or not self.others_fit(replica, members, self.max_batched_tokens - members, free)):
            return False
        if step > window.hold:
            self.refresh_positions(window, replica, step)
        replica.blocks_used += new_blocks
        scheduled = []
        if mixed:
            scheduled, _ = self.schedule_vllm(replica, members, self.max_batched_tokens - members)
        tokens, prefill_tokens, *positions = self.iteration_sums(
            scheduled, members, 0, 0.0, window.positions, window.positions
        )
        duration_s, energy_j = self.iteration_cost(self.cost, tokens, members + len(scheduled), *positions,
                                                   prefill_tokens)
        self.record_iteration(replica, time_s, duration_s, energy_j, members + len(scheduled), tokens,
                              prefill_tokens, 0)
        replica.scheduled = scheduled
        window.positions += window.increment
        window.started += 1
        self.fast_forwarded += 1
        return True

    def complete_window_step(self, replica, time_s):
        """Every member emitted a token, each after a regular gap; the other scheduled steps
        complete as ever, after them. Members whose last token it was are brought up to date
        and finish; the requests behind the members that now decode join."""
        window = replica.window
        iteration = replica.iteration
        window.completed += 1
        window.last_token_s = time_s
        window.last_iteration = iteration
        decode_tokens = regular_gaps = window.members
        changed = False
        any_finished = False
        if window.completed > window.limit:
            for request in replica.running[: window.members]:
                if request.output_tokens - request.emitted == window.completed:
                    window.block_phases[self.block_phase(request)] -= 1
                    self.bring_up_to_date(request, window)
                    self.finish(request, replica, time_s)
                    any_finished = changed = True
                    window.members -= 1
        if replica.scheduled:
            others_decoded, others_regular, others_finished = self.complete_scheduled(replica, time_s)
            decode_tokens += others_decoded
            regular_gaps += others_regular
            any_finished = any_finished or others_finished
        self.record_emissions(iteration, decode_tokens, regular_gaps)
        if any_finished:
            replica.running = [request for request in replica.running if not request.finished]
        while window.members < len(replica.running) and self.can_join(replica.running[window.members], iteration):
            self.join(window, replica.running[window.members])
            changed = True
        if changed:
            self.window_changed(window, replica)
        replica.scheduled = []
        replica.busy = False
        replica.end_s = math.inf
        replica.previous_iteration = iteration

    def bring_up_to_date(self, request, window):
        """A member takes the steps the window completed (and the blocks of those it started)."""
        request.blocks_held = max(request.blocks_held, ceil_div(request.computed + window.started, self.block_size))
        request.computed += window.completed
        request.num_tokens = request.computed + 1
        request.emitted += window.completed
        if window.completed:
            request.last_token_s = window.last_token_s
            request.last_emit_iteration = window.last_iteration
            self.request_int[request.index, REQ_TOKENS_EMITTED] = request.emitted

    def close_window(self, replica):
        """Bring the members up to date; the replica steps again."""
        for request in replica.running[: replica.window.members]:
            self.bring_up_to_date(request, replica.window)
        replica.window = None

    # -- iterations --------------------------------------------------------------------------

    def record_emissions(self, iteration, decode_tokens, regular_gaps):
        """Complete an iteration's record with the tokens it emitted, once it has ended."""
        record_int = self.iteration_int[iteration % self.record_rows]
        record_int[IT_DECODE_TOKENS] = decode_tokens
        record_int[IT_ITL_TOKENS] = regular_gaps

    def record_iteration(self, replica, time_s, duration_s, energy_j, sequences, tokens, prefill_tokens, preemptions):
        """Write the record of an iteration starting now; the replica is busy until it ends."""
        iteration = self.iterations_used
        self.iterations_used += 1
        record_float = self.iteration_float[iteration % self.record_rows]
        record_float[IT_START_S] = time_s
        record_float[IT_DURATION_S] = duration_s
        record_float[IT_ENERGY_J] = energy_j
        record_int = self.iteration_int[iteration % self.record_rows]
        record_int[IT_REPLICA] = replica.index
        record_int[IT_SEQUENCES] = sequences
        record_int[IT_TOKENS] = tokens
        record_int[IT_PREFILL_TOKENS] = prefill_tokens
        record_int[IT_DECODE_TOKENS] = 0
        record_int[IT_ITL_TOKENS] = 0
        record_int[IT_WAITING] = len(replica.waiting)
        record_int[IT_RUNNING] = len(replica.running)
        record_int[IT_KV_BLOCKS] = replica.blocks_used
        record_int[IT_PREEMPTIONS] = preemptions
        replica.iteration = iteration
        replica.busy = True
        replica.end_s = time_s + duration_s

    def start_iteration(self, replica, time_s):
        if self.fast_forward:
            if replica.window is None:
                replica.window = self.open_window(replica)
            if replica.window is not None:
                if self.start_window_step(replica, time_s):
                    return
                self.close_window(replica)
        if self.policy == POLICY_VLLM:
            scheduled, preemptions = self.schedule_vllm(replica)
        elif self.policy == POLICY_STATIC:
            scheduled, preemptions = self.schedule_static(replica)
        else:
            scheduled, preemptions = self.schedule_trtllm(replica)
        if not scheduled:
            return
        tokens, prefill_tokens, *positions = self.iteration_sums(scheduled, 0, 0, 0.0, 0.0, 0.0)
        duration_s, energy_j = self.iteration_cost(self.cost, tokens, len(scheduled), *positions, prefill_tokens)
        self.record_iteration(replica, time_s, duration_s, energy_j, len(scheduled), tokens, prefill_tokens,
                              preemptions)
        replica.scheduled = scheduled

    def iteration_sums(self, scheduled, tokens, prefill_tokens, prefill_positions, decode_positions,
                       kv_read_positions):
        """(tokens, prefill tokens, and the three position sums) of the scheduled steps, added
        to those given."""
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
        return tokens, prefill_tokens, prefill_positions, decode_positions, kv_read_positions

    def complete_iteration(self, replica, time_s):
        if replica.window is not None:
            self.complete_window_step(replica, time_s)
            return
        iteration = replica.iteration
        decode_tokens, regular_gaps, any_finished = self.complete_scheduled(replica, time_s)
        self.record_emissions(iteration, decode_tokens, regular_gaps)
        if self.policy == POLICY_STATIC:
            if all(request.finished for request in replica.running):
                replica.running = []
        elif any_finished:
            replica.running = [request for request in replica.running if not request.finished]
        replica.scheduled = []
        replica.busy = False
        replica.end_s = math.inf
        replica.previous_iteration = iteration

    def complete_scheduled(self, replica, time_s):
        """The scheduled steps compute their tokens and emit; (decode tokens, regular gaps, any
        finished)."""
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
        return decode_tokens, regular_gaps, any_finished

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
        for replica in self.replicas:
            if replica.window is not None:
                self.close_window(replica)
        self.counters[CNT_ITERATIONS] = self.iterations_used
        return self.fast_forwarded

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
    decode_positions=None,
):
    """Run the reference model; fills the output arrays (layouts in ``layout``) and returns the
    number of iterations it fast-forwarded.

    Inputs: ``arrival_s`` (s, non-decreasing; ignored in closed loop), ``prompt_tokens``,
    ``output_tokens``, ``think_s`` (s, closed loop), ``prior_token_s`` (s; time of an already
    emitted first token for requests whose prompt KV arrives computed, NaN otherwise),
    ``settings`` (int64, ``SET_*``), ``max_time_s``, the ``cost`` coefficients, and the two cost
    functions (``request_positions(cost, ...)``, ``iteration_cost(cost, ...)``), with
    ``decode_positions(cost, context)`` when the settings ask for fast-forward.
    """
    return ReferenceEngine(
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
        decode_positions,
    ).run()
