"""The one Qt-free value that describes what to compute: model, device, workload, layout."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from .errors import ScenarioError
from .fields import MAX_BATCH, MAX_PARALLEL, MAX_TOKENS, SCENARIO_FIELDS, field_value_error

__all__ = ["MAX_BATCH", "MAX_PARALLEL", "MAX_TOKENS", "Scenario", "WORKLOAD_FIELDS", "Workload"]


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
        """Reject values no physics can take (not layouts that merely do not fit); the ranges
        and kinds are ``fields.SCENARIO_FIELDS``'."""
        for field in SCENARIO_FIELDS:
            if field.kind == "id":
                continue
            problem = field_value_error(field, getattr(self, field.name))
            if problem is not None:
                raise ScenarioError(problem)
        return self
