"""Unified memory: the accelerator holds only the share of the shared memory the OS grants it."""

from __future__ import annotations

import pytest

from accelscope.engine.core.scenario import Scenario


@pytest.mark.parametrize("accelerator_id", ["m4-max", "m3-ultra", "dgx-spark", "ryzen-ai-max-395"])
def test_capacity_is_the_share_the_os_grants(engine, accelerator_id):
    accelerator = engine.catalog.accelerator(accelerator_id)
    (tier,) = [t for t in accelerator.memory if t.placement]
    assert tier.level == "device" and tier.host_shared is not None
    assert not any(t.level == "far" for t in accelerator.memory)  # no separate host tier
    share = float(tier.host_shared)
    assert 0.0 < share < 1.0
    result = engine.predict(Scenario("llama-3.1-8b", accelerator_id))
    assert result.memory.capacity_bytes == pytest.approx(float(tier.capacity_bytes) * share, rel=1e-12)
    constants = engine.constants.for_class(accelerator.architecture_class)
    assert result.memory.usable_bytes == pytest.approx(result.memory.capacity_bytes * constants.usable_memory_fraction,
                                                       rel=1e-12)
    assert engine.reference(Scenario("llama-3.1-8b", accelerator_id)).memory.capacity_bytes == pytest.approx(
        result.memory.capacity_bytes, rel=1e-12)


def test_a_discrete_card_keeps_its_whole_memory(engine):
    accelerator = engine.catalog.accelerator("h100-sxm")
    tier = accelerator.tier("device")
    assert tier.host_shared is None
    result = engine.predict(Scenario("llama-3.1-8b", "h100-sxm"))
    assert result.memory.capacity_bytes == float(tier.capacity_bytes)
