"""The physics of one scenario as formulas, with the scenario's own numbers plugged in.

For the selected accelerator this lays out DESIGN.md §4 section by section (memory fit, decode
FLOPs and bytes, MoE experts, step time, prefill and TTFT, roofline, communication, power and
energy, throughput). Each :class:`Formula` names its symbols, gives each its value and unit in
this scenario and the controls that change it, and evaluates to a number that must equal the
engine's own (``Formula.engine_value``; the tests hold them equal). Where the engine does more
than a short formula can show (several memory tiers filled in turn, chunk re-reads of the KV
cache during prefill), the formula quotes the engine's figure and a note says why.

No Qt here: :func:`formulas_html` renders the sections as simple HTML whose symbols link to
``control:<id>`` (the control that changes them) or ``#f-<key>`` (the formula that defines them).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

from ..core import codes
from ..core.accelerator import Accelerator, Interconnect, MemoryTier
from ..core.constants import Constants
from ..core.model import ModelArch
from ..core.precision import UNQUANTISED_BYTES, bytes_per_element
from ..core.units import (
    format_bandwidth,
    format_bytes,
    format_energy,
    format_factor,
    format_flop_rate,
    format_flops,
    format_power,
    format_time,
    significant,
)
from ..physics.reference import (
    all_reduce,
    causal_positions,
    chunked_causal_positions,
    expected_max_standard_normal,
    experts_touched_busiest_device,
    layer_overhead_s,
    token_imbalance,
)
from ..physics.results import Result

# The ids of the app's controls a term can depend on: Scenario fields, plus the selected
# accelerator (chosen by clicking a plot or in the accelerators list).
CONTROLS: tuple[str, ...] = (
    "model",
    "accelerator",
    "batch",
    "input_len",
    "output_len",
    "weight_precision",
    "activation_precision",
    "kv_precision",
    "tp",
    "pp",
    "ep",
    "dp",
    "offload",
    "kv_offload",
)
CONTROL_LABELS: dict[str, str] = {
    "model": "Model",
    "accelerator": "Accelerator",
    "batch": "Batch",
    "input_len": "Input tokens",
    "output_len": "Output tokens",
    "weight_precision": "Weight precision",
    "activation_precision": "Activation precision",
    "kv_precision": "KV-cache precision",
    "tp": "TP",
    "pp": "PP",
    "ep": "EP",
    "dp": "DP",
    "offload": "Offload",
    "kv_offload": "KV offload",
}
CONSTANTS_FILE = "resources/efficiency.toml"
_PRECISION_LABELS = {"fp32": "FP32", "bf16": "BF16", "fp16": "FP16", "fp8": "FP8", "int8": "INT8", "int4": "INT4",
                     "fp4": "FP4"}
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_TAG = re.compile(r"<[^>]+>")


# ---- the structure -----------------------------------------------------------------------


@dataclass(frozen=True)
class Term:
    """One symbol of a formula, e.g. B = 8 (batch), with the controls that change it."""

    key: str  # unique within one set of sections, e.g. "batch", "t_m_dec"
    symbol: str  # Unicode with HTML <sub>/<sup>, e.g. "p<sub>w</sub>"
    meaning: str
    value: float  # in SI units (bytes, s, FLOP, FLOP/s, B/s, W, J) or a plain count
    text: str  # value with its unit, for people: "3.35 TB/s", "8 sequences"
    controls: tuple[str, ...]  # of CONTROLS; empty for a constant no control changes
    derived: bool = False  # defined by a formula of these sections (links there, not to a control)

    @property
    def plain_symbol(self) -> str:
        return _plain(self.symbol)


@dataclass(frozen=True)
class Formula:
    """``result = template``: a right-hand side over terms, and what it evaluates to.

    ``engine_value`` is the engine's own number for the result (None where the engine has no
    such number, e.g. an intermediate count). A formula without a template quotes the engine.
    """

    name: str
    result: Term
    template: str | None  # e.g. "{Q_dec}/({beta}·{eta_m})"; None: the engine's figure, quoted
    terms: tuple[Term, ...]  # those the template uses, in order of first use
    engine_value: float | None
    engine_text: str = ""  # the engine's number, formatted as the result is
    note: str = ""  # HTML: one sentence on what the engine does beyond the formula

    @property
    def value(self) -> float:
        return self.result.value

    @property
    def quoted(self) -> bool:
        return self.template is None

    @property
    def agrees(self) -> bool:
        """The plugged-in value equals the engine's number (to rounding)."""
        return self.engine_value is None or _same(self.value, self.engine_value)

    def expression(self) -> str:
        """The formula in symbols: 't<sub>m</sub> = Q/(β·η<sub>m</sub>)'."""
        if self.template is None:
            return self.result.symbol
        symbols = {term.key: term.symbol for term in self.terms}
        return f"{self.result.symbol} = {_PLACEHOLDER.sub(lambda m: symbols[m.group(1)], self.template)}"

    def substituted(self) -> str:
        """The same with this scenario's values: '= 16.1 GB/(3.35 TB/s × 0.85) = 5.65 ms'."""
        if self.template is None:
            return f"= {escape(self.result.text)}"
        if _PLACEHOLDER.fullmatch(self.template):  # e.g. TTFT = t_prefill: the value once
            return f"= {escape(self.result.text)}"
        values = {term.key: escape(term.text) for term in self.terms}
        rhs = _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.template.replace("·", " × "))
        return f"= {rhs} = {escape(self.result.text)}"

    def plain(self) -> str:
        """Both lines as plain text (subscripts as _x, powers as ^x)."""
        return f"{_plain(self.expression())} {_plain(self.substituted())}"

    @property
    def controls(self) -> tuple[str, ...]:
        return _union(term.controls for term in (self.result, *self.terms))


@dataclass(frozen=True)
class Section:
    key: str  # "memory", "decode", ...
    title: str
    formulas: tuple[Formula, ...]
    notes: tuple[str, ...] = ()  # HTML, one sentence each: what the engine does that no formula shows
    note_controls: tuple[str, ...] = ()  # controls the notes speak of (e.g. TP when there is none)

    @property
    def controls(self) -> tuple[str, ...]:
        return _union([*(formula.controls for formula in self.formulas), self.note_controls])

    def formula(self, key: str) -> Formula:
        """The formula whose result term has this key."""
        return next(f for f in self.formulas if f.result.key == key)


@dataclass(frozen=True)
class FormulaSheet:
    title: str
    sections: tuple[Section, ...]

    def section(self, key: str) -> Section:
        return next(s for s in self.sections if s.key == key)

    def formula(self, key: str) -> Formula:
        return next(f for s in self.sections for f in s.formulas if f.result.key == key)

    def formulas(self) -> tuple[Formula, ...]:
        return tuple(f for s in self.sections for f in s.formulas)


def _union(groups) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for group in groups:
        for control in group:
            seen.setdefault(control, None)
    return tuple(c for c in CONTROLS if c in seen)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-300)


def _plain(html: str) -> str:
    text = _TAG.sub("", html.replace("<sub>", "_").replace("<sup>", "^"))
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


# ---- numbers for people --------------------------------------------------------------------


def _count(value: float, noun: str = "") -> str:
    """A count that may be fractional: whole numbers exactly, with thousands separators."""
    text = f"{round(value):,}" if abs(value - round(value)) < 1e-9 else significant(value)
    return f"{text} {noun}".rstrip()


def _large(value: float, noun: str = "") -> str:
    """Parameter counts: 6.98·10⁹."""
    if abs(value) < 1e5:
        return _count(value, noun)
    exponent = math.floor(math.log10(abs(value)))
    mantissa = float(f"{value / 10**exponent:.3g}")
    if mantissa >= 10:
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa:.2f}·10{str(exponent).translate(_SUPERSCRIPT)} {noun}".rstrip()


def _label(precision: str) -> str:
    return _PRECISION_LABELS.get(precision, precision)


def _tiny_energy(joules: float, per: str) -> str:
    return f"{significant(joules * 1e12)} pJ/{per}"


def _percent(fraction: float) -> str:
    return f"{significant(fraction * 100)}%"


def _intensity(value: float) -> str:
    return f"{significant(value)} FLOP/B"


def _tokens_per_s(value: float) -> str:
    return f"{significant(value)} tokens/s"


# ---- building ------------------------------------------------------------------------------


class _Sheet:
    """Collects terms and formulas; a formula's result becomes a term later formulas use."""

    def __init__(self) -> None:
        self.terms: dict[str, Term] = {}
        self.formulas: list[Formula] = []

    def leaf(self, key: str, symbol: str, meaning: str, value: float, text: str, *controls: str) -> str:
        if key not in self.terms:
            self.terms[key] = Term(key, symbol, meaning, float(value), text, tuple(controls))
        return key

    def value(self, key: str) -> float:
        return self.terms[key].value

    def derive(
        self,
        name: str,
        key: str,
        symbol: str,
        meaning: str,
        template: str,
        value: float,
        text: Callable[[float], str],
        engine_value: float | None = None,
        note: str = "",
    ) -> Formula:
        """A formula whose result is a new term; its controls are those of its inputs."""
        used = list(dict.fromkeys(_PLACEHOLDER.findall(template)))
        inputs = tuple(self.terms[k] for k in used)
        result = Term(key, symbol, meaning, float(value), text(value), _union(t.controls for t in inputs), True)
        self.terms[key] = result
        engine_text = text(engine_value) if engine_value is not None else ""
        formula = Formula(name, result, template, inputs, engine_value, engine_text, note)
        self.formulas.append(formula)
        return formula

    def quote(
        self, name: str, key: str, symbol: str, meaning: str, engine_value: float, text: Callable[[float], str],
        controls: tuple[str, ...], note: str,
    ) -> Formula:
        """The engine's figure where no short formula reproduces it; ``note`` says why."""
        result = Term(key, symbol, meaning, float(engine_value), text(engine_value), _union([controls]), True)
        self.terms[key] = result
        formula = Formula(name, result, None, (), engine_value, result.text, note)
        self.formulas.append(formula)
        return formula

    def take(self) -> tuple[Formula, ...]:
        """The formulas collected since the last call (one section's worth)."""
        taken, self.formulas = tuple(self.formulas), []
        return taken


def _network(accelerator: Accelerator, group: int) -> Interconnect:
    """The network a parallel group of this size uses: scale-up while it fits the domain."""
    scale_up = accelerator.interconnect
    if group <= float(scale_up.domain_size) or accelerator.scale_out is None:
        return scale_up
    return accelerator.scale_out


class _Builder:
    def __init__(self, result: Result, model: ModelArch, accelerator: Accelerator, constants: Constants) -> None:
        self.r = result
        self.s = result.scenario
        self.m = model
        self.a = accelerator
        self.constants = constants
        self.cls = constants.for_class(accelerator.architecture_class)
        self.sheet = _Sheet()
        self.near: list[MemoryTier] = [
            t for t in accelerator.memory if t.placement and t.level in ("on-chip", "device")
        ]
        self.far: MemoryTier | None = next((t for t in accelerator.memory if t.placement and t.level == "far"), None)
        self.offload = self.s.offload if self.far is not None else 0.0
        self.kv_offload = self.s.kv_offload if self.far is not None else 0.0
        self.effective_ep = self.s.ep if model.moe is not None else 1
        self.stack = float(accelerator.software_efficiency)
        self.peak = accelerator.peak(result.compute_precision)
        self.resident = result.memory.resident_batch
        self.micro_batches = min(self.resident, self.s.pp)
        self.chunks = math.ceil(self.resident * self.s.input_len / constants.prefill_chunk_tokens)
        self.only_full_attention = model.n_window_attention_layers == 0 and model.n_chunked_attention_layers == 0
        # Activations below 16 bits add the quantisation kernels to the per-layer overhead.
        self.quantized_activations = (
            layer_overhead_s(self.cls, bytes_per_element(self.s.activation_precision)) > self.cls.per_layer_overhead_s
        )

    # -- terms everyone uses -----------------------------------------------------------------

    def inputs(self) -> None:
        """The scenario's controls, the model's shape and the accelerator's figures."""
        s, m, a, cls, sh = self.s, self.m, self.a, self.cls, self.sheet
        p_w = bytes_per_element(s.weight_precision)
        sh.leaf("B", "B", "batch: sequences per replica, prompted together", s.batch, _count(s.batch), "batch")
        sh.leaf("s_in", "s<sub>in</sub>", "input (prompt) tokens per sequence", s.input_len,
                _count(s.input_len), "input_len")
        sh.leaf("s_out", "s<sub>out</sub>", "output tokens per sequence", s.output_len,
                _count(s.output_len), "output_len")
        sh.leaf("p_w", "p<sub>w</sub>", f"bytes per weight of the linear layers ({_label(s.weight_precision)})", p_w,
                f"{p_w:g} B", "weight_precision")
        p_16 = max(p_w, UNQUANTISED_BYTES)
        sh.leaf("p_16", "p<sub>16</sub>", "bytes per element of embeddings, LM head, norms and routers (kept in 16 bits "
                "unless the weights are wider)", p_16, f"{p_16:g} B", "weight_precision")
        p_a = bytes_per_element(s.activation_precision)
        sh.leaf("p_a", "p<sub>a</sub>", f"bytes per activation element ({_label(s.activation_precision)})", p_a,
                f"{p_a:g} B", "activation_precision")
        p_kv = bytes_per_element(s.kv_precision)
        sh.leaf("p_kv", "p<sub>kv</sub>", f"bytes per KV-cache element ({_label(s.kv_precision)})", p_kv,
                f"{p_kv:g} B", "kv_precision")
        for key, label, value in (("TP", "tensor-parallel devices", s.tp), ("PP", "pipeline stages", s.pp),
                                  ("DP", "data-parallel replicas", s.dp)):
            sh.leaf(key, key, label, value, _count(value), key.lower())
        sh.leaf("EP", "EP", "expert-parallel devices" + (" (a dense model has none to spread)" if m.moe is None else ""),
                self.effective_ep, _count(self.effective_ep), "ep")
        sh.leaf("phi_w", "φ<sub>w</sub>", "share of the weights offloaded to the far tier", self.offload,
                _percent(self.offload), "offload")
        sh.leaf("phi_kv", "φ<sub>kv</sub>", "share of the KV cache kept in the far tier", self.kv_offload,
                _percent(self.kv_offload), "kv_offload")

        sh.leaf("L", "L", f"layers of {escape(m.name)}", m.n_layers, _count(m.n_layers), "model")
        sh.leaf("d", "d", "hidden size", m.hidden_size, _count(m.hidden_size), "model")
        sh.leaf("V", "V", "vocabulary size", m.vocab_size, _count(m.vocab_size), "model")
        sh.leaf("h", "h", "attention (query) heads", m.n_heads, _count(m.n_heads), "model")
        sh.leaf("h_dev", "h<sub>dev</sub>", "query heads on the busiest device: ⌈h/TP⌉", math.ceil(m.n_heads / s.tp),
                _count(math.ceil(m.n_heads / s.tp)), "model", "tp")
        sh.leaf("d_h", "d<sub>h</sub>", "head dimension", m.head_dim, _count(m.head_dim), "model")
        n_kv = m.n_full_attention_layers + m.n_window_attention_layers + m.n_chunked_attention_layers
        sh.leaf("L_kv", "L<sub>kv</sub>", "layers that keep a KV cache", n_kv, _count(n_kv), "model")

        sh.leaf("pi", "π", f"dense peak of {escape(a.name)} at {self.r.compute_precision.upper()} (the format the products "
                "run in)", self.peak, format_flop_rate(self.peak, trim=True), "accelerator", "weight_precision",
                "activation_precision")
        sh.leaf("eta_c", "η<sub>c</sub>", f"compute efficiency of the {a.architecture_class} class",
                cls.compute_efficiency, format_factor(cls.compute_efficiency), "accelerator")
        sh.leaf("eta_m", "η<sub>m</sub>", f"memory efficiency of the {a.architecture_class} class",
                cls.memory_efficiency, format_factor(cls.memory_efficiency), "accelerator")
        sh.leaf("sigma", "σ", f"serving-stack factor of {escape(a.name)} (1 = the reference stack)", self.stack,
                format_factor(self.stack), "accelerator")
        main = self.main_tier()
        sh.leaf("beta", "β", f"bandwidth of {escape(main.name or main.kind)}", main.effective_bandwidth_Bps,
                format_bandwidth(main.effective_bandwidth_Bps, trim=True), "accelerator")
        if self.far is not None:
            sh.leaf("beta_far", "β<sub>far</sub>", f"bandwidth to the far tier ({escape(self.far.name or self.far.kind)}), "
                    "memory or link whichever is slower", self.far.effective_bandwidth_Bps,
                    format_bandwidth(self.far.effective_bandwidth_Bps, trim=True), "accelerator")
            sh.leaf("eta_l", "η<sub>link</sub>", f"link efficiency of the {a.architecture_class} class",
                    cls.link_efficiency, format_factor(cls.link_efficiency), "accelerator")
        sh.leaf("tau", "τ<sub>layer</sub>", f"fixed overhead per layer per pass, {a.architecture_class} class",
                cls.per_layer_overhead_s, format_time(cls.per_layer_overhead_s, trim=True), "accelerator")
        if self.quantized_activations:
            sh.leaf("tau_q", "τ<sub>q</sub>", "the kernels that quantise each linear product's input per layer per "
                    f"pass, activations below 16 bits, {a.architecture_class} class",
                    cls.activation_quantization_overhead_s,
                    format_time(cls.activation_quantization_overhead_s, trim=True), "accelerator",
                    "activation_precision")
        sh.leaf("tau_step", "τ<sub>step</sub>", "the serving stack's host time per forward step (scheduling, input "
                f"preparation, sampling, output processing), {a.architecture_class} class", cls.step_overhead_s,
                format_time(cls.step_overhead_s, trim=True), "accelerator")
        sh.leaf("tau_seq", "τ<sub>seq</sub>", "host time per step for each sequence in it, "
                f"{a.architecture_class} class", cls.sequence_overhead_s,
                format_time(cls.sequence_overhead_s, trim=True), "accelerator")
        sh.leaf("omega", "ω", f"operator overlap of the {a.architecture_class} class: 1, a pass takes the roofline of "
                "the whole pass; 0, each operator (linear layers, attention) its own, one after another",
                cls.operator_overlap, format_factor(cls.operator_overlap), "accelerator")
        sh.leaf("C", "C", f"prefill chunk: most tokens per forward pass ({CONSTANTS_FILE})",
                self.constants.prefill_chunk_tokens, _count(self.constants.prefill_chunk_tokens))

        # Parameter groups, as the engine counts them from the architecture.
        routers = m.router_params_total
        sh.leaf("N_q", "N<sub>q</sub>", "linear weights every token uses (attention, dense FFN, shared experts), "
                "stored at p<sub>w</sub>", m.block_params_fixed - routers, _large(m.block_params_fixed - routers),
                "model")
        untied_head = 0 if m.tied_embeddings else m.lm_head_params
        embeddings = m.embedding_params + untied_head
        sh.leaf("N_emb", "N<sub>emb</sub>", "embedding table" + (" (tied to the LM head)" if m.tied_embeddings else
                " and LM head"), embeddings, _large(embeddings), "model")
        sh.leaf("N_norm", "N<sub>norm</sub>", "norm gains (every tensor-parallel device keeps all of them)",
                m.norm_params, _large(m.norm_params), "model")
        sh.leaf("N_fix", "N<sub>fix</sub>", "block weights every token multiplies (2 FLOP each): attention, dense "
                "FFN, shared experts, routers", m.block_params_fixed, _large(m.block_params_fixed), "model")
        if m.moe is not None:
            sh.leaf("N_r", "N<sub>r</sub>", "router weights (kept at p<sub>16</sub>)", routers, _large(routers), "model")
            sh.leaf("N_e", "N<sub>e</sub>", "weights of one routed expert", m.expert_params, _large(m.expert_params),
                    "model")
            sh.leaf("E", "E", "routed experts per MoE layer", m.moe.n_routed_experts, _count(m.moe.n_routed_experts),
                    "model")
            sh.leaf("k", "k", "routed experts per token", m.moe.experts_per_token, _count(m.moe.experts_per_token),
                    "model")
            sh.leaf("L_moe", "L<sub>moe</sub>", "MoE layers", m.n_moe_layers, _count(m.n_moe_layers), "model")
            per_device = math.ceil(m.moe.n_routed_experts / self.effective_ep)
            sh.leaf("E_dev", "E<sub>dev</sub>", "routed experts per device per MoE layer: ⌈E/EP⌉", per_device,
                    _count(per_device), "model", "ep")

    def main_tier(self) -> MemoryTier:
        """The tier the ridge point is taken at: device memory, or on-chip SRAM without it."""
        return self.a.tier("device") or self.near[-1]

    def stack_factor(self) -> str:
        """'·{sigma}' where the serving stack is not the reference one (else it is 1 and left out)."""
        return "·{sigma}" if self.stack != 1.0 else ""

    def has_offload(self) -> bool:
        return self.offload > 0.0 or self.kv_offload > 0.0

    # -- memory fit ----------------------------------------------------------------------------

    def memory(self) -> Section:
        s, m, r, sh = self.s, self.m, self.r, self.sheet
        mem = r.memory
        v = sh.value
        template = "({N_q}·{p_w} + {N_emb}·{p_16})/({TP}·{PP}) + {N_norm}·{p_16}/{PP}"
        value = (v("N_q") * v("p_w") + v("N_emb") * v("p_16")) / (s.tp * s.pp) + v("N_norm") * v("p_16") / s.pp
        if m.moe is not None:
            template = ("({N_q}·{p_w} + ({N_r} + {N_emb})·{p_16})/({TP}·{PP}) + {N_norm}·{p_16}/{PP}"
                        " + {L_moe}·{E_dev}·{N_e}·{p_w}·{EP}/({TP}·{PP})")
            value = (
                (v("N_q") * v("p_w") + (v("N_r") + v("N_emb")) * v("p_16")) / (s.tp * s.pp)
                + v("N_norm") * v("p_16") / s.pp
                + v("L_moe") * v("E_dev") * v("N_e") * v("p_w") * self.effective_ep / (s.tp * s.pp)
            )
        sh.derive("Weights per device", "W", "W", "weights held by the busiest device", template, value,
                  format_bytes, mem.weights_bytes)

        if m.mla is not None:
            sh.leaf("r_kv", "r<sub>kv</sub>", "MLA latent rank: one compressed K/V latent per token per layer, shared "
                    "by all heads (every tensor-parallel device keeps all of it)", m.mla.kv_lora_rank,
                    _count(m.mla.kv_lora_rank), "model")
            sh.leaf("d_rope", "d<sub>rope</sub>", "MLA rotary key width", m.mla.qk_rope_head_dim,
                    _count(m.mla.qk_rope_head_dim), "model")
            template = "({r_kv} + {d_rope})·{p_kv}"
            value = (v("r_kv") + v("d_rope")) * v("p_kv")
        else:
            kv_heads = math.ceil(m.n_kv_heads / s.tp)
            sh.leaf("h_kv_dev", "h<sub>kv,dev</sub>", f"KV heads on the busiest device: ⌈{m.n_kv_heads}/TP⌉ (KV heads "
                    "are replicated once TP exceeds them)", kv_heads, _count(kv_heads), "model", "tp")
            template = "2·{h_kv_dev}·{d_h}·{p_kv}"
            value = 2 * kv_heads * v("d_h") * v("p_kv")
        context = s.input_len + s.output_len
        positions = self.stored_positions(context)
        sh.derive("KV cache per token per layer", "kv_layer", "kv<sub>layer</sub>",
                  "bytes one token keeps per layer on the busiest device (K and V)", template, value, format_bytes,
                  mem.kv_cache_bytes * s.pp / (s.batch * positions) if positions > 0 else None)

        sh.derive("Context at the end of generation", "c", "c", "tokens of context at the last step",
                  "{s_in} + {s_out}", context, _count)
        if self.only_full_attention:
            sh.derive("KV cache per token", "kv_tok", "kv<sub>tok</sub>", "bytes one token keeps on the busiest "
                      "device, over the layers of its stage", "{kv_layer}·{L_kv}/{PP}",
                      v("kv_layer") * v("L_kv") / s.pp, format_bytes, mem.kv_cache_bytes / (s.batch * context))
            sh.derive("KV cache", "KV", "KV", "KV cache of the whole batch at full context, per device",
                      "{B}·{c}·{kv_tok}", s.batch * context * v("kv_tok"), format_bytes, mem.kv_cache_bytes)
        else:
            self.positions_formula("P_kv", "P<sub>kv</sub>", "KV entries a sequence keeps at full context, summed "
                                   "over layers", "c", stored=True)
            sh.derive("KV cache", "KV", "KV", "KV cache of the whole batch at full context, per device",
                      "{B}·{kv_layer}·{P_kv}/{PP}", s.batch * v("kv_layer") * v("P_kv") / s.pp, format_bytes,
                      mem.kv_cache_bytes)

        width = m.attention_activation_width
        sh.leaf("w_attn", "w<sub>attn</sub>", "attention activation width per token (Q, K and V)", width,
                _count(width), "model")
        sh.leaf("w_ffn", "w<sub>ffn</sub>", "FFN width a token passes through, mean over layers",
                m.mean_ffn_width_per_token, _count(m.mean_ffn_width_per_token), "model")
        a_tok = v("p_a") * (2 * v("d") + (width + 2 * v("w_ffn")) / s.tp)
        sh.derive("Activation workspace per token", "a_tok", "a<sub>tok</sub>", "activation bytes per token in "
                  "flight", "{p_a}·(2·{d} + ({w_attn} + 2·{w_ffn})/{TP})", a_tok, format_bytes)
        logits = self.constants.logits_bytes_per_element
        sh.leaf("p_logit", "p<sub>logit</sub>", f"bytes per logit (FP32, {CONSTANTS_FILE})", logits, f"{logits:g} B")
        sh.derive("Logits per sequence", "l_seq", "ℓ<sub>seq</sub>", "logit bytes per sequence on the busiest device",
                  "{V}·{p_logit}/{TP}", v("V") * logits / s.tp, format_bytes)
        sh.derive("Activation workspace", "A", "A", "activations and logits of one prefill pass",
                  "min({B}·{s_in}, {C})·{a_tok} + {B}·{l_seq}",
                  min(s.batch * s.input_len, v("C")) * a_tok + s.batch * v("l_seq"), format_bytes,
                  mem.activation_bytes)

        capacity = sum(t.accelerator_capacity_bytes for t in self.near)
        tiers = " + ".join(escape(t.name or t.kind) for t in self.near)
        sh.leaf("M_cap", "M<sub>cap</sub>", f"capacity of {tiers}", capacity, format_bytes(capacity), "accelerator")
        sh.leaf("f_use", "f<sub>use</sub>", f"usable share of memory, {self.a.architecture_class} class",
                self.cls.usable_memory_fraction, format_factor(self.cls.usable_memory_fraction), "accelerator")
        sh.leaf("R", "R", f"runtime's own memory, {self.a.architecture_class} class", self.cls.runtime_overhead_bytes,
                format_bytes(self.cls.runtime_overhead_bytes), "accelerator")
        sh.derive("Usable memory", "U", "U", "memory the weights, KV cache and workspace may use", "{M_cap}·{f_use}",
                  capacity * self.cls.usable_memory_fraction, format_bytes, mem.usable_bytes)

        near_weights, near_kv = "W", "KV"
        if self.offload > 0.0:
            sh.derive("Weights on the device", "W_near", "W<sub>near</sub>", "weights left in device memory",
                      "{W}·(1 − {phi_w})", v("W") * (1 - self.offload), format_bytes,
                      mem.weights_bytes - mem.weights_far_bytes)
            near_weights = "W_near"
        if self.kv_offload > 0.0:
            sh.derive("KV cache on the device", "KV_near", "KV<sub>near</sub>", "KV cache left in device memory",
                      "{KV}·(1 − {phi_kv})", v("KV") * (1 - self.kv_offload), format_bytes,
                      mem.kv_cache_bytes - mem.kv_cache_far_bytes)
            near_kv = "KV_near"
        used = v(near_weights) + v(near_kv) + v("A") + v("R")
        sh.derive("Device memory needed", "M", "M", "what the busiest device holds",
                  f"{{{near_weights}}} + {{{near_kv}}} + {{A}} + {{R}}", used, format_bytes,
                  mem.weights_bytes - mem.weights_far_bytes + mem.kv_cache_bytes - mem.kv_cache_far_bytes
                  + mem.activation_bytes + mem.overhead_bytes)
        if self.has_offload():
            far_capacity = float(self.far.capacity_bytes)
            sh.leaf("M_far", "M<sub>far</sub>", f"capacity of {escape(self.far.name or self.far.kind)}", far_capacity,
                    format_bytes(far_capacity), "accelerator")
            sh.derive("Usable far memory", "U_far", "U<sub>far</sub>", "far-tier memory offloaded data may use",
                      "{M_far}·{f_use}", far_capacity * self.cls.usable_memory_fraction, format_bytes,
                      mem.far_usable_bytes)
        self.max_batch_formula(near_weights)
        notes = [self.fit_note(used)]
        if r.waves > 1:
            sh.derive("Waves", "waves", "n<sub>waves</sub>", "waves the batch runs in, one after another",
                      "⌈{B}/{B_max}⌉", math.ceil(s.batch / v("B_max")), _count, r.waves)
            sh.derive("Wave size", "B_w", "B<sub>w</sub>", "sequences in memory at once",
                      "⌈{B}/{waves}⌉", math.ceil(s.batch / v("waves")), _count, self.resident)
        return Section("memory", "Memory fit (per device)", sh.take(), tuple(notes))

    def stored_positions(self, context: float) -> float:
        m = self.m
        return (m.n_full_attention_layers * context + m.n_window_attention_layers * min(context, m.sliding_window)
                + m.n_chunked_attention_layers * min(context, m.attention_chunk))

    def attended_positions(self, context: float) -> float:
        m = self.m
        chunk = m.attention_chunk
        return (m.n_full_attention_layers * context + m.n_window_attention_layers * min(context, m.sliding_window)
                + m.n_chunked_attention_layers * (context if context <= chunk else (chunk + 1) / 2.0))

    def positions_formula(self, key: str, symbol: str, meaning: str, context_key: str, stored: bool) -> None:
        """Σ over layers of the positions kept (stored) or read by a new token, for models with
        sliding-window or chunked-attention layers beside full ones."""
        m, sh = self.m, self.sheet
        context = sh.value(context_key)
        parts = []
        if m.n_full_attention_layers:
            sh.leaf("L_full", "L<sub>full</sub>", "layers attending to the whole context", m.n_full_attention_layers,
                    _count(m.n_full_attention_layers), "model")
            parts.append(f"{{L_full}}·{{{context_key}}}")
        if m.n_window_attention_layers:
            sh.leaf("L_win", "L<sub>win</sub>", "sliding-window layers", m.n_window_attention_layers,
                    _count(m.n_window_attention_layers), "model")
            sh.leaf("w_win", "w", "sliding window (tokens)", m.sliding_window, _count(m.sliding_window), "model")
            parts.append(f"{{L_win}}·min({{{context_key}}}, {{w_win}})")
        if m.n_chunked_attention_layers:
            sh.leaf("L_chunk", "L<sub>chunk</sub>", "chunked-attention layers", m.n_chunked_attention_layers,
                    _count(m.n_chunked_attention_layers), "model")
            sh.leaf("w_chunk", "w<sub>chunk</sub>", "attention chunk (tokens)", m.attention_chunk,
                    _count(m.attention_chunk), "model")
            if stored:
                parts.append(f"{{L_chunk}}·min({{{context_key}}}, {{w_chunk}})")
            elif context <= m.attention_chunk:
                parts.append(f"{{L_chunk}}·{{{context_key}}}")
            else:  # past the first chunk a token attends to half a chunk on average
                parts.append("{L_chunk}·({w_chunk} + 1)/2")
        value = self.stored_positions(context) if stored else self.attended_positions(context)
        sh.derive("Positions" + (" kept" if stored else " read"), key, symbol, meaning, " + ".join(parts), value,
                  _count)

    def max_batch_formula(self, near_weights: str) -> None:
        """The largest batch that fits, in the regime the engine's answer falls in: the prompt
        tokens of the whole batch within one prefill chunk, or beyond it (workspace fixed)."""
        s, r, sh = self.s, self.r, self.sheet
        v = sh.value
        kv_seq = v("KV") / s.batch * (1 - self.kv_offload)
        sh.derive("Near KV cache per sequence", "kv_seq", "kv<sub>seq</sub>", "device-memory KV cache of one sequence "
                  "at full context", "{KV}/{B}" + ("·(1 − {phi_kv})" if self.kv_offload > 0 else ""), kv_seq,
                  format_bytes)
        available = v("U") - v(near_weights) - v("R")
        switch = v("C") / s.input_len
        unchunked = math.floor(available / (kv_seq + v("l_seq") + s.input_len * v("a_tok")))
        chunked = math.floor((available - v("C") * v("a_tok")) / (kv_seq + v("l_seq")))
        near_name = f"{{U}} − {{{near_weights}}} − {{R}}"
        if chunked >= switch:
            template = f"⌊({near_name} − {{C}}·{{a_tok}})/({{kv_seq}} + {{l_seq}})⌋"
            value = chunked
        else:
            template = f"⌊({near_name})/({{kv_seq}} + {{l_seq}} + {{s_in}}·{{a_tok}})⌋"
            value = unchunked
            if unchunked > math.floor(switch):  # the prompts would no longer fit one chunk
                template = f"min({template}, ⌊{{C}}/{{s_in}}⌋)"
                value = math.floor(switch)
        value = max(value, 0) if available > 0 else 0
        if self.kv_offload > 0.0:
            far_kv_seq = v("KV") / s.batch * self.kv_offload
            sh.leaf("kv_seq_far", "kv<sub>seq,far</sub>", "far-tier KV cache of one sequence", far_kv_seq,
                    format_bytes(far_kv_seq), "kv_offload")
            far_weights = v("W") * self.offload
            far_room = v("U_far") - far_weights
            far_batch = math.floor(far_room / far_kv_seq) if far_room > 0 else 0
            template = f"min({template}, ⌊({{U_far}} − {{W}}·{{phi_w}})/{{kv_seq_far}}⌋)"
            value = min(value, far_batch)
        sh.derive("Largest batch that fits", "B_max", "B<sub>max</sub>", "most sequences whose full-context KV "
                  "cache fits beside the weights", template, value, _count, r.memory.max_batch)

    def fit_note(self, used: float) -> str:
        r, mem = self.r, self.r.memory
        if not r.fits:
            return (f"Does not fit: {escape(r.fit_reason)}. Every number below is what the model computes as if the scenario "
                    "ran as given.")
        if r.waves > 1:
            return (f"The weights fit but the whole batch does not (M = {format_bytes(used)} > U = "
                    f"{format_bytes(mem.usable_bytes)}): the engine runs it in {r.waves} waves of at most "
                    f"{self.resident:,} sequences, one after another, as serving stacks do with preemption; the "
                    "step formulas below are for one wave.")
        return f"Fits: M = {format_bytes(used)} ≤ U = {format_bytes(mem.usable_bytes)}."

    # -- one pass through a stage --------------------------------------------------------------

    def batch_terms(self) -> None:
        """The wave size and the decode micro-batches (PP > 1 keeps PP micro-batches in flight)."""
        s, sh = self.s, self.sheet
        if self.r.waves == 1:
            sh.leaf("B_w", "B", "batch: sequences per replica, prompted together", s.batch, _count(s.batch), "batch")
        sh.leaf("m", "m", "decode micro-batches in flight: min(B, PP)", self.micro_batches, _count(self.micro_batches),
                "batch", "pp")

    def expert_terms(self, suffix: str, tokens_key: str, label: str) -> tuple[str, float, float]:
        """Distinct experts a pass reads, and the busiest device's token imbalance: (template
        piece for the expert FLOPs, FLOPs, bytes)."""
        m, s, sh = self.m, self.s, self.sheet
        v = sh.value
        tokens = v(tokens_key)
        experts, top_k = m.moe.n_routed_experts, m.moe.experts_per_token
        touch = 1.0 - (1.0 - top_k / experts) ** tokens
        sh.derive(f"Chance an expert is touched ({label})", f"q_{suffix}", f"q<sub>{label}</sub>",
                  f"probability that one expert gets at least one of the {label} pass's tokens (uniform routing)",
                  f"1 − (1 − {{k}}/{{E}})<sup>{{{tokens_key}}}</sup>", touch, significant)
        ep = self.effective_ep
        touched = experts_touched_busiest_device(int(v("E_dev")), touch, ep)
        if ep > 1:
            z = expected_max_standard_normal(ep)
            sh.leaf("z_ep", "z<sub>EP</sub>", "expected maximum of EP standard normal draws (Blom's approximation)",
                    z, significant(z), "ep")
            template = (f"min({{E_dev}}, {{E_dev}}·{{q_{suffix}}} + {{z_ep}}·√({{E_dev}}·{{q_{suffix}}}·(1 − "
                        f"{{q_{suffix}}})))")
        else:
            template = f"{{E_dev}}·{{q_{suffix}}}"
        sh.derive(f"Distinct experts read ({label})", f"E_read_{suffix}", f"E<sub>read,{label}</sub>",
                  f"routed experts per MoE layer the busiest device reads in one {label} pass", template, touched,
                  significant)
        read = v("L_moe") / s.pp * touched * v("N_e") * v("p_w") * ep / s.tp
        sh.derive(f"Expert weights read ({label})", f"W_e_{suffix}", f"W<sub>e,{label}</sub>",
                  f"routed-expert bytes the busiest device reads per {label} pass",
                  f"{{L_moe}}·{{E_read_{suffix}}}·{{N_e}}·{{p_w}}·{{EP}}/({{TP}}·{{PP}})", read, format_bytes)
        assignments = tokens * top_k
        imbalance = token_imbalance(assignments, ep)
        if ep > 1:
            sh.derive(f"Token imbalance ({label})", f"iota_{suffix}", f"ι<sub>{label}</sub>",
                      "load of the busiest expert-parallel device over the mean",
                      f"min({{EP}}, 1 + {{z_ep}}·√(({{EP}} − 1)/({{{tokens_key}}}·{{k}})))", imbalance,
                      significant)
            piece = f"2·{{{tokens_key}}}·{{k}}·{{L_moe}}·{{N_e}}/({{TP}}·{{PP}})·{{iota_{suffix}}}"
        else:
            piece = f"2·{{{tokens_key}}}·{{k}}·{{L_moe}}·{{N_e}}/({{TP}}·{{PP}})"
        flops = 2.0 * tokens * top_k * m.n_moe_layers * m.expert_params / (s.tp * s.pp) * imbalance
        return piece, flops, read

    def dense_read(self) -> None:
        m, s, sh = self.m, self.s, self.sheet
        v = sh.value
        head = v("V") * v("d")
        routers = "{N_r}·{p_16} + " if m.moe is not None else ""
        template = (f"({{N_q}}·{{p_w}} + {routers}{{V}}·{{d}}·{{p_16}})/({{TP}}·{{PP}}) + {{N_norm}}·{{p_16}}/{{PP}}")
        value = (v("N_q") * v("p_w") + (v("N_r") * v("p_16") if m.moe is not None else 0.0)
                 + head * v("p_16")) / (s.tp * s.pp) + v("N_norm") * v("p_16") / s.pp
        sh.derive("Dense weights read per pass", "W_read", "W<sub>read</sub>", "weights every pass reads: blocks, "
                  "norms and the LM head (the input embedding is gathered row by row, not read)", template, value,
                  format_bytes)

    def activation_traffic(self, suffix: str, tokens_key: str, label: str) -> None:
        s, sh = self.s, self.sheet
        v = sh.value
        sh.derive(f"Activation traffic ({label})", f"Q_act_{suffix}", f"Q<sub>act,{label}</sub>",
                  "activations written and read between the kernels of the stage's layers",
                  f"{{{tokens_key}}}·{{L}}/{{PP}}·{{p_a}}·(4·{{d}} + 2·{{w_ffn}}/{{TP}})",
                  v(tokens_key) * v("L") / s.pp * v("p_a") * (4 * v("d") + 2 * v("w_ffn") / s.tp), format_bytes)

    def memory_time(self, suffix: str, label: str, phase_memory_time: float, weight_key: str, kv_key: str) -> None:
        """t_m of one pass: bytes over the sustained bandwidth; offloaded bytes at the link's."""
        sh = self.sheet
        v = sh.value
        stack = self.stack_factor()
        name = f"Memory time ({label})"
        key, symbol = f"t_m_{suffix}", f"t<sub>m,{label}</sub>"
        meaning = f"time to stream one {label} pass's bytes"
        if len(self.near) > 1:
            tiers = " and ".join(escape(t.name or t.kind) for t in self.near)
            sh.quote(name, key, symbol, meaning, phase_memory_time, format_time,
                     ("model", "accelerator", "batch", "weight_precision", "kv_precision", "tp", "pp"),
                     f"{escape(self.a.name)} places weights and then the KV cache in {tiers}, fastest first, and each tier's "
                     f"share is read at its own bandwidth; this is the engine's sum over tiers.")
            return
        near_rate = v("beta") * v("eta_m") * self.stack
        if not self.has_offload():
            sh.derive(name, key, symbol, meaning, f"{{Q_{suffix}}}/({{beta}}·{{eta_m}}{stack})",
                      v(f"Q_{suffix}") / near_rate, format_time, phase_memory_time)
            return
        far_bytes = v(weight_key) * self.offload + v(kv_key) * self.kv_offload
        parts = []
        if self.offload > 0.0:
            parts.append(f"{{{weight_key}}}·{{phi_w}}")
        if self.kv_offload > 0.0:
            parts.append(f"{{{kv_key}}}·{{phi_kv}}")
        sh.derive(f"Bytes from the far tier ({label})", f"Q_far_{suffix}", f"Q<sub>far,{label}</sub>",
                  "offloaded weights and KV cache streamed over the far tier's link", " + ".join(parts), far_bytes,
                  format_bytes)
        far_rate = v("beta_far") * v("eta_l") * self.stack
        sh.derive(name, key, symbol, meaning,
                  f"({{Q_{suffix}}} − {{Q_far_{suffix}}})/({{beta}}·{{eta_m}}{stack}) + "
                  f"{{Q_far_{suffix}}}/({{beta_far}}·{{eta_l}}{stack})",
                  (v(f"Q_{suffix}") - far_bytes) / near_rate + far_bytes / far_rate, format_time, phase_memory_time)

    def attention_memory_time(self, suffix: str, label: str, phase, kv_key: str) -> None:
        """t_m,att of one pass: the KV cache's share of the memory time (its offloaded part at the
        far tier's link rate)."""
        sh = self.sheet
        v = sh.value
        stack = self.stack_factor()
        name = f"KV-cache time ({label})"
        key, symbol = f"t_m_att_{suffix}", f"t<sub>m,att,{label}</sub>"
        meaning = f"of t<sub>m,{label}</sub>: the time of the KV cache attention reads and writes"
        if len(self.near) > 1:
            sh.quote(name, key, symbol, meaning, phase.attention_memory_time_s, format_time,
                     ("model", "accelerator", "batch", "kv_precision", "tp", "pp"),
                     "The KV cache's share of the tiers, each at its own bandwidth; this is the engine's sum.")
            return
        near_rate = v("beta") * v("eta_m") * self.stack
        if self.kv_offload > 0.0:
            far_rate = v("beta_far") * v("eta_l") * self.stack
            sh.derive(name, key, symbol, meaning,
                      f"{{{kv_key}}}·(1 − {{phi_kv}})/({{beta}}·{{eta_m}}{stack}) + "
                      f"{{{kv_key}}}·{{phi_kv}}/({{beta_far}}·{{eta_l}}{stack})",
                      v(kv_key) * (1 - self.kv_offload) / near_rate + v(kv_key) * self.kv_offload / far_rate,
                      format_time, phase.attention_memory_time_s)
            return
        sh.derive(name, key, symbol, meaning, f"{{{kv_key}}}/({{beta}}·{{eta_m}}{stack})", v(kv_key) / near_rate,
                  format_time, phase.attention_memory_time_s)

    def pass_time(self, suffix: str, label: str, phase, kv_key: str) -> None:
        s, sh = self.s, self.sheet
        v = sh.value
        stack = self.stack_factor()
        sh.derive(f"Compute time ({label})", f"t_c_{suffix}", f"t<sub>c,{label}</sub>",
                  f"time for one {label} pass's FLOPs", f"{{F_{suffix}}}/({{pi}}·{{eta_c}}{stack})",
                  v(f"F_{suffix}") / (v("pi") * v("eta_c") * self.stack), format_time, phase.compute_time_s)
        sh.derive(f"Attention compute time ({label})", f"t_c_att_{suffix}", f"t<sub>c,att,{label}</sub>",
                  f"of t<sub>c,{label}</sub>: attention's FLOPs", f"{{F_att_{suffix}}}/({{pi}}·{{eta_c}}{stack})",
                  v(f"F_att_{suffix}") / (v("pi") * v("eta_c") * self.stack), format_time,
                  phase.attention_compute_time_s)
        self.attention_memory_time(suffix, label, phase, kv_key)
        t_c, t_m = f"t_c_{suffix}", f"t_m_{suffix}"
        t_c_att, t_m_att = f"t_c_att_{suffix}", f"t_m_att_{suffix}"
        sh.derive(f"Linear layers ({label})", f"t_lin_{suffix}", f"t<sub>lin,{label}</sub>",
                  "the linear layers on their own roofline: their compute, or their weight and activation reads",
                  f"max({{{t_c}}} − {{{t_c_att}}}, {{{t_m}}} − {{{t_m_att}}})",
                  max(v(t_c) - v(t_c_att), v(t_m) - v(t_m_att)), format_time)
        sh.derive(f"Attention ({label})", f"t_att_{suffix}", f"t<sub>att,{label}</sub>",
                  "attention on its own roofline: its compute, or its KV-cache reads",
                  f"max({{{t_c_att}}}, {{{t_m_att}}})", max(v(t_c_att), v(t_m_att)), format_time)
        overlap = v("omega")
        execution = overlap * max(v(t_c), v(t_m)) + (1 - overlap) * (v(f"t_lin_{suffix}") + v(f"t_att_{suffix}"))
        sh.derive(f"Execution time ({label})", f"t_exec_{suffix}", f"t<sub>exec,{label}</sub>",
                  f"compute and memory of one {label} pass together: the whole pass's roofline where operators "
                  "overlap, the linear layers' and attention's one after the other where they do not",
                  f"{{omega}}·max({{{t_c}}}, {{{t_m}}}) + (1 − {{omega}})·({{t_lin_{suffix}}} + {{t_att_{suffix}}})",
                  execution, format_time, phase.execution_time_s)
        if self.quantized_activations:
            sh.derive(f"Overhead ({label})", f"t_oh_{suffix}", f"t<sub>oh,{label}</sub>",
                      "kernel launches and synchronisation, a fixed cost per layer, and the kernels that "
                      "quantise the activations", "{L}/{PP}·({tau} + {tau_q})",
                      v("L") / s.pp * (v("tau") + v("tau_q")), format_time, phase.overhead_time_s)
        else:
            sh.derive(f"Overhead ({label})", f"t_oh_{suffix}", f"t<sub>oh,{label}</sub>",
                      "kernel launches and synchronisation, a fixed cost per layer", "{L}/{PP}·{tau}",
                      v("L") / s.pp * v("tau"), format_time, phase.overhead_time_s)
        sh.derive(f"Stage pass ({label})", f"t_pass_{suffix}", f"t<sub>pass,{label}</sub>",
                  f"one {label} pass through a pipeline stage (communication is not overlapped with compute)",
                  f"{{t_exec_{suffix}}} + {{t_comm_{suffix}}} + {{t_oh_{suffix}}}",
                  v(f"t_exec_{suffix}") + v(f"t_comm_{suffix}") + v(f"t_oh_{suffix}"),
                  format_time, phase.execution_time_s + phase.communication_time_s + phase.overhead_time_s)

    # -- communication -------------------------------------------------------------------------

    def network_terms(self, key: str, group: int, what: str, peers: int | None = None) -> None:
        """β and λ of the network a group uses, each device exchanging with ``peers`` others at
        once (the rest of the group by default)."""
        net = _network(self.a, group)
        sh = self.sheet
        peers = group - 1 if peers is None else peers
        bandwidth = net.group_bandwidth_Bps(peers)
        meaning = f"{escape(net.name)}, per direction ({what})"
        if bandwidth < float(net.bandwidth_per_direction_Bps):
            links = "one direct link" if peers == 1 else f"{peers} direct links"
            meaning += (f": {links} of {format_bandwidth(float(net.peer_bandwidth_per_direction_Bps), trim=True)}, "
                        "since a switchless mesh joins each pair of devices by its own link")
        sh.leaf(f"beta_{key}", f"β<sub>{key}</sub>", meaning, bandwidth, format_bandwidth(bandwidth, trim=True),
                "accelerator", key.lower())
        sh.leaf(f"lambda_{key}", f"λ<sub>{key}</sub>", f"latency of one step on {escape(net.name)}",
                float(net.latency_s), format_time(float(net.latency_s), trim=True), "accelerator")
        if "kappa" not in sh.terms:
            kappa = self.cls.collective_overhead_s
            sh.leaf("kappa", "κ<sub>coll</sub>", "fixed cost of launching and synchronising one communication "
                    f"operation, {self.a.architecture_class} class", kappa, format_time(kappa, trim=True),
                    "accelerator")

    def communication(self, suffix: str, tokens_key: str, label: str, phase) -> None:
        """t_comm of one pass: two all-reduces per layer under TP; with EP, one all-reduce and
        two all-to-alls (dispatch, combine) per MoE layer. Also the bytes each device sends."""
        s, m, sh = self.s, self.m, self.sheet
        v = sh.value
        tp, ep = s.tp, self.effective_ep
        tokens = v(tokens_key)
        if tp == 1 and ep == 1:
            sh.leaf(f"t_comm_{suffix}", f"t<sub>comm,{label}</sub>", "communication per pass: none with TP = EP = 1",
                    0.0, "0 s", "tp", "ep")
            sh.leaf(f"D_{suffix}", f"D<sub>{label}</sub>", "bytes a device sends per pass: none", 0.0, "0 B",
                    "tp", "ep")
            return
        sh.leaf("eta_ic", "η<sub>ic</sub>", f"interconnect efficiency of the {self.a.architecture_class} class",
                self.cls.interconnect_efficiency, format_factor(self.cls.interconnect_efficiency), "accelerator")
        eta = v("eta_ic")
        message = tokens * v("d") * v("p_a")
        sh.derive(f"All-reduce message ({label})", f"msg_{suffix}", f"S<sub>{label}</sub>",
                  "activations of the pass's tokens", f"{{{tokens_key}}}·{{d}}·{{p_a}}", message, format_bytes)
        all_reduce_time, sent = 0.0, 0.0
        if tp > 1:
            self.network_terms("TP", tp, "tensor-parallel group")
            all_reduce_time, sent, algorithm, sent_template = self.all_reduce_formula(suffix, label, message)
        dense_layers = m.n_layers - (m.n_moe_layers if ep > 1 else 0)
        if ep > 1:
            self.network_terms("EP", ep, "expert-parallel group")
            dispatched = message * m.moe.experts_per_token * (ep - 1) / ep * v(f"iota_{suffix}")
            sh.derive(f"All-to-all volume ({label})", f"D_a2a_{suffix}", f"D<sub>a2a,{label}</sub>",
                      "token copies the busiest device sends to experts on other devices",
                      f"{{msg_{suffix}}}·{{k}}·({{EP}} − 1)/{{EP}}·{{iota_{suffix}}}", dispatched, format_bytes)
            a2a = dispatched / (v("beta_EP") * eta) + (ep - 1) * v("lambda_EP") + v("kappa")
            sh.derive(f"All-to-all ({label})", f"t_a2a_{suffix}", f"t<sub>A2A,{label}</sub>",
                      "one all-to-all (dispatch or combine)",
                      f"{{D_a2a_{suffix}}}/({{beta_EP}}·{{eta_ic}}) + ({{EP}} − 1)·{{lambda_EP}} + {{kappa}}", a2a,
                      format_time)
            moe_layers = m.n_moe_layers
            sh.leaf("L_dense", "L<sub>dense</sub>", "layers without routed experts", dense_layers,
                    _count(dense_layers), "model")
            ar = f"{{t_ar_{suffix}}} + " if tp > 1 else ""
            dense = f"{{L_dense}}·2·{{t_ar_{suffix}}} + " if tp > 1 and dense_layers else ""
            moe_part = f"{{L_moe}}·({ar}2·{{t_a2a_{suffix}}})"
            template = f"({dense}{moe_part})/{{PP}}" if dense else f"{moe_part}/{{PP}}"
            time = (dense_layers * 2 * all_reduce_time + moe_layers * (all_reduce_time + 2 * a2a)) / s.pp
            link = (dense_layers * 2 * sent + moe_layers * (sent + 2 * dispatched)) / s.pp
            moe_sent = f"{{L_moe}}·({'{AR_' + suffix + '} + ' if tp > 1 else ''}2·{{D_a2a_{suffix}}})"
            link_template = f"({{L_dense}}·2·{{AR_{suffix}}} + {moe_sent})/{{PP}}" if dense else f"{moe_sent}/{{PP}}"
        else:
            template = f"{{L}}/{{PP}}·2·{{t_ar_{suffix}}}"
            time = v("L") / s.pp * 2 * all_reduce_time
            link = v("L") / s.pp * 2 * sent
            link_template = f"{{L}}/{{PP}}·2·{{AR_{suffix}}}"
        if tp > 1:
            sh.derive(f"All-reduce bytes sent ({label})", f"AR_{suffix}", f"D<sub>AR,{label}</sub>",
                      f"bytes each device sends in one all-reduce ({algorithm})", sent_template, sent, format_bytes)
        sh.derive(f"Communication ({label})", f"t_comm_{suffix}", f"t<sub>comm,{label}</sub>",
                  f"collectives of one {label} pass", template, time, format_time, phase.communication_time_s)
        sh.derive(f"Bytes sent over links ({label})", f"D_{suffix}", f"D<sub>{label}</sub>",
                  f"bytes each device sends per {label} pass (for the link energy)", link_template, link, format_bytes)

    def all_reduce_formula(self, suffix: str, label: str, message: float) -> tuple[float, float, str, str]:
        """t_AR of one all-reduce by the algorithm the engine takes for this message
        (reference.all_reduce: the fastest of the ring and, for a power-of-two TP, recursive
        halving-doubling and recursive doubling). Returns its time, the bytes each device
        sends, the algorithm and the template of those bytes."""
        sh = self.sheet
        v = sh.value
        tp = self.s.tp
        bandwidth, latency = v("beta_TP") * v("eta_ic"), v("lambda_TP")
        _, _, algorithm = all_reduce(message, tp, bandwidth, latency)
        msg, rate = f"{{msg_{suffix}}}", "({beta_TP}·{eta_ic})"
        ring_share = "2·({TP} − 1)/{TP}·" + msg
        steps = math.log2(tp)
        if algorithm == "ring":
            template = f"{ring_share}/{rate} + 2·({{TP}} − 1)·{{lambda_TP}} + {{kappa}}"
            sent_template, sent = ring_share, 2 * (tp - 1) / tp * message
            time = sent / bandwidth + 2 * (tp - 1) * latency + v("kappa")
            how = "as a ring: 2(TP − 1)/TP of the message in 2(TP − 1) steps"
        elif algorithm == "recursive halving and doubling":
            template = f"{ring_share}/{rate} + 2·log₂({{TP}})·{{lambda_TP}} + {{kappa}}"
            sent_template, sent = ring_share, 2 * (tp - 1) / tp * message
            time = sent / bandwidth + 2 * steps * latency + v("kappa")
            how = "by recursive halving then doubling: the ring's bytes in 2·log₂(TP) steps"
        else:
            template = f"log₂({{TP}})·{msg}/{rate} + log₂({{TP}})·{{lambda_TP}} + {{kappa}}"
            sent_template, sent = f"log₂({{TP}})·{msg}", steps * message
            time = sent / bandwidth + steps * latency + v("kappa")
            how = "by recursive doubling: the whole message in each of log₂(TP) steps"
        if tp & (tp - 1):
            note = f"TP = {tp} is not a power of two, so the ring is the only algorithm the engine has for it."
        else:
            ring_sent = 2 * (tp - 1) / tp * message
            candidates = (
                ("ring", ring_sent / bandwidth + 2 * (tp - 1) * latency),
                ("recursive halving and doubling", ring_sent / bandwidth + 2 * steps * latency),
                ("recursive doubling", steps * message / bandwidth + steps * latency),
            )
            listed = ", ".join(f"{name} {format_time(value)}" for name, value in candidates)
            note = f"The engine takes the fastest all-reduce for this message: {listed}."
        sh.derive(f"All-reduce, {algorithm} ({label})", f"t_ar_{suffix}", f"t<sub>AR,{label}</sub>",
                  f"one all-reduce over the TP devices, {how}", template, time, format_time, note=note)
        return time, sent, algorithm, sent_template

    def point_to_point(self, suffix: str, tokens_key: str, label: str) -> None:
        s, sh = self.s, self.sheet
        v = sh.value
        if s.pp == 1:
            return
        self.network_terms("PP", s.tp * s.pp, "between pipeline stages", peers=1)
        if "eta_ic" not in sh.terms:
            sh.leaf("eta_ic", "η<sub>ic</sub>", f"interconnect efficiency of the {self.a.architecture_class} class",
                    self.cls.interconnect_efficiency, format_factor(self.cls.interconnect_efficiency), "accelerator")
        sh.derive(f"Stage-to-stage transfer ({label})", f"t_p2p_{suffix}", f"t<sub>p2p,{label}</sub>",
                  "one point-to-point transfer of the pass's activations to the next stage",
                  f"{{{tokens_key}}}·{{d}}·{{p_a}}/({{beta_PP}}·{{eta_ic}}) + {{lambda_PP}} + {{kappa}}",
                  v(tokens_key) * v("d") * v("p_a") / (v("beta_PP") * v("eta_ic")) + v("lambda_PP") + v("kappa"),
                  format_time)

    # -- decode --------------------------------------------------------------------------------

    def decode(self) -> Section:
        s, m, r, sh = self.s, self.m, self.r, self.sheet
        v = sh.value
        dec = r.decode
        passes = self.micro_batches
        self.batch_terms()
        sh.derive("Sequences per pass", "b", "b", "sequences in one decode pass (one micro-batch)", "{B_w}/{m}",
                  self.resident / passes, _count)
        sh.derive("Mean context", "c_mean", "c<sub>mean</sub>", "context of the average decode step: halfway through "
                  "the generation", "{s_in} + {s_out}/2", s.input_len + s.output_len / 2.0,
                  _count)
        if self.only_full_attention:
            sh.derive("Positions read", "P_dec", "P<sub>dec</sub>", "KV entries a new token reads, summed over layers",
                      "{L_kv}·{c_mean}", v("L_kv") * v("c_mean"), _count)
        else:
            self.positions_formula("P_dec", "P<sub>dec</sub>", "KV entries a new token reads, summed over layers",
                                   "c_mean", stored=False)
        attention, attention_value = self.attention_decode()
        sh.derive("Attention FLOPs per decode pass", "F_att_dec", "F<sub>att,dec</sub>", "FLOPs of attention scores "
                  "and values over the context, in one decode pass on the busiest device", attention, attention_value,
                  format_flops)
        template = "2·{b}·{N_fix}/({TP}·{PP}) + 2·{b}·{d}·{V}/({TP}·{PP}) + {F_att_dec}"
        value = 2 * v("b") * v("N_fix") / (s.tp * s.pp) + 2 * v("b") * v("d") * v("V") / (s.tp * s.pp) \
            + v("F_att_dec")
        self.dense_read()
        before_experts = sh.take()
        self.decode_moe: tuple[Formula, ...] = ()
        expert_read = 0.0
        if m.moe is not None:
            piece, expert_flops, expert_read = self.expert_terms("dec", "b", "dec")
            self.decode_moe = sh.take()
            template += " + " + piece
            value += expert_flops
        sh.derive("Decode FLOPs per pass", "F_dec", "F<sub>dec</sub>", "FLOPs of one decode pass on the busiest "
                  "device: linear layers, LM head, attention over the context", template, value, format_flops,
                  dec.flops_per_device / passes)
        weights = "{W_read} + {W_e_dec}" if m.moe is not None else "{W_read}"
        sh.derive("Weights read per decode pass", "W_dec", "W<sub>dec</sub>", "weight bytes one decode pass reads",
                  weights, v("W_read") + expert_read, format_bytes, dec.weight_bytes_per_device / passes)
        sh.derive("KV cache read and written per pass", "KV_dec", "KV<sub>dec</sub>",
                  "each sequence reads its KV cache at the mean context and writes one new token's entries",
                  "{b}·{kv_layer}·({P_dec} + {L_kv})/{PP}", v("b") * v("kv_layer") * (v("P_dec") + v("L_kv")) / s.pp,
                  format_bytes, dec.kv_bytes_per_device / passes)
        self.activation_traffic("dec", "b", "dec")
        sh.derive("Bytes per decode pass", "Q_dec", "Q<sub>dec</sub>", "bytes one decode pass moves",
                  "{W_dec} + {KV_dec} + {Q_act_dec}", v("W_dec") + v("KV_dec") + v("Q_act_dec"), format_bytes,
                  dec.bytes_per_device / passes)
        notes = []
        if passes > 1:
            notes.append(f"With PP = {s.pp}, a decode step moves m = {passes} micro-batches of b = "
                         f"{_count(v('b'))} sequences through the stages; the formulas are for one micro-batch pass "
                         "on the busiest device.")
        if r.waves > 1:
            notes.append(f"The batch runs in {r.waves} waves: B<sub>w</sub> = {self.resident:,} sequences are in "
                         "memory at once.")
        return Section("decode", "Decode step: FLOPs and bytes", before_experts + sh.take(), tuple(notes))

    def attention_decode(self) -> tuple[str, float]:
        m, s, sh = self.m, self.s, self.sheet
        v = sh.value
        if m.mla is not None:
            value = 2 * v("b") * v("h_dev") * (2 * v("r_kv") + v("d_rope")) * v("P_dec") / s.pp
            return "2·{b}·{h_dev}·(2·{r_kv} + {d_rope})·{P_dec}/{PP}", value
        return "4·{b}·{h_dev}·{d_h}·{P_dec}/{PP}", 4 * v("b") * v("h_dev") * v("d_h") * v("P_dec") / s.pp

    def moe(self) -> Section | None:
        if self.m.moe is None:
            return None
        notes = [("FLOPs count only the k experts each token uses; weight traffic counts every expert the pass "
                 "touches, so it grows with the batch until all experts are read.")]
        if self.effective_ep > 1:
            notes.append("With EP > 1 the busiest device receives more than its share of tokens and experts: the "
                         "engine uses Blom's approximation of the expected maximum of EP draws (z<sub>EP</sub>).")
        return Section("moe", "Mixture of experts: distinct experts read", self.decode_moe, tuple(notes))

    def step(self) -> Section:
        s, r, sh = self.s, self.r, self.sheet
        v = sh.value
        dec = r.decode
        self.memory_time("dec", "dec", dec.memory_time_s, "W_dec", "KV_dec")
        self.pass_time("dec", "dec", dec, "KV_dec")
        sh.derive("Host time per step", "t_host_dec", "t<sub>host,dec</sub>", "the serving stack's host work of one "
                  "decode step, during which the devices wait", "{tau_step} + {B_w}·{tau_seq}",
                  v("tau_step") + self.resident * v("tau_seq"), format_time, dec.host_time_s)
        if s.pp > 1:
            template = "{PP}·{t_pass_dec} + ({PP} − 1)·{t_p2p_dec} + {t_host_dec}"
            value = s.pp * v("t_pass_dec") + (s.pp - 1) * v("t_p2p_dec") + v("t_host_dec")
        else:
            template, value = "{t_pass_dec} + {t_host_dec}", v("t_pass_dec") + v("t_host_dec")
        sh.derive("Inter-token latency", "ITL", "ITL", "time of one decode step: every stage in turn, then the host's "
                  "work", template, value, format_time, r.itl_s)
        # The engine's bound spreads the step's host time over its PP stage passes.
        times = {"compute": v("t_c_dec"), "memory": v("t_m_dec"), "communication": v("t_comm_dec"),
                 "overhead": v("t_oh_dec") + v("t_host_dec") / s.pp}
        notes = [(f"The largest of t<sub>c</sub>, t<sub>m</sub>, t<sub>comm</sub> and t<sub>oh</sub> + "
                  f"t<sub>host</sub>/PP is {dec.bound} ({format_time(times[dec.bound])}): decode is "
                  f"{dec.bound}-bound.")]
        if self.cls.operator_overlap >= 1.0:
            notes.append(f"ω = 1: the {self.a.architecture_class} class overlaps a pass's operators, so a pass takes "
                         "the roofline of the whole, max(t<sub>c</sub>, t<sub>m</sub>).")
        elif self.cls.operator_overlap <= 0.0:
            notes.append(f"ω = 0: the {self.a.architecture_class} class runs a pass's operators one after another, so "
                         "the linear layers (bound by weight reads or by compute) and attention (bound by the KV "
                         "cache) each take their own roofline, and their times add.")
        if dec.host_time_s <= 0.0:
            notes.append(f"The {self.a.architecture_class} class has no host time on the critical path "
                         "(τ<sub>step</sub> = τ<sub>seq</sub> = 0).")
        if r.warning_bits & codes.WARN_COMPUTE_FALLBACK:
            notes.append(f"{escape(self.a.name)} has no units for the requested format: products run at "
                         f"{r.compute_precision.upper()} (π above).")
        return Section("step", "Decode step time", sh.take(), tuple(notes))

    # -- prefill -------------------------------------------------------------------------------

    def prefill(self) -> Section:
        s, m, r, sh = self.s, self.m, self.r, self.sheet
        v = sh.value
        pre = r.prefill
        n = self.chunks
        sh.derive("Prefill chunks", "n_ch", "n<sub>ch</sub>", "forward passes the prompts are prefilled in",
                  "⌈{B_w}·{s_in}/{C}⌉", math.ceil(self.resident * s.input_len / v("C")), _count)
        sh.derive("Tokens per chunk", "T", "T", "prompt tokens in one chunk", "{B_w}·{s_in}/{n_ch}",
                  self.resident * s.input_len / n, _count)
        if self.only_full_attention:
            sh.derive("Causal positions", "P_pre", "P<sub>pre</sub>", "Σ over a prompt's tokens of the positions each "
                      "attends to, over layers", "{L_kv}·{s_in}·({s_in} + 1)/2",
                      v("L_kv") * s.input_len * (s.input_len + 1) / 2.0, _large)
        else:
            positions = m.n_full_attention_layers * causal_positions(s.input_len, 0)
            if m.n_window_attention_layers:
                positions += m.n_window_attention_layers * causal_positions(s.input_len, m.sliding_window)
            if m.n_chunked_attention_layers:
                positions += m.n_chunked_attention_layers * chunked_causal_positions(s.input_len, m.attention_chunk)
            sh.leaf("P_pre", "P<sub>pre</sub>", "Σ over a prompt's tokens of the positions each attends to, over "
                    "layers: s(s+1)/2 per full layer, capped at the window or chunk on the others", positions,
                    _large(positions), "input_len", "model")
        if m.mla is not None:
            mla = m.mla
            sh.leaf("d_nope", "d<sub>nope</sub>", "MLA non-rotary key width per head", mla.qk_nope_head_dim,
                    _count(mla.qk_nope_head_dim), "model")
            sh.leaf("d_v", "d<sub>v</sub>", "MLA value width per head", mla.v_head_dim, _count(mla.v_head_dim), "model")
            attention = "2·{B_w}·{h_dev}·({d_nope} + {d_rope} + {d_v})·{P_pre}/{PP}"
            attention_value = 2 * self.resident * v("h_dev") * (v("d_nope") + v("d_rope") + v("d_v")) \
                * v("P_pre") / s.pp
        else:
            attention = "4·{B_w}·{h_dev}·{d_h}·{P_pre}/{PP}"
            attention_value = 4 * self.resident * v("h_dev") * v("d_h") * v("P_pre") / s.pp
        sh.derive("Attention FLOPs of the prefill", "F_att_pre_all", "F<sub>att,prefill</sub>", "FLOPs of causal "
                  "attention scores and values over every prompt, on the busiest device", attention, attention_value,
                  format_flops)
        template = "2·{B_w}·{s_in}·{N_fix}/({TP}·{PP}) + 2·{B_w}·{d}·{V}/({TP}·{PP}) + {F_att_pre_all}"
        value = (2 * self.resident * s.input_len * v("N_fix") / (s.tp * s.pp)
                 + 2 * self.resident * v("d") * v("V") / (s.tp * s.pp) + v("F_att_pre_all"))
        expert_read = 0.0
        if m.moe is not None:
            piece, expert_flops, expert_read = self.expert_terms("pre", "T", "pre")
            template += " + {n_ch}·" + piece
            value += n * expert_flops
        sh.derive("Prefill FLOPs", "F_pre_all", "F<sub>prefill</sub>", "FLOPs of the whole prefill on the busiest "
                  "device (logits only for each prompt's last token)", template, value, format_flops,
                  pre.flops_per_device)
        sh.derive("FLOPs per chunk", "F_pre", "F<sub>pre</sub>", "FLOPs of one chunk", "{F_pre_all}/{n_ch}",
                  v("F_pre_all") / n, format_flops, pre.flops_per_device / n)
        sh.derive("Attention FLOPs per chunk", "F_att_pre", "F<sub>att,pre</sub>", "attention FLOPs of one chunk",
                  "{F_att_pre_all}/{n_ch}", v("F_att_pre_all") / n, format_flops)
        weights = "{W_read} + {W_e_pre}" if m.moe is not None else "{W_read}"
        sh.derive("Weights read per chunk", "W_pre", "W<sub>pre</sub>", "every chunk reads the weights again",
                  weights, v("W_read") + expert_read, format_bytes, pre.weight_bytes_per_device / n)
        kv_chunk = pre.kv_bytes_per_device / n
        sh.leaf("KV_pre", "KV<sub>pre</sub>", "KV cache per chunk, as the engine computes it: the chunk's new entries "
                "written, and earlier chunks of the same prompts re-read", kv_chunk, format_bytes(kv_chunk),
                "batch", "input_len", "kv_precision", "model", "tp", "pp")
        self.activation_traffic("pre", "T", "pre")
        sh.derive("Bytes per chunk", "Q_pre", "Q<sub>pre</sub>", "bytes one chunk moves",
                  "{W_pre} + {KV_pre} + {Q_act_pre}", v("W_pre") + kv_chunk + v("Q_act_pre"), format_bytes,
                  pre.bytes_per_device / n)
        self.memory_time("pre", "pre", pre.memory_time_s, "W_pre", "KV_pre")
        self.communication("pre", "T", "pre", pre)
        self.point_to_point("pre", "T", "pre")
        self.pass_time("pre", "pre", pre, "KV_pre")
        sh.derive("Host time of the prefill", "t_host_pre", "t<sub>host,pre</sub>", "the serving stack's host work, "
                  "once per forward step (a chunk) and once per prompt, during which the devices wait",
                  "{n_ch}·{tau_step} + {B_w}·{tau_seq}", n * v("tau_step") + self.resident * v("tau_seq"),
                  format_time, pre.host_time_s)
        if s.pp > 1:
            template = "({n_ch} + {PP} − 1)·{t_pass_pre} + ({PP} − 1)·{t_p2p_pre} + {t_host_pre}"
            value = (n + s.pp - 1) * v("t_pass_pre") + (s.pp - 1) * v("t_p2p_pre") + v("t_host_pre")
        else:
            template, value = "{n_ch}·{t_pass_pre} + {t_host_pre}", n * v("t_pass_pre") + v("t_host_pre")
        sh.derive("Prefill of one wave" if r.waves > 1 else "Prefill time", "t_prefill", "t<sub>prefill</sub>", "time until the wave's first tokens",
                  template, value, format_time, pre.time_s)
        if r.waves > 1:
            sh.derive("One wave", "t_wave", "t<sub>wave</sub>", "prefill and decode of one wave",
                      "{t_prefill} + ({s_out} − 1)·{ITL}", v("t_prefill") + (s.output_len - 1) * v("ITL"), format_time)
            sh.derive("Time to first token", "TTFT", "TTFT", "mean over requests: later waves wait for earlier ones",
                      "{t_prefill} + ({waves} − 1)/2·{t_wave}",
                      v("t_prefill") + (r.waves - 1) / 2.0 * v("t_wave"), format_time, r.ttft_s)
        else:
            sh.derive("Time to first token", "TTFT", "TTFT", "the prefill of the whole batch", "{t_prefill}",
                      v("t_prefill"), format_time, r.ttft_s)
        notes = []
        if n > 1:
            notes.append(f"Chunked prefill: the {_count(self.resident * s.input_len)} prompt tokens run as {n:,} "
                         f"chunks of at most {self.constants.prefill_chunk_tokens:,}; each chunk reads the weights "
                         "again and re-reads the KV cache of earlier chunks of its prompts, which KV<sub>pre</sub> "
                         "takes from the engine.")
        notes.append(f"Prefill is {pre.bound}-bound.")
        return Section("prefill", "Prefill and time to first token", sh.take(), tuple(notes))

    # -- roofline ------------------------------------------------------------------------------

    def roofline(self) -> Section:
        s, r, sh = self.s, self.r, self.sheet
        v = sh.value
        sh.derive("Decode operational intensity", "I_dec", "I<sub>dec</sub>", "FLOPs per byte moved in decode",
                  "{F_dec}/{Q_dec}", v("F_dec") / v("Q_dec"), _intensity, r.decode.operational_intensity)
        sh.derive("Prefill operational intensity", "I_pre", "I<sub>pre</sub>", "FLOPs per byte moved in prefill",
                  "{F_pre}/{Q_pre}", v("F_pre") / v("Q_pre"), _intensity, r.prefill.operational_intensity)
        sh.derive("Ridge point", "I_ridge", "I<sub>ridge</sub>", "intensity above which compute, not memory, binds",
                  "{pi}/{beta}", v("pi") / v("beta"), _intensity, r.ridge_point)
        sh.derive("Attainable decode rate", "P_roof", "π<sub>roof</sub>", "the roofline at the decode intensity",
                  "min({pi}, {beta}·{I_dec})", min(v("pi"), v("beta") * v("I_dec")), format_flop_rate)
        notes = [(f"With weights dominating the bytes, decode intensity is about 2·b/p<sub>w</sub> = "
                  f"{significant(2 * v('b') / v('p_w'))} FLOP/B (b sequences per pass); KV-cache reads pull it lower "
                  "as the context grows.")]
        if s.tp * s.pp > 1:
            notes.append("FLOPs and bytes are the busiest device's share.")
        return Section("roofline", "Operational intensity and ridge point", sh.take(), tuple(notes))

    # -- communication ---------------------------------------------------------------------------

    def communication_section(self) -> Section:
        s, sh = self.s, self.sheet
        self.communication("dec", "b", "dec", self.r.decode)
        self.point_to_point("dec", "b", "dec")
        formulas = sh.take()
        notes = []
        if s.tp == 1 and self.effective_ep == 1:
            notes.append("No tensor or expert parallelism: no collectives within a stage.")
        if s.pp == 1:
            notes.append("No pipeline: no transfers between stages.")
        else:
            notes.append("The engine does not overlap communication with compute, a conservative choice.")
        for group, key in ((s.tp, "tp"), (s.tp * s.pp, "pp")):
            if group > 1 and group > float(self.a.interconnect.domain_size):
                notes.append(f"The {key.upper()} group of {group} devices is larger than the scale-up domain of "
                             f"{float(self.a.interconnect.domain_size):g}: it crosses the slower network.")
        notes.append(f"DP = {s.dp}: replicas do not communicate; throughput and devices multiply by DP.")
        return Section("communication", "Communication (TP, PP, EP)", formulas, tuple(notes), ("tp", "pp", "ep", "dp"))

    # -- energy --------------------------------------------------------------------------------

    def energy(self) -> Section:
        s, r, a, sh = self.s, self.r, self.a, self.sheet
        v = sh.value
        sh.leaf("TDP", "P<sub>TDP</sub>", f"TDP of {escape(a.name)}", float(a.tdp_W), format_power(float(a.tdp_W), trim=True),
                "accelerator")
        sh.leaf("P_idle", "P<sub>idle</sub>", f"idle power of {escape(a.name)}", float(a.idle_W),
                format_power(float(a.idle_W), trim=True), "accelerator")
        busy = self.cls.busy_power_fraction
        sh.leaf("f_busy", "f<sub>busy</sub>", f"share of TDP drawn at least while executing, {a.architecture_class} "
                f"class ({CONSTANTS_FILE})", busy, format_factor(busy), "accelerator")
        sh.derive("Energy per FLOP", "e_flop", "e<sub>FLOP</sub>", "set so that sustained dense products alone reach "
                  "TDP", "({TDP} − {P_idle})/({eta_c}·{pi})",
                  (v("TDP") - v("P_idle")) / (v("eta_c") * v("pi")), lambda x: _tiny_energy(x, "FLOP"))
        main = self.near[0]
        e_mem = self.constants.memory_energy_J_per_byte[main.kind]
        sh.leaf("e_mem", "e<sub>mem</sub>", f"energy per byte of {escape(main.name or main.kind)} ({CONSTANTS_FILE})", e_mem,
                _tiny_energy(e_mem, "B"), "accelerator")
        e_link = self.constants.interconnect_energy_J_per_byte
        sh.leaf("e_link", "e<sub>link</sub>", f"energy per byte sent over the interconnect ({CONSTANTS_FILE})",
                e_link, _tiny_energy(e_link, "B"))
        if self.has_offload():
            e_far = self.constants.memory_energy_J_per_byte[self.far.kind]
            sh.leaf("e_far", "e<sub>far</sub>", f"energy per byte of {escape(self.far.name or self.far.kind)} "
                    f"({CONSTANTS_FILE})", e_far, _tiny_energy(e_far, "B"), "accelerator")
        self.power("dec", "{m}·", self.micro_batches, "{ITL}", v("ITL"), r.decode.power_per_device_W, "decode")
        self.power("pre", "{n_ch}·", self.chunks, "{t_prefill}", v("t_prefill"), r.prefill.power_per_device_W,
                   "prefill")
        devices = s.tp * s.pp * s.dp
        sh.derive("Devices", "N_dev", "N<sub>dev</sub>", "devices of all replicas", "{TP}·{PP}·{DP}", devices, _count,
                  r.devices)
        waves = "{waves}·" if r.waves > 1 else ""
        sh.derive("Energy of the run", "E_run", "E<sub>run</sub>", "all devices, prefill and decode of every wave",
                  f"{{N_dev}}·{waves}({{P_pre}}·{{t_prefill}} + {{P_dec}}·({{s_out}} − 1)·{{ITL}})",
                  devices * r.waves * (v("P_pre") * v("t_prefill") + v("P_dec") * (s.output_len - 1) * v("ITL")),
                  format_energy, r.energy_J)
        sh.derive("Tokens per joule", "tok_J", "Y<sub>E</sub>", "input and output tokens per joule, as the second paper "
                  "counts", "{DP}·{B}·({s_in} + {s_out})/{E_run}",
                  s.dp * s.batch * (s.input_len + s.output_len) / v("E_run"), lambda x: f"{significant(x)} tokens/J",
                  r.tokens_per_joule)
        notes = [self.scope_note()]
        if r.warning_bits & codes.WARN_POWER_CAPPED:
            notes.append("The work asks for more than the TDP: power is capped there (the min above).")
        return Section("energy", "Power and energy", sh.take(), tuple(notes))

    def power(self, suffix: str, passes: str, n_passes: int, time_key: str, time: float, engine: float,
              label: str) -> None:
        sh = self.sheet
        v = sh.value
        key, symbol = f"P_{suffix}", f"P<sub>{suffix}</sub>"
        meaning = (f"mean power of one device during {label}: idle plus the energy of the work, over its time; at "
                   "least the busy floor, at most the TDP")
        if len(self.near) > 1:
            sh.quote(f"Power during {label}", key, symbol, meaning, engine, format_power,
                     ("model", "accelerator", "batch", "weight_precision", "tp", "pp"),
                     "Bytes are charged per tier at each tier's energy per byte; this is the engine's figure.")
            return
        passes = passes if n_passes > 1 else ""
        if self.has_offload():
            memory = f"({{Q_{suffix}}} − {{Q_far_{suffix}}})·{{e_mem}} + {{Q_far_{suffix}}}·{{e_far}}"
            memory_energy = (v(f"Q_{suffix}") - v(f"Q_far_{suffix}")) * v("e_mem") + v(f"Q_far_{suffix}") * v("e_far")
        else:
            memory = f"{{Q_{suffix}}}·{{e_mem}}"
            memory_energy = v(f"Q_{suffix}") * v("e_mem")
        dynamic = v(f"F_{suffix}") * v("e_flop") + memory_energy + v(f"D_{suffix}") * v("e_link")
        sh.derive(f"Power during {label}", key, symbol, meaning,
                  f"min({{TDP}}, max({{f_busy}}·{{TDP}}, {{P_idle}} + {passes}({{F_{suffix}}}·{{e_flop}} + {memory} + "
                  f"{{D_{suffix}}}·{{e_link}})/{time_key}))",
                  min(v("TDP"), max(v("f_busy") * v("TDP"), v("P_idle") + n_passes * dynamic / time)), format_power,
                  engine)

    def scope_note(self) -> str:
        if self.a.power_scope == "system":
            return (f"System-level figures: the power of {escape(self.a.name)} is known only for the whole system (host, fans "
                    "and power delivery included).")
        return f"Device-level figures: the board power of each {escape(self.a.name)}, without host, fans or power delivery."

    # -- throughput ----------------------------------------------------------------------------

    def throughput(self) -> Section:
        s, r, sh = self.s, self.r, self.sheet
        v = sh.value
        wave = "{t_prefill} + ({s_out} − 1)·{ITL}"
        sh.derive("End-to-end latency", "T_e2e", "T<sub>e2e</sub>", "until the last sequence's last token",
                  f"{{waves}}·({wave})" if r.waves > 1 else wave,
                  r.waves * (v("t_prefill") + (s.output_len - 1) * v("ITL")), format_time, r.e2e_latency_s)
        sh.derive("Output throughput", "thr_out", "Θ<sub>out</sub>", "output tokens per second, all replicas",
                  "{DP}·{B}·{s_out}/{T_e2e}", s.dp * s.batch * s.output_len / v("T_e2e"), _tokens_per_s,
                  r.throughput_output_tok_s)
        sh.derive("Input + output throughput", "thr_all", "Θ<sub>all</sub>", "input and output tokens per second, as "
                  "the second paper counts", "{DP}·{B}·({s_in} + {s_out})/{T_e2e}",
                  s.dp * s.batch * (s.input_len + s.output_len) / v("T_e2e"), _tokens_per_s,
                  r.throughput_total_tok_s)
        notes = ["A static batch: all prompts arrive together and the first token of each comes from the prefill."]
        return Section("throughput", "Throughput", sh.take(), tuple(notes))

    def sheet_sections(self) -> tuple[Section, ...]:
        self.inputs()
        self.sheet.take()
        memory = self.memory()
        decode = self.decode()
        moe = self.moe()
        communication = self.communication_section()
        step = self.step()
        prefill = self.prefill()
        roofline = self.roofline()
        energy = self.energy()
        throughput = self.throughput()
        # Shown in the order DESIGN.md §4 reads; built in the order the numbers depend on each other.
        ordered = (memory, decode, moe, step, prefill, roofline, communication, energy, throughput)
        return tuple(section for section in ordered if section is not None)


# ---- entry points --------------------------------------------------------------------------


def sheet_for_result(result: Result, model: ModelArch, accelerator: Accelerator, constants: Constants) -> FormulaSheet:
    """The formulas of one evaluated scenario (``result``) on ``accelerator``."""
    builder = _Builder(result, model, accelerator, constants)
    sections = builder.sheet_sections()
    s = result.scenario
    title = f"{model.name} on {result.devices} × {accelerator.name}"
    if s.dp > 1:
        title += f" ({s.dp} replicas)"
    return FormulaSheet(title, sections)


def formula_sheet(engine, frame, accelerator_id: str) -> FormulaSheet:
    """The formulas of the frame's scenario on one of its accelerators (``frame.accelerators``),
    with the numbers the frame's kernels computed."""
    if accelerator_id not in frame.accelerators:
        raise ValueError(f"accelerator {accelerator_id!r} is not among the shown ones: {', '.join(frame.accelerators)}")
    result = frame.result(accelerator_id)
    return sheet_for_result(result, engine.model(result.scenario.model), engine.catalog.accelerator(accelerator_id),
                            engine.constants)


# ---- HTML ----------------------------------------------------------------------------------


def _symbol_html(term: Term) -> str:
    if term.derived:
        return f'<a href="#f-{term.key}">{term.symbol}</a>'
    if term.controls:
        return f'<a href="control:{term.controls[0]}">{term.symbol}</a>'
    return term.symbol


def _definition_html(term: Term) -> str:
    """'<a href="control:batch">B = 8</a>: batch: ... (Batch)' — the link goes where the value is set."""
    text = f"{term.symbol} = {escape(term.text)}"
    if term.derived:
        head = f'<a href="#f-{term.key}">{text}</a>'
    elif term.controls:
        head = f'<a href="control:{term.controls[0]}">{text}</a>'
    else:
        head = text
    if term.derived:
        tail = ""
    elif term.controls:
        tail = " — set by " + ", ".join(
            f'<a href="control:{c}">{escape(CONTROL_LABELS[c])}</a>' for c in term.controls
        )
    else:
        tail = " — a constant"
    return f"<li>{head}: {term.meaning}{tail}</li>"


def formula_html(formula: Formula, defined: set[str] | None = None) -> str:
    """One formula: its name, the formula in symbols, the same with numbers, and the terms not
    in ``defined`` (those listed earlier in the section), which it then adds to ``defined``."""
    defined = set() if defined is None else defined
    parts = [f'<a name="f-{formula.result.key}"></a><p><b>{escape(formula.name)}</b></p>']
    if formula.quoted:
        parts.append(f"<p>&nbsp;&nbsp;{formula.result.symbol} = {escape(formula.result.text)} "
                     "(as the engine computes it)</p>")
    else:
        symbols = {term.key: _symbol_html(term) for term in formula.terms}
        rhs = _PLACEHOLDER.sub(lambda m: symbols[m.group(1)], formula.template)
        parts.append(f"<p>&nbsp;&nbsp;{formula.result.symbol} = {rhs}</p>")
        parts.append(f"<p>&nbsp;&nbsp;{formula.substituted()}</p>")
    if formula.note:
        parts.append(f"<p><i>{formula.note}</i></p>")
    if not formula.agrees:
        parts.append(f"<p><i>The engine's own figure is {escape(formula.engine_text)}: it does more here than this "
                     "formula shows.</i></p>")
    new_terms = [term for term in formula.terms if term.key not in defined]
    if new_terms:
        parts.append("<ul>" + "".join(_definition_html(term) for term in new_terms) + "</ul>")
    defined.update(term.key for term in formula.terms)
    defined.add(formula.result.key)
    return "\n".join(parts)


def formulas_html(sections: tuple[Section, ...] | FormulaSheet, title: str | None = None) -> str:
    """Plain, readable HTML: a heading per section, each formula in symbols and with numbers,
    and its terms listed with links to the controls that change them."""
    if isinstance(sections, FormulaSheet):
        title = title or sections.title
        sections = sections.sections
    parts = [f"<h2>{escape(title)}</h2>"] if title else []
    parts.append("<p>Click a symbol to go to the control that changes it, or to the formula that defines it.</p>")
    for section in sections:
        parts.append(f'<a name="s-{section.key}"></a><h3>{escape(section.title)}</h3>')
        parts.extend(f"<p>{note}</p>" for note in section.notes)
        if section.note_controls:
            links = ", ".join(f'<a href="control:{c}">{escape(CONTROL_LABELS[c])}</a>' for c in section.note_controls)
            parts.append(f"<p>Set by {links}.</p>")
        defined: set[str] = set()  # each term is listed once per section, where it first appears
        parts.extend(formula_html(formula, defined) for formula in section.formulas)
    return "\n".join(parts)
