"""`accelscope bench` runs (on tiny sizes) and prints every figure the issue asks for. No
figure is asserted against a target: timings belong to the machine, not to the suite."""

from __future__ import annotations

import json
import math

KEYS = {
    "engine_evals_per_s", "reference_evals_per_s", "engine_speedup", "update_ms_p50", "update_ms_p95",
    "update_ms_p99", "startup_warm_s", "startup_cold_s", "peak_rss_mb",
}


def test_bench_quick_prints_every_figure(capsys):
    from accelscope.cli.main import main

    assert main(["bench", "--quick", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert KEYS <= figures.keys()
    assert all(isinstance(figures[key], float) and math.isfinite(figures[key]) and figures[key] > 0 for key in KEYS)
    assert figures["update_ms_p50"] <= figures["update_ms_p95"] <= figures["update_ms_p99"]
    assert figures["startup_cold_ready_s"] >= figures["startup_cold_s"]
    assert 0 < figures["update_cpu_ms_p50"] <= figures["update_cpu_ms_p95"] <= figures["update_cpu_ms_p99"]
    assert figures["load_average"] >= 0
