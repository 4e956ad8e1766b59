"""The cost of one serving iteration: the kernels equal the reference on drawn scenarios and
drawn iterations (1e-9), JIT on and off; and an iteration that does what the static batch does
costs what the static engine says, worked by hand below.

Hand checks (the iteration-cost rules of engine/physics/reference/iteration.py): with every prompt of a static batch of N prefilled
in one iteration (N·I ≤ the prefill chunk, so one chunk), the iteration is the static prefill of
one wave: its duration is the TTFT and its energy the prefill's power x time x devices. A
decode-only iteration of N requests each at context c = I + O/2 − 1 decodes the token at
position I + O/2, the static decode step's mean context, so for a model whose layers all attend
to the whole context its duration is the static ITL and its energy the decode step's.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from accelscope.engine.core.precision import PRECISIONS
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.physics import layout
from accelscope.engine.physics.kernels import helpers, iteration
from accelscope.engine.physics.reference import ReferenceModel

RELATIVE = 1e-9


def close(expected: float, actual: float, relative: float = RELATIVE) -> bool:
    return abs(expected - actual) <= relative * max(abs(expected), abs(actual), 1e-300)


def cost_model(engine, scenario):
    model = engine.model(scenario.model)
    return ReferenceModel(model, engine.catalog.accelerator(scenario.accelerator), engine.constants
                          ).iteration_cost_model(scenario)


def draw_scenarios(engine, count: int, seed: int) -> list[Scenario]:
    rng = random.Random(seed)
    models = list(engine.catalog.models.values())
    scenarios = []
    for _ in range(count):
        model = rng.choice(models)
        tp = rng.choice([1, 1, 2, 4, 8, 3])
        scenarios.append(engine.resolve(Scenario(
            model=model.id,
            accelerator=rng.choice(list(engine.catalog.accelerators)),
            batch=rng.choice([1, 8, 64, rng.randint(1, 2000)]),
            input_len=rng.choice([128, 2000, rng.randint(1, 100_000)]),
            output_len=rng.choice([2, 256, rng.randint(1, 8000)]),
            weight_precision=rng.choice(PRECISIONS),
            activation_precision=rng.choice(PRECISIONS),
            kv_precision=rng.choice(PRECISIONS),
            tp=tp,
            pp=rng.choice([1, 1, 2, 4]),
            ep=rng.choice([1, tp]) if model.moe else 1,
            dp=rng.choice([1, 2]),
            offload=rng.choice([0.0, 0.0, 0.5]),
            kv_offload=rng.choice([0.0, 0.0, 0.4]),
        )))
    return scenarios


def draw_requests(rng: random.Random) -> list[tuple[int, int, bool]]:
    """(context before, new tokens, is a decode step) of the requests of one iteration."""
    requests = []
    for _ in range(rng.choice([1, 3, 40, 300])):
        if rng.random() < 0.7:
            requests.append((rng.randint(1, 200_000), 1, True))
        else:
            requests.append((rng.choice([0, rng.randint(0, 100_000)]), rng.randint(1, 9000), False))
    return requests


def sums(request_positions, requests) -> tuple[float, float, float, float, float, float]:
    """(tokens, sequences, the three position sums, prompt tokens) of an iteration's requests:
    the arguments of iteration_cost."""
    totals = np.zeros(3)
    for request in requests:
        totals += request_positions(*request)
    prompt_tokens = float(sum(n for _, n, decode in requests if not decode))
    return (float(sum(n for _, n, _ in requests)), float(len(requests)), *map(float, totals), prompt_tokens)


@pytest.fixture(scope="module")
def drawn(engine):
    scenarios = draw_scenarios(engine, 150, seed=18)
    return scenarios, engine.iteration_costs(scenarios)


def test_every_cost_row_is_written(engine, drawn):
    scenarios, _ = drawn
    from accelscope.engine.physics.kernels import evaluate_many
    from accelscope.engine.physics.pack import pack_scenarios

    table = pack_scenarios(scenarios, engine.model_index, engine.accelerator_index)
    out = np.empty((layout.N_OUTPUT_ROWS, len(scenarios)))
    costs = np.full((layout.N_COST_ROWS, len(scenarios)), np.nan)
    evaluate_many(table, engine._model_table, engine._accelerator_table, engine._peaks, engine._fallback,
                  engine._constant_vector, out, costs)
    unwritten = [name for row, (name, _) in enumerate(layout.COST_ROWS) if np.isnan(costs[row]).any()]
    assert not unwritten
    assert np.isfinite(costs).all()


def test_asking_for_costs_changes_no_output(engine, drawn):
    scenarios, _ = drawn
    from accelscope.engine.physics.pack import pack_scenarios

    table = pack_scenarios(scenarios, engine.model_index, engine.accelerator_index)
    with_costs = np.empty((layout.N_OUTPUT_ROWS, len(scenarios)))
    engine._evaluate_many(table, with_costs, np.empty((layout.N_COST_ROWS, len(scenarios))))
    np.testing.assert_array_equal(with_costs, engine.evaluate(scenarios))


def test_request_positions_twins_agree(engine, drawn):
    scenarios, costs = drawn
    rng = random.Random(5)
    for column, scenario in enumerate(scenarios):
        reference = cost_model(engine, scenario)
        for request in draw_requests(rng)[:20]:
            want = reference.request_positions(*request)
            got = iteration.request_positions(costs[:, column], *request)
            assert all(close(w, g) for w, g in zip(want, got, strict=True)), (scenario, request, want, got)


def test_iteration_cost_twins_agree(engine, drawn):
    scenarios, costs = drawn
    rng = random.Random(6)
    for column, scenario in enumerate(scenarios):
        reference = cost_model(engine, scenario)
        cost = costs[:, column]
        requests = draw_requests(rng)
        for carried in (sums(reference.request_positions, requests),
                        sums(functools.partial(iteration.request_positions, cost), requests),
                        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)):
            want = reference.iteration_cost(*carried)
            got = iteration.iteration_cost(cost, *carried)
            assert close(want[0], got[0]) and close(want[1], got[1]), (scenario, carried, want, got)


WINDOWED_MODELS = ("gemma-3-4b", "gpt-oss-20b", "ministral-8b", "llama-4-scout-17b-16e", "llama-3.1-8b")


def decode_contexts(layers, rng: random.Random) -> list[int]:
    """Contexts around each window and attention chunk edge (the token sits at c + 1), and others."""
    contexts = [0, 1, 2, rng.randint(0, 300_000)]
    for edge in (layers.window, layers.attention_chunk):
        if edge:
            contexts += [max(edge + offset, 0) for offset in (-3, -2, -1, 0, 1, 2)]
    return contexts


def decode_faces(engine, scenarios, costs):
    """(scenario, attention layers, and per face: request_positions(c, n, decode), decode_positions(c))."""
    for column, scenario in enumerate(scenarios):
        reference = cost_model(engine, scenario)
        cost = costs[:, column]
        yield scenario, reference.setup.attention, (
            ("reference", reference.request_positions, reference.decode_positions),
            ("kernel", functools.partial(iteration.request_positions, cost),
             functools.partial(iteration.decode_positions, cost)),
            ("kernel as Python", functools.partial(iteration.request_positions.py_func, cost),
             functools.partial(iteration.decode_positions.py_func, cost)),
        )


@pytest.fixture(scope="module")
def windowed(engine, drawn):
    """The drawn scenarios and one replica of each model with windows or attention chunks. Not
    the models with attention groups: decode_positions is not theirs (their decode cost bends
    and steps with the context, and the simulator runs no stretches over them)."""
    scenarios = [s for s in drawn[0][:40] if not engine.model(s.model).attention_groups] + [engine.resolve(Scenario(model, "h100-sxm", batch=4, tp=8))
                                       for model in WINDOWED_MODELS]
    return scenarios, engine.iteration_costs(scenarios)


def test_decode_positions_twins_agree(engine, windowed):
    """Kernel (compiled and as Python) and reference give the same run, exactly: whole or
    half-whole numbers, and the step count."""
    rng = random.Random(8)
    for scenario, layers, faces in decode_faces(engine, *windowed):
        for context in decode_contexts(layers, rng):
            runs = [decode(context) for _, _, decode in faces]
            for (face, _, _), run in zip(faces, runs, strict=True):
                assert (float(run[0]), float(run[1]), int(run[2])) == (
                    float(runs[0][0]), float(runs[0][1]), int(runs[0][2])), (scenario, context, face, runs)


def test_a_decode_run_adds_its_increment_for_exactly_its_steps(engine, windowed):
    """positions + k x increment is request_positions' decode at c + k, to the bit, for every k
    up to steps, and no longer at steps + 1 (the bound is the first window or chunk edge)."""
    rng = random.Random(9)
    for scenario, layers, faces in decode_faces(engine, *windowed):
        for context in decode_contexts(layers, rng):
            for face, positions_of, decode in faces:
                positions, increment, steps = decode(context)
                assert positions_of(context, 1, True) == (0.0, positions, positions), (scenario, context, face)
                bounded = steps < iteration.UNBOUNDED_STEPS
                checked = sorted({0, 1, 2, 7} | ({steps - 1, steps} if bounded else {1000}))
                for k in [k for k in checked if 0 <= k <= (steps if bounded else 1000)]:
                    _, attended, read = positions_of(context + k, 1, True)
                    assert attended == read == positions + k * increment, (scenario, context, face, k)
                if bounded:
                    assert steps >= 1
                    assert positions_of(context + steps + 1, 1, True)[1] != positions + (steps + 1) * increment, (
                        scenario, context, face, steps)
                else:
                    assert not (layers.n_window and context + 1 < layers.window)
                    assert not (layers.n_chunked and context + 1 <= layers.attention_chunk)


def test_a_decode_iteration_from_its_terms_costs_what_iteration_cost_says_to_the_bit(engine, drawn):
    """decode_iteration_cost over decode_iteration_terms is iteration_cost(cost, n, n, 0, D, D, 0)
    exactly, compiled and as Python, on every drawn scenario (MoE and EP, pipelines, two near
    tiers, offload, hybrids) for batches of 1 to 1,000 decode steps."""
    scenarios, costs = drawn
    # The hybrids' recurrent state and step FLOPs enter the terms too.
    hybrids = [engine.resolve(case) for case in HAND_CASES if engine.model(case.model).n_deltanet_layers + engine.model(case.model).n_mamba_layers]
    assert hybrids
    scenarios = [*scenarios, *hybrids]
    costs = np.concatenate([costs, engine.iteration_costs(hybrids)], axis=1)
    rng = random.Random(10)
    terms = np.full((2, iteration.DECODE_TERMS), np.nan)
    faces = (
        (iteration.decode_iteration_terms, iteration.decode_iteration_cost, iteration.iteration_cost),
        (iteration.decode_iteration_terms.py_func, iteration.decode_iteration_cost.py_func,
         iteration.iteration_cost.py_func),
    )
    for column, scenario in enumerate(scenarios):
        cost = costs[:, column]
        for sequences in (1, 2, 3, rng.randint(4, 64), rng.randint(65, 1000)):
            for terms_of, cost_of, full_cost in faces:
                terms[:] = np.nan
                terms_of(cost, sequences, terms, 1)
                assert np.isfinite(terms[1]).all() and np.isnan(terms[0]).all()
                for _ in range(3):
                    positions = rng.randint(sequences, 200_000 * sequences) / rng.choice([1, 2])
                    want = full_cost(cost, sequences, sequences, 0.0, positions, positions, 0)
                    assert cost_of(terms, 1, positions) == want, (scenario, sequences, positions)


def test_a_decode_stretch_sums_in_closed_form_what_its_iterations_add_up_to(engine, drawn):
    """stretch_sums, from the table of the stretch's linear pieces, is the sum of
    decode_iteration_cost over its first iterations (to 1e-12; whole pieces and part of one),
    compiled and as Python; on every drawn scenario, for batches that stay on one side of the
    ridge and batches whose growing contexts cross it or the power model's limits."""
    scenarios, costs = drawn
    rng = random.Random(11)
    starts = np.zeros(iteration.MAX_STRETCH_BENDS + 2, dtype=np.int64)
    table = np.zeros((iteration.MAX_STRETCH_BENDS + 1, iteration.STRETCH_TABLE_SIZE))
    terms = np.zeros((1, iteration.DECODE_TERMS))
    faces = ((iteration.stretch_pieces, iteration.stretch_sums),
             (iteration.stretch_pieces.py_func, iteration.stretch_sums.py_func))
    bent = 0
    for column, scenario in enumerate(scenarios):
        cost = costs[:, column]
        for sequences in (1, rng.randint(2, 64), rng.randint(200, 1000)):
            iteration.decode_iteration_terms(cost, sequences, terms, 0)
            first = float(rng.randint(sequences, 2_000 * sequences))
            increment = float(sequences * rng.choice([1, 2, 30, 61]))
            for steps in (1, 2, 3, rng.randint(4, 60), rng.randint(2_000, 6_000)):
                durations = np.array([iteration.decode_iteration_cost(terms, 0, first + j * increment)[0]
                                      for j in range(steps)])
                energies = np.array([iteration.decode_iteration_cost(terms, 0, first + j * increment)[1]
                                     for j in range(steps)])
                for pieces_of, sums_of in faces:
                    count = pieces_of(terms, 0, first, increment, steps, starts, table)
                    bent += count > 1
                    assert starts[0] == 0 and starts[count] == steps and np.all(np.diff(starts[: count + 1]) > 0)
                    for iterations in sorted({1, 2, steps // 3 + 1, steps // 2 + 1, steps - 1, steps} - {0}):
                        duration, energy = sums_of(starts, table, count, iterations)
                        assert close(durations[:iterations].sum(), duration, 1e-12), (scenario, sequences, steps)
                        assert close(energies[:iterations].sum(), energy, 1e-12), (scenario, sequences, steps)
    # Some stretches crossed the ridge or a power limit (their sums above checked the pieces).
    assert bent >= 10


def stage_pass_groups(cost: np.ndarray) -> tuple[tuple[float, ...], ...]:
    """The four tuples of stage_pass's coefficients, from a cost column by the rows' names."""
    names = [name for name, _ in layout.COST_ROWS]

    def between(first: str, after: str) -> tuple[float, ...]:
        return tuple(cost[row] for row in range(names.index(first), names.index(after)))

    return (between("dense_flops_per_token", "is_moe"), between("is_moe", "dense_read"), between("dense_read", "tp"),
            between("tp", "overhead_time"))


def test_the_stage_pass_helper_equals_the_reference_stage_pass(engine, drawn):
    """kernels.helpers.stage_pass, fed the cost rows evaluate_many wrote, is the reference's
    Stage.stage_pass (and its energy the reference's dynamic energy)."""
    scenarios, costs = drawn
    rng = random.Random(7)
    for column, scenario in enumerate(scenarios):
        compute, experts, memory, communication = stage_pass_groups(costs[:, column])
        setup = cost_model(engine, scenario).setup
        for _ in range(5):
            tokens = rng.choice([1.0, 7.5, rng.uniform(1, 20000)])
            arguments = (tokens, rng.uniform(0.5, tokens), rng.uniform(0, 1e12), rng.uniform(0, 1e10),
                         rng.choice([0.0, rng.uniform(0, 1e10)]))
            want = setup.stage.stage_pass(*arguments)
            got = helpers.stage_pass(*arguments, compute, experts, memory, communication)
            expected = (want.flops, want.bytes, want.weight_bytes, want.kv_bytes + want.state_bytes, want.compute_time,
                        want.memory_time,
                        want.communication_time, setup.power.dynamic_energy(want), want.attention_compute_time,
                        want.attention_memory_time, want.execution_time)
            assert all(close(w, g) for w, g in zip(expected, got, strict=True)), (scenario, arguments, expected, got)


def test_the_bookkeeping_rows_equal_the_reference(engine, drawn):
    scenarios, costs = drawn
    for column, scenario in enumerate(scenarios):
        reference = cost_model(engine, scenario)
        c = costs[:, column]
        assert close(reference.kv_bytes_per_token, c[layout.C_KV_BYTES_PER_TOKEN])
        assert close(reference.weights_bytes, c[layout.C_WEIGHTS_BYTES])
        assert close(reference.usable_bytes, c[layout.C_USABLE_BYTES])
        assert close(reference.runtime_overhead_bytes, c[layout.C_RUNTIME_OVERHEAD_BYTES])
        assert reference.devices == c[layout.C_DEVICES_PER_REPLICA] == scenario.tp * scenario.pp
        assert close(reference.idle_W, c[layout.C_REPLICA_IDLE_W])
        assert reference.prefill_chunk_tokens == c[layout.C_PREFILL_CHUNK_TOKENS] == engine.constants.prefill_chunk_tokens


def test_iteration_kernels_with_jit_disabled_match(engine, tmp_path):
    """The iteration kernels (and the cost rows) run as plain Python give the same numbers."""
    scenarios = draw_scenarios(engine, 20, seed=3)
    rng = random.Random(4)
    iterations = [draw_requests(rng) for _ in scenarios]
    code = (
        "import json, sys, numpy\n"
        "from accelscope.engine.physics.engine import Engine\n"
        "from accelscope.engine.core.scenario import Scenario\n"
        "from accelscope.engine.physics.kernels.iteration import request_positions, iteration_cost\n"
        "payload = json.load(open(sys.argv[1]))\n"
        "engine = Engine()\n"
        "costs = engine.iteration_costs([Scenario(**item) for item in payload['scenarios']])\n"
        "answers = []\n"
        "for column, requests in enumerate(payload['iterations']):\n"
        "    cost = costs[:, column]\n"
        "    totals = numpy.zeros(3)\n"
        "    for context, new, decode in requests:\n"
        "        totals += request_positions(cost, context, new, decode)\n"
        "    tokens = float(sum(new for _, new, _ in requests))\n"
        "    prompt = float(sum(new for _, new, decode in requests if not decode))\n"
        "    answers.append([*totals, *iteration_cost(cost, tokens, float(len(requests)), *totals, prompt)])\n"
        "numpy.save(sys.argv[2], numpy.array(answers))\n"
        "numpy.save(sys.argv[3], costs)\n"
    )
    payload = tmp_path / "payload.json"
    payload.write_text(json.dumps({"scenarios": [dataclasses.asdict(s) for s in scenarios], "iterations": iterations}))
    answers_file, costs_file = tmp_path / "answers.npy", tmp_path / "costs.npy"
    expected_costs = engine.iteration_costs(scenarios)
    expected = []
    for column, requests in enumerate(iterations):
        cost = expected_costs[:, column]
        totals = np.zeros(3)
        for request in requests:
            totals += iteration.request_positions(cost, *request)
        tokens = float(sum(n for _, n, _ in requests))
        prompt = float(sum(n for _, n, decode in requests if not decode))
        expected.append([*totals, *iteration.iteration_cost(cost, tokens, float(len(requests)), *totals, prompt)])
    environment = dict(os.environ, NUMBA_DISABLE_JIT="1")
    subprocess.run([sys.executable, "-c", code, str(payload), str(answers_file), str(costs_file)], check=True,
                   env=environment)
    np.testing.assert_allclose(np.load(costs_file), expected_costs, rtol=RELATIVE, atol=0)
    np.testing.assert_allclose(np.load(answers_file), np.array(expected), rtol=RELATIVE, atol=0)


# ---- the static engine, by hand ------------------------------------------------------------------

HAND_CASES = [
    # dense, every layer attending to the whole context
    Scenario("llama-3.1-8b", "h100-sxm", batch=8, input_len=1000, output_len=256),
    Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=8192, output_len=2),
    Scenario("llama-3.3-70b", "mi300x", batch=5, input_len=1500, output_len=100, tp=4),
    # pipeline of two stages
    Scenario("llama-3.1-8b", "h100-sxm", batch=8, input_len=1000, output_len=256, pp=2),
    Scenario("llama-3.3-70b", "h100-sxm", batch=3, input_len=600, output_len=40, tp=2, pp=2),
    # mixture of experts over expert parallelism
    Scenario("qwen3-30b-a3b", "h100-sxm", batch=8, input_len=1000, output_len=256, tp=4, ep=4),
    Scenario("qwen3-235b-a22b", "h100-sxm", batch=16, input_len=500, output_len=64, tp=8, ep=8, pp=2),
    # weights partly in a far tier
    Scenario("llama-3.1-8b", "gh200", batch=4, input_len=2000, output_len=128, offload=0.5),
    # hybrids: Gated DeltaNet and Mamba-2 layers beside full attention, a fixed-size state per sequence
    Scenario("qwen3-next-80b-a3b", "h200", batch=6, input_len=1000, output_len=200, tp=2, weight_precision="fp8"),
    Scenario("nemotron-h-8b", "h100-sxm", batch=8, input_len=1000, output_len=256, pp=2),
]


@pytest.fixture(scope="module", params=range(len(HAND_CASES)), ids=lambda i: f"{HAND_CASES[i].model}-pp{HAND_CASES[i].pp}")
def hand_case(request, engine):
    scenario = engine.resolve(HAND_CASES[request.param])
    result = engine.predict(scenario)
    assert result.waves == 1 and scenario.batch * scenario.input_len <= engine.constants.prefill_chunk_tokens
    assert scenario.output_len % 2 == 0
    return scenario, result, engine.iteration_costs([scenario])[:, 0], cost_model(engine, scenario)


def _faces(cost, reference):
    return (
        ("kernel", functools.partial(iteration.request_positions, cost), functools.partial(iteration.iteration_cost, cost)),
        ("reference", reference.request_positions, reference.iteration_cost),
    )


def test_prefilling_a_static_batch_costs_its_ttft(hand_case):
    scenario, result, cost, reference = hand_case
    n, prompt = scenario.batch, scenario.input_len
    devices = scenario.tp * scenario.pp
    for face, positions, cost_of in _faces(cost, reference):
        duration, energy = cost_of(*sums(positions, [(0, prompt, False)] * n))
        assert close(result.ttft_s, duration, 1e-12), face
        assert close(result.prefill.power_per_device_W * result.prefill.time_s * devices, energy, 1e-12), face


def test_a_decode_step_at_the_mean_context_costs_the_static_itl(hand_case):
    scenario, result, cost, reference = hand_case
    model_layers = reference.setup.attention
    if model_layers.n_window or model_layers.n_chunked:
        pytest.skip("the static step reads the mean of a capped context, not the context of the mean")
    n = scenario.batch
    context = scenario.input_len + scenario.output_len // 2 - 1
    devices = scenario.tp * scenario.pp
    for face, positions, cost_of in _faces(cost, reference):
        duration, energy = cost_of(*sums(positions, [(context, 1, True)] * n))
        assert close(result.itl_s, duration, 1e-12), face
        assert close(result.decode.power_per_device_W * result.itl_s * devices, energy, 1e-12), face


# The attention groups at 128k: sparse top-k with an indexer (DeepSeek-V3.2, GLM-5), compressed and
# compressed-sparse with a window (DeepSeek-V4-Flash), global layers of their own heads beside
# sliding ones (Gemma 4 31B; its windows are full at this context, so the mean of the capped
# context is the capped context of the mean). Batch 1, output 2: the static step's mean context
# is the context I + 1 of the one decode step.
GROUP_CASES = [
    Scenario("deepseek-v3.2", "h200", batch=1, input_len=131_071, output_len=2, tp=8, kv_precision="bf16"),
    Scenario("glm-5", "h200", batch=1, input_len=131_071, output_len=2, tp=8),
    Scenario("deepseek-v4-flash", "h200", batch=1, input_len=131_071, output_len=2, tp=4),
    Scenario("gemma-4-31b", "h200", batch=1, input_len=131_071, output_len=2),
]


@pytest.mark.parametrize("case", GROUP_CASES, ids=lambda s: s.model)
def test_a_decode_step_with_attention_groups_costs_the_static_decode_step(engine, case):
    """One request's decode iteration at 128k costs the static decode step at batch 1 and that
    context (1e-9): the groups' reads and FLOPs (attended entries, indexer keys) are charged."""
    scenario = engine.resolve(case)
    assert engine.model(scenario.model).attention_groups
    result = engine.predict(scenario)
    cost = engine.iteration_costs([scenario])[:, 0]
    context = scenario.input_len + scenario.output_len // 2 - 1
    for face, positions, cost_of in _faces(cost, cost_model(engine, scenario)):
        duration, energy = cost_of(*sums(positions, [(context, 1, True)]))
        assert close(result.itl_s, duration), face
        assert close(result.decode.power_per_device_W * result.itl_s * scenario.tp * scenario.pp, energy), face


def test_deepseek_v32_decode_at_128k_reads_the_top_2048_and_every_indexer_key_by_hand(engine):
    """DeepSeek-V3.2 (config.json): 61 layers, all sparse. A decode token at position 131,072
    reads, per layer, the top 2,048 of MLA's latent entries (kv_lora_rank 512 + qk_rope_head_dim
    64 = 576 elements, 1,152 B at BF16, on every TP rank) and the indexer key of every token
    (128 FP8 elements + one FP32 scale per 128 = 132 B), and scores each key with 64 indexer
    heads of 128 (2 x 64 x 128 = 16,384 FLOP)."""
    layers, top_k, latent_bytes, key_bytes, key_flops, position = 61, 2048, 576 * 2, 128 + 4, 2 * 64 * 128, 131_072
    scenario = engine.resolve(GROUP_CASES[0])
    model = engine.model(scenario.model)
    cost = engine.iteration_costs([scenario])[:, 0]
    reference = cost_model(engine, scenario)
    head_fraction = reference.setup.layout.head_fraction
    want_bytes = layers * (top_k * latent_bytes + position * key_bytes)
    assert want_bytes == 1_199_308_800  # 1.2 GB per token per device, 94 % of it the indexer's keys
    want_flops = layers * (top_k * head_fraction * model.attention_flops_per_position_decode + position * key_flops)
    for _, flop_positions, read_positions in (iteration.request_positions(cost, position - 1, 1, True),
                                              reference.request_positions(position - 1, 1, True)):
        assert close(want_bytes, read_positions * cost[layout.C_KV_BYTES_PER_POSITION])
        assert close(want_flops, flop_positions * cost[layout.C_DECODE_ATTENTION_FLOPS_PER_POSITION])
    # The sparse layers' entries count as whole positions of the model's own shape.
    row = layout.C_G0_LAYERS + 1 * layout.N_COST_GROUP_FIELDS  # the "sparse" slot
    assert cost[row] == cost[row + 5] == cost[row + 7] == layers


def test_prefill_chunks_with_attention_groups_add_up_to_the_static_prefill(engine):
    """Chunk by chunk, a 50k prompt's group FLOPs (what each token attends and scores) sum to
    the static prompt's (closed_forms.AttentionGroups.prompt_flops), on both faces."""
    from accelscope.engine.physics.reference.closed_forms import AttentionGroups

    for case in GROUP_CASES[:3]:
        scenario = engine.resolve(dataclasses.replace(case, input_len=50_000))
        reference = cost_model(engine, scenario)
        chunk = reference.prefill_chunk_tokens
        cost = engine.iteration_costs([scenario])[:, 0]
        chunks = [(start, min(chunk, 50_000 - start), False) for start in range(0, 50_000, chunk)]
        setup = reference.setup
        want = (AttentionGroups.of(setup.model).prompt_flops(50_000, setup.layout.head_fraction) / setup.layout.pp
                + setup.attention.prompt(50_000) * setup.model.attention_flops_per_position_prefill
                * setup.layout.head_fraction / setup.layout.pp)
        for positions in (reference.request_positions, functools.partial(iteration.request_positions, cost)):
            _, _, prefill, _, _, _ = sums(positions, chunks)
            assert close(want, prefill * cost[layout.C_PREFILL_ATTENTION_FLOPS_PER_POSITION]), scenario.model


def test_prefill_chunks_of_a_long_prompt_add_up_to_its_causal_positions(engine):
    """Chunk by chunk, a prompt's positions sum to the static prefill's: attention over every
    layer kind (sliding windows and chunked attention included) and the KV re-reads."""
    for model_id in ("gemma-3-27b", "llama-4-scout-17b-16e", "llama-3.1-8b"):
        scenario = engine.resolve(Scenario(model_id, "h100-sxm", batch=1, input_len=50_000, output_len=2, tp=8))
        reference = cost_model(engine, scenario)
        layers, chunk = reference.setup.attention, reference.prefill_chunk_tokens
        cost = engine.iteration_costs([scenario])[:, 0]
        chunks = [(start, min(chunk, 50_000 - start), False) for start in range(0, 50_000, chunk)]
        for positions in (reference.request_positions, functools.partial(iteration.request_positions, cost)):
            _, _, prefill, decode, kv_read, _ = sums(positions, chunks)
            assert close(layers.prompt(50_000), prefill) and decode == 0.0
            assert close(layers.reread(50_000, chunk), kv_read)
