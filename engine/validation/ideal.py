"""The pure-roofline twin of an engine: every efficiency at 1, no overheads, every serving
stack at 1.0. Validation runs it beside the calibrated engine to show how much of each
prediction the calibration carries."""

from __future__ import annotations

from dataclasses import replace

from ..catalog.catalog import Catalog
from ..core.accelerator import Accelerator
from ..core.constants import Constants
from ..core.sourced import Sourced
from ..physics.engine import Engine

IDEAL_DESCRIPTION = (
    "pure roofline: compute, memory, host-link and interconnect efficiency 1.0, per-layer overhead 0, "
    "no busy power floor, every serving stack at 1.0; usable memory fraction and runtime overhead kept as calibrated "
    "(they decide what fits, not how fast it runs); energy per FLOP then follows from TDP at full peak"
)


def ideal_constants(constants: Constants) -> Constants:
    """The calibrated constants with every efficiency at 1, no per-layer, host or collective
    overhead, the roofline of the whole pass (operators overlapped) and no busy power floor
    (power is idle plus the energy of the work)."""
    classes = {
        name: replace(
            values,
            compute_efficiency=1.0,
            memory_efficiency=1.0,
            link_efficiency=1.0,
            interconnect_efficiency=1.0,
            per_layer_overhead_s=0.0,
            busy_power_fraction=0.0,
            step_overhead_s=0.0,
            sequence_overhead_s=0.0,
            operator_overlap=1.0,
            collective_overhead_s=0.0,
            activation_quantization_overhead_s=0.0,
        )
        for name, values in constants.classes.items()
    }
    return replace(constants, classes=classes)


def ideal_catalog(catalog: Catalog) -> Catalog:
    """The catalog with every serving stack at the reference maturity (1.0)."""
    accelerators: dict[str, Accelerator] = {
        key: replace(
            accelerator,
            software_efficiency=Sourced(1.0, "Ideal model: no serving-stack lag"),
        )
        for key, accelerator in catalog.accelerators.items()
    }
    return Catalog(accelerators, dict(catalog.models), list(catalog.problems))


def ideal_engine(engine: Engine) -> Engine:
    return Engine(ideal_catalog(engine.catalog), ideal_constants(engine.constants))
