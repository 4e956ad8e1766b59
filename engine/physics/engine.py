"""The engine's front door: scenarios in, typed results out, computed by the kernels.

``Engine.evaluate`` runs many scenarios in one kernel call and returns the raw output table
(what the app plots); ``Engine.predict`` returns a typed :class:`~results.Result` for one
scenario (what the CLI prints); ``Engine.reference`` computes the same with the reference
model, for checking.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..catalog.catalog import Catalog
from ..catalog.constants import Constants, load_constants
from ..core.model import ModelArch
from ..core.scenario import Scenario
from . import kernels, layout
from .pack import fallback_table, pack_accelerators, pack_constants, pack_models, pack_scenarios
from .reference import ReferenceModel
from .results import Result, result_from_column


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
        """Kernel outputs, one column per scenario (rows: ``results.OUTPUT_FIELDS``; read them by name with ``results.Outputs``). Scenarios must be
        resolved (known ids, valid values)."""
        table = pack_scenarios(scenarios, self._model_index, self._accelerator_index)
        return self.evaluate_table(table)

    def evaluate_batches(self, scenario: Scenario, batches: np.ndarray) -> np.ndarray:
        """Kernel outputs of ``scenario`` at each batch size, one column per batch: the scenario
        is packed once and its column repeated, rather than a Scenario made per batch. The
        scenario must be resolved, and the batches valid batch sizes."""
        table = np.repeat(pack_scenarios([scenario], self._model_index, self._accelerator_index), len(batches), axis=1)
        table[layout.S_BATCH] = batches
        return self.evaluate_table(table)

    def evaluate_table(self, scenario_table: np.ndarray) -> np.ndarray:
        out = np.empty((layout.N_OUTPUT_ROWS, scenario_table.shape[1]))
        kernels.evaluate_many(
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
