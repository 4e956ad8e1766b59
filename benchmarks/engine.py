"""The kernels alone, on the scenarios ``accelscope bench`` times (gui.bench.app_like_scenarios).

    python benchmarks/engine.py                 # evaluations per second, best of 5, one core
    python benchmarks/engine.py --calls 1       # one call of 5,000: for valgrind --tool=callgrind

Under callgrind the instruction count per evaluation is a figure that does not depend on what
else the machine is doing: run it with ``--calls 0`` too and subtract, which leaves the
kernel calls alone (start-up, packing and the warm-up call cancel out).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.pack import pack_scenarios
from accelscope.gui.dev.bench import app_like_scenarios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, default=5000, help="scenarios per kernel call")
    parser.add_argument("--calls", type=int, default=None, help="kernel calls, untimed (for callgrind)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.25, help="minimum time per repeat")
    arguments = parser.parse_args()

    engine = Engine()
    table = pack_scenarios(
        app_like_scenarios(engine, arguments.scenarios), engine.model_index, engine.accelerator_index
    )
    # Compiled or loaded from the cache first, for the same (C-contiguous) array layout.
    engine.evaluate_table(np.ascontiguousarray(table[:, :1]))
    if arguments.calls is not None:
        for _ in range(arguments.calls):
            engine.evaluate_table(table)
        return
    best = 0.0
    for _ in range(arguments.repeats):
        calls = 0
        started = time.perf_counter()
        while True:
            engine.evaluate_table(table)
            calls += 1
            elapsed = time.perf_counter() - started
            if elapsed >= arguments.seconds:
                break
        best = max(best, calls * table.shape[1] / elapsed)
    print(f"{best / 1e6:.3f} M evaluations/s (best of {arguments.repeats}, {table.shape[1]} scenarios per call)")


if __name__ == "__main__":
    main()
