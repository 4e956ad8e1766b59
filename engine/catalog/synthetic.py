"""Synthetic models: a ``ModelArch`` built from a few numbers, to explore sizes no catalog has.

From the total parameters, the active parameters per token (MoE), the routed experts, the
experts per token, the layers and the hidden size, the rest is derived:

- attention: head dim 128, ``hidden / 128`` query heads, grouped-query attention with 8 KV
  heads (Llama 3 70B/405B, Qwen3, Mistral Large all use 8), untied 128,256-token vocabulary
  (Llama 3's tokenizer), SwiGLU FFNs, full attention in every layer;
- dense: the FFN width is solved so that the derived total matches the requested total;
- MoE: every layer is MoE; the routed-expert width is solved from total − active (the only
  parameters a token does not use are the unselected routed experts), and the active
  parameters left over after attention, embeddings and the selected experts go to one shared
  expert per layer, as in DeepSeek-V3 and Kimi K2.

Widths are rounded to whole numbers, so the derived totals sit within a fraction of a percent
of the request (the tests hold them within 1%). The id names every defining number, so equal
requests give equal ids and the engine's ``with_models`` can take the model under it.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..core.model import ModelArch, MoESpec

HEAD_DIM = 128  # Llama 3, Qwen3, DeepSeek-V3 (non-MLA dims) and Kimi K2 query heads use 128
KV_HEADS = 8  # grouped-query attention with 8 KV heads, as Llama 3 70B/405B and Qwen3 32B
VOCAB_SIZE = 128_256  # Llama 3's tokenizer ("128K vocabulary"; meta-llama config.json)
MAX_CONTEXT = 131_072  # 128K tokens, the context of Llama 3.1 and Kimi K2
SOURCE = "synthetic: derived from the requested sizes (engine/catalog/synthetic.py)"

# Sanity bounds (the model catalog's limits): beyond them the request is a typo.
MAX_PARAMS = 1e15
MAX_LAYERS = 4096
MAX_HIDDEN = 1 << 20
MAX_EXPERTS = 1 << 16

# Rounding the expert width can leave the request a hair below attention + experts; a
# shortfall this small becomes "no shared expert" instead of an error.
ACTIVE_TOLERANCE = 0.005

# A 1T dense model: depth and width grown from Llama 3.1 405B (126 layers, hidden 16384, FFN
# 53248, meta-llama/Llama-3.1-405B config.json) so that the FFN stays about 3.25x the hidden
# size; the solved FFN width is 83,307 (3.25x).
DENSE_1T_LAYERS = 128
DENSE_1T_HIDDEN = 25_600

# A 1T MoE with Kimi K2's shape: 1.04T total / 32.9B active per its model card, 61 layers,
# hidden 7168, 384 routed experts, 8 per token (moonshotai/Kimi-K2-Instruct config.json).
# Kimi K2 uses MLA and one dense first layer; the synthetic model keeps GQA and all-MoE layers.
MOE_1T_TOTAL = 1.0e12
MOE_1T_ACTIVE = 32e9
MOE_1T_EXPERTS = 384
MOE_1T_EXPERTS_PER_TOKEN = 8
MOE_1T_LAYERS = 61
MOE_1T_HIDDEN = 7168


def synthetic_model(
    total_params: float,
    *,
    n_layers: int,
    hidden_size: int,
    active_params: float | None = None,
    n_experts: int = 0,
    experts_per_token: int = 0,
) -> ModelArch:
    """A model with ``total_params`` parameters (and ``active_params`` per token when MoE).

    Dense when ``n_experts`` is 0 (then ``active_params`` must be omitted or equal the total);
    MoE otherwise, with ``experts_per_token`` routed experts chosen per token. Raises
    ``ValueError`` with a one-line reason for a request no architecture of this shape meets
    (``TypeError`` for an argument of the wrong type).
    """
    _check_number("total_params", total_params, 1.0, MAX_PARAMS)
    _check_int("n_layers", n_layers, 1, MAX_LAYERS)
    _check_int("hidden_size", hidden_size, HEAD_DIM, MAX_HIDDEN)
    _check_int("n_experts", n_experts, 0, MAX_EXPERTS)
    _check_int("experts_per_token", experts_per_token, 0, MAX_EXPERTS)
    if hidden_size % HEAD_DIM:
        raise ValueError(f"hidden_size must be a multiple of the head dim {HEAD_DIM}, got {hidden_size}")
    if active_params is not None:
        _check_number("active_params", active_params, 1.0, MAX_PARAMS)
        if active_params > total_params:
            raise ValueError(
                f"active_params ({active_params:.4g}) cannot exceed total_params ({total_params:.4g})"
            )

    n_heads = hidden_size // HEAD_DIM
    n_kv_heads = math.gcd(n_heads, KV_HEADS)
    skeleton = ModelArch(
        id="",
        name="",
        family="synthetic",
        source=SOURCE,
        n_layers=n_layers,
        hidden_size=hidden_size,
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=HEAD_DIM,
        intermediate_size=0,
        vocab_size=VOCAB_SIZE,
        tied_embeddings=False,
        max_context=MAX_CONTEXT,
        nominal_total_params=float(total_params),
        nominal_active_params=float(active_params if active_params is not None else total_params),
        nominal_source="the requested sizes",
    )
    # Parameters that do not depend on the FFN widths: embeddings, LM head, norms, attention.
    fixed = (
        skeleton.embedding_params
        + skeleton.lm_head_params
        + skeleton.norm_params
        + n_layers * skeleton.attention_params
    )
    ffn_per_width = 3 * hidden_size * n_layers  # SwiGLU parameters per unit of width, all layers

    if n_experts == 0:
        if experts_per_token:
            raise ValueError("experts_per_token needs n_experts > 0 (a dense model has no experts)")
        if active_params is not None and active_params != total_params:
            raise ValueError(
                f"a dense model uses every parameter per token: active_params ({active_params:.4g}) "
                f"must equal total_params ({total_params:.4g}) or be omitted"
            )
        width = round((total_params - fixed) / ffn_per_width)
        if width < 1:
            raise ValueError(
                f"total_params ({total_params:.4g}) is too small for {n_layers} layers of hidden size "
                f"{hidden_size}: attention and embeddings alone take {fixed:.4g}"
            )
        model_id = f"synthetic-dense-{_billions(total_params)}b-l{n_layers}-d{hidden_size}"
        name = f"Synthetic dense {_billions(total_params)}B ({n_layers} layers, hidden {hidden_size})"
        return replace(skeleton, id=model_id, name=name, intermediate_size=width)

    if n_experts < 2:
        raise ValueError(f"a mixture of experts needs at least 2 routed experts, got n_experts = {n_experts}")
    if experts_per_token < 1:
        raise ValueError("experts_per_token must be at least 1 for a mixture-of-experts model")
    if experts_per_token >= n_experts:
        raise ValueError(
            f"experts_per_token ({experts_per_token}) must be below n_experts ({n_experts}); "
            "with every expert active the model is dense"
        )
    if active_params is None:
        raise ValueError("a mixture-of-experts model needs active_params (parameters used per token)")
    if active_params == total_params:
        raise ValueError("active_params equals total_params, which leaves no parameters for unselected experts")

    fixed += n_layers * hidden_size * n_experts  # routers
    # total − active is exactly the unselected routed experts: L·(E − k)·3·d·f_expert.
    expert_width = round((total_params - active_params) / (ffn_per_width * (n_experts - experts_per_token)))
    if expert_width < 1:
        raise ValueError(
            f"total − active ({total_params - active_params:.4g}) is too small to give "
            f"{n_experts - experts_per_token} unselected experts a width of at least 1 in each of {n_layers} layers"
        )
    routed_active = ffn_per_width * experts_per_token * expert_width
    minimum_active = fixed + routed_active
    if active_params < minimum_active * (1.0 - ACTIVE_TOLERANCE):
        raise ValueError(
            f"active_params ({active_params:.4g}) is below what attention, embeddings, routers and "
            f"{experts_per_token} experts of width {expert_width} already use ({minimum_active:.4g}); "
            "use fewer layers, a smaller hidden size or more active parameters"
        )
    shared_width = max(0, round((active_params - minimum_active) / ffn_per_width))
    moe = MoESpec(
        n_routed_experts=n_experts,
        experts_per_token=experts_per_token,
        expert_intermediate_size=expert_width,
        n_shared_experts=1 if shared_width else 0,
        shared_expert_intermediate_size=shared_width,
    )
    total_b = _billions(total_params)
    active_b = _billions(active_params)
    model_id = (
        f"synthetic-moe-{total_b}b-a{active_b}b-e{n_experts}-k{experts_per_token}-l{n_layers}-d{hidden_size}"
    )
    name = (
        f"Synthetic MoE {total_b}B-A{active_b}B ({n_experts} experts, {experts_per_token} per token, "
        f"{n_layers} layers, hidden {hidden_size})"
    )
    return replace(skeleton, id=model_id, name=name, intermediate_size=expert_width, moe=moe)


def dense_1t() -> ModelArch:
    """A 1T-parameter dense model (see DENSE_1T_LAYERS for its shape)."""
    return synthetic_model(1.0e12, n_layers=DENSE_1T_LAYERS, hidden_size=DENSE_1T_HIDDEN)


def moe_1t() -> ModelArch:
    """A 1T-total / 32B-active MoE with Kimi K2's shape (384 experts, 8 per token)."""
    return synthetic_model(
        MOE_1T_TOTAL,
        active_params=MOE_1T_ACTIVE,
        n_experts=MOE_1T_EXPERTS,
        experts_per_token=MOE_1T_EXPERTS_PER_TOKEN,
        n_layers=MOE_1T_LAYERS,
        hidden_size=MOE_1T_HIDDEN,
    )


def _billions(params: float) -> str:
    """Parameters in billions for an id: 1e12 -> '1000', 3.2e10 -> '32', 1.5e9 -> '1.5'."""
    return f"{params / 1e9:.4g}"


def _check_number(name: str, value: object, low: float, high: float) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low:g} and {high:g}, got {value:g}")


def _check_int(name: str, value: object, low: int, high: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be a whole number, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low:,} and {high:,}, got {value:,}")
