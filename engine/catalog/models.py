"""The model catalog: one TOML file per model, bundled or in a user's own catalog folder.

A model file holds the architecture (from the model's published ``config.json``), the nominal
size (from its model card) and where each came from; every count the physics needs is derived
from the architecture by :class:`~accelscope.engine.core.model.ModelArch`. The format is documented
for users in ``resources/models/README.md``.

Model files are untrusted input (users write and share them), so the loader checks every field
and reports the first problem as a :class:`CatalogError` naming the file and the dotted field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from ..core.errors import CatalogError
from ..core.model import (
    FFN_KINDS,
    LAYER_ATTENTION_KINDS,
    NATIVE_PRECISION_SCOPES,
    NATIVE_WEIGHT_PRECISIONS,
    INDEXER_KEY_FORMATS,
    NOMINAL_ACTIVE_EMBEDDINGS,
    AttentionShape,
    CompressionSpec,
    DeltaNetSpec,
    IndexerSpec,
    MambaSpec,
    MLASpec,
    ModelArch,
    MoESpec,
)
from .reading import PathLike, TableReader, as_path, check_int, describe, read_toml_file

# The bundled models, in the order the app lists them: the second paper's Table II
# (Brunetta et al. 2025) by family, dense before MoE, plus Llama 2 70B; then the later
# additions, by family, small before large.
BUNDLED_ORDER: tuple[str, ...] = (
    "llama-3.1-8b",
    "llama-3.3-70b",
    "llama-3.1-70b",
    "llama-3.1-405b",
    "llama-2-70b",
    "nemotron-super-49b",
    "llama-4-scout-17b-16e",
    "llama-4-maverick-17b-128e",
    "qwen3-8b",
    "qwen3-14b",
    "qwen3-32b",
    "qwen2.5-72b",
    "qwen3-235b-a22b",
    "qwen3-coder-480b-a35b",
    "ministral-8b",
    "mistral-small-3.1-24b",
    "mixtral-8x7b",
    "mixtral-8x22b",
    "deepseek-r1",
    "deepseek-v3",
    "deepseek-v3.2",
    "deepseek-v4-flash",
    "deepseek-v4-pro",
    "kimi-k2",
    "llama-3.2-3b",
    "qwen3-4b",
    "qwen3-30b-a3b",
    "gpt-oss-20b",
    "gpt-oss-120b",
    "glm-4.5-air",
    "glm-4.5",
    "glm-5",
    "gemma-3-4b",
    "gemma-3-27b",
    "gemma-4-26b-a4b",
    "gemma-4-31b",
    "phi-4",
    "qwen3-next-80b-a3b",
    "nemotron-h-8b",
    "nemotron-h-56b",
)

# Upper bounds far beyond any published model. A value past them is a typo or a hostile
# file, and per-layer loops over it would stall the app.
MAX_LAYERS = 4096
MAX_WIDTH = 1 << 20  # hidden size, FFN widths, head dims, MLA ranks
MAX_HEADS = 1 << 14
MAX_VOCAB = 1 << 24
MAX_CONTEXT = 1 << 30
MAX_EXPERTS = 1 << 16
MAX_PARAMS = 1e15

MODEL_ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")

# ---- the model file format -----------------------------------------------------------

_TOP_KEYS = (
    "id",
    "name",
    "family",
    "source",
    "max_context",
    "notes",
    "nominal",
    "architecture",
    "moe",
    "mla",
    "deltanet",
    "mamba",
    "global_attention",
    "indexer",
    "compression",
    "native_precision",
)
_NOMINAL_KEYS = ("total_params", "active_params", "source", "active_embeddings")
_ARCHITECTURE_KEYS = (
    "n_layers",
    "hidden_size",
    "n_heads",
    "n_kv_heads",
    "head_dim",
    "intermediate_size",
    "vocab_size",
    "tied_embeddings",
    "qkv_bias",
    "qk_norm",
    "o_bias",
    "attention_sinks",
    "attention_output_gate",
    "ffn_kind",
    "ffn_bias",
    "sliding_window",
    "attention_chunk",
    "layer_attention",
    "layer_intermediate_sizes",
    "kv_shared",
    "q_lora_rank",
    "o_lora_rank",
    "o_groups",
)
_MOE_KEYS = (
    "n_routed_experts",
    "experts_per_token",
    "expert_intermediate_size",
    "n_shared_experts",
    "shared_expert_intermediate_size",
    "n_dense_layers",
    "moe_layer_step",
    "layer_moe",
    "router_bias",
)
_MLA_KEYS = ("q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim")
_DELTANET_KEYS = ("n_key_heads", "n_value_heads", "key_head_dim", "value_head_dim", "conv_kernel")
_MAMBA_KEYS = ("n_heads", "head_dim", "state_size", "n_groups", "conv_kernel", "conv_bias")
_GLOBAL_ATTENTION_KEYS = ("n_heads", "n_kv_heads", "head_dim", "v_head_dim", "k_eq_v")
_INDEXER_KEYS = ("n_heads", "head_dim", "top_k", "key_format", "block_tokens", "q_rank")
_COMPRESSION_KEYS = ("ratio", "sparse_ratio")
_NATIVE_PRECISION_KEYS = ("weights", "scope", "source")
MAX_CONV_KERNEL = 64  # taps of a short causal convolution (4 in every published model)


def load_model_file(path: PathLike) -> ModelArch:
    """Read and check one model TOML file."""
    path = as_path(path)
    document = read_toml_file(path)
    return model_from_table(document, path, source_file=str(path))


def model_from_table(table: Mapping[str, Any], path: object, *, prefix: str = "", source_file: str = "") -> ModelArch:
    """Check one already-parsed model table (a model file's TOML, or a model embedded in a
    preset) and build the model. Errors name ``path`` and the field under ``prefix``
    (``"model."`` gives ``model.architecture.n_layers``)."""
    root = TableReader(path, table, prefix)
    root.reject_unknown(_TOP_KEYS)
    model_id = root.string("id")
    if not MODEL_ID_PATTERN.fullmatch(model_id):
        raise root.error("id", "must be lowercase letters, digits, '.', '_' or '-' (e.g. 'llama-3.1-8b')")

    nominal = root.sub("nominal")
    nominal.reject_unknown(_NOMINAL_KEYS)
    total_nominal = nominal.number("total_params", maximum=MAX_PARAMS)
    active_nominal = nominal.number("active_params", maximum=MAX_PARAMS)
    if active_nominal > total_nominal:
        raise nominal.error("active_params", f"cannot exceed total_params ({total_nominal:g})")
    active_embeddings = _choice(nominal, "active_embeddings", NOMINAL_ACTIVE_EMBEDDINGS, "both")

    arch = root.sub("architecture")
    arch.reject_unknown(_ARCHITECTURE_KEYS)
    n_layers = arch.integer("n_layers", maximum=MAX_LAYERS)
    n_heads = arch.integer("n_heads", maximum=MAX_HEADS)
    n_kv_heads = arch.integer("n_kv_heads", maximum=MAX_HEADS)
    if n_heads % n_kv_heads:
        raise arch.error("n_kv_heads", f"must divide n_heads ({n_heads}), got {n_kv_heads}")
    sliding_window = arch.integer("sliding_window", 0, minimum=0, maximum=MAX_CONTEXT)
    attention_chunk = arch.integer("attention_chunk", 0, minimum=0, maximum=MAX_CONTEXT)
    layer_attention = _layer_attention(arch, n_layers, sliding_window, attention_chunk)
    deltanet = _deltanet_spec(root, arch, layer_attention)
    mamba = _mamba_spec(root, arch, layer_attention)
    global_attention = _global_attention_spec(root, arch, layer_attention)
    indexer = _indexer_spec(root, arch, layer_attention)
    compression = _compression_spec(root, arch, layer_attention)
    if compression is not None and not sliding_window:
        raise arch.error("sliding_window", "compressed layers keep a window of recent tokens: sliding_window > 0")

    moe, layer_moe = _moe_spec(root.sub("moe", None), n_layers)
    mla = _mla_spec(root.sub("mla", None))
    if mla is not None:
        # MLA's projections are counted their own way; these switches would be ignored.
        for key in ("attention_output_gate", "attention_sinks", "o_bias"):
            if arch.boolean(key, False):
                raise arch.error(key, "is not supported together with [mla]")
    precision, scope, precision_source = _native_precision(root, moe)

    return ModelArch(
        id=model_id,
        name=root.string("name"),
        family=root.string("family"),
        source=root.string("source"),
        n_layers=n_layers,
        hidden_size=arch.integer("hidden_size", maximum=MAX_WIDTH),
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=arch.integer("head_dim", maximum=MAX_WIDTH),
        intermediate_size=arch.integer("intermediate_size", maximum=MAX_WIDTH),
        vocab_size=arch.integer("vocab_size", maximum=MAX_VOCAB),
        tied_embeddings=arch.boolean("tied_embeddings"),
        max_context=root.integer("max_context", maximum=MAX_CONTEXT),
        nominal_total_params=total_nominal,
        nominal_active_params=active_nominal,
        nominal_source=nominal.string("source"),
        nominal_active_embeddings=active_embeddings,
        qkv_bias=arch.boolean("qkv_bias", False),
        qk_norm=arch.boolean("qk_norm", False),
        o_bias=arch.boolean("o_bias", False),
        attention_sinks=arch.boolean("attention_sinks", False),
        attention_output_gate=arch.boolean("attention_output_gate", False),
        ffn_kind=_choice(arch, "ffn_kind", FFN_KINDS, "gated"),
        ffn_bias=arch.boolean("ffn_bias", False),
        sliding_window=sliding_window,
        attention_chunk=attention_chunk,
        layer_attention=layer_attention,
        layer_intermediate_sizes=_layer_widths(arch, n_layers),
        layer_moe=layer_moe,
        moe=moe,
        mla=mla,
        deltanet=deltanet,
        mamba=mamba,
        global_attention=global_attention,
        indexer=indexer,
        compression=compression,
        kv_shared=arch.boolean("kv_shared", False),
        q_lora_rank=arch.integer("q_lora_rank", 0, minimum=0, maximum=MAX_WIDTH),
        o_lora_rank=arch.integer("o_lora_rank", 0, minimum=0, maximum=MAX_WIDTH),
        o_groups=arch.integer("o_groups", 0, minimum=0, maximum=MAX_HEADS),
        native_weight_precision=precision,
        native_precision_scope=scope,
        native_precision_source=precision_source,
        notes=root.string("notes", ""),
        source_file=source_file,
    )


def _layer_attention(arch: TableReader, n_layers: int, sliding_window: int, attention_chunk: int) -> tuple[str, ...]:
    if not arch.has("layer_attention"):
        # A window (or chunk) without a per-layer list means every layer uses it (Mistral 7B style).
        if sliding_window and attention_chunk:
            raise arch.error("layer_attention", "required when both sliding_window and attention_chunk are given")
        if attention_chunk:
            return ("chunked",) * n_layers
        return ("window",) * n_layers if sliding_window else ()
    kinds = arch.array("layer_attention")
    if len(kinds) != n_layers:
        raise arch.error("layer_attention", f"must list one kind per layer ({n_layers}), got {len(kinds)}")
    for index, kind in enumerate(kinds):
        if kind not in LAYER_ATTENTION_KINDS:
            raise arch.error(
                f"layer_attention[{index}]", f"must be one of {', '.join(LAYER_ATTENTION_KINDS)}, got {describe(kind)}"
            )
    if "window" in kinds and not sliding_window:
        raise arch.error("sliding_window", "window layers need sliding_window > 0 (tokens each one keeps)")
    if "chunked" in kinds and not attention_chunk:
        raise arch.error("attention_chunk", "chunked layers need attention_chunk > 0 (tokens per chunk)")
    return tuple(kinds)


def _choice(table: TableReader, key: str, choices: tuple[str, ...], default: str) -> str:
    value = table.string(key, default)
    if value not in choices:
        raise table.error(key, f"must be one of {', '.join(choices)}, got {describe(value)}")
    return value


def _mixer_table(root: TableReader, arch: TableReader, kinds: tuple[str, ...], kind: str,
                 name: str | None = None, users: tuple[str, ...] = ()) -> TableReader | None:
    """The [deltanet] or [mamba] table (or ``name``, shaping the ``users`` kinds): required when
    some layer is of such a kind, refused otherwise (it would describe nothing)."""
    name = name or kind
    users = users or (kind,)
    table = root.sub(name, None)
    used = any(user in kinds for user in users)
    said = " or ".join(f'"{user}"' for user in users)
    if used and table is None:
        raise root.error(name, f"required: layer_attention has {said} layers, and this table gives their shape")
    if table is not None and not used:
        raise arch.error("layer_attention", f"has no {said} layer, but a [{name}] table is given")
    return table


def _global_attention_spec(root: TableReader, arch: TableReader, kinds: tuple[str, ...]) -> AttentionShape | None:
    table = _mixer_table(root, arch, kinds, "global", "global_attention", ("global",))
    if table is None:
        return None
    table.reject_unknown(_GLOBAL_ATTENTION_KEYS)
    n_heads = table.integer("n_heads", maximum=MAX_HEADS)
    n_kv_heads = table.integer("n_kv_heads", maximum=MAX_HEADS)
    if n_heads % n_kv_heads:
        raise table.error("n_kv_heads", f"must divide n_heads ({n_heads}), got {n_kv_heads}")
    return AttentionShape(
        n_heads=n_heads,
        n_kv_heads=n_kv_heads,
        head_dim=table.integer("head_dim", maximum=MAX_WIDTH),
        v_head_dim=table.integer("v_head_dim", 0, minimum=0, maximum=MAX_WIDTH),
        k_eq_v=table.boolean("k_eq_v", False),
    )


def _indexer_spec(root: TableReader, arch: TableReader, kinds: tuple[str, ...]) -> IndexerSpec | None:
    table = _mixer_table(root, arch, kinds, "sparse", "indexer", ("sparse", "compressed_sparse"))
    if table is None:
        return None
    table.reject_unknown(_INDEXER_KEYS)
    return IndexerSpec(
        n_heads=table.integer("n_heads", maximum=MAX_HEADS),
        head_dim=table.integer("head_dim", maximum=MAX_WIDTH),
        top_k=table.integer("top_k", maximum=MAX_CONTEXT),
        key_format=_choice(table, "key_format", tuple(INDEXER_KEY_FORMATS), "fp8"),
        block_tokens=table.integer("block_tokens", 1, maximum=MAX_CONTEXT),
        q_rank=table.integer("q_rank", 0, minimum=0, maximum=MAX_WIDTH),
    )


def _compression_spec(root: TableReader, arch: TableReader, kinds: tuple[str, ...]) -> CompressionSpec | None:
    table = _mixer_table(root, arch, kinds, "compressed", "compression", ("compressed", "compressed_sparse"))
    if table is None:
        return None
    table.reject_unknown(_COMPRESSION_KEYS)
    return CompressionSpec(
        ratio=table.integer("ratio", 1, maximum=MAX_CONTEXT),
        sparse_ratio=table.integer("sparse_ratio", 1, maximum=MAX_CONTEXT),
    )


def _deltanet_spec(root: TableReader, arch: TableReader, kinds: tuple[str, ...]) -> DeltaNetSpec | None:
    table = _mixer_table(root, arch, kinds, "deltanet")
    if table is None:
        return None
    table.reject_unknown(_DELTANET_KEYS)
    n_key_heads = table.integer("n_key_heads", maximum=MAX_HEADS)
    n_value_heads = table.integer("n_value_heads", maximum=MAX_HEADS)
    if n_value_heads % n_key_heads:
        raise table.error("n_value_heads", f"must be a multiple of n_key_heads ({n_key_heads}), got {n_value_heads}")
    return DeltaNetSpec(
        n_key_heads=n_key_heads,
        n_value_heads=n_value_heads,
        key_head_dim=table.integer("key_head_dim", maximum=MAX_WIDTH),
        value_head_dim=table.integer("value_head_dim", maximum=MAX_WIDTH),
        conv_kernel=table.integer("conv_kernel", maximum=MAX_CONV_KERNEL),
    )


def _mamba_spec(root: TableReader, arch: TableReader, kinds: tuple[str, ...]) -> MambaSpec | None:
    table = _mixer_table(root, arch, kinds, "mamba")
    if table is None:
        return None
    table.reject_unknown(_MAMBA_KEYS)
    n_heads = table.integer("n_heads", maximum=MAX_HEADS)
    n_groups = table.integer("n_groups", maximum=MAX_HEADS)
    if n_heads % n_groups:
        raise table.error("n_groups", f"must divide n_heads ({n_heads}), got {n_groups}")
    return MambaSpec(
        n_heads=n_heads,
        head_dim=table.integer("head_dim", maximum=MAX_WIDTH),
        state_size=table.integer("state_size", maximum=MAX_WIDTH),
        n_groups=n_groups,
        conv_kernel=table.integer("conv_kernel", maximum=MAX_CONV_KERNEL),
        conv_bias=table.boolean("conv_bias", True),
    )


def _native_precision(root: TableReader, moe: MoESpec | None) -> tuple[str, str, str]:
    """(weights, scope, source) of the optional [native_precision] table, or empty strings."""
    table = root.sub("native_precision", None)
    if table is None:
        return "", "", ""
    table.reject_unknown(_NATIVE_PRECISION_KEYS)
    weights = table.string("weights")
    if weights not in NATIVE_WEIGHT_PRECISIONS:
        raise table.error("weights", f"must be one of {', '.join(NATIVE_WEIGHT_PRECISIONS)}, got {describe(weights)}")
    scope = table.string("scope")
    if scope not in NATIVE_PRECISION_SCOPES:
        raise table.error("scope", f"must be one of {', '.join(NATIVE_PRECISION_SCOPES)}, got {describe(scope)}")
    if scope == "experts" and moe is None:
        raise table.error("scope", '"experts" needs a mixture-of-experts model (a [moe] table)')
    return weights, scope, table.string("source")


def _layer_widths(arch: TableReader, n_layers: int) -> tuple[int, ...]:
    if not arch.has("layer_intermediate_sizes"):
        return ()
    widths = arch.array("layer_intermediate_sizes")
    if len(widths) != n_layers:
        raise arch.error("layer_intermediate_sizes", f"must list one width per layer ({n_layers}), got {len(widths)}")
    for index, width in enumerate(widths):
        check_int(arch, f"layer_intermediate_sizes[{index}]", width, minimum=0, maximum=MAX_WIDTH)
    return tuple(widths)


def _moe_spec(moe: TableReader | None, n_layers: int) -> tuple[MoESpec | None, tuple[bool, ...]]:
    """The [moe] table and its optional per-layer MoE map (empty when not given)."""
    if moe is None:
        return None, ()
    moe.reject_unknown(_MOE_KEYS)
    n_routed = moe.integer("n_routed_experts", maximum=MAX_EXPERTS)
    per_token = moe.integer("experts_per_token", maximum=MAX_EXPERTS)
    if per_token > n_routed:
        raise moe.error("experts_per_token", f"cannot exceed n_routed_experts ({n_routed}), got {per_token}")
    n_shared = moe.integer("n_shared_experts", 0, minimum=0, maximum=MAX_EXPERTS)
    shared_width = moe.integer("shared_expert_intermediate_size", 0, minimum=0, maximum=MAX_WIDTH)
    if n_shared and not shared_width:
        raise moe.error("shared_expert_intermediate_size", "required (> 0) when n_shared_experts > 0")
    if shared_width and not n_shared:
        raise moe.error("shared_expert_intermediate_size", "given but n_shared_experts is 0")
    n_dense = moe.integer("n_dense_layers", 0, minimum=0, maximum=MAX_LAYERS)
    step = moe.integer("moe_layer_step", 1, maximum=MAX_LAYERS)
    layer_moe = _layer_moe(moe, n_layers)
    if layer_moe:
        for key in ("n_dense_layers", "moe_layer_step"):
            if moe.has(key):
                raise moe.error(key, "cannot be combined with layer_moe, which lists every layer")
    elif n_dense + step > n_layers:
        raise moe.error("n_dense_layers", f"with moe_layer_step {step} leaves no MoE layer among {n_layers}")
    spec = MoESpec(
        n_routed_experts=n_routed,
        experts_per_token=per_token,
        expert_intermediate_size=moe.integer("expert_intermediate_size", maximum=MAX_WIDTH),
        n_shared_experts=n_shared,
        shared_expert_intermediate_size=shared_width,
        n_dense_layers=n_dense,
        moe_layer_step=step,
        router_bias=moe.boolean("router_bias", False),
    )
    return spec, layer_moe


def _layer_moe(moe: TableReader, n_layers: int) -> tuple[bool, ...]:
    if not moe.has("layer_moe"):
        return ()
    flags = moe.array("layer_moe")
    if len(flags) != n_layers:
        raise moe.error("layer_moe", f"must list one true/false per layer ({n_layers}), got {len(flags)}")
    for index, flag in enumerate(flags):
        if not isinstance(flag, bool):
            raise moe.error(f"layer_moe[{index}]", f"must be true or false, got {describe(flag)}")
    if not any(flags):
        raise moe.error("layer_moe", "has no MoE layer (no true entry); a dense model needs no [moe] table")
    return tuple(flags)


def _mla_spec(mla: TableReader | None) -> MLASpec | None:
    if mla is None:
        return None
    mla.reject_unknown(_MLA_KEYS)
    return MLASpec(
        q_lora_rank=mla.integer("q_lora_rank", 0, minimum=0, maximum=MAX_WIDTH),
        kv_lora_rank=mla.integer("kv_lora_rank", maximum=MAX_WIDTH),
        qk_nope_head_dim=mla.integer("qk_nope_head_dim", maximum=MAX_WIDTH),
        qk_rope_head_dim=mla.integer("qk_rope_head_dim", maximum=MAX_WIDTH),
        v_head_dim=mla.integer("v_head_dim", maximum=MAX_WIDTH),
    )


def model_to_table(model: ModelArch) -> dict[str, Any]:
    """The model as a table in the model-file format, which :func:`model_from_table` reads
    back to an equal model (apart from ``source_file``, which records where it was read)."""
    table: dict[str, Any] = {
        "id": model.id,
        "name": model.name,
        "family": model.family,
        "source": model.source,
        "max_context": model.max_context,
    }
    if model.notes:
        table["notes"] = model.notes
    table["nominal"] = {
        "total_params": model.nominal_total_params,
        "active_params": model.nominal_active_params,
        "source": model.nominal_source,
    }
    if model.nominal_active_embeddings != "both":
        table["nominal"]["active_embeddings"] = model.nominal_active_embeddings
    arch: dict[str, Any] = {
        "n_layers": model.n_layers,
        "hidden_size": model.hidden_size,
        "n_heads": model.n_heads,
        "n_kv_heads": model.n_kv_heads,
        "head_dim": model.head_dim,
        "intermediate_size": model.intermediate_size,
        "vocab_size": model.vocab_size,
        "tied_embeddings": model.tied_embeddings,
    }
    if model.qkv_bias:
        arch["qkv_bias"] = True
    if model.qk_norm:
        arch["qk_norm"] = True
    for key in ("o_bias", "attention_sinks", "attention_output_gate"):
        if getattr(model, key):
            arch[key] = True
    if model.ffn_kind != "gated":
        arch["ffn_kind"] = model.ffn_kind
    if model.ffn_bias:
        arch["ffn_bias"] = True
    kinds = set(model.layer_attention)
    if model.sliding_window and kinds & {"window", "compressed", "compressed_sparse"}:
        arch["sliding_window"] = model.sliding_window
    if model.attention_chunk and "chunked" in kinds:
        arch["attention_chunk"] = model.attention_chunk
    # The reader expands a lone window (or chunk) to every layer, so a uniform list can go.
    if kinds and kinds not in ({"window"}, {"chunked"}):
        arch["layer_attention"] = list(model.layer_attention)
    if model.kv_shared:
        arch["kv_shared"] = True
    for key in ("q_lora_rank", "o_lora_rank", "o_groups"):
        if getattr(model, key):
            arch[key] = getattr(model, key)
    if model.layer_intermediate_sizes:
        arch["layer_intermediate_sizes"] = list(model.layer_intermediate_sizes)
    table["architecture"] = arch
    if model.moe is not None:
        table["moe"] = _moe_table(model.moe, model.layer_moe)
    if model.mla is not None:
        m = model.mla
        table["mla"] = {
            "q_lora_rank": m.q_lora_rank,
            "kv_lora_rank": m.kv_lora_rank,
            "qk_nope_head_dim": m.qk_nope_head_dim,
            "qk_rope_head_dim": m.qk_rope_head_dim,
            "v_head_dim": m.v_head_dim,
        }
    if model.deltanet is not None:
        deltanet = model.deltanet
        table["deltanet"] = {
            "n_key_heads": deltanet.n_key_heads,
            "n_value_heads": deltanet.n_value_heads,
            "key_head_dim": deltanet.key_head_dim,
            "value_head_dim": deltanet.value_head_dim,
            "conv_kernel": deltanet.conv_kernel,
        }
    if model.mamba is not None:
        mamba = model.mamba
        table["mamba"] = {
            "n_heads": mamba.n_heads,
            "head_dim": mamba.head_dim,
            "state_size": mamba.state_size,
            "n_groups": mamba.n_groups,
            "conv_kernel": mamba.conv_kernel,
        }
        if not mamba.conv_bias:
            table["mamba"]["conv_bias"] = False
    if model.global_attention is not None:
        g = model.global_attention
        table["global_attention"] = {"n_heads": g.n_heads, "n_kv_heads": g.n_kv_heads, "head_dim": g.head_dim}
        if g.v_head_dim:
            table["global_attention"]["v_head_dim"] = g.v_head_dim
        if g.k_eq_v:
            table["global_attention"]["k_eq_v"] = True
    if model.indexer is not None:
        ix = model.indexer
        table["indexer"] = {"n_heads": ix.n_heads, "head_dim": ix.head_dim, "top_k": ix.top_k,
                            "key_format": ix.key_format}
        if ix.block_tokens != 1:
            table["indexer"]["block_tokens"] = ix.block_tokens
        if ix.q_rank:
            table["indexer"]["q_rank"] = ix.q_rank
    if model.compression is not None:
        table["compression"] = {"ratio": model.compression.ratio, "sparse_ratio": model.compression.sparse_ratio}
    if model.native_weight_precision:
        table["native_precision"] = {
            "weights": model.native_weight_precision,
            "scope": model.native_precision_scope,
            "source": model.native_precision_source,
        }
    return table


def _moe_table(moe: MoESpec, layer_moe: tuple[bool, ...]) -> dict[str, Any]:
    table: dict[str, Any] = {
        "n_routed_experts": moe.n_routed_experts,
        "experts_per_token": moe.experts_per_token,
        "expert_intermediate_size": moe.expert_intermediate_size,
    }
    if moe.n_shared_experts:
        table["n_shared_experts"] = moe.n_shared_experts
        table["shared_expert_intermediate_size"] = moe.shared_expert_intermediate_size
    if moe.router_bias:
        table["router_bias"] = True
    if layer_moe:  # lists every layer, so the reader refuses the compact fields beside it
        table["layer_moe"] = list(layer_moe)
        return table
    if moe.n_dense_layers:
        table["n_dense_layers"] = moe.n_dense_layers
    if moe.moe_layer_step != 1:
        table["moe_layer_step"] = moe.moe_layer_step
    return table


# ---- the bundled catalog -------------------------------------------------------------


def bundled_models_dir() -> Traversable:
    return files("accelscope.resources") / "models"


def bundled_model_files() -> list[Traversable]:
    """The bundled model files: those in BUNDLED_ORDER first, in that order, then any others."""
    found = {
        entry.name[: -len(".toml")]: entry for entry in bundled_models_dir().iterdir() if entry.name.endswith(".toml")
    }
    ordered = [found.pop(model_id) for model_id in BUNDLED_ORDER if model_id in found]
    return ordered + [found[stem] for stem in sorted(found)]


def load_bundled_models() -> dict[str, ModelArch]:
    """Every bundled model by id, in BUNDLED_ORDER (a new dict each call, of the same frozen
    values: the files are read again only when they change)."""
    entries = bundled_model_files()
    stats = [Path(str(entry)).stat() for entry in entries]
    key = tuple((str(entry), stat.st_mtime_ns, stat.st_size) for entry, stat in zip(entries, stats, strict=True))
    if _BUNDLED_CACHE.get("key") != key:
        _BUNDLED_CACHE.update(key=key, models=_read_bundled_models(entries))
    return dict(_BUNDLED_CACHE["models"])


_BUNDLED_CACHE: dict[str, Any] = {}


def _read_bundled_models(entries) -> dict[str, ModelArch]:
    models: dict[str, ModelArch] = {}
    for entry in entries:
        model = load_model_file(entry)
        if model.id in models:
            raise CatalogError(entry, "id", f"{model.id!r} is already used by {models[model.id].source_file}")
        models[model.id] = model
    return models
