"""Step 5, power and energy of one device: idle power plus the dynamic energy of the work (its
FLOPs, the bytes it reads from each memory tier, the bytes it sends over links) over the time
it takes, at least the class's busy floor (a share of TDP) and at most the TDP.

Units: W, J, J/FLOP, J/byte, seconds.
"""

from __future__ import annotations

from ...core.accelerator import Accelerator
from ...core.constants import ClassConstants, Constants
from ..layout import POWER_CAP_WARNING_RATIO
from .memory import TierReads
from .stage import StagePass


class Power:
    def __init__(self, accelerator: Accelerator, cls: ClassConstants, constants: Constants, peak: float,
                 tiers: TierReads) -> None:
        self.tdp = float(accelerator.tdp_W)
        self.idle = float(accelerator.idle_W)
        # Set so that sustained dense products alone reach TDP.
        self.energy_per_flop = (float(accelerator.tdp_W) - float(accelerator.idle_W)) / (cls.compute_efficiency * peak)
        self.energy_per_link_byte = constants.interconnect_energy_J_per_byte
        # A device executing any phase draws at least this, whatever the work (clocks up, memory
        # PHYs and cores powered); 0 for classes without a published figure.
        self.busy_floor = cls.busy_power_fraction * self.tdp
        self.tiers = tiers

    def dynamic_energy(self, stage_pass: StagePass) -> float:
        """Energy of one stage pass's work, above idle."""
        return (stage_pass.flops * self.energy_per_flop + self.tiers.energy(stage_pass.bytes_by_tier)
                + stage_pass.link_bytes * self.energy_per_link_byte)

    def demand(self, dynamic: float, time: float) -> float:
        """Mean power the work asks for: idle plus its dynamic energy over its time."""
        return self.idle + dynamic / time

    def power(self, dynamic: float, time: float) -> float:
        """Mean power of one device over a phase: its demand, between the busy floor and TDP."""
        return min(self.tdp, max(self.busy_floor, self.demand(dynamic, time)))

    def capped(self, dynamic: float, time: float) -> bool:
        """Whether the demand is clearly above the TDP (and the cap binds)."""
        return self.demand(dynamic, time) > POWER_CAP_WARNING_RATIO * self.tdp
