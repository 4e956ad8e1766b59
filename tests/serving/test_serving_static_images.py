"""Fixed-batch images hold every sequence of their batch to the end: a static batch is capped
at what the KV cache holds, and the explanation says so."""

from __future__ import annotations

import pytest

from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.studies.serving.study import server_setup, simulate_served
from accelscope.engine.text.serving import serving_sentences

STATIC = ServingSpec(arrival="offline", policy="static", requests=120)

# Llama 2 70B: 80 layers, 8 KV heads of 128 in BF16, K and V: 2 x 80 x 8 x 128 x 2 B = 327,680 B
# per token, half of it on each of two TP devices.
KV_BYTES_PER_TOKEN_PER_DEVICE = 2 * 80 * 8 * 128 * 2 / 2


@pytest.fixture(scope="module")
def seventy_b(engine):
    return engine.resolve(Scenario("llama-2-70b", "h100-sxm", tp=2, batch=64, input_len=1024, output_len=256))


def test_a_static_batch_is_what_the_kv_cache_holds(engine, seventy_b):
    setup = server_setup(engine, seventy_b, STATIC)
    assert setup.kv_bytes_per_token == pytest.approx(KV_BYTES_PER_TOKEN_PER_DEVICE)
    # 1,024 + 256 tokens a sequence: the cache's tokens over 1,280, fewer than the 64 asked for.
    fitting = setup.kv_blocks_total * setup.block_size // 1280
    assert 1 <= fitting < 64
    assert setup.static_batch == setup.max_num_seqs == fitting
    assert setup.requested_static_batch == 64


def test_a_static_batch_that_fits_is_kept(engine, seventy_b):
    setup = server_setup(engine, seventy_b.with_changes(batch=8), STATIC)
    assert setup.static_batch == setup.requested_static_batch == 8


def test_the_explanation_says_the_batch_was_capped(engine, seventy_b):
    run = simulate_served(engine, seventy_b, STATIC)
    assert run.metrics.batch_max <= run.setup.static_batch
    text = "\n".join(serving_sentences(engine, run))
    assert f"Each fixed-batch image runs {run.setup.static_batch} sequences, not the scenario's 64" in text
    assert "Offline: every request was queued at the start" in text
    assert "Unstable" not in text and "met the SLO" not in text  # offline: throughput only
