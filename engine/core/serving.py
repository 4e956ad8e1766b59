"""How requests reach a served model, and how the serving engine schedules them: a plain value.

A :class:`Scenario` says what runs where (model, accelerator, precisions, layout: a replica is
its TP x PP group, ``dp`` replicas serve side by side) and the mean prompt and reply lengths
(``input_len``, ``output_len``). A :class:`ServingSpec` adds the traffic and the scheduler: how
requests arrive, how their lengths spread, which serving engine's rules schedule them and under
which limits, and the latency objectives a deployment is held to. The serving study
(``engine.studies.serving``) simulates the two together.

Limits left as ``None`` take the policy's own default (SERVING.md section 3): vLLM sizes its
KV cache as a fraction of *total* device memory less weights, activations and runtime, in
16-token blocks, with a token budget of 8,192 and 1,024 sequences on devices of 70 GiB or more
(other than the A100), else 2,048 and 256; TensorRT-LLM sizes it as a fraction of the memory
*free* after weights and activations, in 32-token blocks, with 8,192 tokens and up to 2,048
sequences per iteration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from .errors import ScenarioError

ARRIVALS: tuple[str, ...] = ("poisson", "gamma", "offline", "closed")
ARRIVAL_LABELS: dict[str, str] = {
    "poisson": "Poisson",
    "gamma": "bursty (Gamma)",
    "offline": "all at once (offline)",
    "closed": "closed loop of users",
}
LENGTH_DISTRIBUTIONS: tuple[str, ...] = ("fixed", "uniform", "exponential", "lognormal")
POLICIES: tuple[str, ...] = ("vllm", "trtllm-no-evict", "trtllm-max-util", "static")
POLICY_LABELS: dict[str, str] = {
    "vllm": "vLLM (continuous batching, preemption)",
    "trtllm-no-evict": "TensorRT-LLM guaranteed no evict",
    "trtllm-max-util": "TensorRT-LLM max utilisation",
    "static": "static batches (fixed-batch images)",
}
ROUTERS: tuple[str, ...] = ("round-robin", "least-outstanding")
LINKS: tuple[str, ...] = ("scale-out", "scale-up", "custom")

# Limits of what the simulator accepts at all (the app's controls use narrower ranges).
MAX_REQUESTS = 1_000_000
MAX_RATE_RPS = 1e9
# A run at a slower rate spans so many seconds that a float64 time (ulp 2^-52 of it) can no longer
# resolve an iteration (milliseconds): 2,000 requests at 1e-6/s span 2e9 s, an ulp of 2.4e-7 s.
MIN_RATE_RPS = 1e-6
# Replicas a run may simulate side by side, times the sequences each may run: the kernel's
# scheduling tables are that many entries (three int64 each).
MAX_SIMULATED_SEQUENCES = 1 << 24
MAX_USERS = 100_000
MAX_SEQUENCES = 1_000_000
MAX_TOKENS = 100_000_000
MAX_CV = 20.0
MAX_THINK_S = 86_400.0
MAX_SLO_MS = 86_400_000.0


@dataclass(frozen=True)
class PolicyDefaults:
    """A serving engine's defaults that decide the numbers (SERVING.md section 3)."""

    block_size: int  # tokens per KV block
    memory_fraction: float  # of total device memory (vLLM) or of free memory (TensorRT-LLM)
    memory_of_total: bool  # True: the fraction is of total memory, less weights and workspace
    large_budget: int  # token budget per iteration on large-memory devices
    small_budget: int
    large_sequences: int  # most sequences per iteration on large-memory devices
    small_sequences: int


# vLLM: gpu_memory_utilization 0.9 (vLLM 0.9, the papers' version; newer releases 0.92);
# max_num_batched_tokens 8192 and max_num_seqs 1024 on >= 70 GiB GPUs (not A100) for the API
# server, else 2048 and 256. TensorRT-LLM: free_gpu_memory_fraction 0.9, tokens_per_block 32,
# max_num_tokens 8192, max_batch_size 2048 (trtllm-serve's default).
POLICY_DEFAULTS: dict[str, PolicyDefaults] = {
    "vllm": PolicyDefaults(16, 0.9, True, 8192, 2048, 1024, 256),
    "trtllm-no-evict": PolicyDefaults(32, 0.9, False, 8192, 8192, 2048, 2048),
    "trtllm-max-util": PolicyDefaults(32, 0.9, False, 8192, 8192, 2048, 2048),
    # Fixed-batch images allocate their whole batch's cache when compiled: no blocks, no budget.
    "static": PolicyDefaults(16, 0.9, True, 1 << 30, 1 << 30, 1 << 20, 1 << 20),
}
LARGE_MEMORY_BYTES = 70 * 2**30  # vLLM's threshold for the larger defaults


@dataclass(frozen=True)
class ServingSpec:
    """Traffic, scheduler and objectives of a served run (units in the names)."""

    arrival: str = "poisson"
    rate_rps: float = 2.0  # poisson and gamma; requests per second over the whole deployment
    burstiness_cv: float = 2.0  # gamma: coefficient of variation of the gaps (1 = Poisson)
    concurrency: int = 8  # closed loop: users, each sending its next request when the last one ends
    think_s: float = 0.0  # closed loop: mean (exponential) pause before a user's next request
    requests: int | None = None  # a run of exactly this many requests; None: as many as a steady state needs
    input_distribution: str = "lognormal"  # about the scenario's input_len
    output_distribution: str = "lognormal"  # about the scenario's output_len
    length_cv: float = 0.5  # uniform and lognormal: standard deviation / mean
    seed: int = 0
    policy: str = "vllm"
    max_num_seqs: int | None = None  # None: the policy's default for the device
    max_batched_tokens: int | None = None
    memory_fraction: float | None = None
    block_size: int | None = None
    prefix_tokens: int = 0  # a system prompt every request shares (prefix caching); 0 = none
    router: str = "round-robin"  # between the scenario's dp replicas
    slo_ttft_ms: float | None = 2000.0  # p99 time to first token; None = no limit
    slo_tpot_ms: float | None = 200.0  # p99 time per output token; None = no limit
    prefill_replicas: int = 0  # disaggregated serving: prefill replicas (0 = aggregated)
    decode_replicas: int = 0  # and decode replicas; both the scenario's TP x PP group
    link: str = "scale-out"  # what carries the KV cache from prefill to decode
    link_bandwidth_GBps: float = 50.0  # custom link, per direction
    link_latency_us: float = 10.0  # custom link

    @property
    def disaggregated(self) -> bool:
        return self.prefill_replicas > 0 and self.decode_replicas > 0

    @property
    def open_loop(self) -> bool:
        return self.arrival != "closed"

    def with_changes(self, **changes: object) -> ServingSpec:
        return replace(self, **changes)

    def validate(self) -> ServingSpec:
        """Refuse values no simulation can take, naming the field."""
        _choice("arrival", self.arrival, ARRIVALS)
        _choice("input_distribution", self.input_distribution, LENGTH_DISTRIBUTIONS)
        _choice("output_distribution", self.output_distribution, LENGTH_DISTRIBUTIONS)
        _choice("policy", self.policy, POLICIES)
        _choice("router", self.router, ROUTERS)
        _choice("link", self.link, LINKS)
        if isinstance(self.rate_rps, float) and 0.0 < self.rate_rps < MIN_RATE_RPS:
            raise ScenarioError(f"rate_rps must be at least {MIN_RATE_RPS:g} requests/s (one every "
                                f"{1 / MIN_RATE_RPS / 86400:.3g} days): a slower run spans so long that its times lose "
                                f"the precision of an iteration, got {self.rate_rps:g}")
        _number("rate_rps", self.rate_rps, MIN_RATE_RPS, MAX_RATE_RPS)
        _number("burstiness_cv", self.burstiness_cv, 0.0, MAX_CV)
        _number("think_s", self.think_s, 0.0, MAX_THINK_S)
        _number("length_cv", self.length_cv, 0.0, MAX_CV)
        for name in ("input_distribution", "output_distribution"):
            if getattr(self, name) == "uniform" and self.length_cv > 1 / math.sqrt(3):
                raise ScenarioError(f"uniform lengths need length_cv at most 0.577 (1/sqrt 3), got {self.length_cv:g}")
        _whole("concurrency", self.concurrency, 1, MAX_USERS)
        if self.requests is not None:
            _whole("requests", self.requests, 1, MAX_REQUESTS)
        _whole("seed", self.seed, 0, 2**63 - 1)
        _whole("prefix_tokens", self.prefix_tokens, 0, MAX_TOKENS)
        _whole("prefill_replicas", self.prefill_replicas, 0, MAX_SEQUENCES)
        _whole("decode_replicas", self.decode_replicas, 0, MAX_SEQUENCES)
        if (self.prefill_replicas > 0) != (self.decode_replicas > 0):
            raise ScenarioError("disaggregated serving needs both prefill and decode replicas (or neither)")
        if self.disaggregated and not self.open_loop:
            raise ScenarioError("disaggregated serving is simulated for open-loop arrivals only (not a closed loop)")
        if self.max_num_seqs is not None:
            _whole("max_num_seqs", self.max_num_seqs, 1, MAX_SEQUENCES)
        if self.max_batched_tokens is not None:
            _whole("max_batched_tokens", self.max_batched_tokens, 1, MAX_TOKENS)
        if self.block_size is not None:
            _whole("block_size", self.block_size, 1, 4096)
        if self.memory_fraction is not None:
            _number("memory_fraction", self.memory_fraction, 0.0, 1.0, low_open=True)
        for name in ("slo_ttft_ms", "slo_tpot_ms"):
            value = getattr(self, name)
            if value is not None:
                _number(name, value, 0.0, MAX_SLO_MS, low_open=True)
        _number("link_bandwidth_GBps", self.link_bandwidth_GBps, 0.0, 1e9, low_open=True)
        _number("link_latency_us", self.link_latency_us, 0.0, 1e9)
        return self


SERVING_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(ServingSpec))


def check_simulated_size(replicas: int, spec: ServingSpec) -> None:
    """Refuse a deployment too large to simulate replica by replica: ``replicas`` replicas of the
    sequences each may run (the spec's limit, else the policy's largest default) beyond
    MAX_SIMULATED_SEQUENCES. Round-robin replicas in a run sized by time are sampled instead, so
    only a least-outstanding router or a request count simulates them all."""
    if spec.router == "round-robin" and spec.requests is None:
        return
    defaults = POLICY_DEFAULTS[spec.policy]
    sequences = spec.max_num_seqs or max(defaults.large_sequences, defaults.small_sequences)
    if spec.policy == "static":
        sequences = 1
    if replicas * sequences > MAX_SIMULATED_SEQUENCES:
        raise ScenarioError(
            f"{replicas:,} replicas of up to {sequences:,} sequences each are more than the simulator holds at once "
            f"({MAX_SIMULATED_SEQUENCES:,}); with round-robin routing and no request count, replicas are sampled")


def _choice(name: str, value: object, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ScenarioError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")


def _whole(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ScenarioError(f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ScenarioError(f"{name} must be between {low:,} and {high:,}, got {value:,}")


def _number(name: str, value: object, low: float, high: float, *, low_open: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ScenarioError(f"{name} must be a number, got {value!r}")
    # The range first: math.isfinite overflows on an integer beyond the float range.
    below = value <= low if low_open else value < low
    if below or value > high or not math.isfinite(value):
        bound = f"above {low:g}" if low_open else f"at least {low:g}"
        raise ScenarioError(f"{name} must be {bound} and at most {high:g}, got {value!r}")
