"""The engine's front door: scenarios in, typed results out, computed by the kernels.

``Engine.evaluate`` runs many scenarios in one kernel call and returns the raw output table
(what the app plots); ``Engine.predict`` returns a typed :class:`~reference.Result` for one
scenario (what the CLI prints); ``Engine.reference`` computes the same with the reference
model, for checking.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..catalog.catalog import Catalog
from ..catalog.constants import Constants, load_constants
from ..core import codes
from ..core.model import ModelArch
from ..core.precision import PRECISIONS
from ..core.scenario import Scenario
from . import kernels as k
from .pack import fallback_table, pack_accelerators, pack_constants, pack_models, pack_scenarios
from .reference import MemoryResult, PhaseResult, ReferenceModel, Result


class Engine:
    def __init__(self, catalog: Catalog | None = None, constants: Constants | None = None) -> None:
        self.catalog = catalog or Catalog.load()
        self.constants = constants or load_constants()
        self._models: list[ModelArch] = list(self.catalog.models.values())
        self._model_index = {m.id: i for i, m in enumerate(self._models)}
        accelerators = list(self.catalog.accelerators.values())
        self._accelerator_index = {a.id: i for i, a in enumerate(accelerators)}
        self._accelerator_table, self._peaks = pack_accelerators(accelerators, self.constants)
        self._model_table = pack_models(self._models)
        self._fallback = fallback_table()
        self._constant_vector = pack_constants(self.constants)

    def add_model(self, model: ModelArch) -> None:
        """Make a model (e.g. one imported from a config.json) available by its id."""
        if model.id in self._model_index:
            self._models[self._model_index[model.id]] = model
        else:
            self._model_index[model.id] = len(self._models)
            self._models.append(model)
        self._model_table = pack_models(self._models)

    def model(self, model_id: str) -> ModelArch:
        if model_id in self._model_index:
            return self._models[self._model_index[model_id]]
        return self.catalog.model(model_id)

    def resolve(self, scenario: Scenario) -> Scenario:
        """Check ids and values; a model given as a file path is loaded and registered."""
        scenario.validate()
        self.catalog.accelerator(scenario.accelerator)
        if scenario.model not in self._model_index:
            model = self.catalog.model(scenario.model)
            self.add_model(model)
            scenario = scenario.with_changes(model=model.id)
        return scenario

    def warm_up(self) -> None:
        """Compile (or load from the on-disk cache) the kernels; idempotent."""
        first_model = self._models[0].id
        first_accelerator = next(iter(self._accelerator_index))
        self.evaluate([Scenario(first_model, first_accelerator)])

    def evaluate(self, scenarios: Sequence[Scenario]) -> np.ndarray:
        """Kernel outputs, one column per scenario (rows: ``kernels.O_*``). Scenarios must be
        resolved (known ids, valid values)."""
        table = pack_scenarios(scenarios, self._model_index, self._accelerator_index)
        return self.evaluate_table(table)

    def evaluate_batches(self, scenario: Scenario, batches: np.ndarray) -> np.ndarray:
        """Kernel outputs of ``scenario`` at each batch size, one column per batch: the scenario
        is packed once and its column repeated, rather than a Scenario made per batch. The
        scenario must be resolved, and the batches valid batch sizes."""
        table = np.repeat(pack_scenarios([scenario], self._model_index, self._accelerator_index), len(batches), axis=1)
        table[k.S_BATCH] = batches
        return self.evaluate_table(table)

    def evaluate_table(self, scenario_table: np.ndarray) -> np.ndarray:
        out = np.empty((k.N_OUTPUT_ROWS, scenario_table.shape[1]))
        k.evaluate_many(
            scenario_table,
            self._model_table,
            self._accelerator_table,
            self._peaks,
            self._fallback,
            self._constant_vector,
            out,
        )
        return out

    def predict(self, scenario: Scenario) -> Result:
        scenario = self.resolve(scenario)
        return result_from_column(self.evaluate([scenario]), 0, scenario)

    def reference(self, scenario: Scenario) -> Result:
        scenario = self.resolve(scenario)
        model = self.model(scenario.model)
        accelerator = self.catalog.accelerator(scenario.accelerator)
        return ReferenceModel(model, accelerator, self.constants).evaluate(scenario)

    @property
    def model_index(self) -> dict[str, int]:
        return dict(self._model_index)

    @property
    def accelerator_index(self) -> dict[str, int]:
        return dict(self._accelerator_index)


def result_from_column(out: np.ndarray, j: int, scenario: Scenario) -> Result:
    """The typed result of one kernel output column."""

    def phase(prefix: str) -> PhaseResult:
        def value(name: str) -> float:
            return float(out[getattr(k, f"O_{prefix}_{name}"), j])

        return PhaseResult(
            flops_per_device=value("FLOPS"),
            bytes_per_device=value("BYTES"),
            weight_bytes_per_device=value("WEIGHT_BYTES"),
            kv_bytes_per_device=value("KV_BYTES"),
            time_s=value("TIME"),
            compute_time_s=value("T_COMPUTE"),
            memory_time_s=value("T_MEMORY"),
            attention_compute_time_s=value("T_ATTN_COMPUTE"),
            attention_memory_time_s=value("T_ATTN_MEMORY"),
            execution_time_s=value("T_EXECUTION"),
            communication_time_s=value("T_COMM"),
            overhead_time_s=value("T_OVERHEAD"),
            host_time_s=value("T_HOST"),
            bound=codes.BOUNDS[int(value("BOUND"))],
            power_per_device_W=value("POWER"),
        )

    memory = MemoryResult(
        weights_bytes=float(out[k.O_WEIGHTS, j]),
        weights_far_bytes=float(out[k.O_WEIGHTS_FAR, j]),
        kv_cache_bytes=float(out[k.O_KV, j]),
        activation_bytes=float(out[k.O_ACTIVATIONS, j]),
        overhead_bytes=float(out[k.O_OVERHEAD, j]),
        usable_bytes=float(out[k.O_USABLE, j]),
        capacity_bytes=float(out[k.O_CAPACITY, j]),
        far_usable_bytes=float(out[k.O_FAR_USABLE, j]),
        max_batch=int(out[k.O_MAX_BATCH, j]),
        resident_batch=int(out[k.O_RESIDENT, j]),
    )
    return Result(
        scenario=scenario,
        devices=int(out[k.O_DEVICES, j]),
        fits=bool(out[k.O_FITS, j]),
        fit_code=int(out[k.O_FIT_CODE, j]),
        warning_bits=int(out[k.O_WARNINGS, j]),
        compute_precision=PRECISIONS[int(out[k.O_COMPUTE_PRECISION, j])],
        waves=int(out[k.O_WAVES, j]),
        prefill=phase("PRE"),
        decode=phase("DEC"),
        memory=memory,
        ttft_s=float(out[k.O_TTFT, j]),
        itl_s=float(out[k.O_ITL, j]),
        e2e_latency_s=float(out[k.O_E2E, j]),
        throughput_output_tok_s=float(out[k.O_THROUGHPUT_OUTPUT, j]),
        throughput_total_tok_s=float(out[k.O_THROUGHPUT_TOTAL, j]),
        power_W=float(out[k.O_POWER, j]),
        energy_J=float(out[k.O_ENERGY, j]),
        tokens_per_joule=float(out[k.O_TOKENS_PER_J, j]),
        output_tokens_per_joule=float(out[k.O_OUTPUT_TOKENS_PER_J, j]),
        tp_needed=int(out[k.O_TP_NEEDED, j]),
        offload_needed=float(out[k.O_OFFLOAD_NEEDED, j]),
        ridge_point=float(out[k.O_RIDGE, j]),
    )
