"""Each kernel helper equals its reference twin on drawn arguments: to 1e-9 for real numbers,
exactly for integers and flags. Run compiled and as plain Python (``py_func``), so a helper
that only numba gets right, or only Python, is caught here rather than deep in a scenario.

Where the kernel takes numbers the reference takes as an object (a class's constants, an
accelerator, a list of free tier space), the kernel side is called through a small adapter
that unpacks them as ``evaluate_many`` does.
"""

from __future__ import annotations

import math
import random

import numba
import pytest

from accelscope.engine.core.model import GROUP_KINDS
from accelscope.engine.core.precision import PRECISIONS, UNQUANTISED_BYTES, bytes_per_element
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.kernels import helpers
from accelscope.engine.physics.reference import ReferenceModel, closed_forms, memory, network, stage
from accelscope.engine.physics.reference.energy import Power

RELATIVE = 1e-9
DRAWS = 300


def assert_equal(expected, actual, context) -> None:
    if isinstance(expected, tuple | list):
        assert len(expected) == len(actual), context
        for want, got in zip(expected, actual, strict=True):
            assert_equal(want, got, context)
    elif isinstance(expected, bool | int) and not isinstance(expected, float):
        assert actual == expected and float(actual).is_integer(), (context, expected, actual)
    else:
        scale = max(abs(expected), abs(actual), 1e-300)
        assert abs(expected - actual) <= RELATIVE * scale, (context, expected, actual)


_ENGINE = []  # the session's engine, for the draws (which take only a random generator)


@pytest.fixture(autouse=True, scope="module")
def _share_engine(engine):
    _ENGINE.append(engine)
    yield
    _ENGINE.clear()


def engine_once():
    return _ENGINE[0]


def draw_scenario(rng: random.Random) -> Scenario:
    engine = engine_once()
    model = rng.choice(list(engine.catalog.models.values()))
    tp = rng.choice([1, 2, 3, 4, 8, 16, 64])
    return Scenario(
        model=model.id,
        accelerator=rng.choice(list(engine.catalog.accelerators)),
        batch=rng.choice([1, 3, 64, rng.randint(1, 5000)]),
        input_len=rng.choice([1, 100, 8192, rng.randint(1, 300_000)]),
        output_len=rng.choice([1, 2, 256, rng.randint(1, 20_000)]),
        weight_precision=rng.choice(PRECISIONS),
        activation_precision=rng.choice(PRECISIONS),
        kv_precision=rng.choice(PRECISIONS),
        tp=tp,
        pp=rng.choice([1, 2, 3, 8]),
        ep=rng.choice([1, 2, tp]) if model.moe else 1,
        dp=rng.choice([1, 2]),
        offload=rng.choice([0.0, 0.0, 0.5, 1.0]),
        kv_offload=rng.choice([0.0, 0.0, 0.3, 1.0]),
    )


def setup_of(scenario: Scenario):
    engine = engine_once()
    model = engine.model(scenario.model)
    accelerator = engine.catalog.accelerator(scenario.accelerator)
    return ReferenceModel(model, accelerator, engine.constants).setup(scenario)


# ---- adapters: the kernel side of twins whose arguments differ --------------------------------


def kernel_token_imbalance(assignments, ep):
    return helpers.token_imbalance(assignments, ep, helpers.expected_max_standard_normal(ep))


def kernel_experts_touched_busiest_device(experts_per_device, touch_probability, ep):
    z_ep = helpers.expected_max_standard_normal(ep)
    return helpers.experts_touched_busiest_device(experts_per_device, touch_probability, ep, z_ep)


def kernel_chunk_reread_positions(tokens, chunk, window):
    return helpers.chunk_reread_positions(math.ceil(tokens / chunk), chunk, window)


def reference_network(accelerator, group, efficiency, peers):
    net = network.network(accelerator, group, efficiency, peers)
    return net.bandwidth, net.latency, net.crosses_domain


def kernel_network(accelerator, group, efficiency, peers):
    up, out = accelerator.interconnect, accelerator.scale_out
    peer = up.peer_bandwidth_per_direction_Bps
    return helpers.network(
        group, float(up.domain_size), out is not None, float(up.bandwidth_per_direction_Bps), float(up.latency_s),
        float(out.bandwidth_per_direction_Bps) if out else 0.0, float(out.latency_s) if out else 0.0, efficiency,
        float(peer) if peer is not None else 0.0, peers,
    )


def reference_fill(free, amount):
    """(share of tier 0, of tier 1, free space left in tier 0, in tier 1), 0 for a missing tier 1."""
    left = list(free)
    shares = memory.fill(left, amount)
    if len(free) == 1:
        return shares[0], 0.0, left[0], 0.0
    return shares[0], shares[1], left[0], left[1]


def kernel_fill(free, amount):
    return helpers.fill_tiers(free[0], free[1] if len(free) > 1 else 0.0, len(free), amount)


def reference_tp_needed(scenario):
    engine = engine_once()
    reference = ReferenceModel(engine.model(scenario.model), engine.catalog.accelerator(scenario.accelerator),
                               engine.constants)
    ep = scenario.ep if reference.model.moe else 1
    return memory.tp_needed(reference.model, engine.constants, reference.memory, scenario, ep,
                            reference.memory.offload(scenario))


def kernel_tp_needed(scenario):
    """The arguments evaluate_many passes, from the model's and the accelerator's figures."""
    engine = engine_once()
    m = engine.model(scenario.model)
    device = memory.DeviceMemory(engine.catalog.accelerator(scenario.accelerator),
                                 engine.constants.for_class(engine.catalog.accelerator(scenario.accelerator)
                                                            .architecture_class))
    s, tp, pp = scenario, scenario.tp, scenario.pp
    ep = s.ep if m.moe else 1
    p_w, p_a, p_kv = (bytes_per_element(p) for p in (s.weight_precision, s.activation_precision, s.kv_precision))
    p_hi = max(p_w, UNQUANTISED_BYTES)
    p_fixed = UNQUANTISED_BYTES if m.native_scope_keeps_wide(s.weight_precision) else p_w
    router = m.router_params_total
    fixed = ((m.block_params_fixed - router) * p_fixed + router * p_hi) / (tp * pp)
    vocab = (m.embedding_params + (0 if m.tied_embeddings else m.lm_head_params)) * p_hi / (tp * pp)
    norms = m.norm_params * p_hi / pp
    experts = (m.n_moe_layers / pp * math.ceil(m.moe.n_routed_experts / ep) * (m.expert_params * p_w / (tp / ep))
               if m.moe else 0.0)
    positions = closed_forms.AttentionLayers.of(m).stored(s.input_len + s.output_len)
    recurrent = closed_forms.RecurrentLayers.of(m)
    context = s.input_len + s.output_len
    groups = [0.0] * 12
    for g in m.attention_groups:
        slot = GROUP_KINDS.index(g.kind)
        groups[3 * slot] = g.layers * p_kv * g.elements * closed_forms.group_stored(context, g.ratio, g.window)
        groups[3 * slot + 1] = float(g.shards)
        groups[3 * slot + 2] = g.layers * g.index_key_bytes * closed_forms.group_index_keys(context, g.index_stride)
    return helpers.smallest_fitting_tp(
        tp, device.usable, device.offload(s), fixed + vocab, norms, experts, m.kv_shards / tp, m.kv_shards,
        p_kv * m.kv_elements_per_token_per_layer, p_a, m.hidden_size,
        (m.attention_activation_width + 2 * m.mean_ffn_width_per_token) / tp,
        m.vocab_size * engine.constants.logits_bytes_per_element / tp, device.runtime_overhead,
        min(s.input_len, engine.constants.prefill_chunk_tokens), positions, pp, device.kv_offload(s),
        (float(recurrent.n_deltanet), recurrent.deltanet_state_bytes, float(recurrent.deltanet_shards),
         float(recurrent.n_mamba), recurrent.mamba_state_bytes, float(recurrent.mamba_shards)),
        tuple(groups),
    )


def kernel_shard_share(shards, tp):
    return helpers.shard_share(float(shards), shards / tp)


def reference_recurrent_per_device(layers, deltanet_value, mamba_value, tp):
    return layers.per_device(deltanet_value, mamba_value, tp)


def kernel_recurrent_per_device(layers, deltanet_value, mamba_value, tp):
    return helpers.recurrent_per_device(
        float(layers.n_deltanet), deltanet_value, float(layers.deltanet_shards), layers.deltanet_shards / tp,
        float(layers.n_mamba), mamba_value, float(layers.mamba_shards), layers.mamba_shards / tp,
    )


def _recurrent_args(rng):
    engine = engine_once()
    hybrids = [m for m in engine.catalog.models.values() if m.n_deltanet_layers or m.n_mamba_layers]
    model = rng.choice([*hybrids, rng.choice(list(engine.catalog.models.values()))])
    return (closed_forms.RecurrentLayers.of(model), rng.uniform(0, 1e8), rng.uniform(0, 1e8),
            rng.choice([1, 2, 3, 8, 64, 128, 1000]))


def kernel_layer_overhead_s(cls, activation_bytes):
    return helpers.layer_overhead_s(cls.per_layer_overhead_s, cls.activation_quantization_overhead_s,
                                    activation_bytes)


def reference_point_to_point(setup, tokens):
    return setup.communication.point_to_point(tokens)


def kernel_point_to_point(setup, tokens):
    c = setup.communication
    per_token = setup.model.hidden_size * c.activation_bytes / c.pp_network.bandwidth
    return helpers.point_to_point(tokens, setup.layout.pp, per_token, c.pp_network.latency, c.collective)


def reference_power(power: Power, dynamic, time):
    return power.power(dynamic, time), power.demand(dynamic, time)


def kernel_power(power: Power, dynamic, time):
    return helpers.power(power.idle, power.busy_floor, power.tdp, dynamic, time)


# ---- what to draw -----------------------------------------------------------------------------


def _positions_args(rng):
    return (rng.randint(0, 60), rng.choice([0, 0, rng.randint(1, 20)]), rng.choice([0, 512, 4096]),
            rng.choice([0, 0, rng.randint(1, 20)]), rng.choice([0, 8192]), rng.choice([0.0, 1.0, 9.5, 7000.0,
                                                                                       rng.uniform(0, 1e6)]))


def _network_args(rng):
    accelerator = rng.choice(list(engine_once().catalog.accelerators.values()))
    group = rng.choice([1, 2, 4, 8, 9, 64, 72, 1000])
    return accelerator, group, rng.uniform(0.5, 1.0), rng.choice([1, group - 1])


def _fill_args(rng):
    free = [rng.choice([0.0, -5.0, rng.uniform(0, 1e11)]) for _ in range(rng.choice([1, 2]))]
    return free, rng.choice([0.0, rng.uniform(0, 2e11)])


def _class_args(rng):
    engine = engine_once()
    return (engine.constants.for_class(rng.choice(list(engine.constants.classes))),
            bytes_per_element(rng.choice(PRECISIONS)))


def _power_args(rng):
    setup = setup_of(draw_scenario(rng))
    return setup.power, rng.choice([0.0, rng.uniform(0, 1e4)]), rng.uniform(1e-6, 10.0)


TWINS = [
    pytest.param(closed_forms.inverse_normal_cdf, helpers.inverse_normal_cdf,
                 lambda rng: (rng.choice([rng.uniform(1e-12, 0.02425), rng.uniform(0.02425, 0.97575),
                                          rng.uniform(0.97575, 1 - 1e-12)]),), id="inverse_normal_cdf"),
    pytest.param(closed_forms.expected_max_standard_normal, helpers.expected_max_standard_normal,
                 lambda rng: (rng.randint(0, 5000),), id="expected_max_standard_normal"),
    pytest.param(closed_forms.token_imbalance, kernel_token_imbalance,
                 lambda rng: (rng.choice([0.0, 1.0, rng.uniform(0, 1e6)]), rng.choice([1, 2, 8, 64, 257])),
                 id="token_imbalance"),
    pytest.param(closed_forms.experts_touched_busiest_device, kernel_experts_touched_busiest_device,
                 lambda rng: (rng.randint(0, 300), rng.random(), rng.choice([1, 2, 8, 64])),
                 id="experts_touched_busiest_device"),
    pytest.param(closed_forms.causal_positions, helpers.causal_positions,
                 lambda rng: (rng.randint(0, 10**6), rng.choice([0, 1, 4096, rng.randint(1, 10**5)])),
                 id="causal_positions"),
    pytest.param(closed_forms.chunked_causal_positions, helpers.chunked_causal_positions,
                 lambda rng: (rng.randint(0, 10**6), rng.choice([1, 8192, rng.randint(1, 10**5)])),
                 id="chunked_causal_positions"),
    pytest.param(closed_forms.chunk_reread_positions, kernel_chunk_reread_positions,
                 lambda rng: (rng.randint(1, 10**6), rng.choice([1, 8192, rng.randint(1, 10**5)]),
                              rng.choice([0, 4096, rng.randint(1, 10**5)])), id="chunk_reread_positions"),
    pytest.param(closed_forms.stored_positions, helpers.stored_positions, _positions_args, id="stored_positions"),
    pytest.param(closed_forms.attended_positions, helpers.attended_positions, _positions_args,
                 id="attended_positions"),
    pytest.param(closed_forms.capped_floor_sum, helpers.capped_floor_sum,
                 lambda rng: (rng.randint(0, 10**6), rng.choice([1, 4, 128, rng.randint(1, 1000)]),
                              rng.choice([0, 0, 512, 2048, rng.randint(1, 10**5)])), id="capped_floor_sum"),
    pytest.param(closed_forms.group_entries, helpers.group_entries,
                 lambda rng: (rng.choice([0, 1, 9.5, 131072, rng.uniform(0, 1e6)]), rng.choice([1, 4, 128])),
                 id="group_entries"),
    pytest.param(closed_forms.group_stored, helpers.group_stored,
                 lambda rng: (rng.choice([0, 1, 9.5, 131072, rng.uniform(0, 1e6)]), rng.choice([1, 4, 128]),
                              rng.choice([0, 128, 4096])), id="group_stored"),
    pytest.param(closed_forms.group_attended, helpers.group_attended,
                 lambda rng: (rng.choice([0, 1, 9.5, 131072, rng.uniform(0, 1e6)]), rng.choice([1, 4, 128]),
                              rng.choice([0, 128]), rng.choice([0, 512, 2048])), id="group_attended"),
    pytest.param(closed_forms.group_index_keys, helpers.group_index_keys,
                 lambda rng: (rng.choice([0, 1, 9.5, 131072, rng.uniform(0, 1e6)]), rng.choice([0, 1, 4, 128])),
                 id="group_index_keys"),
    pytest.param(closed_forms.group_prompt_attended, helpers.group_prompt_attended,
                 lambda rng: (rng.randint(0, 10**6), rng.choice([1, 4, 128]), rng.choice([0, 128, 4096]),
                              rng.choice([0, 512, 2048])), id="group_prompt_attended"),
    pytest.param(reference_network, kernel_network, _network_args, id="network"),
    pytest.param(reference_fill, kernel_fill, _fill_args, id="fill_tiers"),
    pytest.param(reference_tp_needed, kernel_tp_needed, lambda rng: (draw_scenario(rng),), id="smallest_fitting_tp"),
    pytest.param(closed_forms.shard_share, kernel_shard_share,
                 lambda rng: (rng.choice([0, 1, 16, 32, 112, 128]), rng.choice([1, 2, 3, 8, 64, 1000])),
                 id="shard_share"),
    pytest.param(reference_recurrent_per_device, kernel_recurrent_per_device, _recurrent_args,
                 id="recurrent_per_device"),
    pytest.param(stage.execution_time, helpers.execution_time,
                 lambda rng: (*(rng.choice([0.0, rng.uniform(0, 1)]) for _ in range(4)), rng.choice([0.0, 0.5, 1.0])),
                 id="execution_time"),
    pytest.param(stage.bound_of, helpers.bound_of,
                 lambda rng: tuple(rng.choice([0.0, 0.5, rng.random()]) for _ in range(4)), id="bound_of"),
    pytest.param(closed_forms.layer_overhead_s, kernel_layer_overhead_s, _class_args, id="layer_overhead_s"),
    pytest.param(reference_point_to_point, kernel_point_to_point,
                 lambda rng: (setup_of(draw_scenario(rng)), rng.choice([1.0, rng.uniform(0, 1e5)])),
                 id="point_to_point"),
    pytest.param(reference_power, kernel_power, _power_args, id="power"),
]


@pytest.mark.parametrize("reference_fn, kernel_fn, draw", TWINS)
def test_helper_twins_agree(reference_fn, kernel_fn, draw):
    rng = random.Random(20261125)
    for _ in range(DRAWS if draw is not _power_args else DRAWS // 5):
        arguments = draw(rng)
        assert_equal(reference_fn(*arguments), kernel_fn(*arguments), arguments)


def test_every_helper_has_a_twin():
    """A helper added to kernels/helpers.py needs its line in TWINS (stage_pass has its own tests
    in test_iteration.py, through the cost vector that holds its coefficients)."""
    compiled = {name for name, value in vars(helpers).items() if isinstance(value, numba.core.dispatcher.Dispatcher)}
    covered = {param.id for param in TWINS} | {"stage_pass"}
    assert compiled == covered


@pytest.mark.parametrize("reference_fn, kernel_fn, draw", [t for t in TWINS if t.id in (
    "causal_positions", "chunked_causal_positions", "stored_positions", "attended_positions", "execution_time",
    "bound_of", "expected_max_standard_normal")])
def test_helper_twins_agree_as_plain_python(reference_fn, kernel_fn, draw):
    """The same helpers run by the interpreter (numba's ``py_func``), as NUMBA_DISABLE_JIT runs them."""
    rng = random.Random(7)
    for _ in range(50):
        arguments = draw(rng)
        assert_equal(reference_fn(*arguments), kernel_fn.py_func(*arguments), arguments)
