"""Synthetic models: derived totals against the request, hand-worked widths, and refusals."""

from __future__ import annotations

import pytest

from accelscope.engine.catalog.synthetic import HEAD_DIM, VOCAB_SIZE, dense_1t, moe_1t, synthetic_model
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics.engine import Engine


def test_1t_dense_derives_a_trillion_parameters():
    model = dense_1t()
    assert model.id == "synthetic-dense-1000b-l128-d25600"
    assert model.moe is None
    assert model.total_params == pytest.approx(1.0e12, rel=0.01)
    assert model.active_params == model.total_params


def test_1t_moe_derives_total_and_active_like_kimi_k2():
    model = moe_1t()
    assert model.id == "synthetic-moe-1000b-a32b-e384-k8-l61-d7168"
    assert (model.moe.n_routed_experts, model.moe.experts_per_token) == (384, 8)
    assert model.n_moe_layers == 61
    assert model.total_params == pytest.approx(1.0e12, rel=0.01)
    assert model.active_params == pytest.approx(32e9, rel=0.01)


def test_dense_ffn_width_by_hand():
    # 32 layers, hidden 4096: 32 heads of 128, 8 KV heads.
    layers, hidden = 32, 4096
    attention = 2 * hidden * hidden + 2 * hidden * 8 * HEAD_DIM  # q, o; k, v
    embeddings = 2 * VOCAB_SIZE * hidden  # input table and untied LM head
    norms = (2 * layers + 1) * hidden
    fixed = embeddings + norms + layers * attention
    width = round((8.0e9 - fixed) / (3 * hidden * layers))
    model = synthetic_model(8.0e9, n_layers=layers, hidden_size=hidden)
    assert (model.n_heads, model.n_kv_heads, model.head_dim) == (32, 8, 128)
    assert model.intermediate_size == width
    assert model.total_params == fixed + 3 * hidden * width * layers


def test_moe_widths_by_hand():
    # total − active = L·(E − k)·3·d·f_expert exactly (before rounding f_expert).
    layers, hidden, experts, per_token = 48, 4096, 128, 8
    model = synthetic_model(
        235e9, active_params=22e9, n_experts=experts, experts_per_token=per_token, n_layers=layers, hidden_size=hidden
    )
    expected_width = round((235e9 - 22e9) / (layers * (experts - per_token) * 3 * hidden))
    assert model.moe.expert_intermediate_size == expected_width
    assert model.total_params == pytest.approx(235e9, rel=0.005)
    assert model.active_params == pytest.approx(22e9, rel=0.005)


def test_synthetic_models_run_in_the_engine():
    for model in (dense_1t(), moe_1t()):
        engine = Engine().with_models(model)
        result = engine.predict(Scenario(model.id, "b200", batch=8, tp=8, pp=2, weight_precision="fp8"))
        assert result.fits
        assert result.itl_s > 0.0 and result.throughput_output_tok_s > 0.0


def test_equal_requests_give_equal_models():
    assert moe_1t() == moe_1t()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"active_params": 2e12, "n_experts": 8, "experts_per_token": 2}, "cannot exceed total_params"),
        ({"active_params": 1e11, "n_experts": 8, "experts_per_token": 9}, r"experts_per_token \(9\) must be below"),
        ({"active_params": 1e11, "n_experts": 8, "experts_per_token": 8}, "model is dense"),
        ({"n_experts": 8, "experts_per_token": 2}, "needs active_params"),
        ({"active_params": 1e11}, "dense model uses every parameter"),
        ({"experts_per_token": 2}, "needs n_experts > 0"),
        ({"active_params": 1e9, "n_experts": 8, "experts_per_token": 2}, "is below what attention"),
        ({"active_params": 1e11, "n_experts": 1, "experts_per_token": 1}, "at least 2 routed experts"),
    ],
)
def test_impossible_requests_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        synthetic_model(5e11, n_layers=32, hidden_size=8192, **kwargs)


def test_total_too_small_for_the_shape():
    with pytest.raises(ValueError, match="too small for 128 layers"):
        synthetic_model(1e9, n_layers=128, hidden_size=16384)


def test_hidden_size_must_fit_whole_heads():
    with pytest.raises(ValueError, match="multiple of the head dim 128"):
        synthetic_model(1e10, n_layers=32, hidden_size=4000)


def test_wrong_types_are_named():
    with pytest.raises(TypeError, match="n_layers must be a whole number"):
        synthetic_model(1e10, n_layers=32.5, hidden_size=4096)
