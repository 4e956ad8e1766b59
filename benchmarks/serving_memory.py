"""Peak memory of the Serving tab's rate curve on a long-reply workload, its runs simulated with
and without iteration records.

    python benchmarks/serving_memory.py                         # 1,000 requests, 20,000-token replies
    python benchmarks/serving_memory.py --requests 200 --points 6

Each variant runs in a fresh process (llama-3.1-8b on one h100-sxm, vLLM defaults, Poisson
arrivals from 10 % to 150 % of the static best rate, read through ``slo_check`` as
``view.rate_curve`` reads them) and reports its peak resident set (ru_maxrss) and the peak of
memory allocated through Python and numpy (tracemalloc), beside a process that only imports,
sets up and compiles: the difference is what the runs cost. Low rates give the most iterations:
each a ~100-byte record when recorded.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, resource, sys, time, tracemalloc
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.physics.engine import Engine
from accelscope.engine.studies.serving import metrics, split, view

variant, requests, output_len, points = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
engine = Engine()
scenario = engine.resolve(Scenario("llama-3.1-8b", "h100-sxm", input_len=1024, output_len=output_len))
spec = ServingSpec(requests=requests)
runner = split.rate_runner(engine, scenario, spec)
runner.run_at(runner.scale_rps, record_iterations=False)  # compiled or loaded from the cache first
iterations = 0
started = time.perf_counter()
tracemalloc.start()
if variant != "setup":
    for rate in view.sweep_rates(runner.scale_rps, points):
        run = runner.run_at(rate, record_iterations=variant == "recorded")
        metrics.slo_check(run, spec.slo_ttft_ms / 1e3, spec.slo_tpot_ms / 1e3)
        iterations = max(iterations, run.iterations)
        del run
traced_peak = tracemalloc.get_traced_memory()[1]
print(json.dumps({"rss_MB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "traced_MB": traced_peak / 1e6,
                  "iterations": iterations, "seconds": time.perf_counter() - started}))
"""


def measure(variant, requests, output_len, points):
    completed = subprocess.run([sys.executable, "-c", CHILD, variant, str(requests), str(output_len), str(points)],
                               check=True, capture_output=True, text=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--output-len", type=int, default=20000, help="mean reply length (tokens)")
    parser.add_argument("--points", type=int, default=16, help="rates on the curve")
    arguments = parser.parse_args()
    print(f"rate curve of {arguments.points} runs, {arguments.requests:,} requests, replies about "
          f"{arguments.output_len:,} tokens, llama-3.1-8b on h100-sxm")
    for variant in ("setup", "recorded", "unrecorded"):
        figures = measure(variant, arguments.requests, arguments.output_len, arguments.points)
        print(f"  {variant:>10}: peak RSS {figures['rss_MB']:7.0f} MB, peak traced {figures['traced_MB']:7.1f} MB, "
              f"longest run {figures['iterations']:,} iterations, {figures['seconds']:.1f} s")


if __name__ == "__main__":
    main()
