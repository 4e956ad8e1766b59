"""``accelscope report --tables-only``: a preset's data without Qt.

Every table the report writes as CSV (the plot tabs' from the frame, the analysis tabs' from
their studies, ``engine.studies.analysis``, the costs), the explanation and the sidecar preset, under the
report's file names and with the same bytes, but no plot: nothing here imports Qt or
pyqtgraph, so it runs where Qt's libraries are not installed (a CI box, a server).
"""

from __future__ import annotations

from pathlib import Path

from accelscope.engine.catalog.presets import Preset, preset_text
from accelscope.engine.catalog.writing import OutputFolder
from accelscope.engine.core.workspace import PLOT_VIEWS, VIEWS
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.analysis import ANALYSIS_STUDIES
from accelscope.engine.text.explain import explain
from accelscope.engine.text.tables import cost_comments, cost_tables, frame_tables, scenario_comments

# Each tab's title, which heads its CSVs; the app's panels carry the same (a test holds them).
TITLES: dict[str, str] = {
    "roofline": "Roofline",
    "memory": "Memory fit",
    "latency": "Latency & throughput",
    "sweep": "Batch sweep",
    "energy": "Energy",
    "serving": "Serving under traffic",
    "scaling": "Scaling",
    "parallelism": "TP/DP · EP/TP",
    "regimes": "Regimes",
    "tiers": "Memory tiers",
    "run_here": "Will it run here?",
}


def write_tables(preset: Preset, out: str | Path, engine: Engine | None = None, *, force: bool = False) -> list[Path]:
    """Write ``preset``'s CSVs, ``explain.txt`` and ``scenario.preset.json`` into the new or empty
    folder ``out`` (or, with ``force``, over an earlier report's files there; see
    :class:`~accelscope.engine.catalog.writing.OutputFolder`), as ``accelscope report`` names
    them; returns the files written."""
    engine = engine or Engine()
    if preset.model is not None:
        engine = engine.with_models(preset.model)
    workspace = preset.workspace
    workspace = workspace.with_changes(scenario=engine.resolve(workspace.scenario))
    frame = compute_frame(engine, workspace)
    with OutputFolder(out, force=force) as folder:
        plot_tables = frame_tables(frame, engine.catalog)
        for index, view in enumerate(VIEWS, start=1):
            comments = [f"{TITLES[view]}: the data behind the plot", *scenario_comments(frame, preset.name)]
            if view in PLOT_VIEWS:
                tables = {f"{index}-{view}": plot_tables[view]}
            else:  # the analysis tables go by their own names (regimes.csv, tp_dp.csv, ...)
                study = ANALYSIS_STUDIES[view]
                tables = study.tables(study.run(engine, workspace))
            for name, table in tables.items():
                folder.add(f"{name}.csv", table.to_csv(comments))
        for name, table in cost_tables(frame).items():  # cost.csv and cost_sweep.csv, beside the energy tab's
            folder.add(f"{name}.csv", table.to_csv(cost_comments(frame, preset.name)))
        if workspace.shown:
            explanation = explain(engine, workspace.scenario, workspace.cost)
            folder.add("explain.txt", explanation.plain_text() + "\n")
        folder.add("scenario.preset.json", preset_text(preset, folder.folder / "scenario.preset.json"))
        return folder.commit()
