"""Property tests of the engine (hypothesis): any scenario the engine accepts, inside the app's
ranges and well beyond them, gives finite, non-negative numbers or an explicit "does not fit"
with its reason, from the kernels and the reference alike; and the physics is monotone where
it must be (more batch, more bandwidth, more tensor parallelism, narrower weights).

The default suite runs a few hundred derandomized examples per property; the ``slow`` variants
(``pytest -m slow tests/test_properties.py``) run thousands of fresh random ones.
"""

from __future__ import annotations

import dataclasses
import math
import os

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from accelscope.engine.catalog import Catalog
from accelscope.engine.catalog.accelerators import load_bundled_accelerators
from accelscope.engine.catalog.models import load_bundled_models
from accelscope.engine.core import codes
from accelscope.engine.core.accelerator import Accelerator
from accelscope.engine.core.precision import PRECISIONS, bytes_per_element
from accelscope.engine.core.scenario import MAX_BATCH, MAX_PARALLEL, MAX_TOKENS, Scenario
from accelscope.engine.physics.engine import Engine
from accelscope.engine.physics.reference import ReferenceModel
from accelscope.engine.physics.results import Result

from scenario_generator import scenario_strategy

settings.register_profile(
    "accelscope-properties",
    max_examples=300,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
settings.register_profile(
    "accelscope-properties-slow",
    max_examples=int(os.environ.get("ACCELSCOPE_PROPERTY_EXAMPLES", "5000")),
    deadline=None,
    derandomize=False,
    database=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
# Used as decorators, not loaded: loading a profile would change every other test module too.
FAST = settings.get_profile("accelscope-properties")
SLOW = settings.get_profile("accelscope-properties-slow")


ACCELERATORS = load_bundled_accelerators()
MOE_MODELS = {model.id: model.moe is not None for model in load_bundled_models().values()}
MODELS = tuple(MOE_MODELS)
CHUNK = 8192  # efficiency.toml's prefill_chunk_tokens; checked against the engine below

# The documented sentinel of Result.offload_needed: "no offload fraction makes it fit".
NO_OFFLOAD_SENTINEL = -1.0
RELATIVE = 1e-12  # rounding allowance for "never lower" / "never higher"


# ---- strategies ------------------------------------------------------------------------


def log_integers(low: int, high: int) -> st.SearchStrategy[int]:
    """Integers spread evenly over the decades of [low, high] (shrinks towards ``low``)."""
    return st.floats(math.log(low), math.log(high)).map(lambda x: min(high, max(low, round(math.exp(x)))))


def counts(special: tuple[int, ...], usual: int, limit: int) -> st.SearchStrategy[int]:
    """Edge values, values across the app's range, and values up to the engine's limit."""
    return st.one_of(st.sampled_from(special), log_integers(1, usual), log_integers(1, limit))


BATCHES = counts((1, 2, 3, 7, 64, 10**6), 10**6, MAX_BATCH)
TOKENS = counts((1, 2, CHUNK - 1, CHUNK, CHUNK + 1, 131_072, 10**7), 10**7, MAX_TOKENS)
# Layouts that divide nothing (3, 5, 7, 61), match or pass layer counts (61, 62, 64, 94, 126),
# cross a scale-up domain (65, 65537) or are absurdly wide.
PARALLEL = counts((1, 2, 3, 4, 5, 7, 8, 16, 61, 62, 64, 65, 94, 126, 65_537, MAX_PARALLEL), 1024, MAX_PARALLEL)
OFFLOADS = st.one_of(st.sampled_from((0.0, 1.0, 5e-324, 0.5)), st.floats(0.0, 1.0))


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def scenarios(
    batch: st.SearchStrategy[int] = BATCHES,
    tokens: st.SearchStrategy[int] = TOKENS,
    parallel: st.SearchStrategy[int] = PARALLEL,
    offload: st.SearchStrategy[float] = OFFLOADS,
    kv_offload: st.SearchStrategy[float] = OFFLOADS,
    valid_ep: bool = False,
) -> st.SearchStrategy[Scenario]:
    """Scenarios from the shared generator, with these strategies for its fields (a field not
    named here is drawn by its kind)."""

    def ep(values):
        tp = values["tp"]
        if valid_ep:  # expert parallelism only where it can exist: a MoE model, dividing tp
            return st.sampled_from(divisors(tp)) if MOE_MODELS[values["model"]] else st.just(1)
        return st.one_of(st.sampled_from(divisors(tp)), parallel)

    return scenario_strategy(
        MODELS, tuple(ACCELERATORS),
        {"batch": batch, "input_len": tokens, "output_len": tokens, "tp": parallel, "pp": parallel, "ep": ep,
         "dp": parallel, "offload": offload, "kv_offload": kv_offload},
    )


# Narrower ranges for the monotonicity properties, where most draws should meet the
# preconditions (the batch fits, decode is memory-bound); layouts still include 3, 5 and 7.
SMALL_PARALLEL = st.sampled_from((1, 1, 1, 2, 3, 4, 5, 7, 8, 16))
WORKLOADS = scenarios(
    batch=st.one_of(log_integers(1, 512), log_integers(1, 10**6)),
    tokens=st.one_of(log_integers(1, 4096), log_integers(1, 10**6)),
    parallel=SMALL_PARALLEL,
    offload=st.sampled_from((0.0, 0.0, 0.0, 0.3, 1.0)),
    kv_offload=st.sampled_from((0.0, 0.0, 0.0, 0.5, 1.0)),
    valid_ep=True,
)


# ---- helpers ---------------------------------------------------------------------------


def numbers(value: object, prefix: str = "") -> dict[str, float]:
    """Every numeric field of a result, by dotted name (the scenario excluded)."""
    found: dict[str, float] = {}
    for field in dataclasses.fields(value):
        if field.name == "scenario":
            continue
        item = getattr(value, field.name)
        if dataclasses.is_dataclass(item):
            found.update(numbers(item, f"{prefix}{field.name}."))
        elif isinstance(item, int | float) and not isinstance(item, bool):
            found[prefix + field.name] = item
    return found


def both(engine: Engine, scenario: Scenario) -> dict[str, Result]:
    return {"kernels": engine.predict(scenario), "reference": engine.reference(scenario)}


def check_finite_or_explained(result: Result, where: str) -> None:
    s = result.scenario
    for name, value in numbers(result).items():
        if name == "offload_needed" and value == NO_OFFLOAD_SENTINEL:
            continue
        if name == "ridge_point" and value == math.inf:
            # No compute peak published for this format (nor a wider one): no roof, and the
            # result says so when the memory fits (a memory reason comes first otherwise).
            assert not result.fits, f"{where}: no roof, yet it fits, for {s}"
            continue
        assert math.isfinite(value) and value >= 0, f"{where}: {name} = {value!r} for {s}"
    assert 0.0 <= result.offload_needed <= 1.0 or result.offload_needed == NO_OFFLOAD_SENTINEL
    assert result.fit_code in codes.FIT_REASONS, f"{where}: unknown fit code {result.fit_code} for {s}"
    assert result.fits == (result.fit_code == codes.FIT_OK), f"{where}: fits disagrees with its code for {s}"
    if not result.fits:
        assert result.fit_reason and result.fit_reason != "fits", f"{where}: no reason for {s}"
    # The kernels' outputs are float64: a device count past 2**53 (tp·pp·dp up to 10**18) is
    # exact only to rounding.
    assert result.waves >= 1 and math.isclose(result.devices, s.tp * s.pp * s.dp, rel_tol=1e-15)
    assert result.prefill.bound in codes.BOUNDS and result.decode.bound in codes.BOUNDS
    assert result.compute_precision in PRECISIONS
    assert result.warning_bits & ~sum(codes.WARNINGS) == 0
    # A step takes time, and a run moves tokens: no zero where a divisor would follow.
    assert result.itl_s > 0 and result.prefill.time_s > 0 and result.e2e_latency_s > 0, f"{where}: {s}"


def never_lower(after: float, before: float) -> bool:
    return after >= before * (1.0 - RELATIVE)


def never_higher(after: float, before: float) -> bool:
    return after <= before * (1.0 + RELATIVE)


def test_chunk_constant_is_the_engines(engine):
    assert engine.constants.prefill_chunk_tokens == CHUNK


# ---- finite numbers or a reason, never an exception ------------------------------------


def finite_or_explained(engine: Engine, scenario: Scenario) -> None:
    for where, result in both(engine, scenario).items():
        check_finite_or_explained(result, where)


@FAST
@given(scenario=scenarios())
def test_every_scenario_gives_finite_numbers_or_a_reason(engine, scenario):
    finite_or_explained(engine, scenario)


@pytest.mark.slow
@SLOW
@given(scenario=scenarios())
def test_every_scenario_gives_finite_numbers_or_a_reason_long(engine, scenario):
    finite_or_explained(engine, scenario)


def kernels_agree(engine: Engine, scenario: Scenario) -> None:
    """The kernels equal the reference to 1e-9 over the whole accepted range, not only the
    app's (tests/test_kernels.py samples the usual range)."""
    results = both(engine, scenario)
    kernel, reference = numbers(results["kernels"]), numbers(results["reference"])
    for name, want in reference.items():
        got = kernel[name]
        if math.isinf(want):  # a ridge point with no published roof: the same infinity
            assert got == want, f"{name}: {got!r} != {want!r} for {scenario}"
            continue
        assert abs(got - want) <= 1e-9 * max(abs(got), abs(want), 1e-300), f"{name}: {got!r} != {want!r} for {scenario}"
    for name in ("fits", "compute_precision"):
        assert getattr(results["kernels"], name) == getattr(results["reference"], name)


@FAST
@given(scenario=scenarios())
def test_kernels_equal_reference_over_the_whole_range(engine, scenario):
    kernels_agree(engine, scenario)


@pytest.mark.slow
@SLOW
@given(scenario=scenarios())
def test_kernels_equal_reference_over_the_whole_range_long(engine, scenario):
    kernels_agree(engine, scenario)


# ---- more batch never lowers throughput ------------------------------------------------


def batch_never_lowers_throughput(engine: Engine, scenario: Scenario, extra: int) -> None:
    """While the batch fits in one wave and decode is memory-bound at both batches, more
    sequences share each read of the weights, so output throughput does not drop.

    Restricted to the same number of prefill chunks at both batches: each chunk re-reads the
    weights, so a batch that spills its prompts into one more chunk pays a whole extra weight
    read, and with short outputs (prefill-dominated runs) that can lower throughput slightly.
    That is the chunked-prefill model working as intended, not a fault. The decode step alone
    (batch / ITL) is held without that restriction.
    """
    larger = scenario.with_changes(batch=min(scenario.batch + extra, MAX_BATCH))
    small, large = both(engine, scenario), both(engine, larger)
    for where in small:
        a, b = small[where], large[where]
        if not (a.fits and b.fits and a.waves == 1 and b.waves == 1):
            continue
        if not (a.decode.bound == "memory" and b.decode.bound == "memory"):
            continue
        event(f"{where}: compared decode steps")
        assert never_lower(larger.batch / b.itl_s, scenario.batch / a.itl_s), (
            f"{where}: decode tokens per second fell from {scenario.batch / a.itl_s!r} at batch {scenario.batch} "
            f"to {larger.batch / b.itl_s!r} at batch {larger.batch} for {scenario}"
        )
        same_chunks = math.ceil(scenario.batch * scenario.input_len / CHUNK) == math.ceil(
            larger.batch * larger.input_len / CHUNK
        )
        if same_chunks:
            event(f"{where}: compared throughput")
            assert never_lower(b.throughput_output_tok_s, a.throughput_output_tok_s), (
                f"{where}: throughput fell from {a.throughput_output_tok_s!r} at batch {scenario.batch} "
                f"to {b.throughput_output_tok_s!r} at batch {larger.batch} for {scenario}"
            )


EXTRA_BATCH = st.one_of(st.integers(1, 8), log_integers(1, 10**6))


@settings(FAST, max_examples=600)  # about 40% of draws meet the preconditions
@given(scenario=WORKLOADS, extra=EXTRA_BATCH)
@example(scenario=Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=128, output_len=256), extra=1)
@example(scenario=Scenario("mixtral-8x7b", "h100-sxm", batch=3, input_len=64, output_len=512, tp=4, ep=4), extra=5)
def test_more_batch_never_lowers_throughput(engine, scenario, extra):
    batch_never_lowers_throughput(engine, scenario, extra)


@pytest.mark.slow
@SLOW
@given(scenario=WORKLOADS, extra=EXTRA_BATCH)
def test_more_batch_never_lowers_throughput_long(engine, scenario, extra):
    batch_never_lowers_throughput(engine, scenario, extra)


# ---- more bandwidth never slows a step -------------------------------------------------

BANDWIDTH_FACTORS = (1.5, 1000.0)  # the kernels' variants; the reference takes any factor


def with_faster_tier(accelerator: Accelerator, level: str, factor: float) -> Accelerator:
    """The accelerator with the tier at ``level`` (its memory and, for a far tier, its link)
    ``factor`` times faster; nothing else changed."""
    tiers = []
    for tier in accelerator.memory:
        if tier.level == level:
            changes = {
                name: dataclasses.replace(getattr(tier, name), value=float(getattr(tier, name)) * factor)
                for name in ("bandwidth_Bps", "link_bandwidth_Bps")
                if getattr(tier, name) is not None
            }
            tier = dataclasses.replace(tier, **changes)
        tiers.append(tier)
    return dataclasses.replace(accelerator, memory=tuple(tiers))


def faster_id(accelerator_id: str, level: str, factor: float) -> str:
    return f"{accelerator_id}--{level}-x{factor:g}"


@pytest.fixture(scope="module")
def faster_engine(engine):
    """An engine whose catalog also holds every accelerator with each tier made faster."""
    accelerators = dict(engine.catalog.accelerators)
    for accelerator in ACCELERATORS.values():
        for tier in accelerator.memory:
            for factor in BANDWIDTH_FACTORS:
                variant_id = faster_id(accelerator.id, tier.level, factor)
                accelerators[variant_id] = dataclasses.replace(
                    with_faster_tier(accelerator, tier.level, factor), id=variant_id
                )
    return Engine(Catalog(accelerators, dict(engine.catalog.models)), engine.constants)


TIMES = ("prefill.time_s", "decode.time_s", "ttft_s", "itl_s", "e2e_latency_s")


def assert_not_slower(base: Result, fast: Result, what: str) -> None:
    base_times, fast_times = numbers(base), numbers(fast)
    for name in TIMES:
        assert never_higher(fast_times[name], base_times[name]), (
            f"{what}: {name} rose from {base_times[name]!r} to {fast_times[name]!r} for {base.scenario}"
        )


def bandwidth_never_slows(engine: Engine, faster_engine: Engine, scenario: Scenario, data) -> None:
    accelerator = ACCELERATORS[scenario.accelerator]
    level = data.draw(st.sampled_from([tier.level for tier in accelerator.memory]), label="tier")
    model = engine.model(scenario.model)
    base = ReferenceModel(model, accelerator, engine.constants).evaluate(scenario)
    factor = data.draw(st.floats(1.0, 1e6), label="factor")
    faster = with_faster_tier(accelerator, level, factor)
    fast = ReferenceModel(model, faster, engine.constants).evaluate(scenario)
    assert_not_slower(base, fast, f"reference, {level} tier x{factor!r}")

    kernel_factor = data.draw(st.sampled_from(BANDWIDTH_FACTORS), label="kernel factor")
    variant = scenario.with_changes(accelerator=faster_id(scenario.accelerator, level, kernel_factor))
    base, fast = faster_engine.predict(scenario), faster_engine.predict(variant)
    assert_not_slower(base, fast, f"kernels, {level} x{kernel_factor}")


@FAST
@given(scenario=scenarios(), data=st.data())
def test_more_bandwidth_never_slows_a_step(engine, faster_engine, scenario, data):
    bandwidth_never_slows(engine, faster_engine, scenario, data)


@pytest.mark.slow
@SLOW
@given(scenario=scenarios(), data=st.data())
def test_more_bandwidth_never_slows_a_step_long(engine, faster_engine, scenario, data):
    bandwidth_never_slows(engine, faster_engine, scenario, data)


# ---- more devices in TP never raises weights per device --------------------------------


def tp_never_raises_weights(engine: Engine, scenario: Scenario, extra: int) -> None:
    """Weights held per device never grow with tp (expert parallelism kept as it is). Weight
    bytes read per decode step do not grow either while the resident batch is the same (a
    wider tp frees memory, so a batch that ran in waves may run in fewer, larger ones, whose
    steps touch more experts and pass more micro-batches)."""
    wider = scenario.with_changes(tp=min(scenario.tp + extra, MAX_PARALLEL))
    narrow, wide = both(engine, scenario), both(engine, wider)
    for where in narrow:
        a, b = narrow[where], wide[where]
        assert never_higher(b.memory.weights_bytes, a.memory.weights_bytes), (
            f"{where}: weights per device rose from {a.memory.weights_bytes!r} at tp {scenario.tp} "
            f"to {b.memory.weights_bytes!r} at tp {wider.tp} for {scenario}"
        )
        if a.memory.resident_batch == b.memory.resident_batch:
            event(f"{where}: compared decode weight reads")
            assert never_higher(b.decode.weight_bytes_per_device, a.decode.weight_bytes_per_device), (
                f"{where}: decode weight reads rose from {a.decode.weight_bytes_per_device!r} at tp {scenario.tp} "
                f"to {b.decode.weight_bytes_per_device!r} at tp {wider.tp} for {scenario}"
            )


EXTRA_TP = st.one_of(st.integers(1, 8), log_integers(1, MAX_PARALLEL))


@FAST
@given(scenario=scenarios(), extra=EXTRA_TP)
def test_more_tensor_parallelism_never_raises_weights_per_device(engine, scenario, extra):
    tp_never_raises_weights(engine, scenario, extra)


@pytest.mark.slow
@SLOW
@given(scenario=scenarios(), extra=EXTRA_TP)
def test_more_tensor_parallelism_never_raises_weights_per_device_long(engine, scenario, extra):
    tp_never_raises_weights(engine, scenario, extra)


# ---- narrower weights never read more bytes --------------------------------------------

PRECISION_PAIRS = st.sampled_from(
    [
        (narrow, wide)
        for narrow in PRECISIONS
        for wide in PRECISIONS
        if bytes_per_element(narrow) <= bytes_per_element(wide)
    ]
)


def narrow_weights_never_read_more(engine: Engine, scenario: Scenario, pair: tuple[str, str]) -> None:
    """FP8 (and any narrower format) weights never take or read more bytes than BF16 (or any
    wider one). Per-step reads are compared where the resident batch is the same: narrower
    weights leave room for more sequences, and a larger resident batch per wave touches more
    experts and passes more micro-batches per step, which is more work, not a fault."""
    narrow_s = scenario.with_changes(weight_precision=pair[0])
    wide_s = scenario.with_changes(weight_precision=pair[1])
    narrow, wide = both(engine, narrow_s), both(engine, wide_s)
    for where in narrow:
        a, b = narrow[where], wide[where]
        assert never_higher(a.memory.weights_bytes, b.memory.weights_bytes), f"{where}: {pair} for {scenario}"
        if a.memory.resident_batch != b.memory.resident_batch:
            continue
        event(f"{where}: compared weight reads")
        for phase in ("decode", "prefill"):
            read_narrow = getattr(a, phase).weight_bytes_per_device
            read_wide = getattr(b, phase).weight_bytes_per_device
            assert never_higher(read_narrow, read_wide), (
                f"{where}: {phase} reads {read_narrow!r} weight bytes in {pair[0]} but {read_wide!r} in {pair[1]} "
                f"for {scenario}"
            )


@FAST
@given(scenario=scenarios(), pair=PRECISION_PAIRS)
@example(scenario=Scenario("llama-3.1-8b", "h100-sxm"), pair=("fp8", "bf16"))
@example(scenario=Scenario("deepseek-r1", "h200", batch=64, tp=8, ep=8), pair=("fp8", "bf16"))
def test_narrower_weights_never_read_more_bytes(engine, scenario, pair):
    narrow_weights_never_read_more(engine, scenario, pair)


@FAST
@given(scenario=scenarios())
def test_fp8_weights_never_read_more_bytes_than_bf16(engine, scenario):
    narrow_weights_never_read_more(engine, scenario, ("fp8", "bf16"))


@pytest.mark.slow
@SLOW
@given(scenario=scenarios(), pair=PRECISION_PAIRS)
def test_narrower_weights_never_read_more_bytes_long(engine, scenario, pair):
    narrow_weights_never_read_more(engine, scenario, pair)


# ---- found by these properties ---------------------------------------------------------


def test_kernel_token_count_does_not_overflow(engine):
    """Found by these properties: the kernels counted dp·batch·tokens in int64, which wrapped
    past 2**63 into negative throughput and tokens per joule; they count in float now."""
    scenario = Scenario(
        "llama-3.1-8b", "b200", batch=10**6, input_len=10**7, output_len=1, kv_precision="fp4", tp=8, pp=32, dp=10**6
    )
    assert scenario.dp * scenario.batch * (scenario.input_len + scenario.output_len) >= 2**63
    kernel, reference = engine.predict(scenario), engine.reference(scenario)
    assert kernel.fits and reference.fits
    assert kernel.throughput_total_tok_s == pytest.approx(reference.throughput_total_tok_s, rel=1e-9)
    assert kernel.tokens_per_joule == pytest.approx(reference.tokens_per_joule, rel=1e-9)
