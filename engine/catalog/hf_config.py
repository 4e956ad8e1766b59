"""Build a model from a Hugging Face ``config.json`` on disk (architecture only, no weights).

A config.json says how the network is shaped but not how large the model is called, so the
nominal sizes of an imported model are its derived counts (the notes say so). Families are
recognised from ``architectures`` (or, failing that, ``model_type``); each has its own field
names for the same ideas, mapped here onto :class:`ModelArch`.

The file is untrusted input: it is size-checked before parsing, every field is type- and
range-checked, and the first problem is raised as a :class:`CatalogError` naming the file and
the config's own field name.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..core.errors import CatalogError
from ..core.model import AttentionShape, CompressionSpec, DeltaNetSpec, IndexerSpec, MambaSpec, MLASpec, ModelArch, MoESpec
from .models import (
    MAX_CONTEXT,
    MAX_CONV_KERNEL,
    MAX_EXPERTS,
    MAX_HEADS,
    MAX_LAYERS,
    MAX_VOCAB,
    MAX_WIDTH,
    MODEL_ID_PATTERN,
)
from .reading import TableReader, check_int, decode_text, describe, quoted, read_limited

# `architectures` entry -> family key used below.
SUPPORTED_ARCHITECTURES: dict[str, str] = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "MixtralForCausalLM": "mixtral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3_moe",
    "DeepseekV2ForCausalLM": "deepseek",
    "DeepseekV3ForCausalLM": "deepseek",
    "Llama4ForConditionalGeneration": "llama4",
    "Llama4ForCausalLM": "llama4",
    "Mistral3ForConditionalGeneration": "mistral3",
    "DeciLMForCausalLM": "nemotron_nas",
    "GptOssForCausalLM": "gpt_oss",
    "Qwen3NextForCausalLM": "qwen3_next",
    "Gemma3ForCausalLM": "gemma3",
    "Gemma3ForConditionalGeneration": "gemma3",
    "Glm4MoeForCausalLM": "glm4_moe",
    "NemotronHForCausalLM": "nemotron_h",
    "Phi3ForCausalLM": "phi3",
    "DeepseekV32ForCausalLM": "deepseek_v32",
    "GlmMoeDsaForCausalLM": "glm_moe_dsa",
    "DeepseekV4ForCausalLM": "deepseek_v4",
    "Gemma4ForConditionalGeneration": "gemma4",
    "Gemma4ForCausalLM": "gemma4",
}

# `model_type` -> family key, for configs without `architectures`.
SUPPORTED_MODEL_TYPES: dict[str, str] = {
    "llama": "llama",
    "mistral": "mistral",
    "mixtral": "mixtral",
    "qwen2": "qwen2",
    "qwen3": "qwen3",
    "qwen3_moe": "qwen3_moe",
    "deepseek_v2": "deepseek",
    "deepseek_v3": "deepseek",
    "llama4": "llama4",
    "llama4_text": "llama4",
    "mistral3": "mistral3",
    "nemotron-nas": "nemotron_nas",
    "gpt_oss": "gpt_oss",
    "qwen3_next": "qwen3_next",
    "gemma3": "gemma3",
    "gemma3_text": "gemma3",
    "glm4_moe": "glm4_moe",
    "kimi_k2": "kimi",
    "nemotron_h": "nemotron_h",
    "phi3": "phi3",
    "deepseek_v32": "deepseek_v32",
    "glm_moe_dsa": "glm_moe_dsa",
    "deepseek_v4": "deepseek_v4",
    "gemma4": "gemma4",
    "gemma4_text": "gemma4",
}

# model_type values that name a family within a shared architecture: Kimi K2's config.json
# declares DeepseekV3ForCausalLM, with model_type "kimi_k2".
_MODEL_TYPE_REFINES = {("deepseek", "kimi_k2"): "kimi"}

FAMILY_NAMES: dict[str, str] = {
    "llama": "Llama",
    "llama4": "Llama",
    "mistral": "Mistral",
    "mixtral": "Mistral",
    "mistral3": "Mistral",
    "qwen2": "Qwen",
    "qwen3": "Qwen",
    "qwen3_moe": "Qwen",
    "deepseek": "DeepSeek",
    "kimi": "Kimi",
    "nemotron_nas": "Nemotron",
    "gpt_oss": "gpt-oss",
    "qwen3_next": "Qwen",
    "gemma3": "Gemma",
    "glm4_moe": "GLM",
    "nemotron_h": "Nemotron",
    "phi3": "Phi",
    "deepseek_v32": "DeepSeek",
    "glm_moe_dsa": "GLM",
    "deepseek_v4": "DeepSeek",
    "gemma4": "Gemma",
}

# Multimodal wrappers keep the language model's fields under `text_config`.
_NESTED_TEXT_CONFIG = ("llama4", "mistral3", "gemma3", "gemma4")

# Gemma 3's multimodal config.json files list only what differs from Gemma3TextConfig's
# defaults (the 4B's text_config gives neither heads nor vocabulary), so these defaults, from
# Hugging Face transformers 5.24.0 configuration_gemma3.py, fill what a Gemma 3 file leaves out.
# hidden_size, intermediate_size and num_hidden_layers are always required.
_GEMMA3_TEXT_DEFAULTS: dict[str, Any] = {
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "vocab_size": 262_208,
    "max_position_embeddings": 131_072,
    "sliding_window": 4096,
}
_GEMMA3_WINDOW_PATTERN = 6  # sliding_window_pattern: 5 window layers, then 1 global

# Nemotron-H block letters (hybrid_override_pattern) and block names (layers_block_type, with
# transformers' legacy names) -> (ModelArch attention kind, has an MLP).
_NEMOTRON_H_BLOCKS = {"M": ("mamba", False), "*": ("full", False), "-": ("none", True)}
_NEMOTRON_H_BLOCK_NAMES = {
    "mamba": "M",
    "linear_attention": "M",
    "attention": "*",
    "full_attention": "*",
    "mlp": "-",
}

# `layer_types` entries (recent transformers configs) -> ModelArch attention kinds.
_LAYER_TYPES = {"full_attention": "full", "sliding_attention": "window", "chunked_attention": "chunked"}

_MAX_FFN_MULT = 64.0  # DeciLM ffn_mult; Llama 70B's full width is 5.25

_HASH_LIKE = re.compile(r"^[0-9a-f]{7,64}$")


def load_hf_config(path: str | os.PathLike[str], model_id: str | None = None) -> ModelArch:
    """Read a Hugging Face config.json (or the config.json in a folder) and build the model.

    ``model_id`` defaults to a slug of the file name, or for a ``config.json`` of the folder
    holding it (for a Hugging Face cache snapshot, the repository name), or of
    ``_name_or_path`` when those say nothing.
    """
    path = Path(path)  # a file on disk, named in messages as the user gave it
    if path.is_dir():  # a downloaded model folder
        if not (path / "config.json").exists():
            raise CatalogError(path, None, "not a regular file (a directory) and holds no config.json")
        path = path / "config.json"
    root = TableReader(path, _parse_json(path))
    family = _detect_family(root)
    config = root
    if family in _NESTED_TEXT_CONFIG and root.has("text_config"):
        config = root.sub("text_config")

    nested = config is not root
    notes: list[str] = []
    if family == "gemma3":
        config = _with_defaults(config, _GEMMA3_TEXT_DEFAULTS, notes)
    readers = {
        "deepseek": _deepseek,
        "kimi": _deepseek,
        "deepseek_v32": _deepseek_sparse,
        "glm_moe_dsa": _deepseek_sparse,
        "deepseek_v4": _deepseek_v4,
        "gemma4": _gemma4,
        "llama4": _llama4,
        "nemotron_nas": _nemotron_nas,
        "gpt_oss": _gpt_oss,
        "qwen3_next": _qwen3_next,
        "glm4_moe": _glm4_moe,
        "nemotron_h": _nemotron_h,
    }
    if family in readers:
        fields = readers[family](config, notes)
    else:
        fields = _standard_decoder(config, family, notes)
    if nested:
        notes.append("Language model only: the vision encoder and projector are not counted.")

    tied = config.boolean("tie_word_embeddings", None)
    if tied is None:
        # Gemma ties its embeddings unless told otherwise; every other family defaults to untied.
        tied = root.boolean("tie_word_embeddings", family == "gemma3")
    precision = _native_precision(root, fields.get("moe"), notes)

    model_id, name = _identity(path, root, model_id)
    model = ModelArch(
        id=model_id,
        name=name,
        family=FAMILY_NAMES[family],
        source=f"Hugging Face config.json: {path}",
        tied_embeddings=tied,
        max_context=_max_context(config),
        nominal_total_params=0.0,
        nominal_active_params=0.0,
        nominal_source="derived from config.json, which states no nominal size",
        source_file=str(path),
        **precision,
        **fields,
    )
    notes.insert(0, "Imported from config.json; the nominal sizes are the derived counts, as the file states none.")
    return replace(
        model,
        nominal_total_params=float(model.total_params),
        nominal_active_params=float(model.active_params),
        notes=" ".join(notes),
    )


# ---- reading and recognising the file ------------------------------------------------


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not a valid value")


def _parse_json(path: Path) -> dict[str, Any]:
    text = decode_text(path, read_limited(path))
    try:
        config = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise CatalogError(path, None, f"not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from exc
    except ValueError as exc:
        raise CatalogError(path, None, f"not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise CatalogError(path, None, "not valid JSON: nested too deeply") from exc
    if not isinstance(config, dict):
        raise CatalogError(path, None, f"must be a JSON object (a model's config.json), got {describe(config)}")
    return config


def _supported_list() -> str:
    return ", ".join(SUPPORTED_ARCHITECTURES)


def _detect_family(root: TableReader) -> str:
    if root.has("architectures"):
        names = root.array("architectures")
        for index, name in enumerate(names):
            if not isinstance(name, str):
                raise root.error(f"architectures[{index}]", f"must be a string, got {describe(name)}")
        for name in names:
            if name in SUPPORTED_ARCHITECTURES:
                family = SUPPORTED_ARCHITECTURES[name]
                model_type = root.table.get("model_type")
                if isinstance(model_type, str):
                    family = _MODEL_TYPE_REFINES.get((family, model_type), family)
                return family
        if names:
            listed = ", ".join(quoted(name) for name in names[:4]) + (", ..." if len(names) > 4 else "")
            raise root.error("architectures", f"unsupported architecture {listed}; supported: {_supported_list()}")
    if root.has("model_type"):
        model_type = root.string("model_type")
        if model_type in SUPPORTED_MODEL_TYPES:
            return SUPPORTED_MODEL_TYPES[model_type]
        raise root.error("model_type", f"unsupported model_type {quoted(model_type)}; supported: {_supported_list()}")
    raise root.error("architectures", f"missing (and no model_type either); supported: {_supported_list()}")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")[:128]


def _identity(path: Path, root: TableReader, model_id: str | None) -> tuple[str, str]:
    """(id, display name): from the file name when it is not config.json (a user catalog keeps
    configs as models/<name>.json), else from the folder holding it."""
    folder = path.absolute().parent
    if path.stem.lower() != "config":
        name = path.stem
    elif folder.parent.name == "snapshots" and folder.parent.parent.name.startswith("models--"):
        name = folder.parent.parent.name.split("--")[-1]  # .../models--org--name/snapshots/<commit>/
    else:
        name = folder.name
    if not _slug(name) or _HASH_LIKE.match(name):
        name_or_path = root.string("_name_or_path", "")
        name = name_or_path.rstrip("/").split("/")[-1] if _slug(name_or_path) else "imported-model"
    if model_id is None:
        model_id = _slug(name)
    elif not MODEL_ID_PATTERN.fullmatch(model_id):
        raise CatalogError(path, "id", f"{model_id!r} must be lowercase letters, digits, '.', '_' or '-'")
    return model_id, name


# ---- fields shared by the families ---------------------------------------------------


def _heads(config: TableReader, hidden: int) -> tuple[int, int, int]:
    """(query heads, KV heads, head dim); absent KV heads means plain multi-head attention."""
    n_heads = config.integer("num_attention_heads", maximum=MAX_HEADS)
    n_kv_heads = config.integer("num_key_value_heads", n_heads, maximum=MAX_HEADS)
    if n_heads % n_kv_heads:
        raise config.error("num_key_value_heads", f"must divide num_attention_heads ({n_heads}), got {n_kv_heads}")
    if config.has("head_dim"):
        head_dim = config.integer("head_dim", maximum=MAX_WIDTH)
    elif hidden % n_heads:
        raise config.error("head_dim", f"missing, and hidden_size ({hidden}) is not a multiple of num_attention_heads")
    else:
        head_dim = hidden // n_heads
    return n_heads, n_kv_heads, head_dim


def _max_context(config: TableReader) -> int:
    """max_position_embeddings, or the YaRN-extended length where the config enables YaRN."""
    context = config.integer("max_position_embeddings", maximum=MAX_CONTEXT)
    scaling = config.sub("rope_scaling", None)
    if scaling is not None:
        rope_type = scaling.string("rope_type", None) or scaling.string("type", "")
        if rope_type == "yarn" and scaling.has("factor") and scaling.has("original_max_position_embeddings"):
            factor = scaling.number("factor", maximum=1e4)
            original = scaling.integer("original_max_position_embeddings", maximum=MAX_CONTEXT)
            context = max(context, min(int(factor * original), MAX_CONTEXT))
    return context


def _limited_or_full(kind: str, size: int | None, max_context: int) -> tuple[str, int]:
    """(kind, size) of a window or chunked layer; a window or chunk at least as long as the
    context (or with no size) behaves as full attention."""
    if size is None or size >= max_context:
        return "full", 0
    return kind, size


def _window_or_full(size: int | None, max_context: int) -> tuple[str, int]:
    return _limited_or_full("window", size, max_context)


def _chunked_or_full(size: int | None, max_context: int) -> tuple[str, int]:
    return _limited_or_full("chunked", size, max_context)


def _layout(layers: list[tuple[str, int]], config: TableReader, field: str) -> dict[str, Any]:
    """ModelArch's layer_attention, sliding_window and attention_chunk for these (kind, size)
    layers; layer_attention is empty when every layer is full. ModelArch keeps one window size
    and one chunk length, so the window (and the chunked) layers must agree on theirs."""
    sizes: dict[str, int] = {}
    for kind in ("window", "chunked"):
        found = {size for layer_kind, size in layers if layer_kind == kind}
        if len(found) > 1:
            raise config.error(field, f"{kind} layers use different sizes {sorted(found)}; only one size is supported")
        sizes[kind] = found.pop() if found else 0
    kinds = tuple(kind for kind, _ in layers)
    return {
        "layer_attention": () if all(kind == "full" for kind in kinds) else kinds,
        "sliding_window": sizes["window"],
        "attention_chunk": sizes["chunked"],
    }


def _all_full() -> dict[str, Any]:
    return {"layer_attention": (), "sliding_window": 0, "attention_chunk": 0}


def _attention_layout(config: TableReader, family: str, n_layers: int) -> dict[str, Any]:
    """Which layers attend through a sliding window or within chunks, and their sizes (the
    layer_attention, sliding_window and attention_chunk fields of ModelArch)."""
    max_context = _max_context(config)
    if config.has("layer_types"):
        layer_types = config.array("layer_types")
        if len(layer_types) != n_layers:
            raise config.error("layer_types", f"must list one type per layer ({n_layers}), got {len(layer_types)}")
        layers = []
        for index, layer_type in enumerate(layer_types):
            if not isinstance(layer_type, str) or layer_type not in _LAYER_TYPES:
                raise config.error(
                    f"layer_types[{index}]", f"must be one of {', '.join(_LAYER_TYPES)}, got {describe(layer_type)}"
                )
            kind = _LAYER_TYPES[layer_type]
            size = None
            if kind != "full":
                size_field = "attention_chunk_size" if kind == "chunked" else "sliding_window"
                size = config.integer(size_field, maximum=MAX_CONTEXT)
            layers.append(_limited_or_full(kind, size, max_context))
        return _layout(layers, config, "layer_types")

    if family == "llama4":
        # Layers with RoPE (no_rope_layers[i] == 1) attend within chunks; the others are global.
        chunk = config.integer("attention_chunk_size", None, maximum=MAX_CONTEXT)
        if chunk is None:
            return _all_full()
        uses_rope = config.array("no_rope_layers", None) or [int((i + 1) % 4 != 0) for i in range(n_layers)]
        if len(uses_rope) != n_layers:
            raise config.error("no_rope_layers", f"must list one flag per layer ({n_layers}), got {len(uses_rope)}")
        for index, flag in enumerate(uses_rope):
            check_int(config, f"no_rope_layers[{index}]", flag, minimum=0, maximum=1)
        layers = [_chunked_or_full(chunk if flag else None, max_context) for flag in uses_rope]
        return _layout(layers, config, "attention_chunk_size")

    if family in ("qwen2", "qwen3", "qwen3_moe"):
        # Qwen: with use_sliding_window, layers from max_window_layers on use the window.
        if not config.boolean("use_sliding_window", False) or not config.has("sliding_window"):
            return _all_full()
        window = config.integer("sliding_window", maximum=MAX_CONTEXT)
        first = config.integer("max_window_layers", n_layers, minimum=0, maximum=MAX_LAYERS)
        layers = [_window_or_full(window if layer >= first else None, max_context) for layer in range(n_layers)]
        return _layout(layers, config, "sliding_window")

    if family in ("gpt_oss", "gemma3"):
        # Without layer_types: gpt-oss alternates window and full layers, starting with a
        # window; Gemma 3 has sliding_window_pattern - 1 window layers, then a full one.
        if family == "gpt_oss":
            period, field = 2, "sliding_window"
        else:
            field = "sliding_window_pattern" if config.has("sliding_window_pattern") else "_sliding_window_pattern"
            period = config.integer(field, _GEMMA3_WINDOW_PATTERN, maximum=MAX_LAYERS)
        window = config.integer("sliding_window", maximum=MAX_CONTEXT)
        layers = [_window_or_full(window if (layer + 1) % period else None, max_context) for layer in range(n_layers)]
        return _layout(layers, config, field)

    if family in ("mistral", "mixtral", "mistral3", "phi3") and config.has("sliding_window"):
        # One window for every layer, or (Ministral's params.json style) a repeating pattern.
        pattern = config.table["sliding_window"]
        if not isinstance(pattern, list):
            pattern = [config.integer("sliding_window", maximum=MAX_CONTEXT)]
        elif not pattern:
            raise config.error("sliding_window", "must not be an empty list")
        for index, size in enumerate(pattern):
            if size is not None:
                check_int(config, f"sliding_window[{index}]", size, minimum=1, maximum=MAX_CONTEXT)
        layers = [_window_or_full(pattern[layer % len(pattern)], max_context) for layer in range(n_layers)]
        return _layout(layers, config, "sliding_window")
    return _all_full()


def _moe_layout(
    config: TableReader, field: str, moe_layers: set[int], n_layers: int
) -> tuple[int, int, tuple[bool, ...]]:
    """(n_dense_layers, moe_layer_step, layer_moe) reproducing exactly this set of MoE layers:
    the compact form (a dense prefix, then every n-th layer) when it fits, else a per-layer map."""
    ordered = sorted(moe_layers)
    if not ordered:
        raise config.error(field, "leaves no MoE layer; a dense model should use a dense architecture")
    step = ordered[1] - ordered[0] if len(ordered) > 1 else n_layers - ordered[0]
    n_dense = ordered[0] - (step - 1)
    expected = {layer for layer in range(max(n_dense, 0), n_layers) if (layer - n_dense) % step == step - 1}
    if n_dense >= 0 and expected == moe_layers:
        return n_dense, step, ()
    return 0, 1, tuple(layer in moe_layers for layer in range(n_layers))


def _experts(config: TableReader, count_field: str) -> tuple[int, int]:
    n_routed = config.integer(count_field, maximum=MAX_EXPERTS)
    per_token = config.integer("num_experts_per_tok", maximum=MAX_EXPERTS)
    if per_token > n_routed:
        raise config.error("num_experts_per_tok", f"cannot exceed {count_field} ({n_routed}), got {per_token}")
    return n_routed, per_token


def _qwen_moe(config: TableReader, n_layers: int) -> tuple[MoESpec, tuple[bool, ...]]:
    """Qwen3-MoE and Qwen3-Next experts: layer l is MoE unless listed in mlp_only_layers, when
    (l + 1) is a multiple of decoder_sparse_step; Qwen3-Next adds one shared expert."""
    n_routed, per_token = _experts(config, "num_experts")
    step = config.integer("decoder_sparse_step", 1, maximum=MAX_LAYERS)
    dense_only = config.array("mlp_only_layers", [])
    for index, layer in enumerate(dense_only):
        check_int(config, f"mlp_only_layers[{index}]", layer, minimum=0, maximum=n_layers - 1)
    moe_layers = {layer for layer in range(n_layers) if layer not in dense_only and (layer + 1) % step == 0}
    n_dense, step, layer_moe = _moe_layout(
        config, "mlp_only_layers" if dense_only else "decoder_sparse_step", moe_layers, n_layers
    )
    shared_width = config.integer("shared_expert_intermediate_size", 0, minimum=0, maximum=MAX_WIDTH)
    spec = MoESpec(
        n_routed,
        per_token,
        expert_intermediate_size=config.integer("moe_intermediate_size", maximum=MAX_WIDTH),
        n_shared_experts=1 if shared_width else 0,
        shared_expert_intermediate_size=shared_width,
        n_dense_layers=n_dense,
        moe_layer_step=step,
    )
    return spec, layer_moe


def _with_defaults(config: TableReader, defaults: dict[str, Any], notes: list[str]) -> TableReader:
    """The config with the family's defaults filled in where a field is absent (or null), and
    a note naming the fields so filled."""
    filled = [key for key in defaults if not config.has(key)]
    if filled:
        notes.append(f"Not in the file, so taken from the family's defaults: {', '.join(filled)}.")
    merged = {**config.table, **{key: defaults[key] for key in filled}}
    return TableReader(config.path, merged, config.prefix)


def _native_precision(root: TableReader, moe: MoESpec | None, notes: list[str]) -> dict[str, str]:
    """ModelArch's native_* fields from quantization_config: "mxfp4" (gpt-oss: the routed
    experts in MXFP4) and "fp8" with weight_block_size (DeepSeek-V3: block-scaled FP8 in every
    linear layer of the blocks). Other methods are noted and left out."""
    if root.table.get("expert_dtype") == "fp4" and moe is not None:
        # DeepSeek-V4: FP4 routed experts with power-of-two (ue8m0) scales, the rest block-scaled
        # FP8; the format covers the experts, and the rest is counted in 16 bits (an upper bound).
        notes.append("expert_dtype fp4: routed experts in MXFP4 (the other linear layers' FP8 is counted as 16-bit).")
        return {
            "native_weight_precision": "mxfp4",
            "native_precision_scope": "experts",
            "native_precision_source": "config.json expert_dtype fp4 (scale_fmt ue8m0: power-of-two block scales)",
        }
    config = root.sub("quantization_config", None)
    if config is None:
        return {}
    method = config.string("quant_method", "")
    if method == "mxfp4":
        if moe is None:
            raise config.error("quant_method", '"mxfp4" quantises routed experts, and this model has none')
        weights, scope, detail = "mxfp4", "experts", "quant_method mxfp4 (routed experts)"
    elif method == "fp8" and config.has("weight_block_size"):
        block = config.array("weight_block_size")
        if len(block) != 2:
            raise config.error("weight_block_size", f"must list two block sizes, got {len(block)}")
        for index, size in enumerate(block):
            check_int(config, f"weight_block_size[{index}]", size, minimum=1, maximum=MAX_WIDTH)
        weights, scope, detail = "fp8", "linear", f"quant_method fp8, weight_block_size [{block[0]}, {block[1]}]"
    else:
        shown = quoted(method) if method else "none given"
        notes.append(f"quantization_config (quant_method {shown}) is not read; no native precision recorded.")
        return {}
    return {
        "native_weight_precision": weights,
        "native_precision_scope": scope,
        "native_precision_source": f"config.json quantization_config: {detail}",
    }


# ---- the families --------------------------------------------------------------------


def _standard_decoder(config: TableReader, family: str, notes: list[str]) -> dict[str, Any]:
    """Llama, Mistral, Mixtral, Qwen2/2.5, Qwen3 and Qwen3-MoE: the Llama layout plus extras."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads, n_kv_heads, head_dim = _heads(config, hidden)
    intermediate = config.integer("intermediate_size", maximum=MAX_WIDTH)
    attention = _attention_layout(config, family, n_layers)

    qkv_bias = config.boolean("attention_bias", False)
    o_bias = family == "gemma3" and qkv_bias  # Gemma's attention_bias covers o_proj too
    if family == "qwen2":
        qkv_bias = True  # Qwen2 always has Q/K/V biases; the config has no switch for them
    elif qkv_bias and family == "llama":
        notes.append("attention_bias also adds an output-projection bias, not counted (hidden_size per layer).")
    if family == "phi3":
        notes.append("q, k and v are one fused qkv_proj, gate and up one gate_up_proj: the same weights.")
    if family == "gemma3":
        notes.append("Gemma 3 normalises each block's input and output: four RMSNorms per layer, two counted.")

    moe = None
    layer_moe: tuple[bool, ...] = ()
    if family == "mixtral":
        n_routed, per_token = _experts(config, "num_local_experts")
        moe = MoESpec(n_routed, per_token, expert_intermediate_size=intermediate)
    elif family == "qwen3_moe":
        moe, layer_moe = _qwen_moe(config, n_layers)

    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": intermediate,
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "qkv_bias": qkv_bias,
        "o_bias": o_bias,
        "qk_norm": family in ("qwen3", "qwen3_moe", "gemma3"),  # per-head RMSNorm on queries and keys
        **attention,
        "layer_moe": layer_moe,
        "moe": moe,
    }


def _deepseek(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """DeepSeek-V2/V3/R1: multi-head latent attention, shared + routed experts."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads = config.integer("num_attention_heads", maximum=MAX_HEADS)
    n_kv_heads = config.integer("num_key_value_heads", n_heads, maximum=MAX_HEADS)
    if n_heads % n_kv_heads:
        raise config.error("num_key_value_heads", f"must divide num_attention_heads ({n_heads}), got {n_kv_heads}")
    mla = MLASpec(
        q_lora_rank=config.integer("q_lora_rank", 0, minimum=0, maximum=MAX_WIDTH),  # null: queries uncompressed
        kv_lora_rank=config.integer("kv_lora_rank", maximum=MAX_WIDTH),
        qk_nope_head_dim=config.integer("qk_nope_head_dim", maximum=MAX_WIDTH),
        qk_rope_head_dim=config.integer("qk_rope_head_dim", maximum=MAX_WIDTH),
        v_head_dim=config.integer("v_head_dim", maximum=MAX_WIDTH),
    )
    n_routed, per_token = _experts(config, "n_routed_experts")
    n_shared = config.integer("n_shared_experts", 0, minimum=0, maximum=MAX_EXPERTS)
    expert_width = config.integer("moe_intermediate_size", maximum=MAX_WIDTH)
    # DeepSeek's rule: layer l is MoE when l >= first_k_dense_replace and l % moe_layer_freq == 0.
    first_moe = config.integer("first_k_dense_replace", 0, minimum=0, maximum=n_layers)
    frequency = config.integer("moe_layer_freq", 1, maximum=MAX_LAYERS)
    moe_layers = {layer for layer in range(first_moe, n_layers) if layer % frequency == 0}
    n_dense, step, layer_moe = _moe_layout(config, "moe_layer_freq", moe_layers, n_layers)

    mtp_layers = config.integer("num_nextn_predict_layers", 0, minimum=0, maximum=MAX_LAYERS)
    if mtp_layers:
        notes.append(f"The {mtp_layers} multi-token-prediction layer(s) (num_nextn_predict_layers) are not counted.")
    notes.append("head_dim is the per-head query/key width (qk_nope_head_dim + qk_rope_head_dim).")
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": mla.qk_nope_head_dim + mla.qk_rope_head_dim,
        "intermediate_size": config.integer("intermediate_size", maximum=MAX_WIDTH),
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "moe": MoESpec(
            n_routed,
            per_token,
            expert_intermediate_size=expert_width,
            n_shared_experts=n_shared,
            shared_expert_intermediate_size=expert_width if n_shared else 0,
            n_dense_layers=n_dense,
            moe_layer_step=step,
        ),
        "layer_moe": layer_moe,
        "mla": mla,
    }


def _indexer(config: TableReader, q_rank: int) -> IndexerSpec:
    """DeepSeek's lightning indexer (index_n_heads x index_head_dim, top index_topk), which
    keeps its keys in FP8 with one scale per 128 (DeepSeek-V3.2's inference code; the config
    names no format)."""
    return IndexerSpec(
        n_heads=config.integer("index_n_heads", maximum=MAX_HEADS),
        head_dim=config.integer("index_head_dim", maximum=MAX_WIDTH),
        top_k=config.integer("index_topk", maximum=MAX_CONTEXT),
        key_format="fp8",
        q_rank=q_rank,
    )


def _deepseek_sparse(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """DeepSeek-V3.2 and GLM-5: DeepSeek-V3's MLA and experts, every layer sparse (DSA): MLA
    over the indexer's top-k cached tokens."""
    fields = _deepseek(config, notes)
    fields["indexer"] = _indexer(config, fields["mla"].q_lora_rank)
    fields["layer_attention"] = ("sparse",) * fields["n_layers"]
    notes.append("Every layer is sparse (DSA): it keeps MLA's latent for every token and an FP8 indexer key, "
                 "and attends the indexer's top index_topk tokens.")
    return fields


_V4_LEFT_OUT = ("num_hash_layers", "hc_mult")


def _deepseek_v4(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """DeepSeek-V4: one shared K = V head of head_dim per layer; compress_ratios per layer
    (0: a sliding-window layer; 4: compressed 4x and sparse through the indexer; 128:
    compressed 128x, attended whole), each keeping the last sliding_window tokens too; low-rank
    queries and grouped low-rank outputs; routed experts on every layer."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads = config.integer("num_attention_heads", maximum=MAX_HEADS)
    n_kv_heads = config.integer("num_key_value_heads", maximum=MAX_HEADS)
    if n_heads % n_kv_heads:
        raise config.error("num_key_value_heads", f"must divide num_attention_heads ({n_heads}), got {n_kv_heads}")
    ratios = config.array("compress_ratios")
    if len(ratios) != n_layers + 1 and len(ratios) != n_layers:
        raise config.error("compress_ratios", f"must list one ratio per layer ({n_layers}), got {len(ratios)}")
    if len(ratios) == n_layers + 1:
        notes.append("compress_ratios' last entry is the multi-token-prediction layer's; it is not counted.")
    found = sorted({check_int(config, f"compress_ratios[{i}]", r, minimum=0, maximum=MAX_CONTEXT)
                    for i, r in enumerate(ratios[:n_layers])} - {0})
    if len(found) > 2:
        raise config.error("compress_ratios", f"has ratios {found}; one sparse and one dense ratio are supported")
    sparse_ratio, dense_ratio = found[0], found[-1]
    kinds = []
    for ratio in ratios[:n_layers]:
        kinds.append("window" if ratio == 0 else "compressed_sparse" if ratio == sparse_ratio else "compressed")
    q_rank = config.integer("q_lora_rank", maximum=MAX_WIDTH)
    n_routed, per_token = _experts(config, "n_routed_experts")
    n_shared = config.integer("n_shared_experts", 0, minimum=0, maximum=MAX_EXPERTS)
    expert_width = config.integer("moe_intermediate_size", maximum=MAX_WIDTH)
    for field in _V4_LEFT_OUT:
        if config.has(field):
            notes.append({
                "num_hash_layers": f"The first {config.table[field]} layers route by a hash of the token "
                                   "(num_hash_layers): counted as routed layers with the same top-k.",
                "hc_mult": f"Hyper-connections (hc_mult {config.table[field]}: a residual stream "
                           f"{config.table[field]} x hidden wide) are left out: their small mixing weights "
                           "and the wider residual's traffic are not counted.",
            }[field])
    mtp = config.integer("num_nextn_predict_layers", 0, minimum=0, maximum=MAX_LAYERS)
    if mtp:
        notes.append(f"The {mtp} multi-token-prediction layer(s) are not counted.")
    notes.append("The compressors' weights (a few per mille of the total) are left out.")
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": config.integer("head_dim", maximum=MAX_WIDTH),
        "intermediate_size": expert_width,
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "kv_shared": True,
        "q_lora_rank": q_rank,
        "o_lora_rank": config.integer("o_lora_rank", maximum=MAX_WIDTH),
        "o_groups": config.integer("o_groups", maximum=MAX_HEADS),
        "attention_sinks": True,
        "sliding_window": config.integer("sliding_window", maximum=MAX_CONTEXT),
        "layer_attention": tuple(kinds),
        "indexer": _indexer(config, q_rank),
        "compression": CompressionSpec(ratio=dense_ratio, sparse_ratio=sparse_ratio),
        "moe": MoESpec(n_routed, per_token, expert_intermediate_size=expert_width, n_shared_experts=n_shared,
                       shared_expert_intermediate_size=expert_width if n_shared else 0),
    }


def _gemma4(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """Gemma 4: sliding-window layers of head_dim, global layers ("full_attention") of their
    own shape (num_global_key_value_heads of global_head_dim, K = V with attention_k_eq_v);
    with enable_moe_block, routed experts beside each layer's dense MLP."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads, n_kv_heads, head_dim = _heads(config, hidden)
    layer_types = config.array("layer_types")
    if len(layer_types) != n_layers:
        raise config.error("layer_types", f"must list one type per layer ({n_layers}), got {len(layer_types)}")
    kinds = []
    for index, layer_type in enumerate(layer_types):
        if layer_type not in ("sliding_attention", "full_attention"):
            raise config.error(f"layer_types[{index}]", f"must be sliding_attention or full_attention, "
                                                        f"got {describe(layer_type)}")
        kinds.append("window" if layer_type == "sliding_attention" else "global")
    if config.integer("num_kv_shared_layers", 0, minimum=0, maximum=MAX_LAYERS):
        raise config.error("num_kv_shared_layers", "layers reusing another layer's KV cache are not supported")
    if config.integer("hidden_size_per_layer_input", 0, minimum=0, maximum=MAX_WIDTH):
        raise config.error("hidden_size_per_layer_input", "per-layer input embeddings are not supported")
    shape = AttentionShape(
        n_heads=n_heads,
        n_kv_heads=config.integer("num_global_key_value_heads", maximum=MAX_HEADS),
        head_dim=config.integer("global_head_dim", maximum=MAX_WIDTH),
        k_eq_v=config.boolean("attention_k_eq_v", False),
    )
    fields: dict[str, Any] = {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": config.integer("intermediate_size", maximum=MAX_WIDTH),
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "qk_norm": True,
        "sliding_window": config.integer("sliding_window", maximum=MAX_CONTEXT),
        "layer_attention": tuple(kinds),
        "global_attention": shape,
    }
    if config.boolean("enable_moe_block", False):
        n_routed = config.integer("num_experts", maximum=MAX_EXPERTS)
        per_token = config.integer("top_k_experts", maximum=n_routed)
        # Each layer keeps its dense MLP beside the experts: counted as one always-on shared expert.
        fields["moe"] = MoESpec(n_routed, per_token, config.integer("moe_intermediate_size", maximum=MAX_WIDTH),
                                n_shared_experts=1, shared_expert_intermediate_size=fields["intermediate_size"])
        notes.append("Each layer's dense MLP runs beside its routed experts: counted as a shared expert.")
    notes.append("Global layers keep num_global_key_value_heads heads of global_head_dim"
                 + (", K = V (one tensor)." if shape.k_eq_v else "."))
    return fields


def _llama4(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """Llama 4: one shared expert beside the routed ones; intermediate_size is the expert width
    and intermediate_size_mlp the dense FFN width; chunked attention on the RoPE layers."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads, n_kv_heads, head_dim = _heads(config, hidden)
    n_routed, per_token = _experts(config, "num_local_experts")
    expert_width = config.integer("intermediate_size", maximum=MAX_WIDTH)
    step = config.integer("interleave_moe_layer_step", 1, maximum=MAX_LAYERS)
    if config.has("moe_layers"):
        listed = config.array("moe_layers")
        for index, layer in enumerate(listed):
            check_int(config, f"moe_layers[{index}]", layer, minimum=0, maximum=n_layers - 1)
        moe_layers, field = set(listed), "moe_layers"
    else:
        moe_layers, field = set(range(step - 1, n_layers, step)), "interleave_moe_layer_step"
    n_dense, step, layer_moe = _moe_layout(config, field, moe_layers, n_layers)
    attention = _attention_layout(config, "llama4", n_layers)
    if config.boolean("use_qk_norm", False):
        notes.append("Its QK norm is a weightless L2 norm, so qk_norm is off (it adds no parameters).")
    n_chunked = attention["layer_attention"].count("chunked")
    if n_chunked:
        notes.append(
            f"{n_chunked} layer(s) use chunked attention ({attention['attention_chunk']}-token chunks, "
            "attention_chunk_size); the others are global."
        )
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": config.integer("intermediate_size_mlp", maximum=MAX_WIDTH),
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        **attention,
        "layer_moe": layer_moe,
        "moe": MoESpec(
            n_routed,
            per_token,
            expert_intermediate_size=expert_width,
            n_shared_experts=1,
            shared_expert_intermediate_size=expert_width,
            n_dense_layers=n_dense,
            moe_layer_step=step,
        ),
    }


def _ffn_width_from_mult(ffn_mult: float, hidden: int) -> int:
    """DeciLM's rule: 2/3 of ffn_mult x hidden (SwiGLU), rounded up to a multiple of 256."""
    width = int(2 * ffn_mult * hidden / 3)
    return -(-width // 256) * 256


def _nemotron_nas(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """DeciLM / Llama-Nemotron NAS models: one block_configs entry per layer, each attention
    kept, removed (no_op) or replaced by a linear map, and each FFN with its own width."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads = config.integer("num_attention_heads", maximum=MAX_HEADS)
    if hidden % n_heads:
        raise config.error("num_attention_heads", f"must divide hidden_size ({hidden}), got {n_heads}")
    blocks = config.array("block_configs")
    if len(blocks) != n_layers:
        raise config.error("block_configs", f"must have one entry per layer ({n_layers}), got {len(blocks)}")

    max_context = _max_context(config)
    layers: list[tuple[str, int]] = []
    widths: list[int] = []
    kv_heads: set[int] = set()
    linear_ffn_layers = 0
    for index in range(n_layers):
        if not isinstance(blocks[index], dict):
            raise config.error(f"block_configs[{index}]", f"must be a table, got {describe(blocks[index])}")
        block = TableReader(config.path, blocks[index], f"{config.field('block_configs')}[{index}].")
        attention, ffn = block.sub("attention"), block.sub("ffn")

        if attention.boolean("no_op", False):
            layers.append(("none", 0))
        elif attention.boolean("replace_with_linear", False):
            layers.append(("linear", 0))
        else:
            group = attention.integer("n_heads_in_group", maximum=n_heads)
            if n_heads % group:
                raise attention.error("n_heads_in_group", f"must divide num_attention_heads ({n_heads}), got {group}")
            kv_heads.add(n_heads // group)
            layers.append(_window_or_full(attention.integer("window_length", None, maximum=MAX_CONTEXT), max_context))

        if ffn.boolean("no_op", False):
            widths.append(0)
        elif ffn.boolean("replace_with_linear", False):
            # A d x d map holds as many weights as a gated FFN of width d/3.
            widths.append(round(hidden / 3))
            linear_ffn_layers += 1
        else:
            widths.append(_ffn_width_from_mult(ffn.number("ffn_mult", maximum=_MAX_FFN_MULT), hidden))

    if len(kv_heads) > 1:
        raise config.error(
            "block_configs", f"layers use different KV head counts {sorted(kv_heads)}; only one is supported"
        )
    attention_layout = _layout(layers, config, "block_configs")
    if linear_ffn_layers:
        notes.append(
            f"{linear_ffn_layers} FFN(s) replaced by a linear map are modelled as gated FFNs of width hidden/3 "
            "(same weights, within rounding)."
        )
    notes.append("Per-layer attention and FFN widths read from block_configs.")
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": kv_heads.pop() if kv_heads else n_heads,
        "head_dim": hidden // n_heads,
        "intermediate_size": max(widths) or hidden,
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        **attention_layout,
        "layer_intermediate_sizes": tuple(widths),
    }


def _gpt_oss(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """gpt-oss: every layer MoE (SwiGLU experts with biases, a router with a bias), window and
    full attention alternating, biases on q, k, v and o, and a learned sink per query head."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads, n_kv_heads, head_dim = _heads(config, hidden)
    n_routed, per_token = _experts(config, "num_local_experts")
    expert_width = config.integer("intermediate_size", maximum=MAX_WIDTH)
    attention_bias = config.boolean("attention_bias", True)
    notes.append("Attention sinks, expert and router biases counted as in the reference code.")
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": expert_width,
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "qkv_bias": attention_bias,
        "o_bias": attention_bias,
        "attention_sinks": True,
        "ffn_bias": True,
        **_attention_layout(config, "gpt_oss", n_layers),
        "moe": MoESpec(n_routed, per_token, expert_intermediate_size=expert_width, router_bias=True),
    }


# Qwen3-Next's layer_types entries -> ModelArch kinds.
_QWEN3_NEXT_LAYER_TYPES = {"full_attention": "full", "linear_attention": "deltanet"}


def _qwen3_next(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """Qwen3-Next: Gated DeltaNet layers with a gated full-attention layer every
    full_attention_interval, MoE with a shared expert."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads, n_kv_heads, head_dim = _heads(config, hidden)
    if config.has("layer_types"):
        layer_types = config.array("layer_types")
        if len(layer_types) != n_layers:
            raise config.error("layer_types", f"must list one type per layer ({n_layers}), got {len(layer_types)}")
        kinds = []
        for index, layer_type in enumerate(layer_types):
            if not isinstance(layer_type, str) or layer_type not in _QWEN3_NEXT_LAYER_TYPES:
                allowed = ", ".join(_QWEN3_NEXT_LAYER_TYPES)
                raise config.error(f"layer_types[{index}]", f"must be one of {allowed}, got {describe(layer_type)}")
            kinds.append(_QWEN3_NEXT_LAYER_TYPES[layer_type])
    else:
        interval = config.integer("full_attention_interval", 4, maximum=MAX_LAYERS)
        kinds = ["deltanet" if (layer + 1) % interval else "full" for layer in range(n_layers)]
    deltanet = None
    if "deltanet" in kinds:
        n_key_heads = config.integer("linear_num_key_heads", maximum=MAX_HEADS)
        n_value_heads = config.integer("linear_num_value_heads", maximum=MAX_HEADS)
        if n_value_heads % n_key_heads:
            problem = f"must be a multiple of linear_num_key_heads ({n_key_heads}), got {n_value_heads}"
            raise config.error("linear_num_value_heads", problem)
        deltanet = DeltaNetSpec(
            n_key_heads=n_key_heads,
            n_value_heads=n_value_heads,
            key_head_dim=config.integer("linear_key_head_dim", maximum=MAX_WIDTH),
            value_head_dim=config.integer("linear_value_head_dim", maximum=MAX_WIDTH),
            conv_kernel=config.integer("linear_conv_kernel_dim", maximum=MAX_CONV_KERNEL),
        )
    moe, layer_moe = _qwen_moe(config, n_layers)
    attention_bias = config.boolean("attention_bias", False)
    notes.append(
        f"{kinds.count('deltanet')} Gated DeltaNet layer(s) (no KV cache) and {kinds.count('full')} gated "
        "full-attention layer(s). Not counted: the shared expert's scalar gate (hidden_size per MoE layer)."
    )
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": config.integer("intermediate_size", maximum=MAX_WIDTH),
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "qkv_bias": attention_bias,
        "o_bias": attention_bias,
        "qk_norm": True,
        "attention_output_gate": True,
        "layer_attention": tuple(kinds) if any(kind != "full" for kind in kinds) else (),
        "layer_moe": layer_moe,
        "moe": moe,
        "deltanet": deltanet,
    }


def _glm4_moe(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """GLM-4.5 (Glm4Moe): dense leading layers, then routed + shared experts; attention_bias
    puts biases on q, k and v only (the output projection has none)."""
    n_layers = config.integer("num_hidden_layers", maximum=MAX_LAYERS)
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads, n_kv_heads, head_dim = _heads(config, hidden)
    n_routed, per_token = _experts(config, "n_routed_experts")
    n_shared = config.integer("n_shared_experts", 0, minimum=0, maximum=MAX_EXPERTS)
    expert_width = config.integer("moe_intermediate_size", maximum=MAX_WIDTH)
    first_moe = config.integer("first_k_dense_replace", 0, minimum=0, maximum=n_layers)
    n_dense, step, layer_moe = _moe_layout(config, "first_k_dense_replace", set(range(first_moe, n_layers)), n_layers)
    mtp_layers = config.integer("num_nextn_predict_layers", 0, minimum=0, maximum=MAX_LAYERS)
    if mtp_layers:
        notes.append(f"The {mtp_layers} multi-token-prediction layer(s) (num_nextn_predict_layers) are not counted.")
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": config.integer("intermediate_size", maximum=MAX_WIDTH),
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "qkv_bias": config.boolean("attention_bias", False),
        "qk_norm": config.boolean("use_qk_norm", False),
        "layer_moe": layer_moe,
        "moe": MoESpec(
            n_routed,
            per_token,
            expert_intermediate_size=expert_width,
            n_shared_experts=n_shared,
            shared_expert_intermediate_size=expert_width if n_shared else 0,
            n_dense_layers=n_dense,
            moe_layer_step=step,
        ),
    }


def _nemotron_h_pattern(config: TableReader) -> tuple[str, str]:
    """(the block letters M / * / -, the field they came from): hybrid_override_pattern, or
    the block names of layers_block_type."""
    if config.has("hybrid_override_pattern"):
        field = "hybrid_override_pattern"
        pattern = config.string(field)
    else:
        field = "layers_block_type"
        names = config.array(field)
        letters = []
        for index, name in enumerate(names):
            if not isinstance(name, str):
                raise config.error(f"{field}[{index}]", f"must be a string, got {describe(name)}")
            if name == "moe":
                raise config.error(f"{field}[{index}]", "MoE blocks are not supported (only mamba, attention and mlp)")
            if name not in _NEMOTRON_H_BLOCK_NAMES:
                allowed = ", ".join(_NEMOTRON_H_BLOCK_NAMES)
                raise config.error(f"{field}[{index}]", f"must be one of {allowed}, got {describe(name)}")
            letters.append(_NEMOTRON_H_BLOCK_NAMES[name])
        pattern = "".join(letters)
    if not pattern:
        raise config.error(field, "must list at least one block")
    for index, letter in enumerate(pattern):
        if letter == "E":
            raise config.error(field, f"block {index} is MoE ('E'), which is not supported (only M, * and -)")
        if letter not in _NEMOTRON_H_BLOCKS:
            expected = "expected M (Mamba-2), * (attention) or - (MLP)"
            raise config.error(field, f"block {index} is {quoted(letter)}; {expected}")
    return pattern, field


def _nemotron_h(config: TableReader, notes: list[str]) -> dict[str, Any]:
    """Nemotron-H: a stack of single-purpose blocks, each one layer here: a Mamba-2 mixer
    ("mamba", no FFN), an attention layer ("full", no FFN) or a squared-ReLU MLP ("none"
    attention)."""
    pattern, field = _nemotron_h_pattern(config)
    if len(pattern) > MAX_LAYERS:
        raise config.error(field, f"has {len(pattern)} blocks, more than {MAX_LAYERS}")
    n_layers = config.integer("num_hidden_layers", len(pattern), maximum=MAX_LAYERS)
    if n_layers != len(pattern):
        raise config.error(field, f"has {len(pattern)} blocks, but num_hidden_layers is {n_layers}")
    hidden = config.integer("hidden_size", maximum=MAX_WIDTH)
    n_heads = config.integer("num_attention_heads", maximum=MAX_HEADS)
    n_kv_heads = config.integer("num_key_value_heads", n_heads, maximum=MAX_HEADS)
    if n_heads % n_kv_heads:
        raise config.error("num_key_value_heads", f"must divide num_attention_heads ({n_heads}), got {n_kv_heads}")
    head_field = "head_dim" if config.has("head_dim") else "attention_head_dim"
    if config.has(head_field):
        head_dim = config.integer(head_field, maximum=MAX_WIDTH)
    elif hidden % n_heads:
        raise config.error("head_dim", f"missing, and hidden_size ({hidden}) is not a multiple of num_attention_heads")
    else:
        head_dim = hidden // n_heads
    activation = config.string("mlp_hidden_act", "relu2")
    if activation != "relu2":
        raise config.error("mlp_hidden_act", f"only squared-ReLU MLPs (relu2) are supported, got {quoted(activation)}")
    intermediate = config.integer("intermediate_size", maximum=MAX_WIDTH)
    mamba = None
    if "M" in pattern:
        n_mamba_heads = config.integer("mamba_num_heads", maximum=MAX_HEADS)
        n_groups = config.integer("n_groups", maximum=MAX_HEADS)
        if n_mamba_heads % n_groups:
            raise config.error("n_groups", f"must divide mamba_num_heads ({n_mamba_heads}), got {n_groups}")
        mamba = MambaSpec(
            n_heads=n_mamba_heads,
            head_dim=config.integer("mamba_head_dim", maximum=MAX_WIDTH),
            state_size=config.integer("ssm_state_size", maximum=MAX_WIDTH),
            n_groups=n_groups,
            conv_kernel=config.integer("conv_kernel", maximum=MAX_CONV_KERNEL),
            conv_bias=config.boolean("use_conv_bias", True),
        )
        if config.boolean("use_bias", False):
            notes.append("use_bias: the Mamba-2 projections' biases are not counted.")
    blocks = [_NEMOTRON_H_BLOCKS[letter] for letter in pattern]
    notes.append(
        f"Each of the {n_layers} blocks is one layer: {pattern.count('M')} Mamba-2, {pattern.count('*')} "
        f"attention and {pattern.count('-')} squared-ReLU MLP. One norm per block, counted as two."
    )
    return {
        "n_layers": n_layers,
        "hidden_size": hidden,
        "n_heads": n_heads,
        "n_kv_heads": n_kv_heads,
        "head_dim": head_dim,
        "intermediate_size": intermediate,
        "vocab_size": config.integer("vocab_size", maximum=MAX_VOCAB),
        "ffn_kind": "relu2",
        "ffn_bias": config.boolean("mlp_bias", False),
        "layer_attention": tuple(kind for kind, _ in blocks),
        "layer_intermediate_sizes": tuple(intermediate if has_mlp else 0 for _, has_mlp in blocks),
        "mamba": mamba,
    }
