"""How long each plot panel takes to follow a slider drag, with every catalog accelerator shown.

A batch-size drag (2 → 60 and back; ``--control`` picks an input-length drag or random
jumps instead) is computed up front with the engine, a new Frame per step, then fed to each
panel as the main window does: ``update_frame(frame)`` then
``set_selected(id)``. That is the first time measured. The second is the paint:
``panel.repaint()`` and one turn of the event loop. ``repaint()`` alone draws the widgets but
not the plots: a QGraphicsScene collects its changed items and asks its view to update
through a queued call, so the plots are drawn when the event loop next runs (timing
``repaint()`` alone gives a fraction of a millisecond, whatever the plots cost). Both are
timed per frame, offscreen, after a few warm-up frames; the table gives the median and the
95th percentile in milliseconds, and the CPU time of both (on a shared machine the wall time
also counts the time other processes held the cores). The engine is not timed.

    .venv/bin/python benchmarks/panels.py                    # table
    .venv/bin/python benchmarks/panels.py --json             # one JSON object
    .venv/bin/python benchmarks/panels.py --panel sweep --passes 6
    .venv/bin/python benchmarks/panels.py --control jump      # random batch and input length
    .venv/bin/python benchmarks/panels.py --profile sweep    # cProfile of update + select
    .venv/bin/python benchmarks/panels.py --profile sweep --profile-paint   # ... and the paint
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

PANELS = ("roofline", "sweep", "latency", "energy", "memory")
BUDGET_MS = 4.0


def panel_class(name: str):
    if name == "roofline":
        from accelscope.gui.panels.roofline import RooflinePanel

        return RooflinePanel
    if name == "sweep":
        from accelscope.gui.panels.sweep import SweepPanel

        return SweepPanel
    if name == "latency":
        from accelscope.gui.panels.latency import LatencyPanel

        return LatencyPanel
    if name == "energy":
        from accelscope.gui.panels.energy import EnergyPanel

        return EnergyPanel
    from accelscope.gui.panels.memory import MemoryPanel

    return MemoryPanel


def drag_frames(engine, model: str, accelerator: str, low: int, high: int, passes: int, control: str = "batch"):
    """A new Frame per step, as the app computes one per control change. ``control``: "batch"
    drags the batch over low…high (the sweep curves stay put: only the current points move);
    "input" drags the input length over 64·low…64·high tokens at batch 8 (every curve, bar
    and text changes); "jump" sets batch and input length to random values on the sliders'
    log ranges (what `accelscope bench` does: statuses, ranges and labels change too)."""
    import random

    from accelscope.engine.core.scenario import Scenario
    from accelscope.engine.core.workspace import Workspace
    from accelscope.engine.physics.frame import compute_frame

    shown = tuple(engine.catalog.accelerators)
    steps = list(range(low, high + 1))
    drag = []
    for p in range(passes):
        drag += steps if p % 2 == 0 else steps[::-1]  # there and back, as a hand drags
    rng = random.Random(1)

    def scenario(step: int) -> Scenario:
        if control == "input":
            return Scenario(model, accelerator, batch=8, input_len=64 * step)
        if control == "jump":
            return Scenario(model, accelerator, batch=round(2 ** rng.uniform(0, 10)),
                            input_len=round(2 ** rng.uniform(7, 17)))
        return Scenario(model, accelerator, batch=step)

    return [compute_frame(engine, Workspace(scenario(step), shown=shown)) for step in drag]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def measure(app, catalog, name: str, frames, selected: str, size: tuple[int, int], warm: int = 3) -> dict:
    from accelscope.gui.look.style import configure_pyqtgraph

    configure_pyqtgraph()
    panel = panel_class(name)(catalog)
    panel.resize(*size)
    panel.show()
    app.processEvents()
    # Warm up: items are created on the first frames and the axes settle after a paint.
    for frame in frames[:warm]:
        panel.update_frame(frame)
        panel.set_selected(selected)
        panel.repaint()
        app.processEvents()
    update_ms, repaint_ms, paint_ms, cpu_ms = [], [], [], []
    for frame in frames:
        cpu_started = time.process_time()
        t0 = time.perf_counter()
        panel.update_frame(frame)
        panel.set_selected(selected)
        t1 = time.perf_counter()
        panel.repaint()
        t2 = time.perf_counter()
        # repaint() alone draws the widgets but not the plots: a QGraphicsScene collects its
        # changed items and asks its view to update through a queued call, so the plots are
        # drawn when the event loop next runs. Run it, so the time is that of the whole paint.
        app.processEvents()
        t3 = time.perf_counter()
        cpu_ms.append((time.process_time() - cpu_started) * 1e3)
        update_ms.append((t1 - t0) * 1e3)
        repaint_ms.append((t2 - t1) * 1e3)
        paint_ms.append((t3 - t1) * 1e3)
    panel.close()
    panel.deleteLater()
    app.processEvents()
    return {
        "frames": len(frames),
        "update_median_ms": statistics.median(update_ms),
        "update_p95_ms": percentile(update_ms, 0.95),
        "repaint_call_median_ms": statistics.median(repaint_ms),  # repaint() alone
        "repaint_call_p95_ms": percentile(repaint_ms, 0.95),
        "paint_median_ms": statistics.median(paint_ms),  # repaint() and the event loop's turn
        "paint_p95_ms": percentile(paint_ms, 0.95),
        "total_median_ms": statistics.median([u + p for u, p in zip(update_ms, paint_ms, strict=True)]),
        # CPU time of update and paint: on a shared machine, wall time also counts the time
        # other processes held the cores.
        "cpu_median_ms": statistics.median(cpu_ms),
        "cpu_p95_ms": percentile(cpu_ms, 0.95),
    }


def profile(app, catalog, name: str, frames, selected: str, size: tuple[int, int], top: int,
            include_paint: bool) -> None:
    import cProfile
    import pstats

    from accelscope.gui.look.style import configure_pyqtgraph

    configure_pyqtgraph()
    panel = panel_class(name)(catalog)
    panel.resize(*size)
    panel.show()
    app.processEvents()
    for frame in frames[:3]:
        panel.update_frame(frame)
        panel.set_selected(selected)
        panel.repaint()
    profiler = cProfile.Profile()
    for frame in frames:
        profiler.enable()
        panel.update_frame(frame)
        panel.set_selected(selected)
        if include_paint:
            panel.repaint()
            app.processEvents()
        profiler.disable()
        if not include_paint:
            panel.repaint()
            app.processEvents()
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--panel", action="append", choices=PANELS, help="only these panels (repeatable)")
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument("--accelerator", default="h100-sxm", help="the scenario's (selected) accelerator")
    parser.add_argument("--low", type=int, default=2)
    parser.add_argument("--high", type=int, default=60)
    parser.add_argument("--passes", type=int, default=2, help="drags over the range, alternating direction")
    parser.add_argument("--control", choices=("batch", "input", "jump"), default="batch",
                        help="what changes from frame to frame (see drag_frames)")
    parser.add_argument("--size", default="1200x800", help="panel size, WxH")
    parser.add_argument("--profile", choices=PANELS, help="cProfile one panel instead of timing")
    parser.add_argument("--profile-paint", action="store_true", help="include repaint() in the profile")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args(argv)

    from PySide6.QtWidgets import QApplication

    from accelscope.engine.physics.engine import Engine

    app = QApplication.instance() or QApplication([])
    engine = Engine()
    size = tuple(int(v) for v in args.size.lower().split("x"))
    frames = drag_frames(engine, args.model, args.accelerator, args.low, args.high, args.passes, args.control)
    if args.profile:
        profile(app, engine.catalog, args.profile, frames, args.accelerator, size, args.top, args.profile_paint)
        return 0

    results = {name: measure(app, engine.catalog, name, frames, args.accelerator, size)
               for name in (args.panel or PANELS)}
    if args.json:
        print(json.dumps({
            "accelerators": len(engine.catalog.accelerators),
            "model": args.model,
            "control": args.control,
            "steps": [args.low, args.high],
            "frames": len(frames),
            "size": list(size),
            "platform": os.environ.get("QT_QPA_PLATFORM", ""),
            "load_average": os.getloadavg()[0],
            "panels": results,
        }, indent=2))
        return 0
    print(f"load average {os.getloadavg()[0]:.2f}; "
          f"{len(engine.catalog.accelerators)} accelerators shown, {args.model}, {args.control} {args.low}…{args.high}, "
          f"{len(frames)} frames, {size[0]}×{size[1]}, QT_QPA_PLATFORM={os.environ.get('QT_QPA_PLATFORM')}")
    print(f"{'':<10} {'update + select':>17} {'repaint() call':>17} {'paint (repaint + loop)':>24} {'CPU, all':>17}")
    print(f"{'panel':<10} {'median':>8} {'p95':>8} {'median':>8} {'p95':>8} {'median':>11} {'p95':>12} "
          f"{'median':>8} {'p95':>8}")
    print("-" * 88)
    for name, r in results.items():
        flag = "" if r["update_median_ms"] <= BUDGET_MS else f"   update > {BUDGET_MS:g} ms"
        print(f"{name:<10} {r['update_median_ms']:>8.2f} {r['update_p95_ms']:>8.2f} "
              f"{r['repaint_call_median_ms']:>8.2f} {r['repaint_call_p95_ms']:>8.2f} "
              f"{r['paint_median_ms']:>11.2f} {r['paint_p95_ms']:>12.2f} "
              f"{r['cpu_median_ms']:>8.2f} {r['cpu_p95_ms']:>8.2f}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
