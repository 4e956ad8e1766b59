"""The serving simulator's speed: issue 18's targets, on this machine.

    python benchmarks/serving.py                    # every figure
    python benchmarks/serving.py --skip-sweep       # the single runs and the reference ratio only
    python benchmarks/serving.py --runs 20 --load 0.2   # 20 untimed runs: for valgrind --tool=callgrind

The figures:

- ms per 1,000-request run (median of 20): vLLM with its defaults, llama-3.1-8b on one h100-sxm
  (KV blocks as ``study.server_setup`` sizes them), Poisson arrivals at 70 % and at 20 % of
  ``study.static_best_rate``, log-normal lengths about 1,024 in / 256 out with CV 0.5;
- a request-rate sweep: for every catalog accelerator that can hold llama-3.1-8b, 16 rates from
  10 % to 150 % of its ``static_best_rate``, 1,000 requests each; seconds for all the runs
  (drawn beforehand; servers set up beforehand) through ``simulate_many``, on 1 and on 2
  threads (best of ``--repeats``): the simulation alone (each run dropped as it ends), and with
  ``summarize`` making each run's metrics on its thread;
- the kernel's speed over the pure-Python reference's, on the 70 % run.

Times are wall-clock on a machine that may be shared: compare figures taken together. Beside
them, the fastest single run and the sweeps' processor time (all threads), which waiting for a
busy machine's cores does not inflate.
"""

from __future__ import annotations

import argparse
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

from accelscope.engine.core.errors import ScenarioError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.physics.engine import Engine
from accelscope.engine.studies.serving import simulate, study, summarize

try:
    from accelscope.engine.studies.serving import simulate_many
except ImportError:  # older versions, for figures from before simulate_many

    def simulate_many(runs, *, threads=None, summary=None):
        def run_one(run):
            return summary(simulate(*run))

        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(run_one, runs))


MODEL = "llama-3.1-8b"
ACCELERATOR = "h100-sxm"
SWEEP_POINTS = 16
SWEEP_LOW, SWEEP_HIGH = 0.1, 1.5  # shares of static_best_rate


def deployment(engine, spec, accelerator):
    """(scenario, server, static best rate) of one replica of MODEL on ``accelerator``."""
    scenario = engine.resolve(Scenario(MODEL, accelerator))
    setup = study.server_setup(engine, scenario, spec)
    if setup.kv_blocks_total == 0:
        raise ScenarioError(f"no KV cache for {MODEL} on {accelerator}")
    server = study._server(setup, study.deployment_physics(engine, scenario, setup), spec.router)
    return scenario, server, setup, study.static_best_rate(engine, scenario, setup)


def workload_at(scenario, spec, setup, rate):
    return study.draw_requests(scenario, spec, setup.max_model_len, rate)


def timed_ms(function, repeats):
    """(median, fastest) wall-clock milliseconds of ``repeats`` calls."""
    function()  # compiled or loaded from the cache first
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        function()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3, min(times) * 1e3


def median_ms(function, repeats):
    return timed_ms(function, repeats)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="sweeps timed per thread count (best is shown)")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--runs", type=int, default=None, help="untimed runs at --load only (for callgrind)")
    parser.add_argument("--load", type=float, default=0.7, help="share of static_best_rate for --runs")
    arguments = parser.parse_args()

    engine = Engine()
    spec = ServingSpec()
    scenario, server, setup, best = deployment(engine, spec, ACCELERATOR)
    if arguments.runs is not None:
        workload = workload_at(scenario, spec, setup, arguments.load * best)
        for _ in range(arguments.runs):
            simulate(workload, server)
        return

    print(f"{MODEL} on {ACCELERATOR}, vLLM defaults, {setup.kv_blocks_total:,} KV blocks, "
          f"static best {best:.2f} requests/s")
    for load in (0.7, 0.2):
        workload = workload_at(scenario, spec, setup, load * best)
        milliseconds, fastest = timed_ms(lambda workload=workload: simulate(workload, server), 20)
        iterations = simulate(workload, server).iterations
        print(f"  {load:.0%} load: {milliseconds:.3f} ms per 1,000-request run (median of 20; fastest "
              f"{fastest:.3f}), {iterations:,} iterations")

    if not arguments.skip_reference:
        workload = workload_at(scenario, spec, setup, 0.7 * best)
        kernel_ms = median_ms(lambda: simulate(workload, server), 20)
        started = time.perf_counter()
        simulate(workload, server, engine="reference")
        reference_ms = (time.perf_counter() - started) * 1e3
        print(f"  reference: {reference_ms:.0f} ms on the 70% run, {reference_ms / kernel_ms:.0f} x the kernel's time")

    if not arguments.skip_sweep:
        runs = []
        accelerators = 0
        for accelerator in engine.catalog.accelerators:
            try:
                scenario, server, setup, best = deployment(engine, spec, accelerator)
            except ScenarioError:
                continue
            accelerators += 1
            for rate in study.rate_grid(SWEEP_LOW * best, SWEEP_HIGH * best, SWEEP_POINTS):
                runs.append((workload_at(scenario, spec, setup, rate), server))
        simulate_many(runs[:2], threads=1, summary=summarize)
        print(f"  sweep: {accelerators} accelerators x {SWEEP_POINTS} rates x 1,000 requests = {len(runs)} runs "
              f"({SWEEP_LOW:.0%}-{SWEEP_HIGH:.0%} of each one's static best), best of {arguments.repeats}")
        for label, summary in (("simulation", lambda run: run.iterations), ("with summarize", summarize)):
            for threads in (1, 2):
                best_s = best_cpu_s = float("inf")
                for _ in range(arguments.repeats):
                    started, started_cpu = time.perf_counter(), time.process_time()
                    results = simulate_many(runs, threads=threads, summary=summary)
                    best_s = min(best_s, time.perf_counter() - started)
                    best_cpu_s = min(best_cpu_s, time.process_time() - started_cpu)
                extra = f", {sum(results):,} iterations" if label == "simulation" else ""
                print(f"    {label}, {threads} thread{'s' if threads > 1 else ''}: {best_s:.3f} s "
                      f"({best_cpu_s:.3f} s of processor time{extra})")


if __name__ == "__main__":
    main()
