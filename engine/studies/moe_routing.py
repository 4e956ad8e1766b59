"""Monte Carlo of token-to-expert routing in one MoE layer per decode step, and the step time
it implies.

What is simulated. In one MoE layer, each of ``tokens`` tokens picks ``experts_per_token``
distinct experts of ``n_experts``. Experts sit on ``ep`` devices in contiguous blocks of
ceil(E/ep) (as the engine places them). For each simulated layer pass the kernel records the
distinct experts touched, the busiest device's routed assignments (tokens) and the busiest
device's distinct experts. The load imbalance is the busiest device's assignments over the
mean, B·k/ep.

Routing modes:

- ``uniform``: every expert equally likely; the distinct-expert count then has the exact mean
  E·(1 − (1 − k/E)^B) (reference.expert_touch_probability), which the tests check the simulation against.
- ``skewed``: Zipf-like popularity, the r-th most popular expert has weight 1/r^s (s = 0 is
  uniform). A token's k experts are drawn one after another with probability proportional to
  weight among those it has not yet picked. Which experts are popular differs between layers:
  the simulation draws ``placements`` random assignments of the popularity ranks to experts,
  each kept fixed for the layers that use it (a layer's router prefers the same experts step
  after step), and layer l of a step uses placement l mod ``placements``.
- ``balanced``: round-robin, assignment j of a step goes to expert j mod E; with B·k a
  multiple of E and E a multiple of ep every device gets exactly B·k/ep (imbalance 1).

Step time. A decode step passes through ``moe_layers`` MoE layers whose routing is taken as
independent (an assumption: real routers correlate a token's choices across layers). A
step's time is ``non_expert_time_s + expert_time_s · mean over its layers of (load /
mean load)``, where the load is the busiest device's distinct experts when the step is
memory-bound (its expert weights are read) and its assignments when compute-bound. The
engine's expected step time is therefore kept as the mean; the simulation supplies the shape
of the distribution around it. Layer passes are simulated once into a pool and steps are
composed by drawing one pass per layer from the pool of that layer's placement, which keeps
the cost independent of the number of layers.

Cost. Live views ask for the same spreads again and again, so what depends only on the
routing is computed once: simulations are kept per setup; a simulation over ``ep`` devices
also answers the same setup on one device (its draws do not depend on ``ep``, and on one
device the busiest device is the whole layer); the composed step factors (step time over
its mean load, which do not depend on the times) are kept on the simulation, so a spread
for new times is an affine map of stored quantiles. Every composition of ``steps`` steps of
``moe_layers`` layers reads the same table of uniform draws (common random numbers): each
distribution is sampled as before, and spreads compared across layouts (EP against TP) do
not differ by independent sampling noise.

Everything is seeded: the same inputs give the same numbers.
"""

from __future__ import annotations

import functools
import math
from collections import OrderedDict
from dataclasses import dataclass, field, replace

import numpy as np

from ..physics.jit import jit
from ..physics.reference import expert_touch_probability, experts_touched_busiest_device, token_imbalance

ROUTING_MODES: tuple[str, ...] = ("uniform", "skewed", "balanced")
_MODE_CODE = {"uniform": 0, "skewed": 1, "balanced": 2}
LOAD_KINDS: tuple[str, ...] = ("experts", "tokens")

# Defaults sized for live use: about 100,000 expert picks per simulation (a few ms), and at
# least 200 layer passes per pool, which steps of tens of layers resample.
DEFAULT_PICK_BUDGET = 100_000
MIN_LAYER_SAMPLES = 200
MAX_LAYER_SAMPLES = 20_000
DEFAULT_STEPS = 2000
DEFAULT_PLACEMENTS = 8
RESULT_CACHE_SIZE = 16  # simulations kept: ~1 MB each with their composed steps; a live view revisits few
# Tables of uniform draws for composing steps are kept up to this many draws (4 MB; the
# default 2,000 steps of 61 layers take 1 MB), a few of them; longer requests draw as they go.
MAX_SHARED_DRAWS = 1 << 19
DRAW_CACHE_SIZE = 4
# Skewed picks redraw an expert the token already has (rejection) while less than this share
# of the weight is taken, and scan the rest heaviest first after that. Both draw from the
# weights of the experts not yet picked, so the switch changes the cost, not the result.
SCAN_AFTER_PICKED_SHARE = 0.5

# Limits of what the simulation accepts (beyond them a call would stall the app).
MAX_TOKENS = 1 << 20
MAX_EXPERTS = 1 << 16


# ---- kernels -----------------------------------------------------------------------------


@jit
def _alias_table(weights, probability, alias):
    """Walker's alias table for drawing index i with probability weights[i] / sum in O(1)."""
    n = weights.shape[0]
    scaled = weights * (n / weights.sum())
    small = np.empty(n, dtype=np.int64)
    large = np.empty(n, dtype=np.int64)
    n_small = 0
    n_large = 0
    for i in range(n):
        alias[i] = i
        if scaled[i] < 1.0:
            small[n_small] = i
            n_small += 1
        else:
            large[n_large] = i
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        low = small[n_small]
        high = large[n_large - 1]
        probability[low] = scaled[low]
        alias[low] = high
        scaled[high] = scaled[high] + scaled[low] - 1.0
        if scaled[high] < 1.0:
            n_large -= 1
            small[n_small] = high
            n_small += 1
    # What is left is 1 up to rounding.
    for i in range(n_large):
        probability[large[i]] = 1.0
    for i in range(n_small):
        probability[small[i]] = 1.0


@jit
def _pick_alias(probability, alias, row):
    """An index drawn from row ``row`` of an alias table."""
    i = int(np.random.random() * probability.shape[1])
    if np.random.random() < probability[row, i]:
        return i
    return alias[row, i]


@jit
def simulate_layer_passes(
    n_samples, tokens, n_experts, top_k, ep, mode, weights_by_placement, seed,
    out_distinct, out_busiest_tokens, out_busiest_experts, out_placement,
):
    """Simulate ``n_samples`` layer passes into the preallocated outputs (one entry each).

    ``weights_by_placement`` [placements, n_experts]: expert weights for the skewed mode (any
    shape with one row for the other modes); pass i uses placement i mod placements.
    ``mode``: 0 uniform, 1 skewed, 2 balanced. Outputs: distinct experts touched, the busiest
    device's assignments, the busiest device's distinct experts, the placement used.
    """
    np.random.seed(seed)
    per_device = (n_experts + ep - 1) // ep
    placements = weights_by_placement.shape[0]
    probability = np.empty_like(weights_by_placement)
    alias = np.empty((placements, n_experts), dtype=np.int64)
    heaviest_first = np.empty((placements, n_experts), dtype=np.int64)
    for p in range(placements):
        _alias_table(weights_by_placement[p], probability[p], alias[p])
        heaviest_first[p] = np.argsort(-weights_by_placement[p])
    token_mark = np.full(n_experts, -1, dtype=np.int64)  # last token that picked the expert
    touched_mark = np.full(n_experts, -1, dtype=np.int64)  # last pass that touched it
    device_tokens = np.zeros(ep, dtype=np.int64)
    device_experts = np.zeros(ep, dtype=np.int64)
    token_stamp = 0
    for sample in range(n_samples):
        placement = sample % placements
        device_tokens[:] = 0
        device_experts[:] = 0
        distinct = 0
        total_weight = weights_by_placement[placement].sum()
        for t in range(tokens):
            token_stamp += 1
            picked_weight = 0.0
            for j in range(top_k):
                if mode == 2:
                    expert = (t * top_k + j) % n_experts
                elif mode == 0:
                    expert = int(np.random.random() * n_experts)
                    while token_mark[expert] == token_stamp:
                        expert = int(np.random.random() * n_experts)
                elif picked_weight < SCAN_AFTER_PICKED_SHARE * total_weight:
                    # Rejection: fewer than one draw in two hits an expert already picked.
                    expert = _pick_alias(probability, alias, placement)
                    while token_mark[expert] == token_stamp:
                        expert = _pick_alias(probability, alias, placement)
                else:
                    # Most weight is picked: scan the unpicked experts heaviest first, which
                    # under a skew ends after a few of them.
                    u = np.random.random() * (total_weight - picked_weight)
                    running = 0.0
                    expert = -1
                    for position in range(n_experts):
                        candidate = heaviest_first[placement, position]
                        if token_mark[candidate] != token_stamp:
                            expert = candidate
                            running += weights_by_placement[placement, candidate]
                            if running > u:
                                break
                if mode == 1:
                    picked_weight += weights_by_placement[placement, expert]
                token_mark[expert] = token_stamp
                device = expert // per_device
                device_tokens[device] += 1
                if touched_mark[expert] != sample:
                    touched_mark[expert] = sample
                    distinct += 1
                    device_experts[device] += 1
        out_distinct[sample] = distinct
        out_busiest_tokens[sample] = device_tokens.max()
        out_busiest_experts[sample] = device_experts.max()
        out_placement[sample] = placement


@jit
def compose_step_factors(layer_factors, layer_placement, placements, uniforms, out):
    """Per step, the mean over its layers of a layer factor drawn from the passes of that
    layer's placement (layer l uses placement l mod placements). ``uniforms`` [n_steps,
    moe_layers] in [0, 1) choose the pass: uniform draws u give pass floor(u · passes) of the
    placement's pool. ``out`` [n_steps]."""
    n_steps, moe_layers = uniforms.shape
    counts = np.zeros(placements, dtype=np.int64)
    for i in range(layer_placement.shape[0]):
        counts[layer_placement[i]] += 1
    starts = np.zeros(placements + 1, dtype=np.int64)
    for p in range(placements):
        starts[p + 1] = starts[p] + counts[p]
    pooled = np.empty(layer_placement.shape[0])  # factors grouped by placement
    filled = starts[:placements].copy()
    for i in range(layer_placement.shape[0]):
        p = layer_placement[i]
        pooled[filled[p]] = layer_factors[i]
        filled[p] += 1
    for step in range(n_steps):
        total = 0.0
        for layer in range(moe_layers):
            p = layer % placements
            pick = min(int(uniforms[step, layer] * counts[p]), counts[p] - 1)
            total += pooled[starts[p] + pick]
        out[step] = total / moe_layers


# ---- the checked Python API -----------------------------------------------------------------


@dataclass(frozen=True)
class RoutingSetup:
    """What one simulation routes. ``tokens`` is the tokens of one layer pass (the decode
    micro-batch); ``moe_layers`` the MoE layers a step passes through."""

    n_experts: int
    experts_per_token: int
    tokens: int
    ep: int = 1
    routing: str = "uniform"
    skew: float = 0.0  # Zipf exponent s of the skewed mode
    moe_layers: int = 1
    samples: int = 0  # layer passes to simulate; 0 = from DEFAULT_PICK_BUDGET
    placements: int = DEFAULT_PLACEMENTS
    seed: int = 0

    def validate(self) -> RoutingSetup:
        for name, low, high in (
            ("n_experts", 1, MAX_EXPERTS),
            ("experts_per_token", 1, MAX_EXPERTS),
            ("tokens", 1, MAX_TOKENS),
            ("ep", 1, MAX_EXPERTS),
            ("moe_layers", 1, 1 << 16),
            ("samples", 0, 10_000_000),
            ("placements", 1, 4096),
            ("seed", 0, 2**31 - 1),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be a whole number, got {value!r}")
            if not low <= value <= high:
                raise ValueError(f"{name} must be between {low:,} and {high:,}, got {value:,}")
        if self.experts_per_token > self.n_experts:
            raise ValueError(
                f"experts_per_token ({self.experts_per_token}) cannot exceed n_experts ({self.n_experts})"
            )
        if self.ep > self.n_experts:
            raise ValueError(f"ep ({self.ep}) cannot exceed n_experts ({self.n_experts}): a device would hold none")
        if self.samples and self.samples < self.placements:
            raise ValueError(f"samples ({self.samples}) must be at least placements ({self.placements})")
        if self.routing not in ROUTING_MODES:
            raise ValueError(f"routing must be one of {', '.join(ROUTING_MODES)}, got {self.routing!r}")
        if isinstance(self.skew, bool) or not isinstance(self.skew, int | float) or not 0.0 <= self.skew <= 10.0:
            raise ValueError(f"skew must be a number between 0 and 10, got {self.skew!r}")
        return self

    @property
    def layer_samples(self) -> int:
        if self.samples:
            return self.samples
        picks = self.tokens * self.experts_per_token
        return int(min(MAX_LAYER_SAMPLES, max(MIN_LAYER_SAMPLES, DEFAULT_PICK_BUDGET // picks)))

    @property
    def mean_device_assignments(self) -> float:
        """B·k/ep: each device's routed assignments under perfect balance."""
        return self.tokens * self.experts_per_token / self.ep


@dataclass(frozen=True)
class RoutingResult:
    """Per simulated layer pass: distinct experts, busiest device's assignments and experts."""

    setup: RoutingSetup
    distinct_experts: np.ndarray
    busiest_device_assignments: np.ndarray
    busiest_device_experts: np.ndarray
    placement: np.ndarray
    # Composed step factors by (load, steps, seed): they depend on this simulation only.
    _step_factors: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def samples(self) -> int:
        return int(self.distinct_experts.shape[0])

    @property
    def imbalance(self) -> np.ndarray:
        """Busiest device's assignments over the mean B·k/ep, per layer pass."""
        return self.busiest_device_assignments / self.setup.mean_device_assignments

    @property
    def mean_distinct_experts(self) -> float:
        return float(self.distinct_experts.mean())

    @property
    def distinct_experts_standard_error(self) -> float:
        return float(self.distinct_experts.std(ddof=1) / math.sqrt(self.samples)) if self.samples > 1 else 0.0

    def distinct_experts_percentile(self, q: float) -> float:
        return float(np.percentile(self.distinct_experts, q))

    @property
    def imbalance_mean(self) -> float:
        return float(self.imbalance.mean())

    @property
    def imbalance_p50(self) -> float:
        return float(np.percentile(self.imbalance, 50))

    @property
    def imbalance_p99(self) -> float:
        return float(np.percentile(self.imbalance, 99))

    @property
    def mean_busiest_device_experts(self) -> float:
        return float(self.busiest_device_experts.mean())

    # -- the engine's analytic counterparts (reference.py), for comparison ------------------

    @property
    def analytic_distinct_experts(self) -> float:
        """E·(1 − (1 − k/E)^B): exact mean under uniform routing (reference.expert_touch_probability)."""
        s = self.setup
        return s.n_experts * expert_touch_probability(s.experts_per_token, s.n_experts, s.tokens)

    @property
    def engine_imbalance(self) -> float:
        """The engine's expected busiest-device load over the mean: 1 + z_ep·sqrt((ep−1)/(B·k))
        with z_ep Blom's expected maximum of ep standard normals (reference.token_imbalance)."""
        s = self.setup
        return token_imbalance(float(s.tokens * s.experts_per_token), s.ep)

    @property
    def engine_busiest_device_experts(self) -> float:
        """The engine's distinct experts on the busiest device (reference.py)."""
        s = self.setup
        per_device = math.ceil(s.n_experts / s.ep)
        touch = expert_touch_probability(s.experts_per_token, s.n_experts, s.tokens)
        return experts_touched_busiest_device(per_device, touch, s.ep)


def distinct_experts_variance(n_experts: int, experts_per_token: int, tokens: int) -> float:
    """Exact variance of the distinct experts touched by ``tokens`` tokens under uniform routing.

    Expert e is untouched with probability p0 = (1 − k/E)^B and a pair of experts with p00 =
    ((E − k)(E − k − 1)/(E(E − 1)))^B, so Var = E·p0(1 − p0) + E(E − 1)(p00 − p0²).
    """
    e, k = float(n_experts), float(experts_per_token)
    p0 = (1.0 - k / e) ** tokens
    p00 = ((e - k) * (e - k - 1.0) / (e * (e - 1.0))) ** tokens if n_experts > 1 else 0.0
    return max(0.0, e * p0 * (1.0 - p0) + e * (e - 1.0) * (p00 - p0 * p0))


def popularity_weights(n_experts: int, skew: float, placements: int, seed: int) -> np.ndarray:
    """[placements, n_experts]: Zipf weights 1/r^s, the ranks assigned to experts at random per
    placement (placement 0 of a seed is always the same)."""
    ranks = np.arange(1, n_experts + 1, dtype=np.float64)
    base = ranks ** -float(skew)
    generator = np.random.default_rng(seed)
    table = np.empty((placements, n_experts))
    for p in range(placements):
        table[p] = base[generator.permutation(n_experts)]
    return table


def simulate_routing(setup: RoutingSetup) -> RoutingResult:
    """Run the simulation of ``setup`` (checked first). Results are kept for the most recent
    setups: the same setup always gives the same result, and live views ask again often. A
    one-device setup is answered from a kept simulation of the same draws over more devices."""
    setup = setup.validate()
    if setup.ep == 1 and setup in _single_device_views:
        _single_device_views.move_to_end(setup)
        return _single_device_views[setup]
    result = _simulate_cached(setup)
    if setup.ep > 1:
        one = replace(setup, ep=1)
        if one not in _single_device_views:
            _single_device_views[one] = single_device_view(result)
            if len(_single_device_views) > RESULT_CACHE_SIZE:
                _single_device_views.popitem(last=False)
    return result


_single_device_views: OrderedDict[RoutingSetup, RoutingResult] = OrderedDict()


def single_device_view(result: RoutingResult) -> RoutingResult:
    """The result of the same setup on one device. The simulation's draws do not depend on
    ``ep`` (it only groups experts into devices), so this equals simulating with ep = 1: the
    busiest device holds every expert, gets every assignment (tokens · k, since a token's
    experts are distinct) and touches every distinct expert."""
    s = result.setup
    assignments = np.full_like(result.busiest_device_assignments, s.tokens * s.experts_per_token)
    assignments.flags.writeable = False
    return RoutingResult(replace(s, ep=1), result.distinct_experts, assignments, result.distinct_experts,
                         result.placement)


@functools.lru_cache(maxsize=RESULT_CACHE_SIZE)
def _simulate_cached(s: RoutingSetup) -> RoutingResult:
    n = s.layer_samples
    if s.routing == "skewed" and s.skew > 0.0:
        weights = popularity_weights(s.n_experts, s.skew, s.placements, s.seed)
    else:
        weights = np.ones((1, s.n_experts))
    distinct = np.empty(n, dtype=np.int64)
    busiest_tokens = np.empty(n, dtype=np.int64)
    busiest_experts = np.empty(n, dtype=np.int64)
    placement = np.empty(n, dtype=np.int64)
    mode = _MODE_CODE["uniform"] if s.routing == "skewed" and s.skew == 0.0 else _MODE_CODE[s.routing]
    simulate_layer_passes(
        n, s.tokens, s.n_experts, s.experts_per_token, s.ep, mode, weights, s.seed,
        distinct, busiest_tokens, busiest_experts, placement,
    )
    for array in (distinct, busiest_tokens, busiest_experts, placement):
        array.flags.writeable = False  # shared through the cache
    return RoutingResult(s, distinct, busiest_tokens, busiest_experts, placement)


@functools.lru_cache(maxsize=DRAW_CACHE_SIZE)
def _uniform_draws(n_steps: int, moe_layers: int, seed: int) -> np.ndarray:
    """[n_steps, moe_layers] uniform draws in [0, 1), shared by every composition of that
    shape and seed (read-only)."""
    draws = np.random.default_rng(seed).random((n_steps, moe_layers))
    draws.flags.writeable = False
    return draws


@dataclass(frozen=True)
class StepFactors:
    """Composed decode steps of one simulation: each step's time over the time at the mean
    load, for the expert part (``factors``, read-only), and the figures a spread needs."""

    factors: np.ndarray
    mean: float
    p50: float
    p99: float
    variance: float  # with ddof = 1, as StepTimeDistribution.variance_s2


def step_factors(routing: RoutingResult, load: str = "experts", steps: int = DEFAULT_STEPS,
                 seed: int | None = None) -> StepFactors:
    """The composed step factors of ``routing`` (checked inputs; kept on the result)."""
    if load not in LOAD_KINDS:
        raise ValueError(f"load must be one of {', '.join(LOAD_KINDS)}, got {load!r}")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 2 <= steps <= 10_000_000:
        raise ValueError(f"steps must be a whole number between 2 and 10,000,000, got {steps!r}")
    seed = routing.setup.seed + 1 if seed is None else seed
    key = (load, steps, seed)
    found = routing._step_factors.get(key)
    if found is not None:
        return found
    per_layer = routing.busiest_device_experts if load == "experts" else routing.busiest_device_assignments
    per_layer = per_layer.astype(np.float64)
    mean_load = per_layer.mean()
    layer_factors = per_layer / mean_load if mean_load > 0.0 else np.ones_like(per_layer)
    out = np.empty(steps)
    placements = int(routing.placement.max()) + 1
    layers = routing.setup.moe_layers
    if steps * layers <= MAX_SHARED_DRAWS:
        compose_step_factors(layer_factors, routing.placement, placements, _uniform_draws(steps, layers, seed), out)
    else:
        # The same stream as one table (the generator's draws continue from block to block).
        generator = np.random.default_rng(seed)
        block = max(1, MAX_SHARED_DRAWS // layers)
        for start in range(0, steps, block):
            stop = min(steps, start + block)
            compose_step_factors(layer_factors, routing.placement, placements,
                                 generator.random((stop - start, layers)), out[start:stop])
    out.flags.writeable = False
    p50, p99 = np.percentile(out, (50, 99))
    found = StepFactors(out, float(out.mean()), float(p50), float(p99), float(out.var(ddof=1)))
    routing._step_factors[key] = found
    return found


@dataclass(frozen=True)
class StepTimeSummary:
    """The figures of a decode step-time distribution (s), without the samples."""

    mean_s: float
    p50_s: float
    p99_s: float
    variance_s2: float

    @property
    def std_s(self) -> float:
        return math.sqrt(self.variance_s2)

    @property
    def coefficient_of_variation(self) -> float:
        return self.std_s / self.mean_s if self.mean_s > 0.0 else 0.0


def _check_times(expert_time_s: float, non_expert_time_s: float) -> None:
    for name, value in (("expert_time_s", expert_time_s), ("non_expert_time_s", non_expert_time_s)):
        if isinstance(value, bool) or not isinstance(value, int | float) or not (
            math.isfinite(value) and value >= 0.0
        ):
            raise ValueError(f"{name} must be a finite time of at least 0 s, got {value!r}")


def step_time_summary(
    routing: RoutingResult,
    expert_time_s: float,
    non_expert_time_s: float,
    load: str = "experts",
    steps: int = DEFAULT_STEPS,
    seed: int | None = None,
) -> StepTimeSummary:
    """What :func:`step_time_distribution` gives for the same inputs, from the kept step
    factors: step time = non-expert + expert · factor is increasing in the factor, so its
    quantiles are those of the factors mapped the same way, and its variance expert² times
    theirs (equal to the distribution's figures up to rounding)."""
    _check_times(expert_time_s, non_expert_time_s)
    f = step_factors(routing, load, steps, seed)
    a, b = float(non_expert_time_s), float(expert_time_s)
    return StepTimeSummary(a + b * f.mean, a + b * f.p50, a + b * f.p99, b * b * f.variance)


@dataclass(frozen=True)
class StepTimeDistribution:
    """Decode step times (s) composed from a routing simulation."""

    step_times_s: np.ndarray
    expert_time_s: float
    non_expert_time_s: float
    load: str  # "experts" (memory-bound) or "tokens" (compute-bound)

    @property
    def mean_s(self) -> float:
        return float(self.step_times_s.mean())

    @property
    def p50_s(self) -> float:
        return float(np.percentile(self.step_times_s, 50))

    @property
    def p99_s(self) -> float:
        return float(np.percentile(self.step_times_s, 99))

    @property
    def std_s(self) -> float:
        return float(self.step_times_s.std(ddof=1))

    @property
    def variance_s2(self) -> float:
        return float(self.step_times_s.var(ddof=1))

    @property
    def coefficient_of_variation(self) -> float:
        return self.std_s / self.mean_s if self.mean_s > 0.0 else 0.0


def step_time_distribution(
    routing: RoutingResult,
    expert_time_s: float,
    non_expert_time_s: float,
    load: str = "experts",
    steps: int = DEFAULT_STEPS,
    seed: int | None = None,
) -> StepTimeDistribution:
    """Step times when the routed-expert part of a step (``expert_time_s``, at the mean load)
    scales with each layer's busiest-device load and the rest (``non_expert_time_s``) does not.

    ``load``: "experts" when the step is memory-bound (the busiest device reads the weights of
    the experts it was routed), "tokens" when compute-bound (it multiplies its assignments).
    """
    _check_times(expert_time_s, non_expert_time_s)
    f = step_factors(routing, load, steps, seed)
    return StepTimeDistribution(non_expert_time_s + expert_time_s * f.factors, float(expert_time_s),
                                float(non_expert_time_s), load)
