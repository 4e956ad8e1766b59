"""A deployment as a serving engine sets it up on the scenario's hardware: the policy's limits,
the KV cache and the iteration cost of one replica (see ``study.py``), and the link between a
disaggregated pair's pools."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...core import codes
from ...core.errors import ScenarioError
from ...core.scenario import Scenario
from ...core.serving import LARGE_MEMORY_BYTES, POLICY_DEFAULTS, ServingSpec
from ...physics.engine import Engine
from ...physics.results import Result
from .capacity import Slo
from .disaggregated import KvLink
from .physics_bridge import ReplicaPhysics, replica_physics
from .run import Server

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
    workspace = memory.workspace_bytes
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
        far_room = memory.far_room_bytes
        far_tokens = far_room / (per_token * (1.0 - kv_near_share)) if kv_near_share < 1.0 else math.inf
        blocks = int(min(near_tokens, far_tokens, MAX_KV_TOKENS) // block_size)
    elif per_token == 0.0 and kv_cache > 0.0:
        blocks = int(MAX_KV_TOKENS // block_size)  # no attention KV at all: memory never limits the batch
    if blocks == 0:
        model, accelerator = engine.model(scenario.model).name, engine.catalog.accelerator(scenario.accelerator).name
        share = "total memory" if defaults.memory_of_total else "the memory the weights leave free"
        raise ScenarioError(f"cannot serve {model} on {accelerator}: no memory is left for a KV cache, so no request "
                            f"can run: {fraction:.0%} of {share} goes to the weights, activations and runtime; raise "
                            "the memory fraction or spread the model over more devices")
    requested_static_batch = static_batch
    if spec.policy == "static":
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


def server_of(setup: ServerSetup, physics: ReplicaPhysics, router: str) -> Server:
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


def static_best_rate(engine: Engine, scenario: Scenario, setup: ServerSetup) -> float:
    """Requests/s one deployment would finish as a static batch at its largest batch: a scale
    for the rates worth trying (the served capacity is below it)."""
    batch = max(1, min(setup.max_num_seqs, max(setup.kv_tokens // max(scenario.input_len + scenario.output_len, 1), 1)))
    result: Result = engine.predict(scenario.with_changes(batch=batch))
    return result.throughput_output_tok_s / scenario.output_len / scenario.dp * setup.replicas


def seconds_of(milliseconds: float | None) -> float | None:
    return None if milliseconds is None else milliseconds / 1e3


def slo_of(spec: ServingSpec) -> Slo:
    return Slo(seconds_of(spec.slo_ttft_ms), seconds_of(spec.slo_tpot_ms))
