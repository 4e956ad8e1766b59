"""Today's models keep their numbers while the attention schema grows new kinds.

Pinned from the engine before the per-layer attention kinds (sparse, compressed, shared K=V,
block-sparse) were added: one model of each kind the format had then (full GQA, MLA, sliding
window with global layers, chunked, Gated DeltaNet, Mamba-2, window with sinks) at a long
context, by both faces of the engine. A change of physics that moves any of them is a change
of these models' answers, and must say so here.
"""

from __future__ import annotations

import pytest

from accelscope.engine.core.scenario import Scenario

# model, accelerator, scenario fields; then KV cache bytes, recurrent state bytes, decode KV
# bytes per device, decode FLOPs per device, prefill FLOPs per device, prefill KV bytes per
# device, ITL [s], TTFT [s]; batch 16, 32,768 prompt tokens, 1,024 generated.
PINNED = [
    ("llama-3.3-70b", "h100-sxm", {"tp": 4}, (44291850240.0, 0.0, 21811036160.0, 452489904128.0, 1.1786854751797248e+16, 53687091200.0, 0.02472231154189835, 42.70119387517968)),
    ("deepseek-r1", "h200", {"tp": 8, "weight_precision": "fp8"}, (37994102784.0, 0.0, 37419558912.0, 1277367132160.0, 1.004479807225856e+16, 92106915840.0, 0.02213400857326627, 19.228375959150323)),
    ("gemma-3-27b", "h100-sxm", {}, (51271172096.0, 0.0, 18978078720.0, 362046154752.0, 1.0762336570638336e+16, 131868917760.0, 0.028661777000175595, 60.53754801365657)),
    ("llama-4-scout-17b-16e", "h100-sxm", {"tp": 4}, (11475615744.0, 0.0, 8960114688.0, 173899939840.0, 4882935119872000.0, 49928994816.0, 0.019461597886810598, 9.409695014704205)),
    ("qwen3-next-80b-a3b", "h100-sxm", {"tp": 2}, (6643777536.0, 618135552.0, 7779581952.0, 110436233216.0, 2599695398469632.0, 21051211776.0, 0.014242252170160447, 4.519725450303873)),
    ("nemotron-h-8b", "h100-sxm", {}, (8858370048.0, 1634205696.0, 11992825856.0, 278981804032.0, 8014710695788544.0, 34548482048.0, 0.012505744901843722, 11.73649258567753)),
    ("gpt-oss-120b", "h100-sxm", {}, (20006830080.0, 0.0, 19706019840.0, 321883176960.0, 7327820378013696.0, 67872227328.0, 0.04258943349748551, 10.713987784246868)),
]


def _figures(result) -> tuple[float, ...]:
    return (
        result.memory.kv_cache_bytes, result.memory.recurrent_state_bytes, result.decode.kv_bytes_per_device,
        result.decode.flops_per_device, result.prefill.flops_per_device, result.prefill.kv_bytes_per_device,
        result.itl_s, result.ttft_s,
    )


@pytest.mark.parametrize(("model", "accelerator", "fields", "pinned"), PINNED, ids=[p[0] for p in PINNED])
def test_todays_models_keep_their_numbers(engine, model, accelerator, fields, pinned):
    scenario = Scenario(model, accelerator, batch=16, input_len=32768, output_len=1024, **fields)
    assert _figures(engine.predict(scenario)) == pytest.approx(pinned, rel=1e-12)
    assert _figures(engine.reference(scenario)) == pytest.approx(pinned, rel=1e-9)


# The serving simulator's iteration cost of the same replicas, pinned from the engine before the
# attention groups were charged per request (sparse, compressed, global): one mixed iteration of
# 15 decode steps at contexts 33,000 + 7 i and a 2,048-token prefill chunk after 4,096 cached
# tokens, then the 15 decode steps alone: (duration [s], energy [J]) of each. Bit for bit.
PINNED_ITERATIONS = [
    ("llama-3.3-70b", "h100-sxm", {"tp": 4}, (0.14417321479063733, 342.34724491977533, 0.03162078026573017, 69.94516594779513)),
    ("deepseek-r1", "h200", {"tp": 8, "weight_precision": "fp8"}, (0.0596789287566067, 273.75469381395754, 0.02107194149599656, 93.22226917828878)),
    ("gemma-3-27b", "h100-sxm", {}, (0.1730249145315281, 117.23789958464134, 0.03881003932572432, 21.46195174712555)),
    ("qwen3-next-80b-a3b", "h100-sxm", {"tp": 2}, (0.03710213671033069, 41.03496320162574, 0.013635589327738847, 15.080961796479164)),
]


@pytest.mark.parametrize(("model", "accelerator", "fields", "pinned"), PINNED_ITERATIONS, ids=[p[0] for p in PINNED_ITERATIONS])
def test_todays_models_keep_their_iteration_costs(engine, model, accelerator, fields, pinned):
    from accelscope.engine.physics.kernels import iteration

    scenario = engine.resolve(Scenario(model, accelerator, batch=16, input_len=32768, output_len=1024, **fields))
    cost = engine.iteration_costs([scenario])[:, 0]
    decodes = [(33_000 + 7 * i, 1, True) for i in range(15)]
    mixed = [0.0, 0.0, 0.0]
    for request in [*decodes, (4096, 2048, False)]:
        mixed = [total + part for total, part in zip(mixed, iteration.request_positions(cost, *request), strict=True)]
    duration, energy = iteration.iteration_cost(cost, 15.0 + 2048.0, 16.0, *mixed, 2048.0)
    decode = [sum(iteration.request_positions(cost, *request)[k] for request in decodes) for k in (1, 2)]
    decode_duration, decode_energy = iteration.iteration_cost(cost, 15.0, 15.0, 0.0, *decode, 0.0)
    assert (duration, energy, decode_duration, decode_energy) == pinned
