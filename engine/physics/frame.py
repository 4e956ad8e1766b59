"""Everything one update of the app shows, computed in one kernel call.

For each shown accelerator: the scenario itself, and a batch sweep (batch 1 ... 1024 on a
log scale) for the throughput-latency plot; plus each accelerator's roofline. Panels read
these arrays and only scale them to display units.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..core.workspace import Workspace
from . import layout
from .engine import Engine
from .pack import pack_scenarios
from .results import Outputs, Result, result_from_column
from .roofline import Roofline, roofline

SWEEP_BATCHES: np.ndarray = np.unique(np.round(np.geomspace(1, 1024, 31)).astype(np.int64))


@dataclass(frozen=True)
class Frame:
    workspace: Workspace
    accelerators: tuple[str, ...]  # shown ids, the column order of every array
    current: np.ndarray  # output table [N_OUTPUT_ROWS, n_accelerators]
    sweep_batches: np.ndarray  # [n_batches]
    sweep: np.ndarray  # output table [N_OUTPUT_ROWS, n_accelerators, n_batches]
    rooflines: tuple[Roofline, ...]  # one per accelerator, same order
    engine_seconds: float  # time spent in the kernels and packing
    engine: Engine = field(compare=False, repr=False, default=None)  # type: ignore[assignment]  # what computed it

    def index(self, accelerator_id: str) -> int:
        return self.accelerators.index(accelerator_id)

    @property
    def outputs(self) -> Outputs:
        """The scenario's outputs by name, each over the shown accelerators in order."""
        return Outputs(self.current)

    @property
    def sweep_outputs(self) -> Outputs:
        """The batch sweep's outputs by name, each over [accelerator, batch]."""
        return Outputs(self.sweep)

    def output(self, accelerator_id: str) -> Outputs:
        """The scenario's outputs on one accelerator (each a number)."""
        return Outputs(self.current[:, self.index(accelerator_id)])

    def sweep_output(self, accelerator_id: str) -> Outputs:
        """One accelerator's outputs over the batch sweep (each an array over the batches)."""
        return Outputs(self.sweep[:, self.index(accelerator_id)])

    def result(self, accelerator_id: str) -> Result:
        return result_from_column(self.current, self.index(accelerator_id), self.workspace.scenario_on(accelerator_id))

    def roofline(self, accelerator_id: str) -> Roofline:
        return self.rooflines[self.index(accelerator_id)]

    def best_that_fits(self, values: np.ndarray) -> str | None:
        """The shown accelerator with the largest of ``values`` (one per accelerator, in order)
        among those whose scenario fits; None when none fits with a value. One that does not fit
        is never best: its figures are of a device that cannot hold the model."""
        values = np.asarray(values, float)
        eligible = (self.outputs.fits != 0) & np.isfinite(values)
        if not eligible.any():
            return None
        return self.accelerators[int(np.argmax(np.where(eligible, values, -np.inf)))]


def compute_frame(engine: Engine, workspace: Workspace) -> Frame:
    """Evaluate the workspace. Its scenario must be resolved (known model, valid values)."""
    started = time.perf_counter()
    shown = tuple(workspace.shown)
    batches = SWEEP_BATCHES
    current_table = pack_scenarios([workspace.scenario_on(a) for a in shown], engine.model_index, engine.accelerator_index)
    # The sweep repeats each accelerator's column once per batch, with only the batch changed.
    sweep_table = np.repeat(current_table, len(batches), axis=1)
    sweep_table[layout.S_BATCH] = np.tile(batches, len(shown))
    table = np.concatenate([current_table, sweep_table], axis=1)
    out = engine.evaluate_table(table) if table.shape[1] else np.empty((layout.N_OUTPUT_ROWS, 0))
    current = out[:, : len(shown)]
    sweep = out[:, len(shown) :].reshape(layout.N_OUTPUT_ROWS, len(shown), len(batches))
    s = workspace.scenario
    rooflines = tuple(
        roofline(engine.catalog.accelerator(a), s.weight_precision, s.activation_precision, engine.constants)
        for a in shown
    )
    return Frame(workspace, shown, current, batches, sweep, rooflines, time.perf_counter() - started, engine)
