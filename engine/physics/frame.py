"""Everything one update of the app shows, computed in one kernel call.

For each shown accelerator: the scenario itself, and a batch sweep (batch 1 ... 1024 on a
log scale) for the throughput-latency plot; plus each accelerator's roofline. Panels read
these arrays and only scale them to display units.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..core.workspace import Workspace
from . import kernels as k
from .engine import Engine, result_from_column
from .pack import pack_scenarios
from .reference import Result
from .roofline import Roofline, roofline

SWEEP_BATCHES: np.ndarray = np.unique(np.round(np.geomspace(1, 1024, 31)).astype(np.int64))


@dataclass(frozen=True)
class Frame:
    workspace: Workspace
    accelerators: tuple[str, ...]  # shown ids, the column order of every array
    current: np.ndarray  # kernel outputs [N_OUTPUT_ROWS, n_accelerators]
    sweep_batches: np.ndarray  # [n_batches]
    sweep: np.ndarray  # kernel outputs [N_OUTPUT_ROWS, n_accelerators, n_batches]
    rooflines: tuple[Roofline, ...]  # one per accelerator, same order
    engine_seconds: float  # time spent in the kernels and packing

    def index(self, accelerator_id: str) -> int:
        return self.accelerators.index(accelerator_id)

    def value(self, row: int, accelerator_id: str) -> float:
        """One output (a kernels.O_* row) of the scenario on one accelerator."""
        return float(self.current[row, self.index(accelerator_id)])

    def values(self, row: int) -> np.ndarray:
        """One output for every shown accelerator, in ``accelerators`` order."""
        return self.current[row]

    def sweep_values(self, row: int, accelerator_id: str) -> np.ndarray:
        """One output over the batch sweep for one accelerator."""
        return self.sweep[row, self.index(accelerator_id)]

    def result(self, accelerator_id: str) -> Result:
        return result_from_column(self.current, self.index(accelerator_id), self.workspace.scenario_on(accelerator_id))

    def roofline(self, accelerator_id: str) -> Roofline:
        return self.rooflines[self.index(accelerator_id)]


def compute_frame(engine: Engine, workspace: Workspace) -> Frame:
    """Evaluate the workspace. Its scenario must be resolved (known model, valid values)."""
    started = time.perf_counter()
    shown = tuple(workspace.shown)
    batches = SWEEP_BATCHES
    current_table = pack_scenarios([workspace.scenario_on(a) for a in shown], engine.model_index, engine.accelerator_index)
    # The sweep repeats each accelerator's column once per batch, with only the batch changed.
    sweep_table = np.repeat(current_table, len(batches), axis=1)
    sweep_table[k.S_BATCH] = np.tile(batches, len(shown))
    table = np.concatenate([current_table, sweep_table], axis=1)
    out = engine.evaluate_table(table) if table.shape[1] else np.empty((k.N_OUTPUT_ROWS, 0))
    current = out[:, : len(shown)]
    sweep = out[:, len(shown) :].reshape(k.N_OUTPUT_ROWS, len(shown), len(batches))
    s = workspace.scenario
    rooflines = tuple(
        roofline(engine.catalog.accelerator(a), s.weight_precision, s.activation_precision, engine.constants)
        for a in shown
    )
    return Frame(workspace, shown, current, batches, sweep, rooflines, time.perf_counter() - started)
