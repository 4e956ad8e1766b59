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
LAYER_ATTENTION_KINDS: tuple[str, ...] = ("full", "window", "chunked", "linear", "none")


@dataclass(frozen=True)
class MoESpec:
    n_routed_experts: int
    experts_per_token: int
    expert_intermediate_size: int
    n_shared_experts: int = 0
    shared_expert_intermediate_size: int = 0
    n_dense_layers: int = 0  # leading layers with a dense FFN (DeepSeek's first_k_dense_replace)
    moe_layer_step: int = 1  # after those, every n-th layer is MoE (Llama 4 Maverick: 2)


@dataclass(frozen=True)
class MLASpec:
    """Multi-head latent attention (DeepSeek-V2/V3): K/V stored as one compressed latent."""

    q_lora_rank: int  # 0 means queries are not compressed
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int


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
    qkv_bias: bool = False
    qk_norm: bool = False
    sliding_window: int = 0  # tokens kept by "window" layers
    attention_chunk: int = 0  # chunk length of "chunked" layers
    # Per-layer overrides for heterogeneous stacks; empty means uniform.
    layer_attention: tuple[str, ...] = ()
    layer_intermediate_sizes: tuple[int, ...] = ()  # dense FFN width per layer, 0 = no FFN
    layer_moe: tuple[bool, ...] = ()  # which layers are MoE; empty means as `moe` describes
    moe: MoESpec | None = None
    mla: MLASpec | None = None
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
        params = d * q_width + 2 * d * kv_width + q_width * d
        if self.qkv_bias:
            params += q_width + 2 * kv_width
        if self.qk_norm:
            params += 2 * self.head_dim
        return params

    def attention_block_params(self, layer: int) -> int:
        kind = self.attention_kind(layer)
        if kind in ("full", "window", "chunked"):
            return self.attention_params
        if kind == "linear":
            return self.hidden_size * self.hidden_size
        return 0

    def ffn_params(self, width: int) -> int:
        """A gated (SwiGLU) FFN: gate, up and down projections."""
        return 3 * self.hidden_size * width

    @cached_property
    def expert_params(self) -> int:
        """One routed expert of one MoE layer."""
        return self.ffn_params(self.moe.expert_intermediate_size) if self.moe else 0

    @cached_property
    def moe_layer_fixed_params(self) -> int:
        """Parts of a MoE FFN every token uses: router and shared experts."""
        if self.moe is None:
            return 0
        router = self.hidden_size * self.moe.n_routed_experts
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
    def router_params_total(self) -> int:
        """Router (gate) weights of all MoE layers; kept in 16 bits when experts are quantised."""
        return self.n_moe_layers * self.hidden_size * self.moe.n_routed_experts if self.moe else 0

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
    def n_full_attention_layers(self) -> int:
        return self.count_attention("full")

    @cached_property
    def n_window_attention_layers(self) -> int:
        return self.count_attention("window")

    @cached_property
    def n_chunked_attention_layers(self) -> int:
        return self.count_attention("chunked")

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
