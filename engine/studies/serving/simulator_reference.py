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
and TensorRT-LLM (SERVING.md sections 2 and 3).

**Steady windows and stretches** (``SET_STRETCHES``; SERVING.md section 8) change no output
beyond rounding, only the work. Once the head of a replica's running list has emitted in its
last iteration and decodes next, those requests (a window's members) decode one token each in
every iteration, their part of it costed from running sums (their decode positions grow by an
increment; their new KV blocks are counted by the step at which each fills its last block),
their own state brought up to date when they leave or the window closes. Under vLLM the
requests routed to the replica are scheduled behind them one by one, and join once they decode.
When the members are all that runs and the scheduler would admit no one, the window's next
iterations repeat one composition, one more token of context each: they run as one event, a
stretch, as many as can pass before a member emits its last token, a layer's window or
attention chunk changes the positions' growth, or the members' new blocks would no longer be
free (a preemption). A request routed to the replica during a stretch cuts it after the
iteration in progress, as that iteration's end is when the scheduler would first see it. Here a
stretch's iterations are costed one by one and their durations added in order (so that every
request's times are those of the run stepped one iteration at a time, to the bit); the kernel
sums them in closed form (``physics.kernels.iteration.stretch_sums``). Static batches, whose
finished members pad to the end, neither open windows nor run stretches.

**Time bins** record what happened when (``layout.BIN_*``), so that steady-state statistics can
be read off any window of the run without keeping an iteration record each (``metrics.py``).
Their width starts at ``TS_BIN_WIDTH_S`` and doubles, pairs of bins merged, whenever the run
outgrows them.
"""

from __future__ import annotations

import heapq
import math
from collections import deque

from .layout import (
    BIN_ARRIVALS,
    BIN_BUSY_S,
    BIN_ENERGY_J,
    BIN_FINISHED,
    BIN_FIRST_TOKENS,
    BIN_OUTPUT_TOKENS,
    BIN_PREEMPTIONS,
    BIN_PROMPT_TOKENS,
    BIN_RUNNING_S,
    BIN_SATURATED_S,
    BIN_SATURATED_TOKENS,
    BIN_WAITING_S,
    CNT_CAPPED,
    CNT_GAPS,
    CNT_GAPS_DROPPED,
    CNT_ITERATIONS,
    CNT_MEASURED_DONE,
    CNT_PREEMPTIONS,
    CNT_RECORDS,
    CNT_REJECTED,
    CNT_STRETCHES,
    IT_DECODE_TOKENS,
    IT_DURATION_S,
    IT_ENERGY_J,
    IT_FIRST_DURATION_S,
    IT_ITERATIONS,
    IT_ITL_TOKENS,
    IT_KV_BLOCKS,
    IT_LAST_DURATION_S,
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
    ROUTER_ASSIGNED,
    ROUTER_ROUND_ROBIN,
    RUN_BIN_WIDTH_S,
    RUN_END_S,
    SET_BLOCK_SIZE,
    SET_KV_BLOCKS_TOTAL,
    SET_LONG_PREFILL_THRESHOLD,
    SET_MAX_BATCHED_TOKENS,
    SET_MAX_MODEL_LEN,
    SET_MAX_NUM_SEQS,
    SET_MAX_RECORDS,
    SET_MEASURED_REQUESTS,
    SET_POLICY,
    SET_PREFIX_TOKENS,
    SET_REPLICAS,
    SET_ROUTER,
    SET_STATIC_BATCH,
    SET_STRETCHES,
    SET_USERS,
    STATUS_FINISHED,
    STATUS_REJECTED,
    STATUS_UNFINISHED,
    STEP_DECODE,
    STEP_PADDING,
    STEP_PREFILL,
    TS_BIN_WIDTH_S,
    TS_MAX_TIME_S,
)


def ceil_div(numerator, denominator):
    return -(-numerator // denominator)


class Request:
    """Scheduling state of one request."""

    def __init__(self, index, prompt_tokens, output_tokens, prior_token_s, replica):
        self.index = index
        self.prompt_tokens = prompt_tokens
        self.output_tokens = output_tokens
        self.assigned_replica = replica  # under the assigned router
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
        self.iteration = -1  # record of the iteration (or stretch) in flight
        self.previous_iteration = -1
        self.blocks_used = 0
        self.reserved_blocks = 0  # no-evict: shared prefix + running requests' own blocks to completion
        self.prefix_cached = False
        self.outstanding = 0  # routed and not finished
        self.scheduled = []  # (request, new tokens, step kind) of the iteration in flight
        self.window = None  # a SteadyWindow while its iterations repeat
        self.start_s = 0.0  # when the iteration (or stretch) in flight started
        self.energy_j = 0.0  # the iteration's energy
        self.waiting_scheduled = 0  # waiting requests after its scheduling
        self.levels_s = 0.0  # when the queue lengths were last integrated into the bins


class Stretch:
    """A window's iterations run as one event from ``start_s``: each one's duration and energy,
    and when each ends (the durations added one by one, as stepping adds them)."""

    def __init__(self, start_s, durations, energies):
        self.start_s = start_s
        self.durations = durations
        self.energies = energies
        self.ends = []
        end_s = start_s
        for duration in durations:
            end_s = end_s + duration
            self.ends.append(end_s)

    @property
    def iterations(self):
        return len(self.ends)

    def keep(self, iterations):
        """Keep the first ``iterations``; returns how many were dropped."""
        dropped = self.iterations - iterations
        del self.durations[iterations:]
        del self.energies[iterations:]
        del self.ends[iterations:]
        return dropped


class SteadyWindow:
    """A replica's iterations that repeat its last one: its members, the head of its running
    list, decode one token each in every one; those that emit their last token leave. While it
    is open the members' own state lags: computed and emitted are as at the window's start (a
    request that joined later is set back by the steps before it joined), and ``completed``
    brings them all up to date (``ReferenceEngine.bring_up_to_date``). Under vLLM the requests
    routed to the replica are admitted behind the members and scheduled one by one as ever,
    and join once they decode. ``stretch`` is the stretch in flight, if any."""

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
        self.hold = math.inf
        self.last_token_s = math.nan  # when the window's last completed step emitted
        self.last_iteration = -1
        self.stretch = None


class ReferenceEngine:
    """One run of the simulation, writing into caller-allocated output arrays."""

    def __init__(
        self,
        arrival_s,
        prompt_tokens,
        output_tokens,
        think_s,
        prior_token_s,
        assigned_replica,
        settings,
        time_settings,
        cost,
        request_float,
        request_int,
        iteration_float,
        iteration_int,
        gap_s,
        counters,
        bins,
        run_float,
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
        self.stretches = bool(settings[SET_STRETCHES]) and self.policy != POLICY_STATIC
        if self.stretches and decode_positions is None:
            raise ValueError("stretches need decode_positions(cost, context) beside request_positions")
        self.max_records = int(settings[SET_MAX_RECORDS])
        self.measured = int(settings[SET_MEASURED_REQUESTS])
        self.max_time_s = float(time_settings[TS_MAX_TIME_S])
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
        self.bins = bins
        self.run_float = run_float
        self.bin_width_s = float(time_settings[TS_BIN_WIDTH_S])
        self.record_rows = iteration_float.shape[0]  # record i writes row i % record_rows (layout)

        self.requests = [
            Request(i, int(prompt_tokens[i]), int(output_tokens[i]), float(prior_token_s[i]), int(assigned_replica[i]))
            for i in range(len(self.arrival_s))
        ]
        self.replicas = [Replica(r) for r in range(int(settings[SET_REPLICAS]))]
        self.uses_blocks = self.policy != POLICY_STATIC
        # Full blocks of the shared system prompt, reused once some request has computed it.
        self.prefix_blocks = self.prefix_tokens // self.block_size if self.uses_blocks else 0
        self.round_robin_next = 0
        self.records_used = 0
        self.stopped = False
        self.measured_left = 0  # of the first `measured` requests, those that have left
        # Issues not yet routed: a pointer into arrival_s (open loop) or a heap of
        # (issue time, request index) with one entry per thinking user (closed loop).
        self.next_open_arrival = 0
        self.pending_issues = []
        self.next_unissued = 0

    # -- time bins -----------------------------------------------------------------------------

    def bin_of(self, time_s):
        """The bin of ``time_s``, the bins first widened (pairs merged) until they reach it."""
        bins = self.bins.shape[0]
        while time_s >= bins * self.bin_width_s:
            half = bins // 2
            for index in range(half):
                self.bins[index] = self.bins[2 * index] + self.bins[2 * index + 1]
            self.bins[half:] = 0.0
            self.bin_width_s *= 2.0
        # Times are not negative: truncation is the floor; a quotient that rounds up to the
        # bins' end goes to the last bin.
        return min(int(time_s / self.bin_width_s), bins - 1)

    def add_at(self, time_s, column, amount):
        self.bins[self.bin_of(time_s), column] += amount

    def add_over(self, start_s, end_s, column, amount):
        """``amount`` spread evenly over [start_s, end_s) (at ``start_s`` when empty)."""
        if end_s <= start_s:
            self.add_at(start_s, column, amount)
            return
        last = self.bin_of(end_s)
        first = self.bin_of(start_s)
        rate = amount / (end_s - start_s)
        for index in range(first, last + 1):
            low = max(start_s, index * self.bin_width_s)
            high = min(end_s, (index + 1) * self.bin_width_s)
            if high > low:
                self.bins[index, column] += rate * (high - low)

    def integrate_levels(self, replica, time_s):
        """The replica's queue lengths since they were last integrated, up to ``time_s``: call
        before anything changes them."""
        start_s = replica.levels_s
        if time_s > start_s:
            span = time_s - start_s
            if replica.waiting:
                self.add_over(start_s, time_s, BIN_WAITING_S, len(replica.waiting) * span)
                self.add_over(start_s, time_s, BIN_SATURATED_S, span)
            if replica.running:
                self.add_over(start_s, time_s, BIN_RUNNING_S, len(replica.running) * span)
        replica.levels_s = max(start_s, time_s)

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

    def left(self, request):
        """A request finished or was rejected: count it if it is one of the measured ones."""
        if request.index < self.measured:
            self.measured_left += 1

    def arrive(self, request, time_s):
        self.request_float[request.index, REQ_ISSUE_S] = time_s
        self.add_at(time_s, BIN_ARRIVALS, 1.0)
        if self.can_never_run(request):
            self.request_int[request.index, REQ_STATUS] = STATUS_REJECTED
            self.counters[CNT_REJECTED] += 1
            self.left(request)
            self.issue_next_request(time_s)
            return
        if self.router == ROUTER_ROUND_ROBIN:
            replica = self.replicas[self.round_robin_next % len(self.replicas)]
            self.round_robin_next += 1
        elif self.router == ROUTER_ASSIGNED:
            replica = self.replicas[request.assigned_replica]
        else:
            replica = min(self.replicas, key=lambda candidate: (candidate.outstanding, candidate.index))
        replica.outstanding += 1
        self.request_int[request.index, REQ_REPLICA] = replica.index
        self.integrate_levels(replica, time_s)
        replica.waiting.append(request)
        if replica.window is not None and replica.window.stretch is not None:
            self.cut_stretch(replica, time_s)

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

    def preempt(self, request, replica, time_s):
        """Evict a running request: free its blocks; it recomputes everything later."""
        self.release_blocks(request, replica)
        request.computed = 0
        request.recomputing = True
        request.kv_ready = False
        replica.waiting.appendleft(request)
        self.request_int[request.index, REQ_PREEMPTIONS] += 1
        self.counters[CNT_PREEMPTIONS] += 1
        self.add_at(time_s, BIN_PREEMPTIONS, 1.0)

    def finish(self, request, replica, time_s):
        self.request_int[request.index, REQ_STATUS] = STATUS_FINISHED
        self.request_float[request.index, REQ_END_S] = time_s
        self.add_at(time_s, BIN_FINISHED, 1.0)
        replica.outstanding -= 1
        if self.uses_blocks:
            self.release_blocks(request, replica)
        if self.policy == POLICY_TRTLLM_NO_EVICT:
            replica.reserved_blocks -= request.own_blocks_to_completion
        self.left(request)
        self.issue_next_request(time_s)

    # -- schedulers: each returns [(request, new tokens, step kind)] and the preemptions -----

    def step_kind(self, request, new_tokens):
        if new_tokens == 1 and request.emitted >= 1 and not request.recomputing:
            return STEP_DECODE
        return STEP_PREFILL

    def vllm_new_tokens(self, request, computed, budget):
        new_tokens = min(request.num_tokens - computed, budget, self.max_model_len - 1 - computed)
        if self.long_prefill_threshold > 0:
            new_tokens = min(new_tokens, self.long_prefill_threshold)
        return new_tokens

    def schedule_vllm(self, replica, time_s, index=0, budget=None):
        """From the running request at ``index`` on, with ``budget`` tokens left (a steady
        window has taken the ones before)."""
        scheduled = []
        budget = self.max_batched_tokens if budget is None else budget
        preemptions = 0
        # Pass 1: running requests in admission order.
        while index < len(replica.running) and budget > 0:
            request = replica.running[index]
            new_tokens = self.vllm_new_tokens(request, request.computed, budget)
            if new_tokens <= 0:
                index += 1
                continue
            needed = ceil_div(request.computed + new_tokens, self.block_size) - request.blocks_held
            preempted_itself = False
            while needed > self.kv_blocks_total - replica.blocks_used:
                victim = replica.running.pop()
                self.preempt(victim, replica, time_s)
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
                if not self.vllm_admits(request, replica, budget, self.kv_blocks_total - replica.blocks_used):
                    break  # head-of-line: admission never preempts
                computed, _ = self.start_values(request, replica)
                new_tokens = self.vllm_new_tokens(request, computed, budget)
                self.admit(request, replica)
                self.allocate(request, replica, new_tokens)
                scheduled.append((request, new_tokens, self.step_kind(request, new_tokens)))
                budget -= new_tokens
        return scheduled, preemptions

    def vllm_admits(self, request, replica, budget, free):
        """Whether vLLM's second pass admits the head of waiting with ``budget`` tokens and
        ``free`` blocks left (the number of running requests aside)."""
        computed, shared_blocks = self.start_values(request, replica)
        new_tokens = self.vllm_new_tokens(request, computed, budget)
        return ceil_div(computed + new_tokens, self.block_size) - shared_blocks <= free

    def trtllm_admits(self, request, replica, available):
        """Whether TensorRT-LLM admits the head of waiting: no-evict, if its blocks to
        completion fit beside the running requests' reservations; max-util, if its next
        step's blocks fit in ``available``."""
        if self.policy == POLICY_TRTLLM_NO_EVICT:
            own_blocks = ceil_div(request.prompt_tokens + request.output_tokens, self.block_size) - \
                self.prefix_hit_blocks(request, replica)
            return replica.reserved_blocks + own_blocks <= self.kv_blocks_total
        computed, shared_blocks = self.start_values(request, replica)
        step = min(request.num_tokens - computed, self.max_batched_tokens)
        return ceil_div(computed + step, self.block_size) - shared_blocks <= available

    def schedule_trtllm(self, replica, time_s):
        preemptions = 0
        if self.policy == POLICY_TRTLLM_NO_EVICT:
            # Capacity: admit while the blocks to completion fit beside every running request's.
            while replica.waiting and len(replica.running) < self.max_num_seqs:
                request = replica.waiting[0]
                if not self.trtllm_admits(request, replica, 0):
                    break
                shared_blocks = self.prefix_hit_blocks(request, replica)
                own_blocks = ceil_div(request.prompt_tokens + request.output_tokens, self.block_size) - shared_blocks
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
                    self.preempt(victim, replica, time_s)
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
                    if not self.trtllm_admits(request, replica, available):
                        break
                    computed, shared_blocks = self.start_values(request, replica)
                    step = min(request.num_tokens - computed, self.max_batched_tokens)
                    self.admit(request, replica)
                    available -= ceil_div(computed + step, self.block_size) - shared_blocks
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

    # -- steady windows and stretches -------------------------------------------------------------

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
        """The request becomes the window's last member, its state set back to the window's
        start; its decode positions join the window's sums."""
        positions, increment, steps = self.decode_positions(self.cost, request.computed)
        window.positions += positions
        window.increment += increment
        window.hold = min(window.hold, window.completed + steps)
        request.computed -= window.completed
        request.num_tokens = request.computed + 1
        request.emitted -= window.completed
        window.limit = min(window.limit, request.output_tokens - request.emitted - 1)
        window.block_phases[self.block_phase(request)] += 1
        window.members += 1

    def leave(self, window, request):
        """A member that emitted its last token leaves the window's sums (its hold stays: at
        worst the window refreshes its positions a step early)."""
        positions, increment, _ = self.decode_positions(self.cost, request.computed + window.completed)
        window.positions -= positions
        window.increment -= increment
        window.block_phases[self.block_phase(request)] -= 1
        window.members -= 1

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
        return window

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
            new_tokens = self.vllm_new_tokens(request, request.computed, budget)
            if new_tokens <= 0:
                continue
            needed = ceil_div(request.computed + new_tokens, self.block_size) - request.blocks_held
            if needed > free:
                return False
            free -= max(needed, 0)
            budget -= new_tokens
        return True

    def window_new_blocks(self, window, first_step, iterations):
        """Blocks the members take in the window's steps first_step .. first_step + iterations - 1."""
        return sum(window.block_phases[step % self.block_size] for step in range(first_step, first_step + iterations))

    def admission_blocked(self, replica, free):
        """Whether vLLM, with only the window's members running and ``free`` blocks left after
        their step, admits no one now, and so at no later step of a stretch: the free blocks
        only shrink as the members decode, and nothing else changes until a member finishes or
        a request arrives (either ends the stretch)."""
        if not replica.waiting or len(replica.running) >= self.max_num_seqs:
            return True
        budget = self.max_batched_tokens - len(replica.running)
        return budget <= 0 or not self.vllm_admits(replica.waiting[0], replica, budget, free)

    def stretch_iterations(self, replica, free):
        """The iterations a pure window may run as one stretch from its next step: until a member
        emits its last token or the positions' growth changes, and while the members' new
        blocks are free (``free`` blocks after the next step's)."""
        window = replica.window
        if not self.stretches or len(replica.running) != window.members or not self.admission_blocked(replica, free):
            return 1
        step = window.started
        iterations = min(window.limit, window.hold) - step + 1
        while iterations > 1 and self.window_new_blocks(window, step, iterations) > \
                self.kv_blocks_total - replica.blocks_used:
            iterations -= 1
        return iterations

    def start_window_step(self, replica, time_s):
        """Start the window's next iteration (or stretch): the members' steps from the window's
        sums; under vLLM the other running requests and the admissions as the scheduler takes
        them after the members. False if the window ends first: the members' new blocks are not
        free, the others' steps would preempt, or (other policies) a request waits."""
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
        iterations = self.stretch_iterations(replica, free)
        if iterations > 1:
            self.start_stretch(replica, time_s, iterations)
            return True
        replica.blocks_used += new_blocks
        scheduled = []
        if mixed:
            scheduled, _ = self.schedule_vllm(replica, time_s, members, self.max_batched_tokens - members)
        tokens, prefill_tokens, *positions = self.iteration_sums(scheduled, members, window.positions)
        duration_s, energy_j = self.iteration_cost(self.cost, tokens, members + len(scheduled), *positions,
                                                   prefill_tokens)
        self.write_record(replica, time_s, members + len(scheduled), tokens, prefill_tokens, 0)
        self.set_record_cost(replica, duration_s, energy_j)
        replica.scheduled = scheduled
        window.positions += window.increment
        window.started += 1
        self.counters[CNT_ITERATIONS] += 1
        return True

    def start_stretch(self, replica, time_s, iterations):
        """The window's next ``iterations`` steps as one event: each costs what its members'
        decode steps cost, their positions growing by the window's increment."""
        window = replica.window
        members = window.members
        durations = []
        energies = []
        for step in range(iterations):
            positions = window.positions + step * window.increment
            duration_s, energy_j = self.iteration_cost(self.cost, members, members, 0.0, positions, positions, 0)
            durations.append(duration_s)
            energies.append(energy_j)
        replica.blocks_used += self.window_new_blocks(window, window.started, iterations)
        window.stretch = Stretch(time_s, durations, energies)
        self.write_record(replica, time_s, members, members, 0, 0)
        window.positions += iterations * window.increment
        window.started += iterations
        self.counters[CNT_STRETCHES] += 1
        self.counters[CNT_ITERATIONS] += iterations
        self.update_stretch_record(replica)

    def update_stretch_record(self, replica):
        """The record of the stretch in flight: its iterations as planned so far."""
        stretch = replica.window.stretch
        iterations = stretch.iterations
        record_float = self.iteration_float[replica.iteration % self.record_rows]
        record_int = self.iteration_int[replica.iteration % self.record_rows]
        record_float[IT_DURATION_S] = stretch.ends[-1] - stretch.start_s
        record_float[IT_ENERGY_J] = math.fsum(stretch.energies)
        record_float[IT_FIRST_DURATION_S] = stretch.durations[0]
        record_float[IT_LAST_DURATION_S] = stretch.durations[-1]
        record_int[IT_ITERATIONS] = iterations
        record_int[IT_KV_BLOCKS] = replica.blocks_used
        replica.end_s = stretch.ends[-1]

    def cut_stretch(self, replica, time_s, keep=None):
        """Keep the stretch's first ``keep`` iterations (default: up to the one in progress at
        ``time_s``, the first whose end is at or after it, as a request arrived then)."""
        window = replica.window
        stretch = window.stretch
        if keep is None:
            keep = next(index for index, end_s in enumerate(stretch.ends) if end_s >= time_s or
                        index == stretch.iterations - 1) + 1
        dropped = stretch.iterations - keep
        if dropped <= 0:
            return
        replica.blocks_used -= self.window_new_blocks(window, window.started - dropped, dropped)
        window.started -= dropped
        window.positions -= dropped * window.increment
        stretch.keep(keep)
        self.counters[CNT_ITERATIONS] -= dropped
        self.update_stretch_record(replica)

    def complete_window_step(self, replica, time_s, completed_steps=1):
        """Every member emitted ``completed_steps`` tokens (one a step, each after a regular
        gap); the other scheduled steps complete as ever, after them. Members whose last token it
        was are brought up to date and finish; the requests behind the members that now decode
        join."""
        window = replica.window
        iteration = replica.iteration
        window.completed += completed_steps
        window.last_token_s = time_s
        window.last_iteration = iteration
        decode_tokens = regular_gaps = window.members
        any_finished = False
        if window.completed > window.limit:
            members = replica.running[: window.members]
            for request in members:
                if request.output_tokens - request.emitted == window.completed:
                    self.leave(window, request)
                    self.bring_up_to_date(request, window)
                    self.finish(request, replica, time_s)
                    any_finished = True
            # The next member to emit its last token.
            window.limit = min((request.output_tokens - request.emitted - 1 for request in members
                                if not request.finished), default=math.inf)
        emitted = decode_tokens
        if replica.scheduled:
            others_decoded, others_regular, others_emitted, others_finished = self.complete_scheduled(replica, time_s)
            decode_tokens += others_decoded
            regular_gaps += others_regular
            emitted += others_emitted
            any_finished = any_finished or others_finished
        self.record_emissions(iteration, decode_tokens, regular_gaps)
        if any_finished:
            replica.running = [request for request in replica.running if not request.finished]
        while window.members < len(replica.running) and self.can_join(replica.running[window.members], iteration):
            self.join(window, replica.running[window.members])
        return emitted

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

    def stop_stretch(self, replica, stop_s):
        """The run stops at ``stop_s`` with a stretch in flight: its iterations that ended by
        then are completed (none finishes a member: a finish ends a stretch), and its record
        keeps those started by then."""
        window = replica.window
        stretch = window.stretch
        completed = sum(end_s <= stop_s for end_s in stretch.ends)
        self.cut_stretch(replica, stop_s, min(completed + 1, stretch.iterations))
        self.stretch_to_bins(replica, stretch, completed)
        window.stretch = None
        if completed:
            window.completed += completed
            window.last_token_s = stretch.ends[completed - 1]
            window.last_iteration = replica.iteration
            self.record_emissions(replica.iteration, window.members, window.members)

    def stretch_to_bins(self, replica, stretch, iterations):
        """The first ``iterations`` of a stretch into the bins: each one's tokens at its end,
        its busy time and energy spread over its span (at the stretch's mean power)."""
        members = replica.window.members
        for end_s in stretch.ends[:iterations]:
            self.add_at(end_s, BIN_OUTPUT_TOKENS, float(members))
            if replica.waiting_scheduled:
                self.add_at(end_s, BIN_SATURATED_TOKENS, float(members))
        end_s = stretch.ends[iterations - 1] if iterations else stretch.start_s
        self.add_over(stretch.start_s, end_s, BIN_BUSY_S, end_s - stretch.start_s)
        self.add_over(stretch.start_s, end_s, BIN_ENERGY_J, math.fsum(stretch.energies[:iterations]))

    # -- iterations --------------------------------------------------------------------------

    def write_record(self, replica, time_s, sequences, tokens, prefill_tokens, preemptions):
        """Write the record of an iteration starting now; the replica is busy until it ends."""
        iteration = self.records_used
        self.records_used += 1
        record_float = self.iteration_float[iteration % self.record_rows]
        record_float[IT_START_S] = time_s
        record_int = self.iteration_int[iteration % self.record_rows]
        record_int[IT_REPLICA] = replica.index
        record_int[IT_ITERATIONS] = 1
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
        replica.waiting_scheduled = len(replica.waiting)
        replica.start_s = time_s
        replica.busy = True

    def set_record_cost(self, replica, duration_s, energy_j):
        record_float = self.iteration_float[replica.iteration % self.record_rows]
        record_float[IT_DURATION_S] = duration_s
        record_float[IT_ENERGY_J] = energy_j
        record_float[IT_FIRST_DURATION_S] = duration_s
        record_float[IT_LAST_DURATION_S] = duration_s
        replica.energy_j = energy_j
        replica.end_s = replica.start_s + duration_s

    def record_emissions(self, iteration, decode_tokens, regular_gaps):
        """Complete an iteration's record with the tokens each of its iterations emitted."""
        record_int = self.iteration_int[iteration % self.record_rows]
        record_int[IT_DECODE_TOKENS] = decode_tokens
        record_int[IT_ITL_TOKENS] = regular_gaps

    def start_iteration(self, replica, time_s):
        self.integrate_levels(replica, time_s)
        if self.stretches:
            if replica.window is None:
                replica.window = self.open_window(replica)
            if replica.window is not None:
                if self.start_window_step(replica, time_s):
                    return
                self.close_window(replica)
        if self.policy == POLICY_VLLM:
            scheduled, preemptions = self.schedule_vllm(replica, time_s)
        elif self.policy == POLICY_STATIC:
            scheduled, preemptions = self.schedule_static(replica)
        else:
            scheduled, preemptions = self.schedule_trtllm(replica, time_s)
        if not scheduled:
            return
        tokens, prefill_tokens, *positions = self.iteration_sums(scheduled)
        duration_s, energy_j = self.iteration_cost(self.cost, tokens, len(scheduled), *positions, prefill_tokens)
        self.write_record(replica, time_s, len(scheduled), tokens, prefill_tokens, preemptions)
        self.set_record_cost(replica, duration_s, energy_j)
        self.counters[CNT_ITERATIONS] += 1
        replica.scheduled = scheduled

    def iteration_sums(self, scheduled, members=0, member_positions=0.0):
        """(tokens, prefill tokens, and the three position sums) of the scheduled steps, after a
        window's ``members`` decode steps at ``member_positions``."""
        tokens = members
        prefill_tokens = 0
        prefill_positions = 0.0
        decode_positions = kv_read_positions = member_positions
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
        self.integrate_levels(replica, time_s)
        iteration = replica.iteration
        window = replica.window
        if window is not None and window.stretch is not None:
            stretch = window.stretch
            window.stretch = None
            self.stretch_to_bins(replica, stretch, stretch.iterations)
            self.complete_window_step(replica, time_s, stretch.iterations)
            any_finished = False
        else:
            self.add_over(replica.start_s, time_s, BIN_BUSY_S, time_s - replica.start_s)
            self.add_over(replica.start_s, time_s, BIN_ENERGY_J, replica.energy_j)
            if window is not None:
                emitted = self.complete_window_step(replica, time_s)
                any_finished = False
            else:
                decode_tokens, regular_gaps, emitted, any_finished = self.complete_scheduled(replica, time_s)
                self.record_emissions(iteration, decode_tokens, regular_gaps)
            self.add_at(time_s, BIN_OUTPUT_TOKENS, float(emitted))
            if replica.waiting_scheduled:
                self.add_at(time_s, BIN_SATURATED_TOKENS, float(emitted))
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
        """The scheduled steps compute their tokens and emit; (decode tokens, regular gaps,
        tokens emitted, any finished)."""
        iteration = replica.iteration
        decode_tokens = 0
        regular_gaps = 0
        emitted = 0
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
            emitted += 1
            if kind == STEP_DECODE:
                decode_tokens += 1
            if request.emitted == 1:
                self.request_float[request.index, REQ_FIRST_TOKEN_S] = time_s
                self.add_at(time_s, BIN_FIRST_TOKENS, 1.0)
                self.add_at(time_s, BIN_PROMPT_TOKENS, float(request.prompt_tokens))
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
        return decode_tokens, regular_gaps, emitted, any_finished

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
        last_s = 0.0
        stop_s = None
        while True:
            if self.measured > 0 and self.measured_left >= self.measured:
                self.counters[CNT_MEASURED_DONE] = 1
                stop_s = last_s
                break
            busy_end_s = min((replica.end_s for replica in self.replicas if replica.busy), default=math.inf)
            time_s = min(self.next_issue_s(), busy_end_s)
            if time_s == math.inf:
                break
            if time_s > self.max_time_s:
                self.counters[CNT_CAPPED] = 1
                stop_s = self.max_time_s
                break
            last_s = time_s
            for replica in self.replicas:
                if replica.busy and replica.end_s == time_s:
                    self.complete_iteration(replica, time_s)
            while self.next_issue_s() <= time_s:
                issue_s, request = self.pop_issue()
                self.arrive(request, issue_s)
            for replica in self.replicas:
                if not replica.busy and (replica.waiting or replica.running):
                    if self.records_used == self.max_records:
                        self.counters[CNT_CAPPED] = 1
                        self.stopped = True
                        break
                    self.start_iteration(replica, time_s)
            if self.stopped:
                stop_s = time_s
                break
        for replica in self.replicas:
            if replica.window is not None:
                if replica.window.stretch is not None:
                    self.stop_stretch(replica, stop_s)
                self.close_window(replica)
        # A run stopped by a bound ends at its stop (a stretch's iterations are no events).
        end_s = last_s if stop_s is None else stop_s
        for replica in self.replicas:
            self.integrate_levels(replica, end_s)
        self.counters[CNT_RECORDS] = self.records_used
        self.run_float[RUN_BIN_WIDTH_S] = self.bin_width_s
        self.run_float[RUN_END_S] = end_s

    def initialise_outputs(self):
        self.request_float[:, :] = math.nan
        self.request_int[:, :] = 0
        self.request_int[:, REQ_REPLICA] = -1
        self.request_int[:, REQ_STATUS] = STATUS_UNFINISHED
        for request in self.requests:
            if request.kv_ready:
                self.request_int[request.index, REQ_TOKENS_EMITTED] = 1
        self.counters[:] = 0
        self.bins[:, :] = 0.0


def simulate_reference(
    arrival_s,
    prompt_tokens,
    output_tokens,
    think_s,
    prior_token_s,
    assigned_replica,
    settings,
    time_settings,
    cost,
    request_float,
    request_int,
    iteration_float,
    iteration_int,
    gap_s,
    counters,
    bins,
    run_float,
    request_positions,
    iteration_cost,
    decode_positions=None,
):
    """Run the reference model; fills the output arrays (layouts in ``layout``).

    Inputs: ``arrival_s`` (s, non-decreasing; ignored in closed loop), ``prompt_tokens``,
    ``output_tokens``, ``think_s`` (s, closed loop), ``prior_token_s`` (s; time of an already
    emitted first token for requests whose prompt KV arrives computed, NaN otherwise),
    ``assigned_replica`` (the assigned router's replica of each request), ``settings`` (int64,
    ``SET_*``), ``time_settings`` (float64, ``TS_*``), the ``cost`` coefficients, and the two
    cost functions (``request_positions(cost, ...)``, ``iteration_cost(cost, ...)``), with
    ``decode_positions(cost, context)`` when the settings ask for stretches.
    """
    ReferenceEngine(
        arrival_s, prompt_tokens, output_tokens, think_s, prior_token_s, assigned_replica, settings, time_settings,
        cost, request_float, request_int, iteration_float, iteration_int, gap_s, counters, bins, run_float,
        request_positions, iteration_cost, decode_positions,
    ).run()
