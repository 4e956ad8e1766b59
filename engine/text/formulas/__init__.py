"""The physics of one scenario as formulas, with the scenario's own numbers plugged in.

For the selected accelerator this lays out the reference model's physics (engine/physics/reference/) section by section (memory fit, decode
FLOPs and bytes, MoE experts, step time, prefill and TTFT, roofline, communication, power and
energy, throughput). Each :class:`Formula` names its symbols, gives each its value and unit in
this scenario and the controls that change it, and is valued by evaluating its template over
those terms: the formula shown is the one computed. That value must equal the engine's own
(``Formula.engine_value``; the tests hold them equal). Where the engine does more than a short
formula can show (several memory tiers filled in turn, chunk re-reads of the KV cache during
prefill), the formula quotes the engine's figure and a note says why. The terms a formula takes
as given (controls, catalog figures, class constants, and the layout facts the engine found:
heads, KV heads and experts per device, micro-batches, the algorithm and network chosen) are
read from the engine's result and the trace of its steps.

- ``sheet.py``: Term, Formula, Section, FormulaSheet and ``evaluate(template, terms)``;
- ``build.py``: the Builder and the ``@section(key, title, needs=...)`` registry;
- ``sections/``: one module per section;
- ``html.py``: :func:`formulas_html`, whose symbols link to ``control:<id>`` (the control that
  changes them) or ``#f-<key>`` (the formula that defines them).

No Qt here.
"""

from __future__ import annotations

from ...core.accelerator import Accelerator
from ...core.constants import Constants
from ...core.model import ModelArch
from ...physics.results import Result
from ..context import Context
from .build import build_sections
from .html import formula_html, formulas_html
from .sheet import CONTROL_LABELS, CONTROLS, Formula, FormulaSheet, Section, Term, evaluate

__all__ = [
    "CONTROLS",
    "CONTROL_LABELS",
    "Formula",
    "FormulaSheet",
    "Section",
    "Term",
    "evaluate",
    "formula_html",
    "formula_sheet",
    "formulas_html",
    "sheet_for_result",
]


def sheet_for_result(result: Result, model: ModelArch, accelerator: Accelerator, constants: Constants) -> FormulaSheet:
    """The formulas of one evaluated scenario (``result``) on ``accelerator``."""
    sections = build_sections(Context.of(result, model, accelerator, constants))
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
