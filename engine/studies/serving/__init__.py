"""Iteration-level simulation of LLM serving engines (vLLM v1, TensorRT-LLM, static batches).

``simulate`` runs a ``Workload`` on a ``Server`` (compiled kernel or pure-Python reference, held
equal by the tests), ``simulate_many`` independent runs side by side on a thread pool;
``summarize`` turns a run into serving metrics; ``capacity`` finds the largest request rate
meeting an SLO; ``simulate_disaggregated`` runs a prefill pool, a KV transfer and a decode pool
in tandem.
"""

from .capacity import CapacityResult, Slo, capacity, meets_slo
from .disaggregated import DisaggregatedResult, KvLink, simulate_disaggregated
from .metrics import Distribution, Metrics, summarize
from .run import RunResult, Server, simulate, simulate_many
from .workload import (
    Lengths,
    Workload,
    cap_lengths,
    draw_closed_loop_workload,
    draw_lengths,
    draw_workload,
    exponential_think_times,
    gamma_arrivals,
    poisson_arrivals,
    trace_workload,
)

__all__ = [
    "CapacityResult",
    "DisaggregatedResult",
    "Distribution",
    "KvLink",
    "Lengths",
    "Metrics",
    "RunResult",
    "Server",
    "Slo",
    "Workload",
    "cap_lengths",
    "capacity",
    "draw_closed_loop_workload",
    "draw_lengths",
    "draw_workload",
    "exponential_think_times",
    "gamma_arrivals",
    "meets_slo",
    "poisson_arrivals",
    "simulate",
    "simulate_disaggregated",
    "simulate_many",
    "summarize",
    "trace_workload",
]
