"""Public entry point of one simulation run: validation, allocation and the result's named views."""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ...core.serving import MAX_SIMULATED_SEQUENCES
from ...physics.iteration import GROUP_LAYERS_ROW
from . import layout
from .kernel import simulate_kernel
from .simulator_reference import simulate_reference
from .workload import Workload

# Default bound on records kept when the caller gives none: enough for any run without
# preemption, capped so the (lazily touched) record arrays stay below ~250 MB of address space.
DEFAULT_MAX_RECORDS_CAP = 2**21
# A run that keeps no records is bounded only against a runaway: its work is its events.
NO_RECORDS_MAX_RECORDS = 2**40


@dataclass(frozen=True)
class Server:
    """A serving deployment: ``replicas`` data-parallel copies behind a router.

    Sizes are in tokens and KV blocks; ``kv_blocks_total`` is per replica. ``cost`` is the
    engine's iteration-cost coefficients of one replica (``Engine.iteration_costs``), read by
    the kernel; ``cost_model`` its reference twin (``Engine.iteration_cost_model``), read by the
    reference simulator; ``idle_power_w`` the power of one replica between iterations (W).

    ``stretches`` lets a replica whose running requests decode iteration after iteration run
    them as one event (see ``simulator_reference``); every output is the same with it off, to
    rounding, which the tests check.
    """

    policy: str = "vllm"
    replicas: int = 1
    router: str = "round-robin"
    max_num_seqs: int = 256
    max_batched_tokens: int = 2048
    block_size: int = 16
    kv_blocks_total: int = 8192
    long_prefill_threshold: int = 0
    max_model_len: int = 8192
    prefix_tokens: int = 0
    static_batch: int = 8
    cost: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cost_model: object | None = None
    idle_power_w: float = 100.0
    stretches: bool = True

    @property
    def has_attention_groups(self) -> bool:
        """Whether the model has attention groups (sparse, compressed, global layers;
        ``core.model.ModelArch.attention_groups``). Their decode steps cost no line in the
        context (min(context, top-k) bends at top-k, a compressed layer's entries step every
        ratio tokens, and an entry or indexer key weighs FLOPs and bytes unlike a position of the
        model's own layers, so one position count cannot carry both), which a stretch's closed
        form needs: such a replica runs its iterations one by one, stretches off."""
        cost = np.asarray(self.cost)
        return cost.shape[0] > GROUP_LAYERS_ROW and bool(cost[GROUP_LAYERS_ROW] != 0.0)

    def settings(self, users):
        """The int64 settings array both engines read (``layout.SET_*``)."""
        if self.policy not in layout.POLICY_NAMES:
            raise ValueError(f"unknown policy {self.policy!r}; one of {sorted(layout.POLICY_NAMES)}")
        if self.router not in layout.ROUTER_NAMES:
            raise ValueError(f"unknown router {self.router!r}; one of {sorted(layout.ROUTER_NAMES)}")
        if self.router == "assigned" and users:
            raise ValueError("the assigned router takes open-loop workloads (each request names its replica)")
        for name in ("replicas", "max_num_seqs", "max_batched_tokens", "block_size", "max_model_len", "static_batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        for name in ("kv_blocks_total", "long_prefill_threshold", "prefix_tokens"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        settings = np.zeros(layout.SETTINGS_SIZE, dtype=np.int64)
        settings[layout.SET_POLICY] = layout.POLICY_NAMES[self.policy]
        settings[layout.SET_ROUTER] = layout.ROUTER_NAMES[self.router]
        settings[layout.SET_REPLICAS] = self.replicas
        settings[layout.SET_USERS] = users
        settings[layout.SET_MAX_NUM_SEQS] = self.max_num_seqs
        settings[layout.SET_MAX_BATCHED_TOKENS] = self.max_batched_tokens
        settings[layout.SET_BLOCK_SIZE] = self.block_size
        settings[layout.SET_KV_BLOCKS_TOTAL] = self.kv_blocks_total
        settings[layout.SET_LONG_PREFILL_THRESHOLD] = self.long_prefill_threshold
        settings[layout.SET_MAX_MODEL_LEN] = self.max_model_len
        settings[layout.SET_PREFIX_TOKENS] = self.prefix_tokens
        settings[layout.SET_STATIC_BATCH] = self.static_batch
        settings[layout.SET_STRETCHES] = int(bool(self.stretches) and not self.has_attention_groups)
        # SET_MAX_RECORDS and SET_MEASURED_REQUESTS belong to the run: simulate sets them.
        return settings


@dataclass
class RunResult:
    """Outputs of one run. Column layouts are in ``layout``; the properties are named views.

    Record arrays are trimmed to the records written (an iteration or a stretch each), ``gap_s``
    to the irregular gaps written. A run simulated with ``record_iterations=False`` has no
    records (``iterations_recorded`` is False and the record arrays are empty); its per-request
    outputs, gaps, bins and counters are those of the recorded run. ``bins`` are the run's time
    bins (``layout.BIN_*``), ``bin_width_s`` wide from t = 0; ``replicas_represented`` the
    replicas of the deployment the simulated ``replicas`` stand for (more when a sample of
    round-robin replicas was simulated, see ``simulate_sampled``).
    """

    prompt_tokens: np.ndarray
    output_tokens: np.ndarray
    replicas: int
    idle_power_w: float
    request_float: np.ndarray
    request_int: np.ndarray
    iteration_float: np.ndarray
    iteration_int: np.ndarray
    gap_s: np.ndarray
    counters: np.ndarray
    bins: np.ndarray
    bin_width_s: float
    run_end_s: float  # the last event's time (the stop's when a bound stopped the run)
    iterations_recorded: bool = True
    replicas_represented: int = 0

    def __post_init__(self):
        if not self.replicas_represented:
            self.replicas_represented = self.replicas

    # Per request.
    @property
    def issue_s(self):
        return self.request_float[:, layout.REQ_ISSUE_S]

    @property
    def first_token_s(self):
        return self.request_float[:, layout.REQ_FIRST_TOKEN_S]

    @property
    def end_s(self):
        return self.request_float[:, layout.REQ_END_S]

    @property
    def replica(self):
        return self.request_int[:, layout.REQ_REPLICA]

    @property
    def status(self):
        return self.request_int[:, layout.REQ_STATUS]

    @property
    def preemptions(self):
        return self.request_int[:, layout.REQ_PREEMPTIONS]

    @property
    def tokens_emitted(self):
        return self.request_int[:, layout.REQ_TOKENS_EMITTED]

    # Per record.
    @property
    def iteration_start_s(self):
        return self.iteration_float[:, layout.IT_START_S]

    @property
    def iteration_duration_s(self):
        """Each record's whole duration (all of a stretch's iterations)."""
        return self.iteration_float[:, layout.IT_DURATION_S]

    @property
    def iteration_energy_j(self):
        return self.iteration_float[:, layout.IT_ENERGY_J]

    @property
    def iterations_per_record(self):
        return self.iteration_int[:, layout.IT_ITERATIONS]

    def iteration_column(self, column):
        """An int64 per-record column, e.g. ``layout.IT_SEQUENCES`` (each iteration's count)."""
        return self.iteration_int[:, column]

    def iteration_total(self, column):
        """A per-iteration count summed over every iteration: each record's times its iterations."""
        return int(np.sum(self.iteration_int[:, column] * self.iteration_int[:, layout.IT_ITERATIONS]))

    # Counters.
    @property
    def iterations(self):
        return int(self.counters[layout.CNT_ITERATIONS])

    @property
    def records(self):
        return int(self.counters[layout.CNT_RECORDS])

    @property
    def stretches(self):
        """Records that are stretches (a diagnostic of the work saved: no output depends on it)."""
        return int(self.counters[layout.CNT_STRETCHES])

    @property
    def capped(self):
        return bool(self.counters[layout.CNT_CAPPED])

    @property
    def measured_done(self):
        return bool(self.counters[layout.CNT_MEASURED_DONE])

    @property
    def rejected(self):
        return int(self.counters[layout.CNT_REJECTED])

    @property
    def total_preemptions(self):
        return int(self.counters[layout.CNT_PREEMPTIONS])

    @property
    def gaps_dropped(self):
        return int(self.counters[layout.CNT_GAPS_DROPPED])


def _validate(workload, prior_token_s, replicas, router):
    requests = workload.arrival_s.shape[0]
    for name in ("prompt_tokens", "output_tokens", "think_s"):
        if getattr(workload, name).shape != (requests,):
            raise ValueError(f"{name} must have the shape of arrival_s")
    if requests and (workload.prompt_tokens.min() < 1 or workload.output_tokens.min() < 1):
        raise ValueError("prompt and output lengths must be at least 1 token")
    if workload.users < 0:
        raise ValueError("users must not be negative")
    if workload.users == 0 and requests:
        if not np.all(np.isfinite(workload.arrival_s)) or workload.arrival_s[0] < 0.0:
            raise ValueError("arrival times must be finite and non-negative")
        if np.any(np.diff(workload.arrival_s) < 0.0):
            raise ValueError("arrival times must be non-decreasing")
    if workload.users > 0 and requests and (not np.all(np.isfinite(workload.think_s)) or workload.think_s.min() < 0.0):
        raise ValueError("think times must be finite and non-negative")
    if prior_token_s is not None and prior_token_s.shape != (requests,):
        raise ValueError("prior_token_s must have the shape of arrival_s")
    if router == "assigned":
        if workload.replica is None or workload.replica.shape != (requests,):
            raise ValueError("the assigned router needs each request's replica (Workload.replica)")
        if requests and (workload.replica.min() < 0 or workload.replica.max() >= replicas):
            raise ValueError(f"assigned replicas must lie in 0 .. {replicas - 1}")


def default_max_records(workload, server):
    """A record bound that covers any run without preemption: one record per iteration of a
    run stepped one iteration at a time (see the notes)."""
    chunk = server.max_batched_tokens
    if server.long_prefill_threshold > 0:
        chunk = min(chunk, server.long_prefill_threshold)
    chunks = int(np.sum(-(-workload.prompt_tokens // chunk)))
    bound = int(np.sum(workload.output_tokens)) + chunks + 64
    return min(bound, DEFAULT_MAX_RECORDS_CAP)


def default_bin_width_s(workload):
    """The bins' first width: a quarter of them span the arrivals (they widen as needed)."""
    last = float(workload.arrival_s[-1]) if workload.users == 0 and workload.requests else 0.0
    return max(last, 1e-3) / (layout.DEFAULT_BINS / 4)


def simulate(
    workload,
    server,
    *,
    max_records=None,
    max_time_s=math.inf,
    max_gaps=None,
    prior_token_s=None,
    engine="kernel",
    request_positions=None,
    iteration_cost=None,
    decode_positions=None,
    record_iterations=True,
    measured_requests=0,
    bin_width_s=None,
    bins=layout.DEFAULT_BINS,
):
    """Simulate ``workload`` on ``server``; returns a ``RunResult``.

    ``max_records`` bounds the records (iterations and stretches) and ``max_time_s`` simulated
    time (s); reaching either stops the run and sets ``capped``. ``record_iterations=False``
    keeps no records (see ``RunResult``): for callers that read only per-request outputs and
    bins (``slo_check``, ``steady_state``); with records not kept and no bound given, the run
    is bounded by ``NO_RECORDS_MAX_RECORDS`` only. ``measured_requests`` > 0 stops the run once
    the first that many requests have left (the requests after them only keep the load on).
    ``max_gaps`` sizes the buffer of irregular inter-token gaps (default 4 per request + 1024).
    ``prior_token_s`` (s, NaN = none) marks requests whose prompt KV arrives computed with the
    first token emitted then. ``bin_width_s`` is the time bins' first width (default:
    ``default_bin_width_s``), ``bins`` their number (even).
    ``engine`` is ``"kernel"`` or ``"reference"``. The kernel costs iterations with the
    engine's compiled iteration cost over ``server.cost``; the reference with
    ``server.cost_model`` (its twin), or with the ``request_positions(cost, ...)``,
    ``iteration_cost(cost, ...)`` and (for stretches) ``decode_positions(cost, context)``
    functions given here.
    """
    _validate(workload, prior_token_s, server.replicas, server.router)
    requests = workload.requests
    settings = server.settings(workload.users)
    if max_records is None:
        max_records = default_max_records(workload, server) if record_iterations else NO_RECORDS_MAX_RECORDS
    if max_records < 0:
        raise ValueError("max_records must not be negative")
    if not 0 <= measured_requests <= requests:
        raise ValueError("measured_requests must lie in 0 .. the requests")
    if bins < 2 or bins % 2:
        raise ValueError("bins must be an even number, at least 2")
    settings[layout.SET_MAX_RECORDS] = max_records
    settings[layout.SET_MEASURED_REQUESTS] = measured_requests
    time_settings = np.zeros(layout.TIME_SETTINGS_SIZE)
    time_settings[layout.TS_MAX_TIME_S] = max_time_s
    time_settings[layout.TS_BIN_WIDTH_S] = default_bin_width_s(workload) if bin_width_s is None else bin_width_s
    if not time_settings[layout.TS_BIN_WIDTH_S] > 0.0:
        raise ValueError("bin_width_s must be positive")
    # Without records the engines overwrite one row (layout: record i writes row i % rows).
    record_rows = max(max_records, 1) if record_iterations else 1
    if max_gaps is None:
        max_gaps = 4 * requests + 1024
    if prior_token_s is None:
        prior_token_s = np.full(requests, np.nan)
    arrival_s = np.ascontiguousarray(workload.arrival_s, dtype=np.float64)
    prompt_tokens = np.ascontiguousarray(workload.prompt_tokens, dtype=np.int64)
    output_tokens = np.ascontiguousarray(workload.output_tokens, dtype=np.int64)
    think_s = np.ascontiguousarray(workload.think_s, dtype=np.float64)
    prior_token_s = np.ascontiguousarray(prior_token_s, dtype=np.float64)
    assigned = (np.ascontiguousarray(workload.replica, dtype=np.int64) if workload.replica is not None
                else np.zeros(requests, dtype=np.int64))
    cost = np.ascontiguousarray(server.cost, dtype=np.float64)

    request_float = np.empty((requests, layout.REQUEST_FLOAT_SIZE))
    request_int = np.empty((requests, layout.REQUEST_INT_SIZE), dtype=np.int64)
    iteration_float = np.empty((record_rows, layout.ITERATION_FLOAT_SIZE))
    iteration_int = np.empty((record_rows, layout.ITERATION_INT_SIZE), dtype=np.int64)
    gap_s = np.empty(max_gaps)
    counters = np.zeros(layout.COUNTERS_SIZE, dtype=np.int64)
    time_bins = np.zeros((bins, layout.BIN_SIZE))
    run_float = np.zeros(layout.RUN_FLOAT_SIZE)
    arguments = (
        arrival_s, prompt_tokens, output_tokens, think_s, prior_token_s, assigned, settings, time_settings, cost,
        request_float, request_int, iteration_float, iteration_int, gap_s, counters, time_bins, run_float,
    )  # fmt: skip
    running_capacity = max(1, min(requests, max(server.max_num_seqs, server.static_batch)))
    if server.replicas * running_capacity > MAX_SIMULATED_SEQUENCES:
        raise ValueError(f"{server.replicas:,} replicas of up to {running_capacity:,} sequences each are more than the "
                         f"simulator holds at once ({MAX_SIMULATED_SEQUENCES:,})")
    if engine == "kernel":
        if request_positions is not None or iteration_cost is not None or decode_positions is not None:
            raise ValueError("the kernel takes its cost functions from its import")
        simulate_kernel(*arguments, running_capacity)
    elif engine == "reference":
        model = server.cost_model
        if request_positions is None or iteration_cost is None:
            if model is None:
                raise ValueError("the reference simulator needs the server's cost_model (or cost functions)")
        if request_positions is None:
            request_positions = lambda cost, context, tokens, is_decode: model.request_positions(  # noqa: E731
                context, tokens, is_decode
            )
        if iteration_cost is None:
            iteration_cost = lambda cost, *sums: model.iteration_cost(*sums)  # noqa: E731
        if decode_positions is None and model is not None:
            decode_positions = lambda cost, context: model.decode_positions(context)  # noqa: E731
        simulate_reference(
            *arguments, request_positions=request_positions, iteration_cost=iteration_cost,
            decode_positions=decode_positions,
        )
    else:
        raise ValueError(f"unknown engine {engine!r}")
    records = int(counters[layout.CNT_RECORDS]) if record_iterations else 0
    return RunResult(
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        replicas=server.replicas,
        idle_power_w=float(server.idle_power_w),
        request_float=request_float,
        request_int=request_int,
        iteration_float=iteration_float[:records],
        iteration_int=iteration_int[:records],
        gap_s=gap_s[: int(counters[layout.CNT_GAPS])],
        counters=counters,
        bins=time_bins,
        bin_width_s=float(run_float[layout.RUN_BIN_WIDTH_S]),
        run_end_s=float(run_float[layout.RUN_END_S]),
        iterations_recorded=bool(record_iterations),
    )


def simulator_compiled():
    """Whether this process has the compiled simulator (compiled, or loaded from the cache)."""
    return bool(getattr(simulate_kernel, "signatures", True))


def warm_up_simulator():
    """Compile the simulator (or load it from the on-disk cache): a run of three requests on a
    stand-in cost table, with stretches and every output. Idempotent; seconds the first time on a
    new machine, then a fraction of one."""
    from ...physics.iteration import ITERATION_COST_ROWS

    workload = Workload(np.array([0.0, 0.0, 0.1]), np.array([8, 8, 8]), np.array([4, 4, 4]), np.zeros(3))
    simulate(workload, Server(cost=np.ones(ITERATION_COST_ROWS), kv_blocks_total=64, max_num_seqs=2))


def simulate_many(runs, *, threads=None, summary=None, **options):
    """``simulate`` each ``(workload, server)`` of ``runs`` with the keyword ``options``; returns
    the results in the order of ``runs``, or what ``summary`` (e.g. ``summarize``) makes of each.

    The runs share a pool of ``threads`` threads (default ``os.cpu_count()``): the kernel
    releases the GIL, so independent runs (the rates of a sweep, the servers of a comparison)
    proceed side by side. With one thread they run in order in the calling thread.

    A run's iteration records take about 100 bytes per iteration (a 1,000-request run at low
    load has 50,000 iterations or more), in arrays sized for its longest possible run; a sweep
    that keeps every run holds them all. With ``summary`` each run is reduced on its thread as
    it ends and dropped, so its memory serves the next run; a summary that reads only
    per-request outputs (``slo_check``) needs no records at all (``record_iterations=False``).
    """
    runs = list(runs)
    if threads is None:
        threads = os.cpu_count() or 1
    if threads < 1:
        raise ValueError("threads must be at least 1")

    def run_one(run):
        result = simulate(*run, **options)
        return result if summary is None else summary(result)

    if threads == 1 or len(runs) < 2:
        return [run_one(run) for run in runs]
    with ThreadPoolExecutor(max_workers=min(threads, len(runs))) as pool:
        return list(pool.map(run_one, runs))
