"""One evaluated scenario as the text layer reads it: the engine's result, the trace of what
its steps found on the way (``ReferenceModel.evaluate_traced``) and the catalog records and
class constants it used. Built once per text; nothing in it is worked out again downstream.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.accelerator import Accelerator
from ..core.constants import ClassConstants, Constants
from ..core.model import ModelArch
from ..core.scenario import Scenario
from ..physics.reference import ReferenceModel, Trace
from ..physics.results import Result


@dataclass(frozen=True)
class Context:
    result: Result  # the numbers the text quotes (the kernels', as the app shows them)
    trace: Trace  # the facts behind them
    model: ModelArch
    accelerator: Accelerator
    constants: Constants
    cls: ClassConstants  # of the accelerator's architecture class

    @property
    def scenario(self) -> Scenario:
        return self.result.scenario

    @property
    def stack(self) -> float:
        """The accelerator's serving-stack factor (1 = the reference stack)."""
        return float(self.accelerator.software_efficiency)

    @staticmethod
    def of(result: Result, model: ModelArch, accelerator: Accelerator, constants: Constants) -> Context:
        """The context of ``result`` (the kernels' numbers, as a frame holds them), with the
        trace of the same scenario."""
        _, trace = ReferenceModel(model, accelerator, constants).evaluate_traced(result.scenario)
        return Context(result, trace, model, accelerator, constants,
                       constants.for_class(accelerator.architecture_class))
