"""The sheet's sections: importing a module registers its section. ``positions`` and ``stage``
hold formulas several sections build (positions summed over layers; one pass through a
pipeline stage)."""

from . import communication, decode, energy, inputs, memory, moe, prefill, roofline, step, throughput  # noqa: F401

# The order they are shown in, the reference model's (engine/physics/reference/model.py: memory, then the
# phases); the order they are built in follows from their needs.
SHOWN = ("inputs", "memory", "decode", "moe", "step", "prefill", "roofline", "communication", "energy", "throughput")
