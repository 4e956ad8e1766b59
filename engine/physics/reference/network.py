"""Step 3a, communication: the network each parallel group uses, and the time and bytes of
the collectives of one stage pass.

- TP: two all-reduces of the pass's activations per layer, by the fastest algorithm;
- EP: per MoE layer one all-reduce and two all-to-alls (dispatch, combine), the busiest device
  receiving more than its share of the routed tokens;
- PP: one point-to-point hand-over of the activations per stage boundary.
Every communication operation also pays the class's fixed cost of launching and synchronising
it. Communication is not overlapped with compute (a conservative choice).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...core import codes
from ...core.accelerator import Accelerator, Interconnect
from ...core.constants import ClassConstants, Constants
from .closed_forms import all_reduce, all_reduce_algorithms, all_to_all_time, token_imbalance
from .parallel import Layout


@dataclass(frozen=True)
class Network:
    bandwidth: float  # effective, B/s per direction: the group's links × the class's efficiency
    latency: float  # s per step
    crosses_domain: bool  # the group is larger than the scale-up domain
    name: str = ""  # of the interconnect used
    link_bandwidth: float = 0.0  # B/s per direction each device sends at, before efficiency
    interconnect: Interconnect | None = None  # the catalog's record of it


def network(accelerator: Accelerator, group: int, efficiency: float, peers: int | None = None) -> Network:
    """The network a group of ``group`` devices uses, each exchanging with ``peers`` others at
    once (all the rest of the group by default; one for a pipeline hand-over)."""
    scale_up = accelerator.interconnect
    if group <= float(scale_up.domain_size) or accelerator.scale_out is None:
        crosses = group > float(scale_up.domain_size)
        bandwidth = scale_up.group_bandwidth_Bps(group - 1 if peers is None else peers)
        return Network(bandwidth * efficiency, float(scale_up.latency_s), crosses, scale_up.name, bandwidth,
                       scale_up)
    scale_out = accelerator.scale_out
    bandwidth = float(scale_out.bandwidth_per_direction_Bps)
    return Network(bandwidth * efficiency, float(scale_out.latency_s), True, scale_out.name, bandwidth, scale_out)


def tensor_parallel_all_reduce(
    accelerator: Accelerator, constants: Constants, tp: int, message_bytes: float
) -> tuple[float, float, str]:
    """One all-reduce of ``message_bytes`` over ``tp`` devices as the engine charges it: over
    the scale-up network (or scale-out beyond its domain) at the class's collective efficiency,
    by the fastest algorithm (:func:`all_reduce`), plus the class's fixed cost of a collective:
    (time, bytes each device sends, algorithm)."""
    cls = constants.for_class(accelerator.architecture_class)
    net = network(accelerator, tp, cls.interconnect_efficiency)
    time, sent, algorithm = all_reduce(message_bytes, tp, net.bandwidth, net.latency)
    return (time + cls.collective_overhead_s if tp > 1 else 0.0), sent, algorithm


@dataclass(frozen=True)
class AllReduce:
    """One all-reduce of a pass's activations over the TP group."""

    message_bytes: float
    algorithm: str  # of closed_forms.all_reduce; "none" without TP
    time_s: float  # with the fixed cost of the operation
    sent_bytes: float  # by each device
    steps: int  # of the algorithm
    options: tuple[tuple[str, float], ...]  # every algorithm the group can use and its time, without the fixed cost


@dataclass(frozen=True)
class AllToAll:
    """One all-to-all (dispatch or combine) of a pass's routed tokens over the EP group."""

    sent_bytes: float  # by the busiest device
    time_s: float  # with the fixed cost of the operation


class Communication:
    """The collectives of one stage pass of a scenario, as functions of its tokens."""

    def __init__(self, accelerator: Accelerator, cls: ClassConstants, layout: Layout, hidden_size: int,
                 activation_bytes: float, top_k: int) -> None:
        self.layout = layout
        self.hidden_size = hidden_size
        self.activation_bytes = activation_bytes
        self.top_k = top_k
        efficiency = cls.interconnect_efficiency
        self.tp_network = network(accelerator, layout.tp, efficiency)
        self.ep_network = network(accelerator, layout.effective_ep, efficiency)
        # A pipeline hand-over goes from each device to its counterpart in the next stage.
        self.pp_network = network(accelerator, layout.tp * layout.pp, efficiency, peers=1)
        self.collective = cls.collective_overhead_s  # launch and synchronisation of each operation
        self.warnings = 0
        if (layout.tp > 1 and self.tp_network.crosses_domain) or (layout.pp > 1 and self.pp_network.crosses_domain):
            self.warnings |= codes.WARN_CROSSES_SCALE_UP_DOMAIN

    def all_reduce(self, tokens: float) -> AllReduce:
        message = tokens * self.hidden_size * self.activation_bytes
        tp = self.layout.tp
        bandwidth, latency = self.tp_network.bandwidth, self.tp_network.latency
        time, sent, algorithm = all_reduce(message, tp, bandwidth, latency)
        if tp > 1:
            time += self.collective
        options = all_reduce_algorithms(message, tp, bandwidth, latency)
        steps = next((count for _, _, name, count in options if name == algorithm), 0)
        return AllReduce(message, algorithm, time, sent, steps, tuple((name, each) for each, _, name, _ in options))

    def all_to_all(self, tokens: float) -> AllToAll:
        ep = self.layout.effective_ep
        dispatched = (
            tokens * self.top_k * self.hidden_size * self.activation_bytes * (ep - 1) / ep
            * token_imbalance(tokens * self.top_k, ep)
        )
        time = all_to_all_time(dispatched, ep, self.ep_network.bandwidth, self.ep_network.latency) + self.collective
        return AllToAll(dispatched, time)

    def per_pass(self, tokens: float) -> tuple[float, float]:
        """Time and bytes sent per device for one stage pass over ``tokens`` tokens."""
        layout = self.layout
        reduce = self.all_reduce(tokens)
        dense_layer_time = 2.0 * reduce.time_s
        dense_layer_sent = 2.0 * reduce.sent_bytes
        if layout.effective_ep > 1:
            exchange = self.all_to_all(tokens)
            moe_layer_time = reduce.time_s + 2.0 * exchange.time_s
            moe_layer_sent = reduce.sent_bytes + 2.0 * exchange.sent_bytes
        else:
            moe_layer_time = dense_layer_time
            moe_layer_sent = dense_layer_sent
        moe = layout.moe_fraction
        time = layout.layers_per_stage * ((1.0 - moe) * dense_layer_time + moe * moe_layer_time)
        sent = layout.layers_per_stage * ((1.0 - moe) * dense_layer_sent + moe * moe_layer_sent)
        return time, sent

    def point_to_point(self, tokens: float) -> float:
        """One hand-over of ``tokens`` tokens' activations to the next pipeline stage."""
        if self.layout.pp <= 1:
            return 0.0
        net = self.pp_network
        return tokens * self.hidden_size * self.activation_bytes / net.bandwidth + net.latency + self.collective
