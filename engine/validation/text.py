"""A validation report in words and as plain data: ``format_report`` (``accelscope validate``)
and ``to_dict`` (``--json``), and a row's setup in a sentence (``setup_text``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..catalog.measurements import PRECISION_FIELDS, Published, ServerObjective, Side, Spec
from ..core.units import format_number
from .ideal import IDEAL_DESCRIPTION
from .report import OFF_FACTOR, POPULATIONS, ClaimReport, Prediction, Report, RowReport, abs_pct_error, finite_or_none
from .served import SERVED_SEEDS, SERVER_LENGTHS, SERVER_POLICY, ServerCapacity


def _seeds_text() -> str:
    return ", ".join(str(seed) for seed in SERVED_SEEDS)


def server_text(requests: int, objective: ServerObjective) -> str:
    """How a server scenario is run and what its prediction is, in words."""
    return (f"a server scenario (MLPerf Inference's Server): runs of {requests:,} requests arriving as a Poisson "
            f"stream, every prompt and reply of the stated lengths, vLLM's scheduler with its default limits for "
            f"the device; the largest arrival rate whose run keeps p99 TTFT <= {objective.ttft_p99_ms:,g} ms and "
            f"p99 TPOT <= {objective.tpot_p99_ms:,g} ms (bisection on the rate), and the run at that rate; the mean "
            f"over {len(SERVED_SEEDS)} draws of the arrivals (seeds {_seeds_text()})")


def setup_text(spec: Spec) -> str:
    """The setup a row's prediction runs, in words: batch, lengths, layout, precision, and how a
    served run or a server scenario schedules its requests."""
    base = spec.base
    layout = ", ".join(f"{key.upper()} {base[key]}" for key in ("tp", "pp", "ep", "dp") if base.get(key, 1) > 1)
    precision = "/".join(str(base[key]).upper() for key in PRECISION_FIELDS.values())
    parts = [f"{base['input_len']:,} input / {base['output_len']:,} output tokens"]
    # A server scenario's batch is what its scheduler forms, not the row's.
    if spec.server is None:
        parts.insert(0, f"batch {base['batch']:,}")
    if layout:
        parts.append(layout)
    parts.append(f"weights/activations/KV {precision}")
    text = ", ".join(parts)
    if spec.ratio:
        def changes(side: Side) -> str:
            return ", ".join(f"{key} {value}" for key, value in side.overrides.items()) or "the setup as is"
        numerator, denominator = spec.sides
        text += f"; ratio of ({changes(numerator)}) over ({changes(denominator)})"
    if len(spec.cases) > 1:
        text += f"; {spec.aggregate} over {len(spec.cases)} configurations"
    if spec.server is not None:
        return f"{text}; {server_text(spec.requests, spec.server)}"
    # A served run changes the run's totals; TTFT and ITL stay the static batch's (served_runs).
    if spec.requests is not None and not any(step in spec.metric for step in ("ttft", "itl")):
        fixed = [a for a in spec.accelerators() if a in spec.fixed_batch]
        text += (f"; a served run of {spec.requests:,} requests queued at the start, replies exponentially spread "
                 "about the output length, simulated iteration by iteration")
        if fixed:
            text += (f" ({', '.join(fixed)} from fixed-batch images: each batch runs until its longest reply "
                     "finishes)")
        else:
            text += " (vLLM's scheduler with the batch as its sequence limit: finished requests replaced at once)"
    return text


def _prediction_dict(prediction: Prediction | None, published: Published) -> dict[str, Any] | None:
    if prediction is None:
        return None
    ratio = prediction.ratio_to(published)
    return {
        "predicted": finite_or_none(prediction.value),
        "predicted_low": finite_or_none(prediction.low),
        "predicted_high": finite_or_none(prediction.high),
        "ratio": finite_or_none(ratio),
        "abs_pct_error": None if ratio is None else finite_or_none(abs_pct_error(ratio)),
        "off_by_2x": ratio is not None and not (1.0 / OFF_FACTOR <= ratio <= OFF_FACTOR),
        "configurations": prediction.cases,
        "configurations_computed": prediction.computed_cases,
        "status": prediction.status,
        "kv_waves": prediction.waves,
    }


def _published_dict(published: Published) -> dict[str, Any]:
    return {"value": published.value, "low": published.low, "high": published.high}


def _spec_dict(spec: Spec | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    return {
        "base": dict(spec.base),
        "sweep": [dict(case) for case in spec.cases] if spec.cases != ({},) else [],
        "aggregate": spec.aggregate,
        "numerator": _side_dict(spec.sides[0]) if spec.ratio else None,
        "denominator": _side_dict(spec.sides[1]) if spec.ratio else None,
        "best_of": list(spec.best_of),
        "requests": spec.requests,
        "server": _objective_dict(spec.server),
    }


def _objective_dict(objective: ServerObjective | None) -> dict[str, float] | None:
    if objective is None:
        return None
    return {"ttft_p99_ms": objective.ttft_p99_ms, "tpot_p99_ms": objective.tpot_p99_ms}


def _server_dict(report: RowReport) -> dict[str, Any] | None:
    """What a server-scenario row assumed and what each model's capacity searches found."""
    spec = report.row.spec
    if spec is None or spec.server is None or report.row.not_computed is not None:
        return None
    return {
        "scenario": "MLPerf Inference Server",
        "arrivals": "poisson",
        "requests_per_run": spec.requests,
        "input_len": spec.base["input_len"],
        "output_len": spec.base["output_len"],
        "length_distribution": SERVER_LENGTHS,
        "policy": SERVER_POLICY,
        "objective": _objective_dict(spec.server),
        "seeds": list(SERVED_SEEDS),
        "prediction": "the run at the largest rate meeting the objective, mean over the seeds",
        "calibrated": [_capacity_dict(found) for found in report.server],
        "ideal": [_capacity_dict(found) for found in report.ideal_server],
    }


def _capacity_dict(found: ServerCapacity) -> dict[str, Any]:
    setup = found.setup
    return {
        "capacity_rps": list(found.rate_rps),
        "ttft_p99_s": [finite_or_none(value) for value in found.ttft_p99_s],
        "tpot_p99_s": [finite_or_none(value) for value in found.tpot_p99_s],
        "running_mean": [finite_or_none(value) for value in found.running_mean],
        "reason": found.reason,
        "max_num_seqs": None if setup is None else setup.max_num_seqs,
        "max_batched_tokens": None if setup is None else setup.max_batched_tokens,
        "kv_cache_tokens": None if setup is None else setup.kv_tokens,
    }


def _side_dict(side: Side) -> dict[str, Any]:
    return {"changes": side.overrides, "best_of": list(side.best_of)}


def _row_dict(report: RowReport) -> dict[str, Any]:
    row = report.row
    return {
        "id": row.id,
        "paper": row.paper,
        "where": row.where,
        "quote": row.quote,
        "kind": row.kind,
        "flags": row.flags or None,
        "accelerator": row.accelerator,
        "accelerators": report.accelerator_key,
        "group": report.group,
        "devices": row.devices,
        "model": row.model,
        "metric": row.metric,
        "unit": row.unit,
        "counts": row.counts,
        "published": _published_dict(row.published),
        "calibrated": _prediction_dict(report.calibrated, row.published),
        "ideal": _prediction_dict(report.ideal, row.published),
        "in_statistics": row.in_statistics,
        "derived_from": list(row.derived_from),
        "duplicate_of": row.duplicate_of,
        "not_computed": row.not_computed,
        "explanation": row.explanation,
        "assumed": list(row.assumed),
        "note": row.note,
        "setup": _spec_dict(row.spec),
        "server": _server_dict(report),
    }


def _claim_dict(report: ClaimReport) -> dict[str, Any]:
    claim = report.claim
    return {
        "id": claim.id,
        "paper": claim.paper,
        "where": claim.where,
        "quote": claim.quote,
        "statement": claim.statement,
        "claimed": _published_dict(claim.published),
        "unit": claim.unit,
        "setup": claim.setup,
        "status": claim.status,
        "reason": claim.reason,
        "metric": claim.metric,
        "calibrated": _prediction_dict(report.calibrated, claim.published),
        "ideal": _prediction_dict(report.ideal, claim.published),
        "verdict": report.verdict(report.calibrated),
        "computed_as": report.computed_as,
        "note": claim.note,
    }


def _ratio_text(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}"


_KIND_SHORT = {
    "measured": "meas",
    "third-party benchmark": "3rd",
    "vendor claim": "vend",
    "projection": "proj",
    "specification": "spec",
    "benchmark limit": "limit",
    "unattributed": "unatt",
}


def to_dict(report: Report) -> dict[str, Any]:
    """The report as plain data for JSON (``accelscope validate --json``)."""
    table = report.table
    return {
        "source": table.path,
        "papers": {k: {"short": p.short, "citation": p.citation} for k, p in table.papers.items()},
        "workloads": {
            k: {
                "input_len": w.input_len,
                "output_len": w.output_len,
                "basis": w.basis,
                "requests": w.requests,
                "requests_basis": w.requests_basis,
                "fixed_batch": list(w.fixed_batch),
                "fixed_batch_basis": w.fixed_batch_basis,
                "server": _objective_dict(w.server),
                "server_basis": w.server_basis,
            }
            for k, w in table.workloads.items()
        },
        "ideal_model": IDEAL_DESCRIPTION,
        "measurements": [_row_dict(r) for r in report.rows],
        "summaries": report.summaries,
        "targets": [t.to_dict() for t in report.targets],
        "claims": [_claim_dict(c) for c in report.claims],
    }


def format_report(report: Report) -> str:
    """The report as text: one line per row, the summaries, the targets, then the claims."""
    lines = [*_preamble(report), ""]
    header = (f"{'source':<28} {'kind':<5} {'accelerator':<24} {'model':<22} {'metric':<30} "
              f"{'published':>11} {'predicted':>10} {'ratio':>6} {'ideal':>6}")
    lines += [header, "-" * len(header)]
    lines += [_row_line(report, r) for r in report.rows]
    for population, title in POPULATIONS.items():
        lines += ["", *_summary_lines(report, population, title)]
    lines += ["", "Targets"]
    lines += [f"  {'met    ' if target.met else 'NOT met'}  {target.name}: {target.value} (target {target.limit})"
              for target in report.targets]
    lines += ["", "Claims"]
    for c in report.claims:
        lines += _claim_lines(report, c)
    return "\n".join(lines) + "\n"


def _preamble(report: Report) -> list[str]:
    """What the table holds: the papers, the workloads, what the columns mean."""
    table = report.table
    papers = ", ".join(f"{p.short} = {p.citation}" for p in table.papers.values())
    lines = [
        f"Published measurements against the model ({len(table.measurements)} rows, {len(table.claims)} claims)",
        f"Papers: {papers}",
    ]
    for workload in table.workloads.values():
        served = (
            f"; a served run of {workload.requests:,} requests per instance, simulated iteration by iteration "
            f"(output lengths exponential about the mean, the mean over {len(SERVED_SEEDS)} draws; at most the batch "
            "in flight; throughput, power and energy include the run's drain"
            + (f"; {', '.join(workload.fixed_batch)} from fixed-batch images, each batch running until its "
               "longest reply finishes" if workload.fixed_batch else "")
            + ")"
            if workload.requests is not None and workload.server is None else ""
        )
        if workload.server is not None:
            served = f"; {server_text(workload.requests, workload.server)}"
        lines.append(f"Workload '{workload.name}': {workload.input_len} input, {workload.output_len} output tokens "
                     f"(assumed; see resources/measurements.md){served}")
    lines.append(f"ratio = predicted / published; 'ideal' = {IDEAL_DESCRIPTION}.")
    lines.append("kind: meas = measured, 3rd = third-party benchmark, vend = vendor claim, proj = projection, "
                 "spec = specification, limit = benchmark limit, unatt = unattributed. (d) derived from other rows "
                 "and (r) restating another row: shown, not counted.")
    return lines


def _row_line(report: Report, r: RowReport) -> str:
    """A row of the table: source, kind, setup, published, predicted, both ratios, then notes."""
    row = r.row
    source = f"{report.table.papers[row.paper].short} {row.where}"
    mark = " (d)" if row.derived_from else " (r)" if row.duplicate_of else ""
    kind = _KIND_SHORT[row.kind] + ("" if not row.flags else row.flags)
    predicted = "-" if r.calibrated is None else format_number(r.calibrated.value)
    line = (f"{_cut(source, 28):<28} {_cut(kind, 5):<5} {_cut(r.accelerator_key, 24):<24} {_cut(row.model, 22):<22} "
            f"{_cut(row.metric + mark, 30):<30} {row.published.text():>11} {predicted:>10} "
            f"{_ratio_text(r.ratio('calibrated')):>6} {_ratio_text(r.ratio('ideal')):>6}")
    notes = []
    if row.not_computed is not None:
        notes.append(f"not computed: {row.not_computed}")
    elif r.calibrated is not None and r.calibrated.value is None:
        notes.append(f"{r.calibrated.status}")
        if row.explanation:
            notes.append(f"explanation: {row.explanation}")
    else:
        if r.calibrated is not None and r.calibrated.cases > 1:
            notes.append(f"{row.spec.aggregate} over {r.calibrated.computed_cases} configurations, "
                         f"range {format_number(r.calibrated.low)}-{format_number(r.calibrated.high)}")
        if r.calibrated is not None and r.calibrated.status:
            notes.append(r.calibrated.status)
        notes += [_capacity_text(found) for found in r.server if found.result is not None]
        if r.off():
            notes.append(f"off by >2x: {row.explanation or 'no explanation'}")
    if notes:
        line += "  | " + "; ".join(n for n in notes if n)
    return line


def _capacity_text(found: ServerCapacity) -> str:
    """What a server row's capacity search found (calibrated model), in a clause."""
    def mean(values: tuple[float, ...]) -> float:
        return sum(values) / len(values)

    setup = found.setup
    return (f"server capacity {mean(found.rate_rps):.3g} requests/s (seeds {min(found.rate_rps):.3g}-"
            f"{max(found.rate_rps):.3g}), there p99 TTFT {mean(found.ttft_p99_s) * 1e3:,.0f} ms, p99 TPOT "
            f"{mean(found.tpot_p99_s) * 1e3:,.0f} ms, {mean(found.running_mean):.0f} requests in flight; vLLM limits "
            f"{setup.max_num_seqs:,} sequences, {setup.max_batched_tokens:,} tokens per step, KV cache "
            f"{setup.kv_tokens:,} tokens")


def _summary_lines(report: Report, population: str, title: str) -> list[str]:
    lines = [
        (f"Summary over {title}: median and worst |predicted/published - 1|; "
         "derived, restated and uncomputed rows excluded"),
        (f"{'':<32} {'n':>3}  {'calibrated: median':>18} {'worst':>8} {'ratio':>6} {'>2x':>4}   "
         f"{'ideal: median':>13} {'worst':>8} {'ratio':>6} {'>2x':>4}  worst row (calibrated)"),
    ]
    calibrated = report.summaries["calibrated"][population]
    ideal = report.summaries["ideal"][population]
    lines.append(_stats_line("all", calibrated["all"], ideal["all"]))
    for section, label in (("by_group", "group"), ("by_accelerator", "accelerator"), ("by_metric", "metric")):
        lines.append(f"  by {label}")
        lines += [_stats_line("    " + name, values, ideal[section][name])
                  for name, values in calibrated[section].items()]
    return lines


def _claim_lines(report: Report, c: ClaimReport) -> list[str]:
    claim = c.claim
    lines = [
        f"  {claim.id}  [{report.table.papers[claim.paper].short} {claim.where}]",
        f"      claim: {claim.statement} ({claim.published.text()} {claim.unit})",
        f"      setup: {claim.setup}",
    ]
    if c.calibrated is None:
        lines.append(f"      {claim.status}: {claim.reason}")
    else:
        spread = ""
        if c.calibrated.cases > 1 and c.calibrated.value is not None:
            spread = (f" (over {c.calibrated.computed_cases} configurations: "
                      f"{format_number(c.calibrated.low)}-{format_number(c.calibrated.high)})")
        ideal_value = None if c.ideal is None else c.ideal.value
        lines.append(f"      model: {format_number(c.calibrated.value)} {claim.unit}{spread}, "
                     f"ideal {format_number(ideal_value)}; {c.verdict(c.calibrated)}")
    if c.computed_as:
        lines.append(f"      computed as: {c.computed_as}")
    if claim.note:
        lines.append(f"      note: {claim.note}")
    return lines


def _stats_line(name: str, calibrated: Mapping[str, Any], ideal: Mapping[str, Any]) -> str:
    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f}%"

    return (f"{_cut(name, 32):<32} {calibrated['n']:>3}  {pct(calibrated['median_abs_pct_error']):>18} "
            f"{pct(calibrated['worst_abs_pct_error']):>8} {_ratio_text(calibrated['median_ratio']):>6} "
            f"{calibrated['off_by_2x']:>4}   {pct(ideal['median_abs_pct_error']):>13} "
            f"{pct(ideal['worst_abs_pct_error']):>8} {_ratio_text(ideal['median_ratio']):>6} {ideal['off_by_2x']:>4}  "
            f"{calibrated['worst_id'] or ''}")


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
