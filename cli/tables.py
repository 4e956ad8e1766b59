"""``accelscope report --tables-only``: a preset's data without Qt.

Every table the report writes as CSV (the plot tabs' from the frame, the analysis tabs' from
their studies, ``engine.studies.analysis``), the explanation and the sidecar preset, under the
report's file names and with the same bytes, but no plot: nothing here imports Qt or
pyqtgraph, so it runs where Qt's libraries are not installed (a CI box, a server).
"""

from __future__ import annotations

from pathlib import Path

from accelscope.engine.catalog.presets import Preset, save_preset
from accelscope.engine.catalog.reading import special_file_kind
from accelscope.engine.core.workspace import PLOT_VIEWS, VIEWS
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.frame import compute_frame
from accelscope.engine.studies.analysis import ANALYSIS_STUDIES
from accelscope.engine.text.explain import explain
from accelscope.engine.text.tables import frame_tables, scenario_comments

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
}


def write_tables(preset: Preset, out: Path, engine: Engine | None = None) -> list[Path]:
    """Write ``preset``'s CSVs, ``explain.txt`` and ``scenario.preset.json`` into ``out`` (created
    if needed), as ``accelscope report`` names them; returns the files written."""
    engine = engine or Engine()
    if preset.model is not None:
        engine = engine.with_models(preset.model)
    workspace = preset.workspace
    workspace = workspace.with_changes(scenario=engine.resolve(workspace.scenario))
    frame = compute_frame(engine, workspace)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    plot_tables = frame_tables(frame, engine.catalog)
    for index, view in enumerate(VIEWS, start=1):
        comments = [f"{TITLES[view]}: the data behind the plot", *scenario_comments(frame, preset.name)]
        if view in PLOT_VIEWS:
            tables = {f"{index}-{view}": plot_tables[view]}
        else:  # the analysis tables go by their own names (regimes.csv, tp_dp.csv, ...)
            study = ANALYSIS_STUDIES[view]
            tables = study.tables(study.run(engine, workspace))
        for name, table in tables.items():
            written.append(_write(out / f"{name}.csv", table.to_csv(comments)))
    if workspace.shown:
        written.append(_write(out / "explain.txt", explain(engine, workspace.scenario).plain_text() + "\n"))
    sidecar = out / "scenario.preset.json"
    save_preset(preset, sidecar)
    written.append(sidecar)
    return written


def _write(path: Path, text: str) -> Path:
    # An existing target must be a regular file: a named pipe would block until read, and a
    # device or folder is never what was meant to be overwritten.
    kind = special_file_kind(path)
    if kind is not None:
        raise OSError(f"{path.name} is not a regular file ({kind})")
    path.write_text(text, encoding="utf-8")
    return path
