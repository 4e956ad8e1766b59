"""A scenario served under traffic: the bridge from the engine's scenario to the simulator.

The simulator (``run.simulate``) knows requests, KV blocks and an opaque iteration cost. This
module sets it up the way a serving engine sets itself up on the scenario's hardware:

- **a replica** is the scenario's TP x PP group; ``dp`` replicas serve side by side (or, in
  disaggregated serving, the spec's prefill and decode replicas);
- **the KV cache** is sized from the engine's own memory fit, as each policy sizes it: vLLM
  takes ``memory_fraction`` of the device's *total* memory and subtracts the weights, the
  activation peak of a full iteration and the runtime; TensorRT-LLM takes the fraction of the
  memory *free* after those. The bytes per token are the engine's (TP- and MLA-aware), the
  block size the policy's;
- **an iteration's time and energy** are the engine's physics for the batch scheduled
  (``physics`` iteration cost), the same stage pass, overheads and power model as ``predict``;
- **the workload** is drawn from the spec about the scenario's mean prompt and reply lengths,
  capped by the model's context.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...core import codes
from ...core.errors import ScenarioError
from ...core.scenario import Scenario
from ...core.serving import LARGE_MEMORY_BYTES, POLICY_DEFAULTS, ServingSpec
from ...physics.engine import Engine
from ...physics.results import Result
from .capacity import CapacityResult, Slo, capacity
from .disaggregated import DisaggregatedResult, KvLink, simulate_disaggregated
from .metrics import Metrics, summarize
from .physics_bridge import ReplicaPhysics, replica_physics
from .run import RunResult, Server, simulate, simulate_many
from .workload import Lengths, Workload, draw_closed_loop_workload, draw_workload

# Capacity search: rates between these multiples of a replica's static best (requests/s).
CAPACITY_LOW_SHARE = 1e-3
CAPACITY_HIGH_SHARE = 4.0
CAPACITY_STEPS = 12
MAX_KV_TOKENS = 2.0**50  # a KV cache reported as larger than this holds this many tokens


@dataclass(frozen=True)
class ServerSetup:
    """What a served run assumed: the policy's limits (defaults filled in) and the KV cache."""

    policy: str
    replicas: int
    devices_per_replica: int
    max_num_seqs: int
    max_batched_tokens: int
    block_size: int
    memory_fraction: float
    memory_of_total: bool  # the fraction is of total memory (vLLM), else of free memory
    kv_cache_bytes: float  # per device, for the KV cache
    kv_bytes_per_token: float  # per device
    kv_blocks_total: int  # per replica
    static_batch: int
    requested_static_batch: int  # the scenario's batch: more than static_batch when the KV cache holds fewer
    prefix_tokens: int
    max_model_len: int
    idle_power_W: float  # one replica, all its devices
    defaults: tuple[str, ...]  # the limits that took the policy's default

    @property
    def kv_tokens(self) -> int:
        """Tokens the KV cache of one replica holds."""
        return self.kv_blocks_total * self.block_size


@dataclass(frozen=True)
class ServedRun:
    scenario: Scenario
    spec: ServingSpec
    setup: ServerSetup
    rate_rps: float  # offered (math.inf offline, nan closed loop or trace)
    run: RunResult
    metrics: Metrics
    devices: int
    # Disaggregated runs: ``setup`` is the decode pool's, these the prefill pool's and the link.
    prefill_setup: ServerSetup | None = None
    link: KvLink | None = None

    @property
    def disaggregated(self) -> bool:
        return self.prefill_setup is not None


def server_setup(engine: Engine, scenario: Scenario, spec: ServingSpec, replicas: int | None = None) -> ServerSetup:
    """The policy's limits and the KV cache of one replica of ``scenario`` (resolved)."""
    physics = replica_physics(engine, scenario)
    defaults = POLICY_DEFAULTS[spec.policy]
    used_defaults = []

    def choose(name: str, value: object, default: object) -> object:
        if value is None:
            used_defaults.append(name)
            return default
        return value

    # The profile run: the activation peak of the largest iteration the limits allow (as vLLM
    # profiles it before sizing the KV cache), with the device's memory figures.
    capacity_bytes = engine.predict(scenario.with_changes(batch=1, output_len=1)).memory.capacity_bytes
    large = capacity_bytes >= LARGE_MEMORY_BYTES and not scenario.accelerator.startswith("a100")
    max_num_seqs = choose("max_num_seqs", spec.max_num_seqs,
                          defaults.large_sequences if large else defaults.small_sequences)
    max_batched_tokens = choose("max_batched_tokens", spec.max_batched_tokens,
                                defaults.large_budget if large else defaults.small_budget)
    block_size = choose("block_size", spec.block_size, defaults.block_size)
    fraction = choose("memory_fraction", spec.memory_fraction, defaults.memory_fraction)
    static_batch = scenario.batch
    if spec.policy == "static":
        # A fixed-batch image holds its whole batch's cache; it must fit like the static scenario.
        max_num_seqs = static_batch
    profile_tokens = max(1, min(max_batched_tokens, scenario.input_len * max_num_seqs) // max_num_seqs)
    profile = engine.predict(scenario.with_changes(batch=max_num_seqs, input_len=profile_tokens, output_len=1))
    memory = profile.memory
    if not profile.fits and profile.fit_code != codes.FIT_KV_DOES_NOT_FIT_ONE_SEQUENCE:
        model, accelerator = engine.model(scenario.model).name, engine.catalog.accelerator(scenario.accelerator).name
        raise ScenarioError(f"cannot serve {model} on {accelerator}: {profile.fit_reason}")
    weights_near = memory.weights_bytes - memory.weights_far_bytes
    workspace = weights_near + memory.activation_bytes + memory.overhead_bytes
    if defaults.memory_of_total:
        kv_cache = fraction * capacity_bytes - workspace
    else:
        kv_cache = fraction * (capacity_bytes - workspace)
    kv_near_share = 1.0 - (scenario.kv_offload if memory.far_usable_bytes > 0 else 0.0)
    per_token = physics.kv_bytes_per_token
    state = physics.state_bytes_per_sequence
    if state > 0.0 and kv_cache > 0.0:
        # Linear-attention and state-space layers keep a fixed-size state per running sequence,
        # drawn from the same memory as the KV cache (vLLM's hybrid allocator gives each running
        # request its state from the KV pool). The pool is split for the sequences it holds at the
        # workload's mean context, each with its state beside its KV cache; no more run at once.
        mean_context = max(scenario.input_len + scenario.output_len // 2, 1)
        holds = math.floor(kv_cache / (state + per_token * kv_near_share * mean_context))
        max_num_seqs = max(1, min(int(max_num_seqs), holds))
        kv_cache -= max_num_seqs * state
    blocks = 0
    if kv_cache > 0.0 and per_token > 0.0:
        near_tokens = kv_cache / (per_token * kv_near_share) if kv_near_share > 0.0 else math.inf
        far_room = memory.far_usable_bytes - memory.weights_far_bytes
        far_tokens = far_room / (per_token * (1.0 - kv_near_share)) if kv_near_share < 1.0 else math.inf
        blocks = int(min(near_tokens, far_tokens, MAX_KV_TOKENS) // block_size)
    elif per_token == 0.0 and kv_cache > 0.0:
        blocks = int(MAX_KV_TOKENS // block_size)  # no attention KV at all: memory never limits the batch
    requested_static_batch = static_batch
    if spec.policy == "static" and blocks > 0:
        # A fixed-batch image holds every sequence of its batch to the end: only as many
        # sequences of the mean length as the KV cache holds make one image.
        fitting = blocks * block_size // max(scenario.input_len + scenario.output_len, 1)
        static_batch = max_num_seqs = max(1, min(static_batch, fitting))
    model = engine.model(scenario.model)
    return ServerSetup(
        policy=spec.policy,
        replicas=replicas if replicas is not None else scenario.dp,
        devices_per_replica=scenario.tp * scenario.pp,
        max_num_seqs=int(max_num_seqs),
        max_batched_tokens=int(max_batched_tokens),
        block_size=int(block_size),
        memory_fraction=float(fraction),
        memory_of_total=defaults.memory_of_total,
        kv_cache_bytes=max(kv_cache, 0.0),
        kv_bytes_per_token=per_token,
        kv_blocks_total=blocks,
        static_batch=static_batch,
        requested_static_batch=requested_static_batch,
        prefix_tokens=spec.prefix_tokens,
        max_model_len=model.max_context,
        idle_power_W=physics.idle_power_W,
        defaults=tuple(used_defaults),
    )


def deployment_physics(engine: Engine, scenario: Scenario, setup: ServerSetup) -> ReplicaPhysics:
    """The replica's iteration cost at the batch its KV cache holds (up to the sequence limit):
    where a device has two near tiers, that batch sets which of the weights and cache are read
    from which."""
    mean_context = max(scenario.input_len + scenario.output_len // 2, 1)
    batch = max(1, min(setup.max_num_seqs, setup.kv_tokens // mean_context))
    return replica_physics(engine, scenario.with_changes(batch=batch))


def _server(setup: ServerSetup, physics: ReplicaPhysics, router: str) -> Server:
    return Server(
        cost_model=physics.cost_model,
        policy=setup.policy,
        replicas=setup.replicas,
        router=router,
        max_num_seqs=setup.max_num_seqs,
        max_batched_tokens=setup.max_batched_tokens,
        block_size=setup.block_size,
        kv_blocks_total=setup.kv_blocks_total,
        max_model_len=setup.max_model_len,
        prefix_tokens=setup.prefix_tokens,
        static_batch=setup.static_batch,
        cost=physics.cost,
        idle_power_w=setup.idle_power_W,
    )


def draw_requests(scenario: Scenario, spec: ServingSpec, max_context: int, rate_rps: float | None = None) -> Workload:
    """The spec's requests about the scenario's mean lengths (``rate_rps`` overrides the spec's)."""
    prompt = Lengths(spec.input_distribution, float(scenario.input_len), spec.length_cv)
    output = Lengths(spec.output_distribution, float(scenario.output_len), spec.length_cv)
    if spec.arrival == "closed":
        return draw_closed_loop_workload(spec.seed, spec.requests, spec.concurrency, spec.think_s, prompt, output,
                                         max_context)
    rate = math.inf if spec.arrival == "offline" else (rate_rps if rate_rps is not None else spec.rate_rps)
    cv = spec.burstiness_cv if spec.arrival == "gamma" else 1.0
    return draw_workload(spec.seed, spec.requests, rate, prompt, output, max_context, cv)


def requests_at_rates(scenario: Scenario, spec: ServingSpec, max_context: int) -> Callable[[float], Workload]:
    """``draw_requests`` at any rate of an open-loop ``spec``, drawn once: a workload's lengths
    and arrival pattern do not depend on the rate, only its times do (divided by it), so a
    sweep or a bisection need not draw the same requests again for every rate it tries."""
    if spec.arrival in ("offline", "closed"):
        raise ValueError("requests_at_rates needs an open-loop spec (Poisson or Gamma arrivals)")
    unit = draw_requests(scenario, spec, max_context, 1.0)

    def at(rate_rps: float) -> Workload:
        if not rate_rps > 0.0 or math.isinf(rate_rps):
            return draw_requests(scenario, spec, max_context, rate_rps)  # refuses or answers as drawn
        return Workload(unit.arrival_s / rate_rps, unit.prompt_tokens, unit.output_tokens, unit.think_s)

    return at


def offered_rate(spec: ServingSpec, rate_rps: float | None = None) -> float:
    if spec.arrival == "closed":
        return math.nan
    if spec.arrival == "offline":
        return math.inf
    return rate_rps if rate_rps is not None else spec.rate_rps


def simulate_served(
    engine: Engine,
    scenario: Scenario,
    spec: ServingSpec,
    *,
    rate_rps: float | None = None,
    trace: Workload | None = None,
    reference: bool = False,
) -> ServedRun:
    """One served run of ``scenario`` (resolved) under ``spec`` (validated); ``trace`` replaces
    the drawn requests, ``reference`` runs the pure-Python twin (slow; for checking)."""
    setup = server_setup(engine, scenario, spec)
    physics = deployment_physics(engine, scenario, setup)
    workload = trace if trace is not None else draw_requests(scenario, spec, setup.max_model_len, rate_rps)
    run = simulate(workload, _server(setup, physics, spec.router), engine="reference" if reference else "kernel")
    metrics = summarize(run, _seconds(spec.slo_ttft_ms), _seconds(spec.slo_tpot_ms))
    rate = math.nan if trace is not None else offered_rate(spec, rate_rps)
    return ServedRun(scenario, spec, setup, rate, run, metrics, setup.replicas * setup.devices_per_replica)


def sweep_rates(
    engine: Engine, scenario: Scenario, spec: ServingSpec, rates_rps, *, threads: int | None = None,
) -> list[tuple[float, Metrics]]:
    """(rate, metrics) of one served run of ``scenario`` (resolved) at each of ``rates_rps``
    (requests/s, whole deployment; Poisson or the spec's Gamma arrivals), in order. The server
    is set up once; the runs share ``threads`` threads (``simulate_many``), each summarized on
    its thread and then dropped."""
    if spec.arrival in ("offline", "closed"):
        spec = spec.with_changes(arrival="poisson")
    setup = server_setup(engine, scenario, spec)
    server = _server(setup, deployment_physics(engine, scenario, setup), spec.router)
    rates = [float(rate) for rate in rates_rps]
    at_rate = requests_at_rates(scenario, spec, setup.max_model_len)
    workloads = [at_rate(rate) for rate in rates]
    ttft_limit, tpot_limit = _seconds(spec.slo_ttft_ms), _seconds(spec.slo_tpot_ms)
    metrics = simulate_many(
        [(workload, server) for workload in workloads], threads=threads,
        summary=lambda run: summarize(run, ttft_limit, tpot_limit),
    )
    return list(zip(rates, metrics, strict=True))


def _seconds(milliseconds: float | None) -> float | None:
    return None if milliseconds is None else milliseconds / 1e3


def slo_of(spec: ServingSpec) -> Slo:
    return Slo(_seconds(spec.slo_ttft_ms), _seconds(spec.slo_tpot_ms))


def static_best_rate(engine: Engine, scenario: Scenario, setup: ServerSetup) -> float:
    """Requests/s one deployment would finish as a static batch at its largest batch: a scale
    for the rates worth trying (the served capacity is below it)."""
    batch = max(1, min(setup.max_num_seqs, max(setup.kv_tokens // max(scenario.input_len + scenario.output_len, 1), 1)))
    result: Result = engine.predict(scenario.with_changes(batch=batch))
    return result.throughput_output_tok_s / scenario.output_len / scenario.dp * setup.replicas


def capacity_at_slo(engine: Engine, scenario: Scenario, spec: ServingSpec) -> CapacityResult:
    """The largest request rate (requests/s, whole deployment) whose run meets the spec's SLO
    and stays stable; 0 when even a trickle does not."""
    if spec.arrival in ("offline", "closed"):
        spec = spec.with_changes(arrival="poisson")
    setup = server_setup(engine, scenario, spec)
    server = _server(setup, deployment_physics(engine, scenario, setup), spec.router)
    scale = static_best_rate(engine, scenario, setup)
    at_rate = requests_at_rates(scenario, spec, setup.max_model_len)

    def run_at(rate: float, record_iterations: bool = True) -> RunResult:
        return simulate(at_rate(rate), server, record_iterations=record_iterations)

    # The search reads per-request outputs only; the run at the answer is simulated again with its records.
    return capacity(lambda rate: run_at(rate, record_iterations=False), slo_of(spec), CAPACITY_LOW_SHARE * scale,
                    CAPACITY_HIGH_SHARE * scale, CAPACITY_STEPS, recorded_run_at_rate=run_at)


def devices_for_rate(capacity_rps: float, target_rps: float, devices: int) -> int | None:
    """Devices a target rate needs, in whole deployments of ``devices``; None when none can."""
    if capacity_rps <= 0.0:
        return None
    return math.ceil(target_rps / capacity_rps) * devices


def simulate_disaggregated_served(
    engine: Engine, scenario: Scenario, spec: ServingSpec, *, rate_rps: float | None = None,
    prefill_scenario: Scenario | None = None,
) -> tuple[DisaggregatedResult, Metrics, ServerSetup, ServerSetup, KvLink]:
    """Prefill and decode pools of the spec's replica counts, each the scenario's TP x PP group
    (the prefill pool may run on another scenario: accelerator, layout), the KV cache carried
    over the spec's link."""
    prefill_scenario = prefill_scenario or scenario
    prefill_setup = server_setup(engine, prefill_scenario, spec, spec.prefill_replicas)
    decode_setup = server_setup(engine, scenario, spec, spec.decode_replicas)
    prefill_physics = deployment_physics(engine, prefill_scenario, prefill_setup)
    decode_physics = deployment_physics(engine, scenario, decode_setup)
    link = kv_link(engine, scenario, spec, decode_physics)
    workload = draw_requests(scenario, spec, decode_setup.max_model_len, rate_rps)
    result = simulate_disaggregated(workload, _server(prefill_setup, prefill_physics, spec.router),
                                    _server(decode_setup, decode_physics, spec.router), link)
    metrics = summarize(result.combined, _seconds(spec.slo_ttft_ms), _seconds(spec.slo_tpot_ms))
    return result, metrics, prefill_setup, decode_setup, link


def simulated_disaggregated_run(engine: Engine, scenario: Scenario, spec: ServingSpec) -> ServedRun:
    """A disaggregated run as one served run: both pools' iterations, each request's prefill
    issue and first token and its decode end (the decode pool's setup as ``setup``)."""
    result, metrics, prefill_setup, decode_setup, link = simulate_disaggregated_served(engine, scenario, spec)
    devices = (prefill_setup.replicas + decode_setup.replicas) * decode_setup.devices_per_replica
    return ServedRun(scenario, spec, decode_setup, offered_rate(spec), result.combined, metrics, devices,
                     prefill_setup, link)


def kv_link(engine: Engine, scenario: Scenario, spec: ServingSpec, physics: ReplicaPhysics) -> KvLink:
    """The link that carries a prompt's KV cache from a prefill replica to a decode replica: the
    accelerator's scale-up interconnect or scale-out network (per device, every device of the
    replica sending its share at once), or the spec's own figures."""
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    devices = scenario.tp * scenario.pp
    if spec.link == "custom":
        bandwidth, latency = spec.link_bandwidth_GBps * 1e9, spec.link_latency_us * 1e-6
    else:
        network = accelerator.interconnect if spec.link == "scale-up" or accelerator.scale_out is None else accelerator.scale_out
        bandwidth = float(network.bandwidth_per_direction_Bps)
        latency = float(network.latency_s)
    # Each device of the replica sends its own share of the KV cache over its own link.
    return KvLink(latency_s=latency, bandwidth_bytes_per_s=bandwidth * devices,
                  kv_bytes_per_token=physics.kv_bytes_per_token * devices)


def rate_grid(low: float, high: float, points: int = 16) -> np.ndarray:
    """``points`` rates spaced evenly on a log scale from ``low`` to ``high`` (requests/s)."""
    return np.geomspace(low, high, points)
