"""A model's architecture (not its weights) and the counts the physics needs from it.

Every count here is derived from the architecture, never typed in: parameters (total, active,
per group), KV-cache elements per token, and attention FLOPs per context position. The catalog
test holds the derived totals within 3% of the published nominal sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

# How each layer does attention:
#   full:    attends to the whole context, keeps K/V for every token
#   window:  sliding window: attends to (and keeps) the last `sliding_window` tokens
#   chunked: attends only within its `attention_chunk`-token chunk of the context (Llama 4):
#            keeps at most one chunk of K/V, and a token attends to the part of its chunk so
#            far, about half a chunk on average
#   linear:  attention replaced by one d x d linear map (Nemotron NAS blocks), no KV cache
#   none:    no attention block at all
#   deltanet: Gated DeltaNet linear attention (Qwen3-Next), shaped by `deltanet`: no KV cache,
#            a fixed-size recurrent state per sequence instead
#   mamba:   a Mamba-2 state-space mixer (Nemotron-H), shaped by `mamba`: no KV cache, a
#            fixed-size recurrent state per sequence instead
# The kinds below each form an attention group of their own (``ModelArch.attention_groups``),
# with its own entry size, heads and position rule:
#   global:  full attention with its own shape, `global_attention` (Gemma 4, MiMo-V2: global
#            layers with other head counts and dims than the sliding ones; K = V tied there)
#   sparse:  keeps K/V (or MLA's latent) for every token but attends only the `indexer`'s top-k
#            positions, which an indexer picks by scoring a small key it keeps per token
#            (DeepSeek-V3.2's lightning indexer) or per block of tokens (block-sparse, MiniMax-M3)
#   compressed: keeps one entry per `compression.ratio` tokens (their K/V compressed into
#            one) plus the last `sliding_window` tokens uncompressed, and attends to all of both
#            (DeepSeek-V4's heavily compressed layers)
#   compressed_sparse: as compressed at `compression.sparse_ratio`, attending the indexer's
#            top-k compressed entries plus the window (DeepSeek-V4's compressed sparse layers)
LAYER_ATTENTION_KINDS: tuple[str, ...] = ("full", "window", "chunked", "linear", "none", "deltanet", "mamba",
                                          "global", "sparse", "compressed", "compressed_sparse")

# Kinds that are attention groups of their own (see attention_groups), in their slot order.
GROUP_KINDS: tuple[str, ...] = ("global", "sparse", "compressed", "compressed_sparse")

# What each layer kind is called where a person reads it.
KIND_LABELS: dict[str, str] = {
    "full": "full attention", "window": "sliding window", "chunked": "chunked attention",
    "linear": "linear map", "none": "no attention", "deltanet": "Gated DeltaNet (fixed state)",
    "mamba": "Mamba-2 (fixed state)", "global": "global attention (own heads)", "sparse": "sparse top-k with indexer",
    "compressed": "compressed KV", "compressed_sparse": "compressed KV, sparse top-k",
}

# Key formats an indexer caches: bytes per element, and the bytes of one scale per block of
# 128 elements (DeepSeek-V3.2's indexer keeps FP8 keys with one FP32 scale per 128: 132 B per
# 128-dim key, its inference code's index_k cache).
INDEXER_KEY_FORMATS: dict[str, tuple[float, int]] = {"fp8": (1.0, 4), "bf16": (2.0, 0)}
INDEXER_SCALE_BLOCK = 128

# Layer kinds that keep a fixed-size recurrent state per sequence rather than a KV cache.
RECURRENT_KINDS: tuple[str, ...] = ("deltanet", "mamba")

# How an FFN (dense or expert) is built:
#   gated: SwiGLU / GeGLU: gate, up and down projections (3 matrices)
#   relu2: squared-ReLU MLP (Nemotron-H): up and down projections only (2 matrices)
FFN_KINDS: tuple[str, ...] = ("gated", "relu2")

# Formats a model's weights are published in, and which weights use that format:
#   experts: only the routed experts' weights (gpt-oss's MXFP4); the rest stay 16-bit
#   linear:  every linear layer of the transformer blocks (DeepSeek-V3's block-scaled FP8); the
#            embedding table, the LM head, routers and norms stay 16-bit or wider
NATIVE_WEIGHT_PRECISIONS: tuple[str, ...] = ("bf16", "fp8", "mxfp4", "nvfp4")
NATIVE_PRECISION_SCOPES: tuple[str, ...] = ("experts", "linear")

# Which of the embedding table and the LM head a model card's "active parameters" counts:
#   both:      every parameter a token touches, embedding table and LM head included (most cards)
#   head_only: the LM head but not the embedding table, whose lookup is no matmul (gpt-oss)
#   none:      neither: "non-embedding" active parameters
NOMINAL_ACTIVE_EMBEDDINGS: tuple[str, ...] = ("both", "head_only", "none")


@dataclass(frozen=True)
class MoESpec:
    n_routed_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    n_shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    n_dense_layers: int = 0  # leading layers with a dense FFN (DeepSeek's first_k_dense_replace)
    moe_layer_step: int = 1  # after those, every n-th layer is MoE (Llama 4 Maverick: 2)
    router_bias: bool = False  # the router (gate) has a bias, one per routed expert (gpt-oss)


@dataclass(frozen=True)
class MLASpec:
    """Multi-head latent attention (DeepSeek-V2/V3): K/V stored as one compressed latent."""

    q_lora_rank: int  # 0 means queries are not compressed
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


@dataclass(frozen=True)
class AttentionShape:
    """The heads of a "global" layer where they differ from the model's other attention layers
    (Gemma 4's global layers: fewer KV heads of dim 512, K = V; MiMo-V2's full layers)."""

    n_heads: int
    n_kv_heads: int
    head_dim: int
    v_head_dim: int = 0  # 0: as head_dim
    k_eq_v: bool = False  # one tensor serves as both K and V: half the cache

    @property
    def value_dim(self) -> int:
        return self.v_head_dim or self.head_dim

    @property
    def kv_elements(self) -> int:
        if self.k_eq_v:
            return self.n_kv_heads * self.head_dim
        return self.n_kv_heads * (self.head_dim + self.value_dim)

    @property
    def flops_per_position(self) -> int:
        """Scores and values per attended position: 2 H d_k + 2 H d_v."""
        return 2 * self.n_heads * (self.head_dim + self.value_dim)

    def params(self, hidden_size: int, qk_norm: bool) -> int:
        d = hidden_size
        k = self.n_kv_heads * self.head_dim
        v = 0 if self.k_eq_v else self.n_kv_heads * self.value_dim
        params = d * self.n_heads * self.head_dim + d * (k + v) + self.n_heads * self.value_dim * d
        return params + (2 * self.head_dim if qk_norm else 0)


@dataclass(frozen=True)
class IndexerSpec:
    """A learned selector of the positions a sparse layer attends (DeepSeek-V3.2's lightning
    indexer, GLM-5's, DeepSeek-V4's; MiniMax-M3's block index): ``n_heads`` query heads of
    ``head_dim`` score one cached key per ``block_tokens`` tokens (per compressed entry on a
    compressed layer), and the layer attends the ``top_k`` best positions."""

    n_heads: int
    head_dim: int
    top_k: int  # positions attended: tokens (or compressed entries); blocks x block_tokens for block-sparse
    key_format: str = "fp8"  # see INDEXER_KEY_FORMATS
    block_tokens: int = 1  # tokens one indexer key covers (1: a key per token)
    q_rank: int = 0  # the queries' low-rank input width (DeepSeek's q_lora_rank), 0: the hidden size

    @property
    def key_bytes(self) -> float:
        """One cached indexer key: head_dim elements in key_format plus its block scales."""
        per_element, scale = INDEXER_KEY_FORMATS[self.key_format]
        return self.head_dim * per_element + scale * -(-self.head_dim // INDEXER_SCALE_BLOCK)

    @property
    def flops_per_key(self) -> int:
        """Scoring one cached key: a dot product per indexer head, 2 n_heads head_dim."""
        return 2 * self.n_heads * self.head_dim

    def params(self, hidden_size: int) -> int:
        """Its weights, as DeepSeek-V3.2's inference code builds them: query projection from the
        query latent (wq_b: q_rank x n_heads head_dim), key projection (wk: d x head_dim) with a
        LayerNorm (2 head_dim), per-head weights (d x n_heads)."""
        q_in = self.q_rank or hidden_size
        return q_in * self.n_heads * self.head_dim + hidden_size * self.head_dim + 2 * self.head_dim \
            + hidden_size * self.n_heads


@dataclass(frozen=True)
class CompressionSpec:
    """DeepSeek-V4's compressed KV: a "compressed" layer keeps one entry per ``ratio`` tokens,
    a "compressed_sparse" layer one per ``sparse_ratio`` tokens of which it attends the
    indexer's top-k; both keep the last ``sliding_window`` tokens uncompressed too."""

    ratio: int
    sparse_ratio: int


@dataclass(frozen=True)
class AttentionGroup:
    """Layers of one kind that keep their own cache (a slot of the kernels' model table): how
    many, one entry's elements (at the KV precision) and what tensor parallelism splits them
    by, the position rule (tokens per entry, an uncompressed window, the top-k attended, tokens
    per indexer key), the indexer key's bytes and scoring FLOPs, and the attention FLOPs per
    attended entry in decode and prefill. Counts only; ``closed_forms.AttentionGroups`` makes
    bytes and FLOPs of them."""

    kind: str
    layers: int
    elements: int
    shards: int
    ratio: int  # tokens per cached entry (1: every token)
    window: int  # tokens kept uncompressed besides (0: none)
    top_k: int  # entries attended (0: all)
    index_stride: int  # tokens per indexer key (0: no indexer)
    index_key_bytes: float
    index_flops: int  # per key scored
    flops_decode: int  # per attended entry
    flops_prefill: int


@dataclass(frozen=True)
class DeltaNetSpec:
    """Gated DeltaNet linear attention (Qwen3-Next's ``linear_attention`` layers).

    Keys and queries have ``n_key_heads`` heads of ``key_head_dim``; values (and the recurrent
    state) have ``n_value_heads`` heads of ``value_head_dim``; each key head serves
    ``n_value_heads / n_key_heads`` value heads. A depthwise causal convolution of
    ``conv_kernel`` taps runs over the query, key and value channels.
    """

    n_key_heads: int
    n_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int

    @property
    def key_width(self) -> int:
        return self.n_key_heads * self.key_head_dim

    @property
    def value_width(self) -> int:
        return self.n_value_heads * self.value_head_dim

    @property
    def conv_channels(self) -> int:
        """Channels the convolution runs over: queries, keys and values."""
        return 2 * self.key_width + self.value_width

    def params(self, hidden_size: int) -> int:
        """Weights of one block, as HF transformers' ``Qwen3NextGatedDeltaNet`` builds it
        (d = hidden_size, K = key_width, V = value_width, H_v = n_value_heads):

        - ``in_proj_qkvz``: d x (2K + 2V), no bias: queries, keys, values and the output gate z
        - ``in_proj_ba``: d x 2 H_v, no bias: per-value-head beta (write strength) and alpha (decay)
        - ``conv1d``: depthwise, (2K + V) channels x conv_kernel taps, no bias
        - ``dt_bias`` and ``A_log``: H_v each
        - ``norm``: gated RMSNorm over one value head, value_head_dim gains shared by the heads
        - ``out_proj``: V x d, no bias
        """
        d = hidden_size
        in_proj = d * (2 * self.key_width + 2 * self.value_width) + d * 2 * self.n_value_heads
        conv = self.conv_channels * self.conv_kernel
        per_head = 2 * self.n_value_heads
        return in_proj + conv + per_head + self.value_head_dim + self.value_width * d

    @property
    def state_elements(self) -> int:
        """Per sequence: the recurrent state (one key_head_dim x value_head_dim matrix per value
        head) plus the convolution's last conv_kernel - 1 inputs on every channel."""
        return self.matrix_state_elements + self.conv_state_elements

    @property
    def matrix_state_elements(self) -> int:
        """The recurrent state S of one sequence: a key_head_dim x value_head_dim matrix per value head."""
        return self.n_value_heads * self.key_head_dim * self.value_head_dim

    @property
    def conv_state_elements(self) -> int:
        """The convolution's state of one sequence: its last conv_kernel - 1 inputs on every channel."""
        return (self.conv_kernel - 1) * self.conv_channels

    @property
    def shards(self) -> int:
        """What tensor parallelism splits the layer by: its value heads (with their state)."""
        return self.n_value_heads

    @property
    def conv_flops_per_token(self) -> int:
        """The depthwise causal convolution: one multiply-add per tap per channel, 2 x (2K + V)
        x conv_kernel FLOPs per token, in prefill and decode alike."""
        return 2 * self.conv_channels * self.conv_kernel

    @property
    def decode_flops_per_token(self) -> int:
        """FLOPs of one decoding token beyond the projections (which count as weights), from HF
        transformers 5.24.0 ``torch_recurrent_gated_delta_rule`` (the gated delta rule of Yang,
        Kautz and Hatamizadeh, "Gated Delta Networks", ICLR 2025, Eq. 10), per value head with
        S a d_k x d_v matrix (d_k = key_head_dim, d_v = value_head_dim):

        - decay, S <- exp(g) S: d_k d_v multiplications
        - the state's prediction of the value, S^T k: 2 d_k d_v (a multiply-add per entry)
        - the delta-rule write, S <- S + k (beta (v - S^T k))^T: 2 d_k d_v (outer product and add)
        - the read-out, o = S^T q: 2 d_k d_v

        7 d_k d_v per value head (the O(d_k + d_v) vector work, gates and norms left out), plus
        the convolution: 7 H_v d_k d_v + 2 (2K + V) conv_kernel."""
        per_head = 7 * self.key_head_dim * self.value_head_dim
        return self.n_value_heads * per_head + self.conv_flops_per_token

    # The chunk length of the chunked (prefill) algorithm: HF transformers 5.24.0
    # torch_chunk_gated_delta_rule's chunk_size default, and flash-linear-attention's chunk_gated_delta_rule.
    CHUNK_TOKENS = 64

    @property
    def prefill_flops_per_token(self) -> float:
        """FLOPs per prompt token beyond the projections, by the chunked algorithm of HF
        transformers 5.24.0 ``torch_chunk_gated_delta_rule`` (the WY / UT-transform form of Yang
        et al., "Parallelizing Linear Transformers with the Delta Rule over Sequence Length",
        NeurIPS 2024, Sec. 3), which processes c = CHUNK_TOKENS tokens at a time. Per value head
        and chunk (K_c, Q_c: c x d_k, V_c: c x d_v, S: d_k x d_v):

        - within the chunk: (beta K_c) K_c^T and Q_c K_c^T, 2 c^2 d_k each; the unit lower
          triangular solves for the new values and the decayed keys, c^2 d_v and c^2 d_k
          (forward substitution: c^2/2 multiply-adds per right-hand side)
        - across chunks: the keys' read of the state and the queries' read, 2 c d_k d_v each;
          the intra-chunk attention times the corrected values, 2 c^2 d_v; the state update
          K_c^T V_new, 2 c d_k d_v

        c^2 (5 d_k + 3 d_v) + 6 c d_k d_v per chunk, so per token 6 d_k d_v + c (5 d_k + 3 d_v)
        per value head (the O(c^2) decay masks and the padding of a last partial chunk left
        out), plus the convolution."""
        d_k, d_v, c = self.key_head_dim, self.value_head_dim, self.CHUNK_TOKENS
        per_head = 6 * d_k * d_v + c * (5 * d_k + 3 * d_v)
        return self.n_value_heads * per_head + self.conv_flops_per_token


@dataclass(frozen=True)
class MambaSpec:
    """A Mamba-2 state-space mixer (Nemotron-H's ``M`` blocks).

    ``n_heads`` heads of ``head_dim`` channels (inner width n_heads x head_dim), a state of
    ``state_size`` per channel, B and C shared by the heads of each of ``n_groups`` groups, and
    a depthwise causal convolution of ``conv_kernel`` taps (with a bias when ``conv_bias``).
    """

    n_heads: int
    head_dim: int
    state_size: int
    n_groups: int
    conv_kernel: int
    conv_bias: bool = True

    @property
    def inner_width(self) -> int:
        return self.n_heads * self.head_dim

    @property
    def conv_channels(self) -> int:
        """Channels the convolution runs over: x, B and C."""
        return self.inner_width + 2 * self.n_groups * self.state_size

    def params(self, hidden_size: int) -> int:
        """Weights of one mixer, as HF transformers' ``NemotronHMamba2Mixer`` builds it
        (d = hidden_size, I = inner_width, G = n_groups, N = state_size, H = n_heads):

        - ``in_proj``: d x (2I + 2GN + H), no bias: z (the gate), x, B, C and dt
        - ``conv1d``: depthwise, (I + 2GN) channels x conv_kernel taps, plus one bias per channel
          when conv_bias (Nemotron-H's use_conv_bias, on by default)
        - ``dt_bias``, ``A_log`` and ``D``: H each
        - ``norm``: gated RMSNorm over the inner width, I gains
        - ``out_proj``: I x d, no bias
        """
        d = hidden_size
        in_proj = d * (2 * self.inner_width + 2 * self.n_groups * self.state_size + self.n_heads)
        conv = self.conv_channels * (self.conv_kernel + (1 if self.conv_bias else 0))
        return in_proj + conv + 3 * self.n_heads + self.inner_width + self.inner_width * d

    @property
    def state_elements(self) -> int:
        """Per sequence: the SSM state (head_dim x state_size per head) plus the convolution's
        last conv_kernel - 1 inputs on every channel."""
        return self.matrix_state_elements + self.conv_state_elements

    @property
    def matrix_state_elements(self) -> int:
        """The SSM state h of one sequence: a head_dim x state_size matrix per head."""
        return self.n_heads * self.head_dim * self.state_size

    @property
    def conv_state_elements(self) -> int:
        """The convolution's state of one sequence: its last conv_kernel - 1 inputs on every channel."""
        return (self.conv_kernel - 1) * self.conv_channels

    @property
    def shards(self) -> int:
        """What tensor parallelism splits the mixer by: its heads (with their state)."""
        return self.n_heads

    @property
    def conv_flops_per_token(self) -> int:
        """The depthwise causal convolution over x, B and C: 2 x (I + 2GN) x conv_kernel FLOPs
        per token (its bias and SiLU left out)."""
        return 2 * self.conv_channels * self.conv_kernel

    @property
    def decode_flops_per_token(self) -> int:
        """FLOPs of one decoding token beyond the projections, from the recurrent step of HF
        transformers 5.24.0 ``mamba2_selective_state_update`` (``modeling_nemotron_h``'s one-token step), the
        selective state update h <- exp(dt A) h + dt B x^T, y = h C (Dao and Gu, "Transformers are
        SSMs", ICML 2024, Eq. 1 with scalar A per head). Per head, with h a P x N matrix
        (P = head_dim, N = state_size):

        - dB x: the outer product of x (P) and dt B (N), P N multiplications
        - h <- dA h + dB x: 2 P N
        - y = h C: 2 P N

        5 P N per head (the O(P + N) discretisation, the D skip and the gate left out), plus the
        convolution: 5 H P N + 2 (I + 2GN) conv_kernel."""
        return 5 * self.n_heads * self.head_dim * self.state_size + self.conv_flops_per_token

    # The chunk length of the chunked (SSD) algorithm: NemotronHConfig.chunk_size's default in
    # HF transformers 5.24.0 (the Nemotron-H checkpoints' value).
    CHUNK_TOKENS = 128

    @property
    def prefill_flops_per_token(self) -> float:
        """FLOPs per prompt token beyond the projections, by the chunked "state space duality"
        algorithm (Dao and Gu 2024, Sec. 6; HF transformers 5.24.0 ``modeling_nemotron_h``'s
        ``mamba2_chunk_scan`` fallback, steps 1-4). Per chunk of Q = CHUNK_TOKENS tokens:

        - the diagonal blocks, attention-like: C B^T, 2 Q^2 N per group (B and C are shared
          by the heads of a group; the CUDA kernels HF and vLLM call compute it once per group,
          where HF's torch fallback repeats it per head), then its masked product with x,
          2 Q^2 P per head
        - each chunk's state, B^T x: 2 Q N P per head
        - the off-diagonal blocks, C times the carried state: 2 Q N P per head

        Per token: H (2 Q P + 4 N P) + G 2 Q N (the decay masks, O(Q) per head, and the
        chunk-to-chunk state passing, O(P N / Q) per head, left out), plus the convolution."""
        q, p, n = self.CHUNK_TOKENS, self.head_dim, self.state_size
        per_head = 2 * q * p + 4 * n * p
        return self.n_heads * per_head + self.n_groups * 2 * q * n + self.conv_flops_per_token


@dataclass(frozen=True)
class ModelArch:
    id: str
    name: str
    family: str
    source: str
    n_layers: int
    hidden_size: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    intermediate_size: int  # dense FFN width (dense layers of a MoE model use it too)
    vocab_size: int
    tied_embeddings: bool
    max_context: int
    nominal_total_params: float
    nominal_active_params: float
    nominal_source: str = ""
    # Which of the embedding table and LM head the card's active figure counts (see
    # NOMINAL_ACTIVE_EMBEDDINGS); only the comparison with the nominal size reads it.
    nominal_active_embeddings: str = "both"
    qkv_bias: bool = False
    qk_norm: bool = False
    o_bias: bool = False  # the attention output projection has a bias (gpt-oss)
    attention_sinks: bool = False  # one learned sink logit per query head per attention layer (gpt-oss)
    attention_output_gate: bool = False  # q projection also yields a per-head output gate (Qwen3-Next)
    ffn_kind: str = "gated"  # see FFN_KINDS
    ffn_bias: bool = False  # FFN and expert projections have biases (gpt-oss)
    sliding_window: int = 0  # tokens kept by "window" layers
    attention_chunk: int = 0  # chunk length of "chunked" layers
    # Per-layer overrides for heterogeneous stacks; empty means uniform.
    layer_attention: tuple[str, ...] = ()
    layer_intermediate_sizes: tuple[int, ...] = ()  # dense FFN width per layer, 0 = no FFN
    layer_moe: tuple[bool, ...] = ()  # which layers are MoE; empty means as `moe` describes
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    deltanet: DeltaNetSpec | None = None  # shapes the "deltanet" layers
    mamba: MambaSpec | None = None  # shapes the "mamba" layers
    global_attention: AttentionShape | None = None  # shapes the "global" layers
    indexer: IndexerSpec | None = None  # selects what "sparse" and "compressed_sparse" layers attend
    compression: CompressionSpec | None = None  # the ratios of "compressed" and "compressed_sparse" layers
    kv_shared: bool = False  # K = V: one cached tensor per KV head (DeepSeek-V4's 512-wide KV head)
    # Low-rank query and output projections of the model's own attention (DeepSeek-V4): queries
    # through a q_lora_rank latent; outputs through o_groups groups of heads, each down to
    # o_lora_rank, then up to the hidden size. 0: full-rank projections.
    q_lora_rank: int = 0
    o_lora_rank: int = 0
    o_groups: int = 0
    # The format the published weights come in (see NATIVE_WEIGHT_PRECISIONS and
    # NATIVE_PRECISION_SCOPES); empty when not stated. A scenario starts from it
    # (default_weight_precision); chosen, it covers what its scope says (native_scope_keeps_wide).
    native_weight_precision: str = ""
    native_precision_scope: str = ""
    native_precision_source: str = ""
    notes: str = ""
    source_file: str = ""

    # ---- layer structure -------------------------------------------------------------

    def attention_kind(self, layer: int) -> str:
        if self.layer_attention:
            return self.layer_attention[layer]
        return "full"

    def is_moe_layer(self, layer: int) -> bool:
        if self.moe is None:
            return False
        if self.layer_moe:
            return self.layer_moe[layer]
        if layer < self.moe.n_dense_layers:
            return False
        return (layer - self.moe.n_dense_layers) % self.moe.moe_layer_step == self.moe.moe_layer_step - 1

    def dense_ffn_size(self, layer: int) -> int:
        if self.is_moe_layer(layer):
            return 0
        if self.layer_intermediate_sizes:
            return self.layer_intermediate_sizes[layer]
        return self.intermediate_size

    @cached_property
    def n_moe_layers(self) -> int:
        return sum(self.is_moe_layer(layer) for layer in range(self.n_layers))

    def count_attention(self, kind: str) -> int:
        return sum(self.attention_kind(layer) == kind for layer in range(self.n_layers))

    # ---- parameters per block --------------------------------------------------------

    @cached_property
    def attention_params(self) -> int:
        """Weights of one full/window attention block (projections, biases, q/k norms)."""
        d = self.hidden_size
        if self.mla is not None:
            m = self.mla
            qk_head = m.qk_nope_head_dim + m.qk_rope_head_dim
            if m.q_lora_rank:
                q = d * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * self.n_heads * qk_head
            else:
                q = d * self.n_heads * qk_head
            kv_down = d * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank
            kv_up = m.kv_lora_rank * self.n_heads * (m.qk_nope_head_dim + m.v_head_dim)
            out = self.n_heads * m.v_head_dim * d
            return q + kv_down + kv_up + out
        q_width = self.n_heads * self.head_dim
        kv_width = self.n_kv_heads * self.head_dim
        if self.kv_shared:
            kv_width //= 2  # one tensor for K and V: counted once below
        # With an output gate the q projection is twice as wide: queries, then one gate value
        # per query channel (Qwen3-Next's q_proj: d -> 2 x n_heads x head_dim).
        q_out = 2 * q_width if self.attention_output_gate else q_width
        q_params = d * q_out
        if self.q_lora_rank:
            q_params = d * self.q_lora_rank + self.q_lora_rank + self.q_lora_rank * q_out  # with the latent's norm
        out_params = q_width * d
        if self.o_lora_rank:
            out_params = q_width * self.o_lora_rank + self.o_groups * self.o_lora_rank * d
        params = q_params + 2 * d * kv_width + out_params
        if self.qkv_bias:
            params += q_out + 2 * kv_width
        if self.o_bias:
            params += d
        if self.qk_norm:
            params += 2 * self.head_dim
        if self.attention_sinks:
            params += self.n_heads
        return params

    def attention_block_params(self, layer: int) -> int:
        kind = self.attention_kind(layer)
        if kind in ("full", "window", "chunked", "compressed"):
            return self.attention_params
        if kind in ("sparse", "compressed_sparse"):
            return self.attention_params + self.indexer.params(self.hidden_size)
        if kind == "global":
            return self.global_attention.params(self.hidden_size, self.qk_norm)
        if kind == "linear":
            return self.hidden_size * self.hidden_size
        if kind == "deltanet":
            return self.deltanet.params(self.hidden_size)
        if kind == "mamba":
            return self.mamba.params(self.hidden_size)
        return 0

    def ffn_params(self, width: int) -> int:
        """One FFN (dense, expert or shared expert) of this intermediate width: gated (SwiGLU):
        gate, up and down projections, 3 x d x width; relu2: up and down only, 2 x d x width.
        With ffn_bias, each projection's bias too (width per gate or up, d for down)."""
        if width == 0:
            return 0
        matrices = 3 if self.ffn_kind == "gated" else 2
        params = matrices * self.hidden_size * width
        if self.ffn_bias:
            params += (matrices - 1) * width + self.hidden_size
        return params

    @cached_property
    def expert_params(self) -> int:
        """One routed expert of one MoE layer."""
        return self.ffn_params(self.moe.expert_intermediate_size) if self.moe else 0

    @cached_property
    def moe_layer_fixed_params(self) -> int:
        """Parts of a MoE FFN every token uses: router and shared experts."""
        if self.moe is None:
            return 0
        router = self.router_params_per_layer
        shared = self.moe.n_shared_experts * self.ffn_params(self.moe.shared_expert_intermediate_size)
        return router + shared

    # ---- parameter groups (what the physics reads) -----------------------------------

    @cached_property
    def block_params_fixed(self) -> int:
        """Transformer-block linear weights every token uses (everything but routed experts)."""
        total = 0
        for layer in range(self.n_layers):
            total += self.attention_block_params(layer)
            if self.is_moe_layer(layer):
                total += self.moe_layer_fixed_params
            else:
                total += self.ffn_params(self.dense_ffn_size(layer))
        return total

    @cached_property
    def router_params_per_layer(self) -> int:
        """One MoE layer's router: d x n_routed_experts, plus a bias per expert with router_bias."""
        if self.moe is None:
            return 0
        bias = self.moe.n_routed_experts if self.moe.router_bias else 0
        return self.hidden_size * self.moe.n_routed_experts + bias

    @cached_property
    def router_params_total(self) -> int:
        """Router (gate) weights of all MoE layers; kept in 16 bits when experts are quantised."""
        return self.n_moe_layers * self.router_params_per_layer

    @cached_property
    def routed_expert_params_total(self) -> int:
        if self.moe is None:
            return 0
        return self.n_moe_layers * self.moe.n_routed_experts * self.expert_params

    @cached_property
    def norm_params(self) -> int:
        """RMSNorm gains: two per layer plus the final norm (tiny; kept for exact totals)."""
        return (2 * self.n_layers + 1) * self.hidden_size

    @cached_property
    def embedding_params(self) -> int:
        return self.vocab_size * self.hidden_size

    @cached_property
    def lm_head_params(self) -> int:
        """The output projection's size; with tied embeddings it is the embedding table itself."""
        return self.vocab_size * self.hidden_size

    @cached_property
    def total_params(self) -> int:
        untied_head = 0 if self.tied_embeddings else self.lm_head_params
        return (
            self.embedding_params
            + untied_head
            + self.block_params_fixed
            + self.routed_expert_params_total
            + self.norm_params
        )

    @cached_property
    def active_params(self) -> int:
        """Parameters one token touches, counting embeddings as model cards do."""
        untied_head = 0 if self.tied_embeddings else self.lm_head_params
        routed = self.n_moe_layers * self.moe.experts_per_token * self.expert_params if self.moe else 0
        return self.embedding_params + untied_head + self.block_params_fixed + routed + self.norm_params

    @cached_property
    def active_params_as_nominal(self) -> int:
        """The active count the way the model card counts it (nominal_active_embeddings), to
        compare with nominal_active_params: the embedding table, and for "none" the LM head too,
        left out. A tied table is the LM head, so "head_only" keeps it."""
        active = self.active_params
        if self.nominal_active_embeddings in ("head_only", "none") and not self.tied_embeddings:
            active -= self.embedding_params
        if self.nominal_active_embeddings == "none":
            active -= self.lm_head_params
        return active

    @cached_property
    def matmul_params_per_token(self) -> int:
        """Block weights multiplied per token (2 FLOPs each); the LM head is counted apart."""
        routed = self.n_moe_layers * self.moe.experts_per_token * self.expert_params if self.moe else 0
        return self.block_params_fixed + routed

    # ---- attention and KV cache ------------------------------------------------------

    @cached_property
    def kv_elements_per_token_per_layer(self) -> int:
        """Elements stored per token per attention layer: K and V, or MLA's latent + RoPE key."""
        if self.mla is not None:
            return self.mla.kv_lora_rank + self.mla.qk_rope_head_dim
        if self.kv_shared:
            return self.n_kv_heads * self.head_dim
        return 2 * self.n_kv_heads * self.head_dim

    @cached_property
    def kv_shards(self) -> int:
        """How many ways tensor parallelism can split the KV cache: by KV heads; MLA's latent
        is shared by all heads, so every tensor-parallel rank keeps all of it."""
        return 1 if self.mla is not None else self.n_kv_heads

    @cached_property
    def attention_flops_per_position_decode(self) -> int:
        """FLOPs per new token, per attention layer, per context position (scores + values).

        MLA decodes in the "absorbed" form (vLLM, FlashMLA): scores over the latent plus RoPE
        key, values over the latent.
        """
        if self.mla is not None:
            m = self.mla
            return 2 * self.n_heads * (m.kv_lora_rank + m.qk_rope_head_dim) + 2 * self.n_heads * m.kv_lora_rank
        return 4 * self.n_heads * self.head_dim

    @cached_property
    def attention_flops_per_position_prefill(self) -> int:
        """As for decode, but MLA prefill expands K/V per head (the non-absorbed form)."""
        if self.mla is not None:
            m = self.mla
            return 2 * self.n_heads * (m.qk_nope_head_dim + m.qk_rope_head_dim) + 2 * self.n_heads * m.v_head_dim
        return 4 * self.n_heads * self.head_dim

    @cached_property
    def attention_groups(self) -> tuple[AttentionGroup, ...]:
        """The layer kinds of GROUP_KINDS this model has, one group each, in GROUP_KINDS' order
        (empty for a model with only full, window and chunked attention, whose layers share
        the model's own heads and the counts above). A "sparse" or "compressed" layer caches
        entries of the model's own shape (MLA's latent, or its KV heads); a "global" layer
        those of ``global_attention``."""
        groups = []
        own_shards = self.kv_shards
        for kind in GROUP_KINDS:
            layers = self.count_attention(kind)
            if not layers:
                continue
            if kind == "global":
                g = self.global_attention
                groups.append(AttentionGroup(kind, layers, g.kv_elements, g.n_kv_heads, 1, 0, 0, 0, 0.0, 0,
                                             g.flops_per_position, g.flops_per_position))
                continue
            ratio = 1
            window = 0
            if kind in ("compressed", "compressed_sparse"):
                ratio = self.compression.ratio if kind == "compressed" else self.compression.sparse_ratio
                window = self.sliding_window
            top_k, stride, key_bytes, index_flops = 0, 0, 0.0, 0
            if kind in ("sparse", "compressed_sparse"):
                ix = self.indexer
                top_k, stride, key_bytes, index_flops = ix.top_k, ratio * ix.block_tokens, ix.key_bytes, ix.flops_per_key
            groups.append(AttentionGroup(kind, layers, self.kv_elements_per_token_per_layer, own_shards, ratio, window,
                                         top_k, stride, key_bytes, index_flops,
                                         self.attention_flops_per_position_decode,
                                         self.attention_flops_per_position_prefill))
        return tuple(groups)

    @cached_property
    def n_full_attention_layers(self) -> int:
        return self.count_attention("full")

    @cached_property
    def n_window_attention_layers(self) -> int:
        return self.count_attention("window")

    @cached_property
    def n_chunked_attention_layers(self) -> int:
        return self.count_attention("chunked")

    @cached_property
    def n_deltanet_layers(self) -> int:
        """Gated DeltaNet layers: no KV cache, a fixed recurrent state per sequence."""
        return self.count_attention("deltanet")

    @cached_property
    def n_mamba_layers(self) -> int:
        """Mamba-2 layers: no KV cache, a fixed recurrent state per sequence."""
        return self.count_attention("mamba")

    def recurrent_state_elements_per_layer(self, kind: str) -> int:
        """Elements of the fixed-size state one sequence keeps in one layer of this kind,
        whatever the context length (the layer keeps no KV cache):

        - ``"deltanet"``: n_value_heads x key_head_dim x value_head_dim (the recurrent state)
          + (conv_kernel - 1) x (2 x n_key_heads x key_head_dim + n_value_heads x value_head_dim)
          (the convolution's state)
        - ``"mamba"``: n_heads x head_dim x state_size (the SSM state)
          + (conv_kernel - 1) x (n_heads x head_dim + 2 x n_groups x state_size)

        0 for the other kinds (attention keeps a KV cache instead; "linear" and "none" keep
        nothing) and for a kind the model has no table for.
        """
        if kind not in LAYER_ATTENTION_KINDS:
            raise ValueError(f"unknown layer kind {kind!r}; expected one of {', '.join(LAYER_ATTENTION_KINDS)}")
        if kind == "deltanet" and self.deltanet is not None:
            return self.deltanet.state_elements
        if kind == "mamba" and self.mamba is not None:
            return self.mamba.state_elements
        return 0

    def recurrent_spec(self, kind: str) -> DeltaNetSpec | MambaSpec | None:
        """The table shaping this model's layers of a recurrent kind ("deltanet" or "mamba"),
        None when it has none."""
        if kind == "deltanet":
            return self.deltanet
        if kind == "mamba":
            return self.mamba
        return None

    @cached_property
    def default_weight_precision(self) -> str:
        """The weight format a scenario starts from for this model: the format its weights are
        published in (gpt-oss's MXFP4, DeepSeek-V3's FP8), else BF16."""
        return self.native_weight_precision or "bf16"

    def native_scope_keeps_wide(self, weight_precision: str) -> bool:
        """True when ``weight_precision`` is this model's published format and that format
        covers only its routed experts (gpt-oss's MXFP4): the rest of the blocks' linear layers
        then stay in 16 bits, as in the published checkpoint. Any other format applies to
        every linear layer of the blocks."""
        return (
            bool(self.native_weight_precision)
            and weight_precision == self.native_weight_precision
            and self.native_precision_scope == "experts"
        )

    @cached_property
    def mean_ffn_width_per_token(self) -> float:
        """FFN intermediate width a token passes through, averaged over layers (activations)."""
        total = 0
        for layer in range(self.n_layers):
            if self.is_moe_layer(layer):
                moe = self.moe
                total += moe.experts_per_token * moe.expert_intermediate_size
                total += moe.n_shared_experts * moe.shared_expert_intermediate_size
            else:
                total += self.dense_ffn_size(layer)
        return total / self.n_layers

    @cached_property
    def attention_activation_width(self) -> int:
        """Elements per token of the attention's live activations: queries, keys and values as
        the attention kernel sees them (MLA expands K and V per head during prefill)."""
        if self.mla is not None:
            m = self.mla
            return self.n_heads * (2 * (m.qk_nope_head_dim + m.qk_rope_head_dim) + m.v_head_dim)
        return (self.n_heads + 2 * self.n_kv_heads) * self.head_dim

    @property
    def is_moe(self) -> bool:
        return self.moe is not None


def weight_precision_for_model(new: ModelArch, current: str, previous: ModelArch | None = None) -> str:
    """The weight format a scenario takes when its model changes from ``previous`` to ``new``
    with weights in ``current``: the new model's published format when it has one (gpt-oss's
    MXFP4, DeepSeek-V3's FP8), which the user may then change; BF16 again when the format was
    only the previous model's published one; otherwise the user's choice, kept."""
    if new.native_weight_precision:
        return new.native_weight_precision
    if previous is not None and previous.native_weight_precision and current == previous.native_weight_precision:
        return "bf16"
    return current

