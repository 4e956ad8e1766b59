"""The small formulas the steps are made of: counts of attention positions, the load of the
busiest expert-parallel device, collective times. Each is a pure function of numbers, and each
has a twin of the same name in ``kernels/helpers.py`` (the tests hold them equal).

Units: bytes, seconds, B/s; counts are plain numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from ...core.constants import ClassConstants
from ...core.model import ModelArch
from ...core.precision import CONV_STATE_BYTES, RECURRENT_STATE_BYTES

_STANDARD_NORMAL = NormalDist()


# ---- the busiest of several devices ---------------------------------------------------------


def inverse_normal_cdf(p: float) -> float:
    """Φ⁻¹(p) of the standard normal distribution."""
    return _STANDARD_NORMAL.inv_cdf(p)


def expected_max_standard_normal(n: int) -> float:
    """Expected maximum of n independent standard normal draws: Blom's approximation
    Φ⁻¹((n − 0.375)/(n + 0.25)), 4.5% high at n = 2, 2% at n = 4, under 1% from n = 8; 0 for
    n ≤ 1."""
    if n <= 1:
        return 0.0
    return inverse_normal_cdf((n - 0.375) / (n + 0.25))


def token_imbalance(assignments: float, ep: int) -> float:
    """Load of the busiest of ``ep`` devices over the mean when ``assignments`` token-to-expert
    assignments are routed uniformly: each device's load is Binomial(n, 1/ep), whose
    expected maximum is about mean + z·sd, i.e. 1 + z·sqrt((ep − 1)/n). At most ep."""
    if ep <= 1 or assignments <= 0.0:
        return 1.0
    imbalance = 1.0 + expected_max_standard_normal(ep) * math.sqrt((ep - 1) / assignments)
    return min(imbalance, float(ep))


def expert_touch_probability(top_k: float, experts: float, tokens: float) -> float:
    """Chance that one routed expert gets at least one of ``tokens`` tokens, each routed to
    ``top_k`` of ``experts`` uniformly: 1 − (1 − k/E)^tokens."""
    return 1.0 - (1.0 - top_k / experts) ** tokens


def experts_touched_busiest_device(experts_per_device: int, touch_probability: float, ep: int) -> float:
    """Distinct experts the busiest device reads in one forward pass. Each of its experts is
    touched with probability q = 1 − (1 − k/E)^tokens; the count is Binomial(m, q), and the
    busiest of ep devices reads about mean + z·sd of them (never more than it holds). With
    ep = 1 this is E·(1 − (1 − k/E)^B), ``expert_touch_probability`` times E."""
    mean = experts_per_device * touch_probability
    if ep <= 1:
        return mean
    spread = math.sqrt(experts_per_device * touch_probability * (1.0 - touch_probability))
    return min(float(experts_per_device), mean + expected_max_standard_normal(ep) * spread)


# ---- attention positions ----------------------------------------------------------------------


def causal_positions(tokens: int, window: int) -> float:
    """Σ over a prompt's positions i = 1..s of the positions each attends to: s(s+1)/2 for
    full causal attention, capped at the window for sliding-window layers."""
    if window <= 0 or tokens <= window:
        return tokens * (tokens + 1) / 2.0
    return window * (window + 1) / 2.0 + (tokens - window) * float(window)


def chunked_causal_positions(tokens: int, chunk: int) -> float:
    """As causal_positions for a chunked-attention layer: position i attends to the
    ((i − 1) mod chunk) + 1 positions of its own chunk so far."""
    full_chunks, rest = divmod(tokens, chunk)
    return full_chunks * chunk * (chunk + 1) / 2.0 + rest * (rest + 1) / 2.0


def chunk_reread_positions(tokens: int, chunk: int, window: int) -> float:
    """KV positions a sequence's later chunks re-read from its earlier ones when a prompt of
    ``tokens`` is prefilled in chunks of ``chunk``: chunk j reads j·chunk earlier positions
    (at most ``window`` of them on a sliding-window layer)."""
    n_chunks = math.ceil(tokens / chunk)
    if n_chunks <= 1:
        return 0.0
    if window <= 0:
        return chunk * n_chunks * (n_chunks - 1) / 2.0
    below_window = min(n_chunks, math.ceil(window / chunk))
    return chunk * below_window * (below_window - 1) / 2.0 + (n_chunks - below_window) * float(window)


def stored_positions(n_full: float, n_window: float, window: float, n_chunked: float, attention_chunk: float,
                     context: float) -> float:
    """KV entries a sequence keeps at this context, summed over its layers: the whole context
    on a full-attention layer, at most the window or the attention chunk on the others."""
    positions = n_full * context
    if n_window:
        positions += n_window * min(context, window)
    if n_chunked:
        positions += n_chunked * min(context, attention_chunk)
    return positions


def attended_positions(n_full: float, n_window: float, window: float, n_chunked: float, attention_chunk: float,
                       context: float) -> float:
    """KV entries a new token at this context reads, summed over layers. A chunked layer past
    its first chunk attends to half a chunk on average."""
    positions = n_full * context
    if n_window:
        positions += n_window * min(context, window)
    if n_chunked:
        positions += n_chunked * (context if context <= attention_chunk else (attention_chunk + 1) / 2.0)
    return positions


@dataclass(frozen=True)
class AttentionLayers:
    """A model's layers that keep a KV cache, by kind: the counts the position formulas take."""

    n_full: int
    n_window: int
    window: int
    n_chunked: int
    attention_chunk: int

    @classmethod
    def of(cls, model: ModelArch) -> AttentionLayers:
        return cls(model.n_full_attention_layers, model.n_window_attention_layers, model.sliding_window,
                   model.n_chunked_attention_layers, model.attention_chunk)

    @property
    def count(self) -> int:
        """Layers that keep a KV cache."""
        return self.n_full + self.n_window + self.n_chunked

    def stored(self, context: float) -> float:
        return stored_positions(self.n_full, self.n_window, self.window, self.n_chunked, self.attention_chunk, context)

    def attended(self, context: float) -> float:
        return attended_positions(self.n_full, self.n_window, self.window, self.n_chunked, self.attention_chunk,
                                  context)

    def prompt(self, tokens: int) -> float:
        """Σ over a prompt's positions of those each attends to, summed over layers."""
        return (
            self.n_full * causal_positions(tokens, 0)
            + (self.n_window * causal_positions(tokens, self.window) if self.n_window else 0.0)
            + (self.n_chunked * chunked_causal_positions(tokens, self.attention_chunk) if self.n_chunked else 0.0)
        )

    def reread(self, tokens: int, chunk: int) -> float:
        """KV positions a prompt's later prefill chunks re-read from its earlier ones, summed over
        layers. A chunked layer re-reads at most one attention chunk (an upper bound)."""
        return (
            self.n_full * chunk_reread_positions(tokens, chunk, 0)
            + (self.n_window * chunk_reread_positions(tokens, chunk, self.window) if self.n_window else 0.0)
            + (self.n_chunked * chunk_reread_positions(tokens, chunk, self.attention_chunk) if self.n_chunked else 0.0)
        )


# ---- attention groups: layers with their own entries and position rules ----------------------


def capped_floor_sum(tokens: int, ratio: int, cap: int) -> float:
    """Σ over i = 1..tokens of min(⌊i/ratio⌋, cap) (no cap when ``cap`` is 0): the compressed
    entries (or indexer keys) each prompt position sees, at most the top-k it attends. With
    ratio 1 and no cap, s(s+1)/2, the causal sum. Blocks of ``ratio`` positions share a
    floor, so: r·q(q−1)/2 + q·(s − q·r + 1) for q = ⌊s/r⌋ ≤ cap, else r·k(k−1)/2 + k·(s − k·r + 1)."""
    q = tokens // ratio
    if 0 < cap < q:
        q = cap
    return ratio * q * (q - 1) / 2.0 + q * float(tokens - q * ratio + 1)


def group_entries(context: float, ratio: int) -> float:
    """Cached entries of one layer at this context: one per ``ratio`` tokens (whole ones only),
    the context itself at ratio 1."""
    return context if ratio <= 1 else float(math.floor(context / ratio))


def group_stored(context: float, ratio: int, window: int) -> float:
    """Entries one layer keeps: the compressed ones plus the uncompressed window."""
    stored = group_entries(context, ratio)
    if window > 0:
        stored += min(context, window)
    return stored


def group_attended(context: float, ratio: int, window: int, top_k: int) -> float:
    """Entries a new token reads in one layer: the compressed ones (the top-k of them on a
    sparse layer) plus the window."""
    attended = group_entries(context, ratio)
    if top_k > 0:
        attended = min(attended, top_k)
    if window > 0:
        attended += min(context, window)
    return attended


def group_index_keys(context: float, stride: int) -> float:
    """Indexer keys one layer keeps, and a new token scores: one per ``stride`` tokens (0: no indexer)."""
    if stride <= 0:
        return 0.0
    return group_entries(context, stride)


def group_prompt_attended(tokens: int, ratio: int, window: int, top_k: int) -> float:
    """Σ over a prompt's positions of group_attended: each position's compressed entries (at
    most the top-k) plus its window."""
    positions = capped_floor_sum(tokens, ratio, top_k)
    if window > 0:
        positions += causal_positions(tokens, window)
    return positions


@dataclass(frozen=True)
class AttentionGroups:
    """A model's attention groups (``ModelArch.attention_groups``: "global", "sparse",
    "compressed" and "compressed_sparse" layers): the cache each keeps and what a token reads
    and computes in it, beside the full, window and chunked layers of the model's own shape
    (AttentionLayers). Per sequence and all the model's layers of the group; the caller divides
    by the pipeline stages.

    An entry is ``elements`` at the KV precision, split over tensor parallelism by ``shards``
    KV heads (MLA's latent and DeepSeek-V4's one KV head are on every rank). An indexer key is
    ``index_key_bytes`` in the indexer's own format; the indexer is one key head and its query
    heads are not split over tensor parallelism (every rank scores every key: an upper bound
    where a stack splits them). Attention FLOPs per entry split with the query heads."""

    groups: tuple

    @classmethod
    def of(cls, model: ModelArch) -> AttentionGroups:
        return cls(model.attention_groups)

    @property
    def count(self) -> int:
        return sum(g.layers for g in self.groups)

    @staticmethod
    def entry_bytes(group, tp: int, p_kv: float) -> float:
        return p_kv * group.elements * (math.ceil(group.shards / tp) / group.shards)

    def kv_bytes(self, context: float, tp: int, p_kv: float) -> float:
        """What one sequence keeps at this context: entries and indexer keys."""
        total = 0.0
        for g in self.groups:
            all_heads = g.layers * p_kv * g.elements * group_stored(context, g.ratio, g.window)
            total += (all_heads * shard_share(g.shards, tp)
                      + g.layers * g.index_key_bytes * group_index_keys(context, g.index_stride))
        return total

    def read_bytes(self, context: float, tp: int, p_kv: float) -> float:
        """What a new token at this context reads: the entries it attends, and every indexer key."""
        total = 0.0
        for g in self.groups:
            total += g.layers * (self.entry_bytes(g, tp, p_kv) * group_attended(context, g.ratio, g.window, g.top_k)
                                 + g.index_key_bytes * group_index_keys(context, g.index_stride))
        return total

    def flops(self, context: float, head_fraction: float) -> float:
        """FLOPs of a new token at this context: attention over the entries it attends, and the
        indexer's scoring of every key."""
        total = 0.0
        for g in self.groups:
            total += g.layers * (head_fraction * g.flops_decode * group_attended(context, g.ratio, g.window, g.top_k)
                                 + g.index_flops * group_index_keys(context, g.index_stride))
        return total

    def prompt_flops(self, tokens: int, head_fraction: float) -> float:
        """FLOPs of a prompt: Σ over its positions of what each attends and scores."""
        total = 0.0
        for g in self.groups:
            index = capped_floor_sum(tokens, g.index_stride, 0) if g.index_stride > 0 else 0.0
            total += g.layers * (head_fraction * g.flops_prefill
                                 * group_prompt_attended(tokens, g.ratio, g.window, g.top_k) + g.index_flops * index)
        return total

    def reread_bytes(self, tokens: int, chunk: int, tp: int, p_kv: float) -> float:
        """What a prompt's later prefill chunks re-read from its earlier ones: chunk j reads the
        j·chunk/ratio entries (and indexer keys) before it, and the window (an upper bound for a
        sparse layer, whose chunk may select any of them)."""
        n_chunks = math.ceil(tokens / chunk)
        pairs = n_chunks * (n_chunks - 1) / 2.0
        total = 0.0
        for g in self.groups:
            entries = chunk / g.ratio * pairs
            if g.window > 0:
                entries += chunk_reread_positions(tokens, chunk, g.window)
            keys = chunk / g.index_stride * pairs if g.index_stride > 0 else 0.0
            total += g.layers * (self.entry_bytes(g, tp, p_kv) * entries + g.index_key_bytes * keys)
        return total

    def write_bytes(self, tp: int, p_kv: float) -> float:
        """What one token writes: 1/ratio of an entry, its window entry, 1/stride of a key."""
        total = 0.0
        for g in self.groups:
            entries = 1.0 / g.ratio + (1.0 if g.window > 0 else 0.0)
            keys = g.index_key_bytes / g.index_stride if g.index_stride > 0 else 0.0
            total += g.layers * (self.entry_bytes(g, tp, p_kv) * entries + keys)
        return total


# ---- layers with a fixed-size state -----------------------------------------------------------


def shard_share(shards: int, tp: int) -> float:
    """The busiest device's share of a layer that tensor parallelism splits by ``shards`` heads:
    ⌈shards/tp⌉/shards (0 for a layer kind the model does not have)."""
    if shards <= 0:
        return 0.0
    return math.ceil(shards / tp) / shards


@dataclass(frozen=True)
class RecurrentLayers:
    """A model's layers that keep a fixed-size state per sequence instead of a KV cache, by kind
    (Gated DeltaNet, Mamba-2): how many, what splits them over tensor parallelism (their value
    heads, or heads), and for one layer and all its heads, one sequence's state in bytes and
    the FLOPs per token beyond the projections (``DeltaNetSpec`` and ``MambaSpec`` give the
    formulas): by the recurrent step in decode, by the chunked algorithm in prefill.

    The state: the recurrent matrices at RECURRENT_STATE_BYTES and the convolution's last
    inputs at CONV_STATE_BYTES per element. It does not grow with the context: a decode step
    reads and writes it once per sequence per layer, a prefill chunk once per sequence in it."""

    n_deltanet: int
    deltanet_shards: int
    deltanet_state_bytes: float
    deltanet_decode_flops: float
    deltanet_prefill_flops: float
    n_mamba: int
    mamba_shards: int
    mamba_state_bytes: float
    mamba_decode_flops: float
    mamba_prefill_flops: float

    @classmethod
    def of(cls, model: ModelArch) -> RecurrentLayers:
        figures: list[float] = []
        for kind in ("deltanet", "mamba"):
            spec = model.recurrent_spec(kind)
            if spec is None:
                figures += [0, 0, 0.0, 0.0, 0.0]
                continue
            state = spec.matrix_state_elements * RECURRENT_STATE_BYTES + spec.conv_state_elements * CONV_STATE_BYTES
            figures += [model.count_attention(kind), spec.shards, state, float(spec.decode_flops_per_token),
                        float(spec.prefill_flops_per_token)]
        return cls(*figures)

    @property
    def count(self) -> int:
        """Layers that keep a fixed-size state."""
        return self.n_deltanet + self.n_mamba

    def per_device(self, deltanet_value: float, mamba_value: float, tp: int) -> float:
        """A per-layer figure summed over the layers, the busiest device's share of each kind's
        heads: n_deltanet x deltanet_value x ⌈H_v/tp⌉/H_v + n_mamba x mamba_value x ⌈H/tp⌉/H."""
        return (self.n_deltanet * deltanet_value * shard_share(self.deltanet_shards, tp)
                + self.n_mamba * mamba_value * shard_share(self.mamba_shards, tp))

    def state_bytes(self, tp: int) -> float:
        """One sequence's state on the busiest device, over all the model's layers."""
        return self.per_device(self.deltanet_state_bytes, self.mamba_state_bytes, tp)

    def flops_per_token(self, tp: int, prefill: bool) -> float:
        """FLOPs per token on the busiest device beyond the projections, over all the model's layers."""
        if prefill:
            return self.per_device(self.deltanet_prefill_flops, self.mamba_prefill_flops, tp)
        return self.per_device(self.deltanet_decode_flops, self.mamba_decode_flops, tp)


# ---- collectives ------------------------------------------------------------------------------


def ring_all_reduce_time(message_bytes: float, group: int, bandwidth: float, latency: float) -> float:
    """Ring all-reduce: 2(n−1)/n of the message crosses each link, in 2(n−1) steps."""
    if group <= 1:
        return 0.0
    return 2.0 * (group - 1) / group * message_bytes / bandwidth + 2.0 * (group - 1) * latency


def all_reduce_algorithms(message_bytes: float, group: int, bandwidth: float,
                          latency: float) -> tuple[tuple[float, float, str, int], ...]:
    """The all-reduce algorithms collective libraries choose between (Thakur, Rabenseifner and
    Gropp 2005) that a group of ``group`` devices can use, each as (time, bytes each device
    sends, algorithm, steps); none for a group of one.

    - ring: 2(n−1)/n of the message in 2(n−1) steps, for any n;
    - recursive halving then doubling (a power-of-two n): the ring's bytes in 2·log2(n) steps;
    - recursive doubling (a power-of-two n): the whole message log2(n) times in log2(n) steps,
      which wins for small messages (at n = 2: one exchange and a local sum)."""
    if group <= 1:
        return ()
    ring_sent = 2.0 * (group - 1) / group * message_bytes
    algorithms = [(ring_sent / bandwidth + 2.0 * (group - 1) * latency, ring_sent, "ring", 2 * (group - 1))]
    if group & (group - 1) == 0:
        steps = math.log2(group)
        algorithms.append((ring_sent / bandwidth + 2.0 * steps * latency, ring_sent, "recursive halving and doubling",
                           2 * round(steps)))
        doubling_sent = steps * message_bytes
        algorithms.append((doubling_sent / bandwidth + steps * latency, doubling_sent, "recursive doubling",
                           round(steps)))
    return tuple(algorithms)


def all_reduce(message_bytes: float, group: int, bandwidth: float, latency: float) -> tuple[float, float, str]:
    """The fastest of :func:`all_reduce_algorithms`: (time, bytes each device sends,
    algorithm); ties go to the earlier one."""
    best = (0.0, 0.0, "none")
    for index, (time, sent, algorithm, _) in enumerate(all_reduce_algorithms(message_bytes, group, bandwidth, latency)):
        if index == 0 or time < best[0]:
            best = (time, sent, algorithm)
    return best


def all_to_all_time(sent_bytes: float, group: int, bandwidth: float, latency: float) -> float:
    """All-to-all where each device sends ``sent_bytes`` in total, in n−1 pairwise exchanges."""
    if group <= 1:
        return 0.0
    return sent_bytes / bandwidth + (group - 1) * latency


# ---- fixed costs ------------------------------------------------------------------------------


def layer_overhead_s(cls: ClassConstants, activation_bytes: float) -> float:
    """Fixed time per layer per pass: the class's floor, plus the kernels that quantise each
    linear product's input when activations are narrower than 16 bits."""
    if activation_bytes < 2.0:
        return cls.per_layer_overhead_s + cls.activation_quantization_overhead_s
    return cls.per_layer_overhead_s
