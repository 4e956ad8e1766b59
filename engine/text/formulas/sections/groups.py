"""The attention groups' terms (``ModelArch.attention_groups``): "global" layers with heads of
their own, "sparse" layers that attend the indexer's top-k of every cached token, "compressed"
layers that keep one entry per r tokens and a window, and "compressed_sparse" layers that do
both. Per group: its KV cache at full context, what a decoding token reads, writes and computes
at the mean context, and a prompt's attention; each formula is valued from its terms and held to
the engine's figure for the group (``Trace.attention_groups``)."""

from __future__ import annotations

from ....core.units import format_bytes, format_flops
from ....physics.reference import GroupTrace
from ...context import Context
from ..build import Builder
from ..numbers import count, large

# Each kind's key suffix and the subscript it is written with.
SUFFIXES: dict[str, tuple[str, str]] = {
    "global": ("glob", "glob"), "sparse": ("sp", "sparse"), "compressed": ("cmp", "cmp"),
    "compressed_sparse": ("csp", "csp"),
}

# What each kind's layers are called in a formula's name.
NAMES: dict[str, str] = {
    "global": "global layers", "sparse": "sparse layers", "compressed": "compressed layers",
    "compressed_sparse": "compressed sparse layers",
}


def has_groups(ctx: Context) -> bool:
    return bool(ctx.trace.attention_groups)


def own_layers_counted(ctx: Context) -> bool:
    """Whether the templates keep the layers of the model's own heads (full, window, chunked):
    always without groups (the sheet as it was), with groups only where there are such layers."""
    return not has_groups(ctx) or ctx.trace.kv_layers > 0


def _sum(parts: list[str]) -> str:
    return " + ".join(parts)


def factor(expression: str) -> str:
    """``expression`` as a factor: in parentheses where it is a sum outside any parentheses."""
    depth = 0
    for i, char in enumerate(expression):
        depth += char in "(⌊⌈" and 1 or (char in ")⌋⌉" and -1 or 0)
        if depth == 0 and expression.startswith((" + ", " − "), i):
            return f"({expression})"
    return expression


class _Group:
    """One group's keys and the pieces of its templates."""

    def __init__(self, sh: Builder, ctx: Context, g: GroupTrace) -> None:
        self.sh, self.ctx, self.g = sh, ctx, g
        self.suffix, self.sub = SUFFIXES[g.kind]
        self.name = NAMES[g.kind]
        m = ctx.model
        s, sub = self.suffix, self.sub
        self.layers = sh.leaf(f"L_{s}", f"L<sub>{sub}</sub>", f"{g.label} layers", g.layers, count(g.layers), "model")
        if g.ratio > 1:
            sh.leaf(f"r_{s}", f"r<sub>{sub}</sub>", f"tokens compressed into one cached entry on the {self.name}",
                    g.ratio, count(g.ratio), "model")
        if g.window > 0:
            sh.leaf("w_win", "w", "sliding window (tokens)", m.sliding_window, count(m.sliding_window), "model")
        if g.top_k > 0:
            sh.leaf("k_top", "k<sub>top</sub>", "entries a sparse layer attends: the indexer's top-k", g.top_k,
                    count(g.top_k), "model")
        if g.index_stride > 0:
            ix = m.indexer
            sh.leaf("p_ix", "p<sub>ix</sub>", f"bytes of one indexer key: {ix.head_dim} elements in "
                    f"{ix.key_format.upper()} with their scales (every device keeps all of them)", g.index_key_bytes,
                    format_bytes(g.index_key_bytes), "model")
            sh.leaf("h_ix", "h<sub>ix</sub>", "indexer query heads (every device scores every key)", ix.n_heads,
                    count(ix.n_heads), "model")
            sh.leaf("d_ix", "d<sub>ix</sub>", "indexer key width", ix.head_dim, count(ix.head_dim), "model")
            if g.index_stride not in (1, g.ratio):
                sh.leaf(f"t_ix_{s}", f"t<sub>ix,{sub}</sub>", f"tokens one indexer key covers on the {self.name}",
                        g.index_stride, count(g.index_stride), "model")
        self.entry = "kv_layer" if g.kind != "global" else self._global_entry()

    def _global_entry(self) -> str:
        sh, ctx, g = self.sh, self.ctx, self.g
        if "kv_glob" in sh.terms:  # derived with the memory section's terms
            return "kv_glob"
        shape = ctx.model.global_attention
        heads = -(-shape.n_kv_heads // ctx.scenario.tp)
        sh.leaf("h_kv_glob_dev", "h<sub>kv,glob,dev</sub>", f"KV heads of a global layer on the busiest device: "
                f"⌈{shape.n_kv_heads}/TP⌉", heads, count(heads), "model", "tp")
        sh.leaf("d_glob", "d<sub>glob</sub>", "head dimension of the global layers", shape.head_dim,
                count(shape.head_dim), "model")
        if shape.k_eq_v:
            template = "{h_kv_glob_dev}·{d_glob}·{p_kv}"
            meaning = "bytes one token keeps per global layer on the busiest device (K = V: one tensor)"
        elif shape.value_dim == shape.head_dim:
            template = "2·{h_kv_glob_dev}·{d_glob}·{p_kv}"
            meaning = "bytes one token keeps per global layer on the busiest device (K and V)"
        else:
            sh.leaf("d_v_glob", "d<sub>v,glob</sub>", "value width of the global layers", shape.value_dim,
                    count(shape.value_dim), "model")
            template = "{h_kv_glob_dev}·({d_glob} + {d_v_glob})·{p_kv}"
            meaning = "bytes one token keeps per global layer on the busiest device (K and V)"
        sh.derive("KV cache per token per global layer", "kv_glob", "kv<sub>glob</sub>", meaning, template,
                  format_bytes, g.entry_bytes)
        return "kv_glob"

    # -- positions -------------------------------------------------------------------------

    def entries(self, context: str) -> str:
        """Entries one layer keeps at the context ``context`` names, window apart."""
        return f"{{{context}}}" if self.g.ratio <= 1 else f"⌊{{{context}}}/{{r_{self.suffix}}}⌋"

    def stored(self, context: str) -> str:
        kept = self.entries(context)
        return kept + (f" + min({{{context}}}, {{w_win}})" if self.g.window > 0 else "")

    def keys(self, context: str) -> str:
        stride = self.g.index_stride
        if stride == 1:
            return f"{{{context}}}"
        if stride == self.g.ratio:
            return f"⌊{{{context}}}/{{r_{self.suffix}}}⌋"
        return f"⌊{{{context}}}/{{t_ix_{self.suffix}}}⌋"

    def attended(self, context: str) -> str:
        read = self.entries(context)
        if self.g.top_k > 0:
            read = f"min({read}, {{k_top}})"
        return read + (f" + min({{{context}}}, {{w_win}})" if self.g.window > 0 else "")

    def writes(self) -> tuple[str, str]:
        """The share of an entry and of an indexer key one new token writes."""
        entry = "1" if self.g.ratio <= 1 else f"1/{{r_{self.suffix}}}"
        if self.g.window > 0:
            entry += " + 1"
        stride = self.g.index_stride
        key = "1" if stride == 1 else (f"1/{{r_{self.suffix}}}" if stride == self.g.ratio
                                       else f"1/{{t_ix_{self.suffix}}}")
        return entry, key

    def per_head(self, prefill: bool) -> str:
        """Attention FLOPs per attended entry on the busiest device."""
        m = self.ctx.model
        if self.g.kind == "global":
            shape = m.global_attention
            heads = "" if shape.n_heads == m.n_heads else "·{h_glob}/{h}"
            if heads:
                self.sh.leaf("h_glob", "h<sub>glob</sub>", "query heads of the global layers", shape.n_heads,
                             count(shape.n_heads), "model")
            if shape.value_dim == shape.head_dim:
                return f"4·{{h_dev}}{heads}·{{d_glob}}"
            return f"2·{{h_dev}}{heads}·({{d_glob}} + {{d_v_glob}})"
        if m.mla is not None:
            return "2·{h_dev}·({d_nope} + {d_rope} + {d_v})" if prefill else "2·{h_dev}·(2·{r_kv} + {d_rope})"
        return "4·{h_dev}·{d_h}"

    # -- the formulas ----------------------------------------------------------------------

    def kv_cache(self) -> str:
        g, s, sub = self.g, self.suffix, self.sub
        template = f"{{{self.entry}}}·{factor(self.stored('c'))}"
        meaning = f"what one sequence keeps on the busiest device over the {g.layers} {g.label} layers at full context"
        if g.index_stride > 0:
            template = f"{template} + {{p_ix}}·{factor(self.keys('c'))}"
            meaning += ": their entries, and the indexer's keys"
        sh_key = f"KV_{s}"
        self.sh.derive(f"KV cache per sequence ({self.name})", sh_key, f"KV<sub>{sub}</sub>", meaning,
                       f"{{{self.layers}}}·{factor(template)}", format_bytes, g.kv_sequence_bytes)
        return sh_key

    def attended_term(self) -> str:
        """The entries a decoding token reads per layer: a term of its own where it is more than
        the context."""
        template = self.attended("c_mean")
        if template == "{c_mean}":
            return template
        g, s, sub = self.g, self.suffix, self.sub
        what = "the indexer's top-k of the compressed entries" if g.top_k and g.ratio > 1 else (
            "the indexer's top-k" if g.top_k else "the compressed entries")
        if g.window:
            what += " and the window"
        self.sh.derive(f"Entries read ({self.name})", f"A_{s}", f"A<sub>{sub}</sub>",
                       f"entries a decoding token reads in one {g.label} layer at the mean context: {what}",
                       template, count, g.attended_entries)
        return f"{{A_{s}}}"

    def decode_bytes(self, attended: str) -> str:
        g, s, sub = self.g, self.suffix, self.sub
        entry, key = self.writes()
        template = f"{{{self.entry}}}·({attended} + {entry})"
        meaning = (f"KV bytes a decoding token reads and writes over the {g.label} layers: the entries it attends "
                   "and its own new one")
        if g.index_stride > 0:
            template += f" + {{p_ix}}·({self.keys('c_mean')} + {key})"
            meaning += ", and every indexer key, which the indexer scores, and its own new key"
        self.sh.derive(f"KV read and written per decoding token ({self.name})", f"q_{s}", f"q<sub>{sub}</sub>",
                       meaning, f"{{{self.layers}}}·{factor(template)}", format_bytes, g.decode_read_bytes + g.write_bytes)
        return f"q_{s}"

    def decode_flops(self, attended: str) -> str:
        g, s, sub = self.g, self.suffix, self.sub
        template = f"{self.per_head(False)}·{attended}"
        meaning = f"attention FLOPs of a decoding token over the {g.label} layers on the busiest device"
        if g.index_stride > 0:
            template += f" + 2·{{h_ix}}·{{d_ix}}·{factor(self.keys('c_mean'))}"
            meaning += ": the entries it attends, and the indexer scoring every key"
        self.sh.derive(f"Attention FLOPs per decoding token ({self.name})", f"f_{s}", f"f<sub>{sub}</sub>", meaning,
                       f"{{{self.layers}}}·{factor(template)}", format_flops, g.decode_flops)
        return f"f_{s}"

    def prefill_flops(self) -> str:
        g, s, sub = self.g, self.suffix, self.sub
        sh = self.sh
        sh.leaf(f"P_pre_{s}", f"P<sub>pre,{sub}</sub>", f"Σ over a prompt's tokens of the entries each attends in "
                f"one {g.label} layer" + (": at most the top-k" if g.top_k else "")
                + (", plus the window" if g.window else ""), g.prompt_entries, large(g.prompt_entries),
                "input_len", "model")
        template = f"{self.per_head(True)}·{{P_pre_{s}}}"
        if g.index_stride > 0:
            sh.leaf(f"X_pre_{s}", f"X<sub>pre,{sub}</sub>", f"Σ over a prompt's tokens of the indexer keys each "
                    f"scores in one {g.label} layer", g.prompt_index_keys, large(g.prompt_index_keys), "input_len",
                    "model")
            template += f" + 2·{{h_ix}}·{{d_ix}}·{{X_pre_{s}}}"
        sh.derive(f"Attention FLOPs of a prompt ({self.name})", f"F_pre_{s}", f"F<sub>pre,{sub}</sub>",
                  f"attention FLOPs of one prompt over the {g.label} layers on the busiest device",
                  f"{{{self.layers}}}·{factor(template)}", format_flops, g.prompt_flops)
        return f"F_pre_{s}"


def _groups(sh: Builder, ctx: Context) -> list[_Group]:
    return [_Group(sh, ctx, g) for g in ctx.trace.attention_groups]


def kv_cache_terms(sh: Builder, ctx: Context) -> list[str]:
    """Each group's KV cache per sequence at full context (keys of the formulas)."""
    return [group.kv_cache() for group in _groups(sh, ctx)]


def decode_terms(sh: Builder, ctx: Context) -> tuple[list[str], list[str]]:
    """Each group's KV bytes and attention FLOPs per decoding token (keys of the formulas)."""
    byte_keys, flop_keys = [], []
    for group in _groups(sh, ctx):
        attended = group.attended_term()
        byte_keys.append(group.decode_bytes(attended))
        flop_keys.append(group.decode_flops(attended))
    return byte_keys, flop_keys


def prefill_terms(sh: Builder, ctx: Context) -> list[str]:
    """Each group's attention FLOPs over one prompt (keys of the formulas)."""
    return [group.prefill_flops() for group in _groups(sh, ctx)]


def braced(keys: list[str]) -> str:
    """The groups' terms summed, as a factor."""
    return factor(_sum([f"{{{k}}}" for k in keys]))
