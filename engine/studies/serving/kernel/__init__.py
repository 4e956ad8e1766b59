"""Compiled twin of ``..simulator_reference``: the same simulation on flat arrays, in stages
named after the reference's methods, each a module-level jitted function over one ``State``.

Every rule, event order and floating-point operation follows the reference model step for
step, but for a stretch's cost, which the kernel sums in closed form over the physics' linear
pieces where the reference adds its iterations one by one; the tests hold the two equal.
Modules, each importing only those before it: ``state`` (the arrays and their columns),
``bins``, ``queues``, ``requests``, ``records``, ``schedulers``, ``stretches``, ``iterations``,
``loop`` (the event loop and ``simulate_kernel``).
"""

from .loop import simulate_kernel

__all__ = ["simulate_kernel"]
