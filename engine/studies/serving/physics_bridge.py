"""The engine's physics as the simulator sees one replica: the iteration-cost coefficients (for
the kernel) and their reference twin (for the reference simulator), with the memory figures the
KV cache is sized from. Both come from the static engine: ``Engine.iteration_costs`` fills the
coefficients in the same kernel call that evaluates the scenario.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.scenario import Scenario
from ...physics.engine import Engine


@dataclass(frozen=True)
class ReplicaPhysics:
    cost: np.ndarray  # the iteration cost's coefficients (one column of Engine.iteration_costs)
    cost_model: object  # their reference twin: request_positions and iteration_cost
    kv_bytes_per_token: float  # per device, every attention layer of its stage
    state_bytes_per_sequence: float  # per device: the fixed-size state of its stage's DeltaNet and Mamba layers
    idle_power_W: float  # one replica, all its devices


def replica_physics(engine: Engine, scenario: Scenario) -> ReplicaPhysics:
    """One replica of ``scenario`` (resolved). Where a device has two near memory tiers, the
    shares of weights and KV cache read from each follow the scenario's batch: pass the batch
    the deployment runs at."""
    model = engine.iteration_cost_model(scenario)
    return ReplicaPhysics(
        cost=engine.iteration_costs([scenario])[:, 0].copy(),
        cost_model=model,
        kv_bytes_per_token=float(model.kv_bytes_per_token),
        state_bytes_per_sequence=float(model.state_bytes_per_sequence),
        idle_power_W=float(model.idle_W),
    )
