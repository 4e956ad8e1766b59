"""The one Qt-free value that describes what to compute: model, device, workload, layout."""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace

from .errors import ScenarioError
from .precision import PRECISIONS

# Limits of what the engine accepts at all (the app's controls use narrower ranges).
MAX_BATCH = 10_000_000
MAX_TOKENS = 100_000_000
MAX_PARALLEL = 1_000_000


@dataclass(frozen=True)
class Workload:
    """What is served, whatever the model, the device and the layout: ``batch`` prompts of
    ``input_len`` tokens arrive together and ``output_len`` tokens are generated for each, with
    weights, activations and KV cache in the given precisions (the Scenario fields of the same
    names, with the same defaults)."""

    batch: int = 1
    input_len: int = 1024
    output_len: int = 256
    weight_precision: str = "bf16"
    activation_precision: str = "bf16"
    kv_precision: str = "bf16"


WORKLOAD_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Workload))


@dataclass(frozen=True)
class Scenario:
    """A static batch: ``batch`` prompts of ``input_len`` tokens arrive together, are
    prefilled, then ``output_len`` tokens are generated for each (the first by the prefill).

    Precisions: weights, activations (the format matrix products run in where the device
    supports it) and KV cache, each one of ``precision.PRECISIONS``. Layout: tensor (tp),
    pipeline (pp), expert (ep, spread over the tensor-parallel devices of a stage, so it must
    divide tp) and data (dp) parallelism; ``offload`` is the fraction of weights kept in the
    device's far memory tier (host, CXL, DDR) and streamed from there, ``kv_offload`` the
    fraction of the KV cache kept there (the two share the far tier's capacity).
    """

    model: str
    accelerator: str
    batch: int = 1
    input_len: int = 1024
    output_len: int = 256
    weight_precision: str = "bf16"
    activation_precision: str = "bf16"
    kv_precision: str = "bf16"
    tp: int = 1
    pp: int = 1
    ep: int = 1
    dp: int = 1
    offload: float = 0.0
    kv_offload: float = 0.0

    @classmethod
    def from_workload(cls, model: str, accelerator: str, workload: Workload, **layout: object) -> Scenario:
        """The workload served by ``model`` on ``accelerator``, laid out by ``layout`` (tp, pp,
        ep, dp, offload, kv_offload; the defaults where not given)."""
        return cls(model, accelerator, **{name: getattr(workload, name) for name in WORKLOAD_FIELDS}, **layout)

    @property
    def workload(self) -> Workload:
        return Workload(**{name: getattr(self, name) for name in WORKLOAD_FIELDS})

    @property
    def devices(self) -> int:
        return self.tp * self.pp * self.dp

    def with_changes(self, **changes: object) -> Scenario:
        return replace(self, **changes)

    def validate(self) -> Scenario:
        """Reject values no physics can take (not layouts that merely do not fit)."""
        for name, low, high in (
            ("batch", 1, MAX_BATCH),
            ("input_len", 1, MAX_TOKENS),
            ("output_len", 1, MAX_TOKENS),
            ("tp", 1, MAX_PARALLEL),
            ("pp", 1, MAX_PARALLEL),
            ("ep", 1, MAX_PARALLEL),
            ("dp", 1, MAX_PARALLEL),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise ScenarioError(f"{name} must be a whole number, got {value!r}")
            if not low <= value <= high:
                raise ScenarioError(f"{name} must be between {low:,} and {high:,}, got {value:,}")
        for name in ("weight_precision", "activation_precision", "kv_precision"):
            value = getattr(self, name)
            if value not in PRECISIONS:
                raise ScenarioError(f"{name} must be one of {', '.join(PRECISIONS)}, got {value!r}")
        for name in ("offload", "kv_offload"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ScenarioError(f"{name} must be a fraction between 0 and 1, got {value!r}")
            # The range first: math.isfinite overflows on an integer beyond the float range.
            if not (0.0 <= value <= 1.0 and math.isfinite(value)):
                raise ScenarioError(f"{name} must be a fraction between 0 and 1, got {value!r}")
        return self
