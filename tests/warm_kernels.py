"""Fills numba's on-disk cache with the kernels the suite needs most, through the command line as
a user would: a prediction (the physics kernel) and served runs, aggregated and disaggregated
(the serving simulator and the KV transfer). Run by conftest in the xdist controller, beside
the workers (see conftest.pytest_configure).

It takes the same per-kernel locks as the workers (xdist_compiles.py), so a kernel a worker
compiles during collection is loaded here, and the other way round.
"""

from __future__ import annotations

import contextlib
import io
import sys

from xdist_compiles import compile_once_across_workers

SERVE = ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--requests", "50", "--json"]


def main(lock_folder: str) -> int:
    compile_once_across_workers(lock_folder)
    from accelscope.cli.main import main as accelscope

    for command in (SERVE, [*SERVE, "--disaggregate", "1:1"]):
        with contextlib.redirect_stdout(io.StringIO()):
            status = accelscope(command)
        if status != 0:
            print(f"warm_kernels: 'accelscope {' '.join(command)}' exited {status}", file=sys.stderr)
            return status
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
