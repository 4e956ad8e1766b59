"""The engine's physics as the simulator sees it: an iteration-cost coefficient vector per
replica, the two cost functions, and the memory figures the KV cache is sized from.

(Interim: the iteration cost is the stand-in of ``cost_stub`` scaled from the static engine's
figures, until the engine's own iteration cost is wired in.)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.precision import bytes_per_element
from ...core.scenario import Scenario
from ...physics.engine import Engine
from .cost_stub import iteration_cost_reference, make_cost, request_positions_reference

__all__ = ["ReplicaPhysics", "iteration_cost_reference", "replica_physics", "request_positions_reference"]


@dataclass(frozen=True)
class ReplicaPhysics:
    cost: np.ndarray  # the iteration cost's coefficients
    kv_bytes_per_token: float  # per device, every attention layer of its stage
    capacity_bytes: float  # per device: the near memory tiers it may use
    idle_power_W: float  # one replica, all its devices


def replica_physics(engine: Engine, scenario: Scenario) -> ReplicaPhysics:
    model = engine.model(scenario.model)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    result = engine.predict(scenario.with_changes(batch=1))
    devices = scenario.tp * scenario.pp
    kv_layers = model.n_full_attention_layers + model.n_window_attention_layers + model.n_chunked_attention_layers
    share = -(-model.kv_shards // scenario.tp) / model.kv_shards
    kv_per_token = bytes_per_element(scenario.kv_precision) * model.kv_elements_per_token_per_layer * share * kv_layers
    cost = make_cost(
        host_s=result.decode.host_time_s,
        per_sequence_s=0.0,
        flops_per_token=2.0 * model.matmul_params_per_token / devices,
        attention_flops_per_position=float(model.attention_flops_per_position_decode) * kv_layers / devices,
        flop_rate=result.decode.flops_per_device / max(result.decode.compute_time_s, 1e-30),
        weight_bytes=result.decode.weight_bytes_per_device,
        kv_bytes_per_position=kv_per_token / scenario.pp,
        byte_rate=result.decode.bytes_per_device / max(result.decode.memory_time_s, 1e-30),
        static_power_w=float(accelerator.idle_W) * devices,
        peak_power_w=float(accelerator.tdp_W) * devices,
    )
    return ReplicaPhysics(cost, kv_per_token / scenario.pp, result.memory.capacity_bytes,
                          float(accelerator.idle_W) * devices)
