"""The ``accelscope`` command: the desktop app with no arguments, or a CLI sub-command.

    accelscope                      open the app
    accelscope catalog [--json]     accelerators and models with their key figures
    accelscope predict ...          one static-batch scenario (or many with --jsonl)
    accelscope serve ...            the scenario served under traffic, simulated iteration by iteration
    accelscope presets [--json]     bundled and user presets, with what each one shows
    accelscope report ...           a preset's plots (PNG, SVG) and tables (CSV); --tables-only: no Qt
    accelscope validate [--json]    the model against every number the source papers publish

Bad arguments give one line on stderr naming the problem and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

from .arguments import (
    COST_FLAGS,
    USAGE_ERROR,
    BadLines,
    Parser,
    UsageError,
    add_cost_arguments,
    add_scenario_arguments,
    cost_settings,
    json_line,
    native_weight_format,
    one_line,
    read_lines,
    scale,
    scenario_keys,
    scenario_values,
    shown,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="accelscope", description="Explore LLM inference across AI accelerators.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)

    catalog = commands.add_parser("catalog", help="list accelerators and models with their key figures")
    catalog.add_argument("--json", action="store_true", help="print one JSON object")

    presets = commands.add_parser("presets", help="list the bundled and user presets with their descriptions")
    presets.add_argument("--json", action="store_true", help="print one JSON object")

    bench = commands.add_parser(
        "bench", help="measure engine speed, control-to-repaint latency, start-up and memory on this machine"
    )
    bench.add_argument("--json", action="store_true", help="print one JSON object")
    bench.add_argument("--quick", action="store_true", help="tiny sizes, to check the command works (figures are noise)")

    report = commands.add_parser(
        "report", help="render every plot of a preset as PNG and SVG and every table as CSV, without a window"
    )
    report.add_argument("--preset", required=True, help="a preset name, file stem or path to a preset .json")
    report.add_argument("--out", required=True,
                        help="a new or empty folder to write into (created if needed)")
    report.add_argument("--force", action="store_true",
                        help="write into a folder that holds files: replace the files an earlier report wrote "
                             "there (listed in its accelscope-manifest.json), never anyone else's")
    report.add_argument("--scale", type=scale, default=2.0, help="PNG resolution as a multiple of the page (1-4)")
    report.add_argument("--page", choices=("handout", "slide"), default="handout",
                        help="each figure's page: handout 1400x900 (the default) or slide 1600x900 (16:9), "
                             "times --scale in the PNGs")
    report.add_argument("--theme", choices=("light", "dark"), default="light",
                        help="plot canvases light (the default, for paper) or dark (for dark slides)")
    report.add_argument("--tables-only", action="store_true",
                        help="only the CSVs, the explanation and the preset, without Qt (no plots; --scale, --page "
                             "and --theme do not apply)")

    validate = commands.add_parser(
        "validate",
        help="run the model on every published measurement and claim of the papers; print predicted against published",
    )
    validate.add_argument("--json", action="store_true", help="print one JSON object")

    from .serve import add_serve_parser

    add_serve_parser(commands)

    predict = commands.add_parser(
        "predict",
        help="predict one static batch: B prompts of I tokens prefilled together, then O tokens decoded for each",
    )
    add_scenario_arguments(predict)
    add_cost_arguments(predict)
    predict.add_argument("--jsonl", metavar="FILE",
                         help="read one scenario object per line from FILE ('-' for stdin), print one result per line")
    predict.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        from accelscope.gui.app import run

        return run()
    try:
        args = build_parser().parse_args(argv)
        if args.command is None:
            raise UsageError("accelscope: give a command (catalog, predict, presets) or none to open the app")
        if args.command == "catalog":
            return _catalog(args, sys.stdout)
        if args.command == "bench":
            return _bench(args, sys.stdout)
        if args.command == "report":
            return _report(args, sys.stdout)
        if args.command == "presets":
            return _presets(args, sys.stdout)
        if args.command == "validate":
            return _validate(args, sys.stdout)
        if args.command == "serve":
            from .serve import run_serve

            return run_serve(args, sys.stdout)
        return _predict(args, sys.stdout)
    except UsageError as error:
        print(one_line(str(error)), file=sys.stderr)
        return USAGE_ERROR
    except BrokenPipeError:
        return 0


# ---- catalog ------------------------------------------------------------------------------


def _catalog(args: argparse.Namespace, out: TextIO) -> int:
    from accelscope.engine.catalog import Catalog
    from accelscope.engine.core.errors import AccelscopeError

    from .serialize import accelerator_summary, model_summary

    try:
        catalog = Catalog.load()
    except AccelscopeError as error:
        raise UsageError(f"accelscope catalog: {error}") from None
    accelerators = [accelerator_summary(a) for a in catalog.accelerators.values()]
    models = [model_summary(m) for m in catalog.models.values()]
    if args.json:
        json.dump({"accelerators": accelerators, "models": models, "problems": catalog.problems},
                  out, indent=2, allow_nan=False)
        out.write("\n")
        return 0
    width = max([len("accelerator"), *(len(a["id"]) for a in accelerators)])  # the longest id sets the column
    out.write(f"{'accelerator':<{width}} {'class':<23} {'BF16 TFLOP/s':>12} {'memory GB':>10} {'TB/s':>7} {'TDP W':>7}  name\n")
    out.writelines(f"{a['id']:<{width}} {a['architecture_class']:<23} {a['peak_flops'].get('bf16', 0) / 1e12:>12.0f} "
            f"{a['memory_gb']:>10.1f} {a['memory_bandwidth_Bps'] / 1e12:>7.2f} {a['tdp_w']:>7.0f}  {a['name']}\n" for a in accelerators)
    out.write(f"\n{'model':<24} {'total B':>8} {'active B':>9} {'layers':>6} {'attention':>9} {'KV KB/token':>12}  name\n")
    out.writelines(f"{m['id']:<24} {m['total_params'] / 1e9:>8.1f} {m['active_params'] / 1e9:>9.1f} {m['n_layers']:>6} "
            f"{m['attention']:>9} {m['kv_cache_bytes_per_token_bf16'] / 1e3:>12.1f}  {m['name']}\n" for m in models)
    out.writelines(f"warning: {problem}\n" for problem in catalog.problems)
    return 0


# ---- presets ------------------------------------------------------------------------------


def _presets(args: argparse.Namespace, out: TextIO) -> int:
    import textwrap

    from accelscope.engine.catalog import Catalog
    from accelscope.engine.catalog.presets import list_presets
    from accelscope.engine.core.errors import AccelscopeError

    try:
        entries = list_presets(Catalog.load())
    except AccelscopeError as error:
        raise UsageError(f"accelscope presets: {error}") from None
    rows = [
        {
            "name": entry.name,
            "file": entry.path.name,
            "path": str(entry.path),
            "bundled": entry.bundled,
            "description": entry.description,
            "problem": entry.problem,
        }
        for entry in entries
    ]
    if args.json:
        json.dump({"presets": rows}, out, indent=2)
        out.write("\n")
        return 0
    width = max((len(row["file"]) for row in rows), default=4)
    out.write(f"{'kind':<8} {'file':<{width}}  name\n")
    for row in rows:
        kind = "bundled" if row["bundled"] else "user"
        name = row["name"] if row["problem"] is None else "(cannot be loaded)"
        out.write(f"{kind:<8} {row['file']:<{width}}  {name}\n")
        text = row["description"] if row["problem"] is None else f"problem: {row['problem']}"
        if text:
            indent = " " * 4
            out.write(textwrap.fill(text, 100, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False))
            out.write("\n")
    return 0


# ---- validate -----------------------------------------------------------------------------


def _validate(args: argparse.Namespace, out: TextIO) -> int:
    """Exit 0 whatever the errors are: the targets are reported, not enforced (yet)."""
    from accelscope.engine.core.errors import AccelscopeError
    from accelscope.engine.physics.engine import Engine
    from accelscope.engine.validation import format_report, to_dict, validate

    try:
        report = validate(Engine())
    except AccelscopeError as error:
        raise UsageError(f"accelscope validate: {error}") from None
    if args.json:
        json.dump(to_dict(report), out, indent=2, allow_nan=False, ensure_ascii=False)
        out.write("\n")
    else:
        out.write(format_report(report))
    return 0


# ---- bench --------------------------------------------------------------------------------


def _bench(args: argparse.Namespace, out: TextIO) -> int:
    from accelscope.gui.dev.bench import format_result, run_bench

    result = run_bench(quick=args.quick)
    if args.json:
        json.dump(result.to_dict(), out, indent=2, allow_nan=False)
        out.write("\n")
    else:
        out.write(format_result(result))
    return 0


# ---- report -------------------------------------------------------------------------------


def _report(args: argparse.Namespace, out: TextIO) -> int:
    from accelscope.engine.catalog.presets import find_preset
    from accelscope.engine.catalog.writing import FolderNotEmpty, OutputFolder
    from accelscope.engine.core.errors import AccelscopeError
    from accelscope.engine.physics.engine import Engine

    if not args.out.strip():
        raise UsageError("accelscope report: --out is an empty path; name a folder to write into")
    engine = Engine()
    try:
        preset = find_preset(args.preset, engine.catalog)
    except AccelscopeError as error:
        raise UsageError(f"accelscope report: {error}") from None
    try:
        OutputFolder(args.out, force=args.force).check()  # before the drawing, which takes seconds
        if args.tables_only:
            from .tables import write_tables

            written = write_tables(preset, args.out, engine, force=args.force)
        else:
            from accelscope.gui.export.report import write_report

            written = write_report(preset, args.out, engine, scale=args.scale, theme_name=args.theme,
                                   page=args.page, force=args.force)
    except ImportError as error:  # Qt or its system libraries are missing
        raise UsageError(f"accelscope report: the plots need Qt, which cannot be loaded ({error}); "
                         "--tables-only writes the tables without it") from None
    except FolderNotEmpty as error:
        hint = ("add --force to replace the files of the earlier report there" if error.has_manifest
                else "write to a new folder, or add --force to write beside them (never over them)")
        raise UsageError(f"accelscope report: {error}; {hint}") from None
    except AccelscopeError as error:
        raise UsageError(f"accelscope report: {error}") from None
    except OSError as error:
        raise UsageError(f"accelscope report: cannot write {args.out}: {error.strerror or error}") from None
    out.writelines(f"{path}\n" for path in written)
    return 0


# ---- predict ------------------------------------------------------------------------------

def _predict(args: argparse.Namespace, out: TextIO) -> int:
    from accelscope.engine.core.errors import AccelscopeError
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.physics.engine import Engine

    from .serialize import result_to_dict, result_to_text

    if args.jsonl is not None:
        return _predict_jsonl(args, out)
    if not args.model or not args.accelerator:
        raise UsageError("accelscope predict: --model and --accelerator are required (or --jsonl FILE)")
    try:
        engine = Engine()
        scenario = Scenario(**scenario_values(vars(args), native_weight_format(engine)))
        engine, scenario = engine.for_scenario(scenario)
        result = engine.predict(scenario)
        cost = _cost(engine, result, vars(args))
    except (AccelscopeError, ValueError) as error:
        raise UsageError(f"accelscope predict: {error}") from None
    except OSError as error:  # a --model path the system refuses to look at (e.g. name too long)
        raise UsageError(f"accelscope predict: cannot read {shown(args.model)}: {error.strerror}") from None
    model = engine.model(result.scenario.model)
    accelerator = engine.catalog.accelerator(result.scenario.accelerator)
    if args.json:
        json.dump(result_to_dict(result, model, accelerator, engine.constants, cost), out, indent=2, allow_nan=False)
        out.write("\n")
    else:
        out.write(result_to_text(result, model, accelerator, cost))
    return 0


def _cost(engine, result, values: dict[str, object]):
    """What the result's system costs, with the price book and the cost flags or keys in ``values``."""
    from accelscope.engine.core.cost import Pricing
    from accelscope.engine.studies.cost import result_cost

    settings = cost_settings(values, result.scenario.accelerator)
    return result_cost(result, Pricing(engine.catalog.prices, settings), engine.catalog)


def scenario_from_object(data: object, native_weights: Callable[[str], str] | None = None) -> dict[str, object]:
    """Scenario fields from one JSONL object, with the CLI's defaults and names (the weights in
    the model's published format where neither they nor ``precision`` are given and
    ``native_weights`` is given; the object may also give the cost keys, read by
    :func:`arguments.cost_settings`)."""
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    known = scenario_keys() | set(COST_FLAGS)
    unknown = sorted(set(data) - known)
    if unknown:
        raise ValueError(f"unknown key {unknown[0]!r}; known: {', '.join(sorted(known))}")
    return scenario_values(data, native_weights)


def _predict_jsonl(args: argparse.Namespace, out: TextIO) -> int:
    """Every valid line is evaluated in one kernel call; results keep the input order. A bad
    line yields ``{"line": n, "error": ...}`` in its place and the exit status is 2."""
    from accelscope.engine.core.cost import Pricing
    from accelscope.engine.core.errors import AccelscopeError
    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.physics.engine import Engine
    from accelscope.engine.physics.results import result_from_column
    from accelscope.engine.studies.cost import result_cost

    from .serialize import result_to_dict

    engine = Engine()
    entries: list[Scenario | str] = []
    costs: dict[int, object] = {}  # entry index -> the line's cost settings
    for number, line in enumerate(read_lines(args.jsonl, "predict"), start=1):
        if not line.strip():
            continue
        try:
            data = json_line(line)
            scenario = Scenario(**scenario_from_object(data, native_weight_format(engine)))  # type: ignore[arg-type]
            engine, scenario = engine.for_scenario(scenario)
            costs[len(entries)] = cost_settings(data, scenario.accelerator)
            entries.append(scenario)
        except (ValueError, TypeError, OverflowError, AccelscopeError) as error:
            entries.append(f"line {number}: {error}")
    scenarios = [entry for entry in entries if isinstance(entry, Scenario)]
    table = engine.evaluate(scenarios) if scenarios else None
    column = 0
    bad = BadLines("predict")
    for index, entry in enumerate(entries):
        if isinstance(entry, str):
            bad.say(entry)
            out.write(json.dumps({"error": entry}) + "\n")
            continue
        result = result_from_column(table, column, entry)
        column += 1
        model = engine.model(entry.model)
        accelerator = engine.catalog.accelerator(entry.accelerator)
        cost = result_cost(result, Pricing(engine.catalog.prices, costs[index]), engine.catalog)
        out.write(json.dumps(result_to_dict(result, model, accelerator, engine.constants, cost), allow_nan=False)
                  + "\n")
    bad.close(len(entries))
    return USAGE_ERROR if bad.count else 0


if __name__ == "__main__":
    sys.exit(main())
