"""The engine's front door: scenarios in, typed results out, computed by the kernels.

``Engine.evaluate`` runs many scenarios in one kernel call and returns the output table (what
the app plots; read it by name with :class:`~results.Outputs`); ``Engine.predict`` returns a
typed :class:`~results.Result` for one scenario (what the CLI prints); ``Engine.reference``
computes the same with the reference model, for checking.

An engine does not change once made: ``with_models`` gives a new one that also knows more
models (imported configs, synthetic models), and nothing a study or a resolve does reaches
back into the caller's engine.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from ..catalog.catalog import Catalog
from ..catalog.constants import load_constants
from ..core.constants import Constants
from ..core.errors import ScenarioError
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
        self._no_costs = np.empty((layout.N_COST_ROWS, 0))

    def with_models(self, *models: ModelArch) -> Engine:
        """An engine that also knows ``models`` (one of the same id replaces a known one); this
        engine itself when it already knows them all as they are. The catalog, constants and
        packed accelerator tables are shared, not copied."""
        if all(m.id in self._model_index and self._models[self._model_index[m.id]] == m for m in models):
            return self
        engine = copy.copy(self)
        engine._models = list(self._models)
        engine._model_index = dict(self._model_index)
        for model in models:
            if model.id in engine._model_index:
                engine._models[engine._model_index[model.id]] = model
            else:
                engine._model_index[model.id] = len(engine._models)
                engine._models.append(model)
        engine._model_table = pack_models(engine._models)
        return engine

    def model(self, model_id: str) -> ModelArch:
        if model_id in self._model_index:
            return self._models[self._model_index[model_id]]
        return self.catalog.model(model_id)

    def resolve(self, scenario: Scenario) -> Scenario:
        """Check ids and values. The model must be one this engine knows (a model file given by
        its path needs :meth:`for_scenario`)."""
        scenario.validate()
        self.catalog.accelerator(scenario.accelerator)
        if scenario.model not in self._model_index:
            model = self.catalog.model(scenario.model)  # an unknown id raises, with suggestions
            raise ScenarioError(
                f"model {model.id!r} was loaded from a file; use Engine.for_scenario (or with_models) to evaluate it"
            )
        return scenario

    def for_scenario(self, scenario: Scenario) -> tuple[Engine, Scenario]:
        """The engine that knows the scenario's model (this one, or one that also holds a model
        loaded from the file the scenario names) and the resolved scenario."""
        engine = self
        if scenario.model not in self._model_index:
            model = self.catalog.model(scenario.model)
            engine = self.with_models(model)
            scenario = scenario.with_changes(model=model.id)
        return engine, engine.resolve(scenario)

    def warm_up(self) -> None:
        """Compile (or load from the on-disk cache) the kernels; idempotent."""
        first_model = self._models[0].id
        first_accelerator = next(iter(self._accelerator_index))
        self.evaluate([Scenario(first_model, first_accelerator)])

    def evaluate(self, scenarios: Sequence[Scenario]) -> np.ndarray:
        """Kernel outputs, one column per scenario (rows: ``results.OUTPUT_FIELDS``; read them by
        name with ``results.Outputs``). Scenarios must be resolved (known ids, valid values)."""
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
        self._evaluate_many(scenario_table, out, self._no_costs)
        return out

    def iteration_costs(self, scenarios: Sequence[Scenario]) -> np.ndarray:
        """The cost coefficients of one forward step of each scenario's replica, one column per
        scenario (rows: ``layout.COST_ROWS``), for the serving simulator's calls of
        ``kernels.iteration.request_positions`` and ``iteration_cost``. They come from the same
        kernel call as the scenario's outputs, with its batch setting the tiers' shares.
        Scenarios must be resolved (known ids, valid values)."""
        table = pack_scenarios(scenarios, self._model_index, self._accelerator_index)
        costs = np.empty((layout.N_COST_ROWS, table.shape[1]))
        self._evaluate_many(table, np.empty((layout.N_OUTPUT_ROWS, table.shape[1])), costs)
        return costs

    def iteration_cost_model(self, scenario: Scenario):
        """The reference twin of :meth:`iteration_costs` for one resolved scenario: an object whose
        ``request_positions`` and ``iteration_cost`` compute by the reference model's steps."""
        model = self.model(scenario.model)
        accelerator = self.catalog.accelerator(scenario.accelerator)
        return ReferenceModel(model, accelerator, self.constants).iteration_cost_model(scenario)

    def _evaluate_many(self, scenario_table: np.ndarray, out: np.ndarray, costs: np.ndarray) -> None:
        kernels.evaluate_many(
            scenario_table,
            self._model_table,
            self._accelerator_table,
            self._peaks,
            self._fallback,
            self._constant_vector,
            out,
            costs,
        )

    def predict(self, scenario: Scenario) -> Result:
        engine, scenario = self.for_scenario(scenario)
        return result_from_column(engine.evaluate([scenario]), 0, scenario)

    def reference(self, scenario: Scenario) -> Result:
        engine, scenario = self.for_scenario(scenario)
        model = engine.model(scenario.model)
        accelerator = engine.catalog.accelerator(scenario.accelerator)
        return ReferenceModel(model, accelerator, engine.constants).evaluate(scenario)

    @property
    def model_index(self) -> dict[str, int]:
        return dict(self._model_index)

    @property
    def accelerator_index(self) -> dict[str, int]:
        return dict(self._accelerator_index)
