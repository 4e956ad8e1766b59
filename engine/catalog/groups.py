"""Which group an accelerator is listed under: datacenter GPUs, desk and workstation GPUs,
unified-memory machines, TPUs and other ASICs, dataflow and SRAM machines.

With forty devices a flat list no longer reads; people look for a device by the kind of machine
it sits in. The group follows from the catalog's own fields, in this order:

1. the file's ``group``, where it states one: a desk card (GeForce, RTX PRO) looks like a
   datacenter PCIe card in every field the model reads (PCIe-only scale-up, GDDR memory);
2. unified memory (a device tier shared with the host, ``host_shared``): Apple, DGX Spark,
   Strix Halo;
3. a SIMT GPU: a datacenter GPU;
4. wafer-scale, deterministic-pipeline and reconfigurable-dataflow machines, and many-core
   chips whose model lives in on-chip SRAM (no DRAM device tier): dataflow and SRAM machines;
5. the rest (systolic arrays, many-core chips that stream from DRAM like a GPU): TPUs and ASICs.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..core.accelerator import Accelerator

# In the order they are listed.
GROUPS: tuple[str, ...] = ("datacenter-gpu", "desk", "unified", "asic", "dataflow")

GROUP_LABELS: dict[str, str] = {
    "datacenter-gpu": "Datacenter GPUs",
    "desk": "Desk and workstation GPUs",
    "unified": "Unified memory",
    "asic": "TPUs and ASICs",
    "dataflow": "Dataflow and SRAM machines",
}

_DATAFLOW_CLASSES: tuple[str, ...] = ("wafer-scale", "deterministic-pipeline", "dataflow-rdu")


def accelerator_group(accelerator: Accelerator) -> str:
    """The group ``accelerator`` is listed under, one of :data:`GROUPS` (rules in the module's doc)."""
    if accelerator.group:
        return accelerator.group
    device = accelerator.tier("device")
    if device is not None and device.host_shared is not None:
        return "unified"
    architecture_class = accelerator.architecture_class
    if architecture_class == "gpu-simt":
        return "datacenter-gpu"
    if architecture_class in _DATAFLOW_CLASSES or (architecture_class == "many-core-sram" and device is None):
        return "dataflow"
    return "asic"


def grouped(accelerators: Iterable[Accelerator]) -> tuple[tuple[str, tuple[Accelerator, ...]], ...]:
    """(group, its accelerators in the order given) for each group that has any, in :data:`GROUPS` order."""
    members: dict[str, list[Accelerator]] = {group: [] for group in GROUPS}
    for accelerator in accelerators:
        members[accelerator_group(accelerator)].append(accelerator)
    return tuple((group, tuple(found)) for group, found in members.items() if found)
