"""What the engine answers for a scenario: one schema, three readers.

The fields of :class:`Result` (with its nested :class:`PhaseResult` for prefill and decode and
:class:`MemoryResult`) are the engine's outputs, declared here once:

- the reference model returns a ``Result``;
- the kernels write one row per field of the output table, in the order :data:`OUTPUT_FIELDS`
  gives (``physics.layout`` turns it into the ``O_*`` row numbers the kernels use);
- :class:`Outputs` reads that table by the same names, vectorised over scenarios
  (``outputs.itl_s``, ``outputs.decode.operational_intensity``), and
  :func:`result_from_column` turns one column back into a ``Result``.

A new output is a new field here (the kernels and the reference must then compute it; the
tests fail until both do) and every reader finds it by name. Fields whose text is a word
(``compute_precision``, ``bound``) are stored in the table as the index of that word in its
vocabulary, given in the field's metadata.

Units: SI (bytes, seconds, FLOP, W, J); per device (the busiest one) unless a name says otherwise.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from ..core import codes
from ..core.precision import PRECISIONS
from ..core.scenario import Scenario


def _coded(words: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    return {"codes": words}


class _PhaseDerived:
    """Quantities derived from a phase's outputs, for one scenario or many at once."""

    flops_per_device: float
    bytes_per_device: float
    time_s: float

    @property
    def operational_intensity(self) -> float:
        """FLOP per byte moved, on the busiest device."""
        return self.flops_per_device / self.bytes_per_device

    @property
    def achieved_flops_per_s(self) -> float:
        return self.flops_per_device / self.time_s


@dataclass(frozen=True)
class PhaseResult(_PhaseDerived):
    """Prefill of the whole batch, or one decode step, on the busiest device."""

    flops_per_device: float
    bytes_per_device: float
    weight_bytes_per_device: float  # of bytes_per_device: weights read
    kv_bytes_per_device: float  # of bytes_per_device: KV cache and recurrent state read and written
    time_s: float
    compute_time_s: float  # of one stage pass (chunk or micro-batch)
    memory_time_s: float
    attention_compute_time_s: float  # of compute_time_s: attention (and recurrent layers' state work)
    attention_memory_time_s: float  # of memory_time_s: KV cache (and recurrent state) traffic
    execution_time_s: float  # compute and memory of one stage pass together (see execution_time)
    communication_time_s: float
    overhead_time_s: float  # per-layer overhead of one stage pass
    host_time_s: float  # the serving stack's host work over the phase (all chunks, or one step)
    bound: str = field(metadata=_coded(codes.BOUNDS))  # the largest of compute, memory, communication, overhead
    power_per_device_W: float


# A device's memory by part, in the order ``_MemoryDerived.device_parts`` gives them: what the
# Memory tab stacks and the tables list.
DEVICE_PARTS: tuple[str, ...] = ("weights", "kv_cache", "recurrent_state", "activations", "overhead")


class _MemoryDerived:
    """A device's memory by part and tier, and the room left, for one scenario or many at once
    (the one place these are summed: a test forbids arithmetic on memory outputs elsewhere)."""

    weights_bytes: float
    weights_far_bytes: float
    kv_cache_bytes: float
    kv_cache_far_bytes: float
    recurrent_state_bytes: float
    activation_bytes: float
    overhead_bytes: float
    usable_bytes: float
    capacity_bytes: float
    far_usable_bytes: float

    @property
    def usable_fraction(self) -> float:
        """Usable device memory as a fraction of the physical (NaN where there is none)."""
        capacity = np.asarray(self.capacity_bytes, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction = np.where(capacity > 0, np.asarray(self.usable_bytes, dtype=float) / capacity, np.nan)
        return fraction if fraction.ndim else float(fraction)

    @property
    def weights_near_bytes(self) -> float:
        """The weights in device memory (the near tiers): all but those offloaded."""
        return self.weights_bytes - self.weights_far_bytes

    @property
    def kv_cache_near_bytes(self) -> float:
        """The KV cache in device memory: all but the part kept in the far tier."""
        return self.kv_cache_bytes - self.kv_cache_far_bytes

    @property
    def device_parts(self) -> tuple:
        """The bytes in device memory by part (``DEVICE_PARTS`` order)."""
        return (self.weights_near_bytes, self.kv_cache_near_bytes, self.recurrent_state_bytes, self.activation_bytes,
                self.overhead_bytes)

    @property
    def device_bytes(self) -> float:
        """Everything in device memory: what must fit in ``usable_bytes``."""
        return (self.weights_near_bytes + self.kv_cache_near_bytes + self.recurrent_state_bytes + self.activation_bytes
                + self.overhead_bytes)

    @property
    def far_bytes(self) -> float:
        """What is kept in the far tier: offloaded weights and KV cache."""
        return self.weights_far_bytes + self.kv_cache_far_bytes

    @property
    def total_bytes(self) -> float:
        """Every part in either tier: the memory one replica's device holds or streams."""
        return self.device_bytes + self.far_bytes

    @property
    def room_bytes(self) -> float:
        """Usable device memory left (negative where it does not fit)."""
        return self.usable_bytes - self.device_bytes

    @property
    def per_copy_bytes(self) -> float:
        """What one more copy of the model and its batch needs beside the runtime: weights, KV
        cache, recurrent state and activations, in either tier."""
        return self.total_bytes - self.overhead_bytes

    @property
    def room_for_copies_bytes(self) -> float:
        """Usable device memory less the runtime's own: what copies of the model may share."""
        return self.usable_bytes - self.overhead_bytes

    @property
    def weights_room_bytes(self) -> float:
        """Usable device memory left for weights beside what else is in device memory (KV cache,
        recurrent state, activations, runtime)."""
        return (self.usable_bytes - self.kv_cache_near_bytes - self.activation_bytes - self.overhead_bytes
                - self.recurrent_state_bytes)

    @property
    def workspace_bytes(self) -> float:
        """Device memory besides the KV cache and recurrent state: the weights kept there,
        activations and the runtime (what a serving engine's memory profile finds taken before
        it sizes its KV pool)."""
        return self.weights_near_bytes + self.activation_bytes + self.overhead_bytes

    @property
    def far_room_bytes(self) -> float:
        """Usable far-tier memory left beside the offloaded weights (for KV cache)."""
        return self.far_usable_bytes - self.weights_far_bytes

    @property
    def weights_and_runtime_bytes(self) -> float:
        """The weights (either tier) and the runtime's own memory: what one device needs before
        any sequence."""
        return self.weights_bytes + self.overhead_bytes

    @property
    def weights_fraction_of_usable(self) -> float:
        """All the weights as a fraction of usable device memory."""
        return self.weights_bytes / self.usable_bytes

    def share_of_usable(self, part_bytes):
        """``part_bytes`` as a percentage of usable device memory (infinite where there is none)."""
        usable = np.asarray(self.usable_bytes, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(usable > 0, 100.0 * np.asarray(part_bytes, dtype=float) / np.where(usable > 0, usable, 1.0),
                             np.inf)
        return share if share.ndim else float(share)


@dataclass(frozen=True)
class MemoryResult(_MemoryDerived):
    """Per device, at the requested batch and the end of generation (the longest context)."""

    weights_bytes: float  # all of a device's weights, offloaded ones included
    weights_far_bytes: float  # of which in the far tier
    kv_cache_bytes: float  # all of a device's KV cache, offloaded part included
    kv_cache_far_bytes: float  # of which in the far tier (none without one)
    # The fixed-size state of linear-attention and state-space layers, whatever the context:
    # all in device memory (not offloaded); 0 for models without such layers.
    recurrent_state_bytes: float
    activation_bytes: float
    overhead_bytes: float
    usable_bytes: float  # near tiers x usable fraction
    capacity_bytes: float  # near tiers, physical (of unified memory, the share the accelerator may use)
    far_usable_bytes: float
    max_batch: int
    resident_batch: int  # sequences in memory at once (the wave size)


class _ResultDerived:
    fit_code: int
    warning_bits: int

    @property
    def fit_reason(self) -> str:
        return codes.FIT_REASONS[self.fit_code]

    @property
    def warnings(self) -> list[str]:
        return codes.warning_texts(self.warning_bits)


@dataclass(frozen=True)
class Result(_ResultDerived):
    scenario: Scenario
    devices: int
    fits: bool
    fit_code: int
    warning_bits: int
    compute_precision: str = field(metadata=_coded(PRECISIONS))
    waves: int
    prefill: PhaseResult
    decode: PhaseResult
    memory: MemoryResult
    ttft_s: float  # mean over requests; the batch's prefill when it runs in one wave
    itl_s: float
    e2e_latency_s: float  # until the last sequence of the batch finishes
    throughput_output_tok_s: float  # whole system: all replicas
    throughput_total_tok_s: float  # input + output tokens, as the second paper counts
    power_W: float  # mean over the run, all devices
    energy_J: float
    tokens_per_joule: float  # input + output tokens per joule
    output_tokens_per_joule: float
    tp_needed: int  # smallest tp (tp x 2^j) that fits one sequence, 0 if none up to 2^16
    offload_needed: float  # smallest offload fraction that fits one sequence, -1 if none
    ridge_point: float  # peak / device-tier bandwidth at the compute precision, FLOP/byte


# ---- the schema --------------------------------------------------------------------------

_NESTED = {"prefill": PhaseResult, "decode": PhaseResult, "memory": MemoryResult}


def _leaf_fields(cls: type, prefix: str = "") -> Iterator[tuple[str, dataclasses.Field]]:
    for item in dataclasses.fields(cls):
        if item.name == "scenario":
            continue
        if item.name in _NESTED and cls is Result:
            yield from _leaf_fields(_NESTED[item.name], f"{item.name}.")
        else:
            yield prefix + item.name, item


# Every output, in the order of the kernels' output rows: "ttft_s", "prefill.flops_per_device", ...
OUTPUT_FIELDS: tuple[str, ...] = tuple(name for name, _ in _leaf_fields(Result))
OUTPUT_ROW: dict[str, int] = {name: row for row, name in enumerate(OUTPUT_FIELDS)}
N_OUTPUT_ROWS = len(OUTPUT_FIELDS)
_KIND = {name: (item.type, item.metadata.get("codes")) for name, item in _leaf_fields(Result)}


def _scalar(name: str, value: float) -> object:
    kind, words = _KIND[name]
    if words is not None:
        return words[int(value)]
    if kind == "bool":
        return bool(value)
    if kind == "int":
        return int(value)
    return float(value)


def _values(cls: type, column: np.ndarray, prefix: str = "") -> dict[str, object]:
    values: dict[str, object] = {}
    for item in dataclasses.fields(cls):
        name = prefix + item.name
        if item.name == "scenario":
            continue
        if cls is Result and item.name in _NESTED:
            values[item.name] = _NESTED[item.name](**_values(_NESTED[item.name], column, f"{item.name}."))
        else:
            values[item.name] = _scalar(name, column[OUTPUT_ROW[name]])
    return values


def result_from_column(table: np.ndarray, column: int, scenario: Scenario) -> Result:
    """The typed result of one column of an output table."""
    return Result(scenario=scenario, **_values(Result, table[:, column]))


def result_to_column(result: Result) -> np.ndarray:
    """The output column of a result (the inverse of :func:`result_from_column`)."""
    column = np.empty(N_OUTPUT_ROWS)
    for name in OUTPUT_FIELDS:
        value: object = result
        for part in name.split("."):
            value = getattr(value, part)
        words = _KIND[name][1]
        column[OUTPUT_ROW[name]] = words.index(value) if words is not None else float(value)  # type: ignore[arg-type]
    return column


# ---- the vectorised view -------------------------------------------------------------------


class _View:
    """Named access to rows of an output table; each attribute is the row's values over the
    table's remaining axes (scenarios, or accelerators x batches)."""

    __slots__ = ("_table",)
    _prefix = ""

    def __init__(self, table: np.ndarray) -> None:
        self._table = table

    def row(self, name: str) -> np.ndarray:
        return self._table[OUTPUT_ROW[self._prefix + name]]


def _row_property(name: str) -> property:
    return property(lambda self: self._table[OUTPUT_ROW[self._prefix + name]], doc=f"the {name} row")


def _bool_row_property(name: str) -> property:
    return property(lambda self: self._table[OUTPUT_ROW[self._prefix + name]] != 0.0, doc=f"the {name} row")


def _fill(view: type, cls: type) -> type:
    for item in dataclasses.fields(cls):
        if item.name == "scenario" or (cls is Result and item.name in _NESTED):
            continue
        make = _bool_row_property if item.type == "bool" else _row_property
        setattr(view, item.name, make(item.name))
    return view


class PhaseOutputs(_View, _PhaseDerived):
    """One phase's rows; ``bound`` is a code of ``codes.BOUNDS``."""

    __slots__ = ()


class PrefillOutputs(PhaseOutputs):
    __slots__ = ()
    _prefix = "prefill."


class DecodeOutputs(PhaseOutputs):
    __slots__ = ()
    _prefix = "decode."


class MemoryOutputs(_View, _MemoryDerived):
    __slots__ = ()
    _prefix = "memory."


class Outputs(_View, _ResultDerived):
    """The output table by name: ``Outputs(table).itl_s`` is the ITL row, over whatever axes
    the table has after its first (``frame.outputs`` is over the shown accelerators,
    ``frame.sweep_outputs`` over accelerators x batches). ``outputs[j]`` is the view of one
    column; ``compute_precision`` and the phases' ``bound`` are codes (indices of
    ``PRECISIONS`` and ``codes.BOUNDS``); ``fits`` is boolean."""

    __slots__ = ()

    def __getitem__(self, index: object) -> Outputs:
        if isinstance(index, tuple):
            return Outputs(self._table[(slice(None), *index)])
        return Outputs(self._table[:, index])

    @property
    def table(self) -> np.ndarray:
        return self._table

    @property
    def prefill(self) -> PrefillOutputs:
        return PrefillOutputs(self._table)

    @property
    def decode(self) -> DecodeOutputs:
        return DecodeOutputs(self._table)

    @property
    def memory(self) -> MemoryOutputs:
        return MemoryOutputs(self._table)

    def phase(self, name: str) -> PhaseOutputs:
        """``prefill`` or ``decode`` by name."""
        return PrefillOutputs(self._table) if name == "prefill" else DecodeOutputs(self._table)


_fill(PhaseOutputs, PhaseResult)
_fill(MemoryOutputs, MemoryResult)
_fill(Outputs, Result)
