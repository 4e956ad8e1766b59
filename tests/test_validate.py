"""The table of published measurements and `accelscope validate`: the table loads and is checked
like the other catalogs, every row is a scenario the engine can run, and the report carries
what it says; the served-run arithmetic against hand-worked numbers; and the accuracy
targets (median |error| <= 20% on GPUs and <= 35% on dataflow machines over the papers'
measurements, no prediction off by more than 2x without an explanation)."""

from __future__ import annotations

import json
import math
import re

import pytest

from accelscope.cli.main import main
from accelscope.engine.catalog.measurements import KINDS, METRICS, ServerObjective, load_measurements
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec
from accelscope.engine.physics.engine import Engine
from accelscope.engine.studies.serving.metrics import summarize, whole_run
from accelscope.engine.studies.serving.study import capacity_at_slo, simulate_served
from accelscope.engine.validation.ideal import ideal_catalog, ideal_constants
from accelscope.engine.validation.report import METRIC_VALUES, stats
from accelscope.engine.validation.served import SERVED_SEEDS, served_runs, served_spec, server_runs, server_spec
from accelscope.engine.validation.text import format_report, setup_text, to_dict


@pytest.fixture(scope="module")
def table(catalog):
    return load_measurements(catalog=catalog)


@pytest.fixture(scope="module")
def report(validation_report):
    return validation_report  # validate(engine): the table is the default one, ``table`` above


@pytest.fixture(scope="module")
def validate_command(report, engine):
    """What ``accelscope validate --json`` and ``accelscope validate`` print: {arguments: (exit
    status, out, err)}. The command runs ``validate(Engine())``, the default catalog and table;
    here that call is checked to be so and answered with the module's ``report`` of the same
    catalog and table, which spares two whole validations (~8 s each). The command's own
    validation runs in tests/test_cli_hostile.py (beside broken user files it ignores)."""
    import contextlib
    import io

    calls = []

    def validate_default(*args, **kwargs):
        calls.append((args, kwargs))
        return report

    printed = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("accelscope.engine.validation.validate", validate_default)
        for arguments in (("validate", "--json"), ("validate",)):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                status = main(list(arguments))
            printed[arguments] = status, out.getvalue(), err.getvalue()
    assert len(calls) == 2
    for args, kwargs in calls:
        (given,) = args
        assert not kwargs and isinstance(given, Engine)
        assert given.catalog.accelerators.keys() == engine.catalog.accelerators.keys()
        assert given.catalog.models.keys() == engine.catalog.models.keys()
    return printed


def test_the_table_loads_with_rows_claims_and_the_chat_workload(table):
    assert len(table.measurements) >= 60
    assert len(table.claims) >= 10
    assert {"brunetta2025", "sharma2025"} <= set(table.papers)
    chat = table.workloads["chat"]
    assert chat.input_len > 0 and chat.output_len > 0 and "LMSYS" in chat.basis
    assert len({row.id for row in table.measurements}) == len(table.measurements)
    # The first paper's headline claims are all there, computed or not.
    ids = " ".join(claim.id for claim in table.claims)
    for fragment in ("3.7x", "8.4x", "2.1x", "4.7x", "18.5x", "heterogeneous-memory"):
        assert fragment in ids


def test_every_row_names_catalog_ids_and_resolves_to_valid_scenarios(table, catalog, engine):
    for row in table.measurements:
        assert row.accelerator in catalog.accelerators, row.id
        assert row.model in catalog.models, row.id
        assert row.kind in KINDS
        if row.spec is None:
            assert row.not_computed
            continue
        for scenario in row.spec.scenarios():
            assert scenario.accelerator in catalog.accelerators, row.id
            assert scenario.model in catalog.models, row.id
            engine.resolve(scenario)  # raises on anything invalid
    for claim in table.claims:
        if claim.spec is not None:
            for scenario in claim.spec.scenarios():
                engine.resolve(scenario)


def test_no_row_or_claim_lacks_a_source(table):
    for entry in (*table.measurements, *table.claims):
        assert entry.paper in table.papers, entry.id
        assert entry.where.strip() and entry.quote.strip(), entry.id
    for row in table.measurements:
        assert row.counts.strip(), row.id


def test_only_the_papers_measured_numbers_are_marked_measured(table):
    sharma = [row for row in table.measurements if row.paper == "sharma2025"]
    assert sharma and all(row.kind != "measured" for row in sharma)
    brunetta = [row for row in table.measurements if row.paper == "brunetta2025"]
    assert brunetta and all(row.kind == "measured" for row in brunetta)


VALID = """
[papers.p]
short = "P"
citation = "A paper"

[workload.chat]
input_len = 350
output_len = 190
basis = "why"

[[measurement]]
id = "row-one"
paper = "p"
where = "Table 1"
quote = "It reaches 215 tokens/s."
kind = "measured"
accelerator = "a100-80gb"
devices = "1 GPU"
model = "llama-3.1-8b"
precision = { weights = "bf16", activations = "bf16", kv = "bf16" }
batch = 1
workload = "chat"
metric = "throughput_total_tok_s"
value = 215
unit = "tokens/s"
counts = "input + output tokens"

[[measurement]]
id = "row-two"
paper = "p"
where = "Table 1"
quote = "18.8x lower ITL."
kind = "measured"
accelerator = "wse-3"
devices = "1 CS-3"
model = "llama-3.1-8b"
precision = { weights = "bf16", activations = "bf16", kv = "bf16" }
batch = 1
workload = "chat"
metric = "ratio_itl_ms"
value = 18.8
unit = "ratio"
counts = "A100 ITL over CS-3 ITL"
numerator = { accelerator = "a100-80gb" }
denominator = { accelerator = "wse-3" }
"""


# What makes VALID's workload a served run, which a batching policy needs.
SERVED = 'requests = 10\nrequests_basis = "r"'
# What makes VALID's workload a server scenario.
SERVER = f'{SERVED}\nserver = {{ ttft_p99_ms = 2000, tpot_p99_ms = 200 }}\nserver_basis = "MLPerf"'


def test_every_metric_the_table_may_state_is_read_from_the_engines_result(engine):
    # The table's vocabulary (catalog) and how a result gives each metric (validation) are
    # kept apart by layer; they must name the same metrics.
    assert set(METRIC_VALUES) == set(METRICS)
    result = engine.predict(Scenario("llama-3.1-8b", "h100-sxm"))
    assert METRIC_VALUES["itl_ms"](result) == result.itl_s * 1e3
    assert all(math.isfinite(get(result)) and get(result) > 0 for get in METRIC_VALUES.values())


def test_a_small_valid_file_loads(tmp_path, catalog):
    path = tmp_path / "measurements.toml"
    path.write_text(VALID, encoding="utf-8")
    table = load_measurements(path, catalog)
    assert [row.id for row in table.measurements] == ["row-one", "row-two"]
    assert table.measurements[1].spec.ratio


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ('accelerator = "a100-80gb"\ndevices', 'accelerator = "a100-80gx"\ndevices', "measurement[0].accelerator"),
        ('model = "llama-3.1-8b"\nprecision = { weights = "bf16", activations = "bf16", kv = "bf16" }\n'
         'batch = 1\nworkload = "chat"\nmetric = "throughput',
         'model = "llama-9b"\nprecision = { weights = "bf16", activations = "bf16", kv = "bf16" }\n'
         'batch = 1\nworkload = "chat"\nmetric = "throughput',
         "measurement[0].model"),
        ('quote = "It reaches 215 tokens/s."\n', "", "measurement[0].quote"),
        ('quote = "It reaches 215 tokens/s."', 'quote = "  "', "measurement[0].quote"),
        ('metric = "throughput_total_tok_s"', 'metric = "speed"', "measurement[0].metric"),
        ('unit = "tokens/s"', 'unit = "tok/s"', "measurement[0].unit"),
        ('value = 215', 'value = -215', "measurement[0].value"),
        ('value = 215', 'value = "215"', "measurement[0].value"),
        ('kind = "measured"\naccelerator = "a100', 'kind = "rumour"\naccelerator = "a100',
         "measurement[0].kind"),
        ('paper = "p"\nwhere = "Table 1"\nquote = "It', 'paper = "q"\nwhere = "Table 1"\nquote = "It',
         "measurement[0].paper"),
        ('batch = 1\nworkload = "chat"\nmetric = "throughput', 'batch = 0\nworkload = "chat"\nmetric = "throughput',
         "measurement[0].batch"),
        ('counts = "input + output tokens"', 'counts = "input + output tokens"\nspeed = 3',
         "measurement[0].speed"),
        ('workload = "chat"\nmetric = "throughput', 'workload = "chats"\nmetric = "throughput',
         "measurement[0].workload"),
        ('precision = { weights = "bf16", activations = "bf16", kv = "bf16" }\n'
         'batch = 1\nworkload = "chat"\nmetric = "throughput',
         'precision = { weights = "bf15", activations = "bf16", kv = "bf16" }\n'
         'batch = 1\nworkload = "chat"\nmetric = "throughput',
         "measurement[0].precision.weights"),
        ('numerator = { accelerator = "a100-80gb" }\n', "", "measurement[1].numerator"),
        ('denominator = { accelerator = "wse-3" }', 'denominator = { accelerator = "wse-4" }',
         "measurement[1].denominator.accelerator"),
        ('id = "row-two"', 'id = "row-one"', "measurement[1].id"),
        ('counts = "input + output tokens"', 'counts = "input + output tokens"\nderived_from = ["row-three"]',
         "measurement[0].derived_from[0]"),
        ('counts = "input + output tokens"', 'counts = "input + output tokens"\nsweep = { batch = [1, "two"] }',
         "measurement[0].sweep.batch[1]"),
        ('counts = "input + output tokens"', 'counts = "input + output tokens"\nlayout = { tp = 2, ep = 3 }',
         "measurement[0]"),
        ('basis = "why"', 'basis = "why"\nfixed_batch = ["wse-3"]\nfixed_batch_basis = "b"',
         "workload.chat.fixed_batch"),
        ('basis = "why"', f'basis = "why"\n{SERVED}\nfixed_batch = ["wse-4"]\nfixed_batch_basis = "b"',
         "workload.chat.fixed_batch[0]"),
        ('basis = "why"', f'basis = "why"\n{SERVED}\nfixed_batch = ["wse-3"]', "workload.chat.fixed_batch_basis"),
        ('basis = "why"', f'basis = "why"\n{SERVED}\nfixed_batch = "wse-3"\nfixed_batch_basis = "b"',
         "workload.chat.fixed_batch"),
        # A server scenario: both p99 limits, positive numbers; its basis; requests; vLLM only.
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace('\nserver_basis = "MLPerf"', ""),
         "workload.chat.server_basis"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace(f"{SERVED}\n", ""), "workload.chat.requests"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("ttft_p99_ms = 2000, ", ""),
         "workload.chat.server.ttft_p99_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("tpot_p99_ms = 200", "tpot_p99_ms = 0"),
         "workload.chat.server.tpot_p99_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("tpot_p99_ms = 200", "tpot_p99_ms = -200"),
         "workload.chat.server.tpot_p99_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("ttft_p99_ms = 2000", 'ttft_p99_ms = "2000"'),
         "workload.chat.server.ttft_p99_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("ttft_p99_ms = 2000", "ttft_p99_ms = nan"),
         "workload.chat.server.ttft_p99_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("ttft_p99_ms = 2000", "ttft_p99_ms = inf"),
         "workload.chat.server.ttft_p99_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("tpot_p99_ms = 200", "tpot_p99_ms = 200, ttft_p90_ms = 1"),
         "workload.chat.server.ttft_p90_ms"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("{ ttft_p99_ms = 2000, tpot_p99_ms = 200 }", "2000"),
         "workload.chat.server"),
        ('basis = "why"', 'basis = "why"\n' + SERVER.replace("requests = 10", "requests = 2000000"),
         "workload.chat.requests"),
        ('basis = "why"', f'basis = "why"\n{SERVER}\nfixed_batch = ["wse-3"]\nfixed_batch_basis = "b"',
         "workload.chat.fixed_batch"),
        ('basis = "why"', 'basis = "why"\nserver_basis = "MLPerf"', "workload.chat.server_basis"),
        # A server row gives the run's totals: its latencies are the objective's limits.
        ('basis = "why"', f'basis = "why"\n{SERVER}', "measurement[1].metric"),
    ],
)
def test_a_bad_entry_names_the_file_and_the_field(tmp_path, catalog, old, new, field):
    assert old in VALID
    path = tmp_path / "bad-measurements.toml"
    path.write_text(VALID.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        load_measurements(path, catalog)
    assert "bad-measurements.toml" in str(caught.value)
    assert caught.value.field == field


def test_a_server_scenario_loads_with_its_objective(tmp_path, catalog):
    path = tmp_path / "measurements.toml"
    # row-two (an ITL ratio) cannot name a server scenario: keep only the throughput row.
    path.write_text(VALID[: VALID.index("[[measurement]]\nid = \"row-two\"")].replace(
        'basis = "why"', f'basis = "why"\n{SERVER}', 1), encoding="utf-8")
    table = load_measurements(path, catalog)
    chat = table.workloads["chat"]
    assert chat.server == ServerObjective(2000.0, 200.0) and chat.server_basis == "MLPerf" and chat.requests == 10
    spec = table.measurements[0].spec
    assert (spec.server, spec.requests, spec.fixed_batch) == (chat.server, 10, ())
    assert "server scenario" in setup_text(spec) and "batch" not in setup_text(spec)


def test_a_file_that_is_not_toml_is_refused(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[[measurement]\nid = ", encoding="utf-8")
    with pytest.raises(CatalogError, match="broken.toml"):
        load_measurements(path)


def test_every_computable_row_gets_a_finite_prediction_or_says_why_not(report):
    for row_report in report.rows:
        row = row_report.row
        if row.not_computed is not None:
            assert row_report.calibrated is None and row_report.ideal is None
            continue
        for prediction in (row_report.calibrated, row_report.ideal):
            assert prediction is not None
            if prediction.value is None:
                # Only systems too small to hold the model, each with its explanation.
                assert prediction.status.startswith("does not fit"), row.id
                assert row.explanation, row.id
            else:
                assert math.isfinite(prediction.value) and prediction.value > 0, row.id
                assert prediction.low <= prediction.value <= prediction.high
    computed = [r for r in report.rows if r.calibrated is not None and r.calibrated.value is not None]
    assert len(computed) >= 60


def test_the_summaries_cover_both_models_populations_and_breakdowns(report):
    assert set(report.summaries) == {"calibrated", "ideal"}
    for which in ("calibrated", "ideal"):
        for population in ("measured", "other"):
            summary = report.summaries[which][population]
            assert set(summary) == {"all", "by_group", "by_accelerator", "by_metric"}
            assert summary["all"]["n"] > 0
            assert set(summary["all"]) == {
                "n", "median_abs_pct_error", "worst_abs_pct_error", "worst_id", "median_ratio", "off_by_2x",
            }
    measured = report.summaries["calibrated"]["measured"]
    assert {"GPUs", "dataflow"} <= set(measured["by_group"])
    assert {"a100-80gb", "wse-3", "sn40l"} <= set(measured["by_accelerator"])
    assert "throughput_total_tok_s" in measured["by_metric"]
    assert len(report.targets) == 3
    assert all(isinstance(target.met, bool) for target in report.targets)


def test_derived_and_restated_rows_are_shown_but_not_counted(report):
    counted = report.summaries["calibrated"]["measured"]["all"]["n"]
    eligible = [
        r for r in report.rows
        if r.row.kind == "measured" and r.row.in_statistics and r.calibrated is not None
        and r.calibrated.value is not None
    ]
    assert counted == len(eligible)
    derived = [r for r in report.rows if r.row.derived_from]
    assert derived and all(not r.row.in_statistics for r in derived)
    assert all(r.calibrated is not None and r.calibrated.value is not None for r in derived)


def test_a100_batch_one_row_is_served_requests_one_at_a_time(report, engine, table):
    """At batch 1 the served run serves its requests one at a time: with every reply of the
    mean length it would be 1,000 static batches of one; the replies' spread (exponential about
    the mean, the mean over the draws) moves the total by a few percent only."""
    row_report = next(r for r in report.rows if r.row.id == "b25-a100-llama8b-b1-throughput")
    chat = table.workloads["chat"]
    scenario = Scenario(
        "llama-3.1-8b", "a100-80gb", batch=1, input_len=chat.input_len, output_len=chat.output_len,
    )
    static = engine.predict(scenario).throughput_total_tok_s
    assert row_report.calibrated.value == pytest.approx(static, rel=0.05)
    assert row_report.ratio("calibrated") == pytest.approx(row_report.calibrated.value / 215)
    ideal = Engine(ideal_catalog(engine.catalog), ideal_constants(engine.constants))
    assert row_report.ideal.value == pytest.approx(ideal.predict(scenario).throughput_total_tok_s, rel=0.05)
    assert row_report.ideal.value > row_report.calibrated.value


def test_requests_served_one_at_a_time_are_static_batches_of_one(engine):
    """The served run's mechanics against the engine: N requests of one length, one at a time,
    take N static batches of one, to 1e-9."""
    scenario = engine.resolve(Scenario("llama-3.1-8b", "a100-80gb", batch=1, input_len=350, output_len=190))
    spec = served_spec(10, 1, fixed=False).with_changes(output_distribution="fixed")
    run = simulate_served(engine, scenario, spec)
    static = engine.predict(scenario)
    end_to_end = summarize(run.run, window=whole_run(run.run))
    assert end_to_end.span_s == pytest.approx(10 * static.e2e_latency_s, rel=1e-9)
    assert end_to_end.energy_j == pytest.approx(10 * static.energy_J, rel=1e-9)


def test_a_ratio_row_is_two_engine_runs(report, engine, table):
    row_report = next(r for r in report.rows if r.row.id == "b25-a100-over-cs3-itl")
    chat = table.workloads["chat"]

    def itl(accelerator: str) -> float:
        scenario = Scenario("llama-3.1-8b", accelerator, input_len=chat.input_len, output_len=chat.output_len)
        return engine.predict(scenario).itl_s

    assert row_report.calibrated.value == pytest.approx(itl("a100-80gb") / itl("wse-3"), rel=1e-12)


def test_the_ideal_model_sets_every_efficiency_to_one_and_keeps_memory(engine):
    constants = ideal_constants(engine.constants)
    for name, values in constants.classes.items():
        calibrated = engine.constants.classes[name]
        assert (values.compute_efficiency, values.memory_efficiency, values.link_efficiency,
                values.interconnect_efficiency, values.per_layer_overhead_s,
                values.busy_power_fraction) == (1.0, 1.0, 1.0, 1.0, 0.0, 0.0)
        # No host time, and the textbook roofline of the whole pass.
        assert (values.step_overhead_s, values.sequence_overhead_s, values.operator_overlap) == (0.0, 0.0, 1.0)
        assert values.usable_memory_fraction == calibrated.usable_memory_fraction
        assert values.runtime_overhead_bytes == calibrated.runtime_overhead_bytes
    catalog = ideal_catalog(engine.catalog)
    assert all(float(a.software_efficiency) == 1.0 for a in catalog.accelerators.values())
    assert float(engine.catalog.accelerator("mi300x").software_efficiency) < 1.0  # the original is untouched


def test_computed_claims_have_values_and_the_others_a_reason(report):
    for claim_report in report.claims:
        claim = claim_report.claim
        if claim.status == "computed":
            assert claim_report.calibrated.value is not None and math.isfinite(claim_report.calibrated.value)
            assert claim.metric.startswith("ratio_") or claim.metric in METRICS
        elif claim.status == "computed by a study":
            assert claim_report.calibrated.value is not None and math.isfinite(claim_report.calibrated.value)
            assert claim.reason and "study" in claim.reason
        else:
            assert claim_report.calibrated is None and claim.reason
    by_id = {c.claim.id: c for c in report.claims}
    # The scaling study's numbers, as the Scaling tab shows them.
    from accelscope.engine.physics.engine import Engine
    from accelscope.engine.studies.claims import claims_check

    checks = {check.claim_id: check.computed_value for check in claims_check(Engine())}
    for claim_id in ("s25-ep-parameter-to-compute-8.4x", "s25-ep-latency-variance-2.1x"):
        assert by_id[claim_id].claim.status == "computed by a study"
        assert by_id[claim_id].calibrated.value == pytest.approx(checks[claim_id], rel=1e-12)


def test_the_architecture_spread_claim_is_the_regime_studys_largest_best_over_worst(report, engine):
    """Sharma's "up to 3.7x between architectures": per regime, the best of Fig. 8's seven graded
    accelerators over the worst in the regime's metric (among those that run it), the largest
    over the regimes, worked out here from the regime grid itself."""
    from accelscope.engine.catalog.regimes import load_regimes
    from accelscope.engine.studies.regimes import regime_scores

    graded = tuple(load_regimes().paper_ratings)
    assert len(graded) == 7
    grid = regime_scores(engine, graded)
    ratios = {}
    for regime in grid.regimes:
        values = [grid.cell(a, regime.id).value for a in graded
                  if grid.cell(a, regime.id).fits and grid.cell(a, regime.id).value > 0]
        if len(values) >= 2:
            ratios[regime.id] = max(values) / min(values)
    claim = next(c for c in report.claims if c.claim.id == "s25-architecture-spread-3.7x")
    assert claim.claim.status == "computed by a study"
    assert claim.calibrated.value == pytest.approx(max(ratios.values()), rel=1e-12)
    # The single-stream TTFT, per system, is the regime nearest the paper's figure.
    assert min(ratios, key=ratios.get) == "single_stream" and ratios["single_stream"] < 10
    assert "Per regime:" in claim.computed_as and "Low-latency single stream" in claim.computed_as


def test_the_700b_moe_claim_compares_the_two_models_on_the_same_devices(report, engine):
    """The MoE routes each token to 8 of its 80 experts: at batch 1 it reads about the dense
    model's bytes (its fixed parts plus 10% of the experts), at batch 64 the batch touches
    1 − 0.9^64 = 99.9% of the experts, nearly all 700B parameters. The reported value is the
    batch-64 ITL ratio, both models on the devices that hold the MoE."""
    from accelscope.engine.studies.claims import CLAIM_WORKLOAD, moe_like_dense_models

    dense, moe = moe_like_dense_models()
    assert moe.total_params == pytest.approx(700e9, rel=1e-3) and dense.total_params == pytest.approx(70e9, rel=1e-3)
    assert moe.moe.experts_per_token / moe.moe.n_routed_experts == 0.1
    claim = next(c for c in report.claims if c.claim.id == "s25-ep-moe-700b-like-70b")
    assert claim.claim.status == "computed by a study"
    tp = int(re.search(r"with TP=(\d+)", claim.computed_as).group(1))
    assert tp > 1

    engine = engine.with_models(dense, moe)  # the study made its own engine; the caller's is unchanged

    def itl(model, batch):
        scenario = Scenario.from_workload(model.id, "b200", CLAIM_WORKLOAD, tp=tp).with_changes(batch=batch)
        return engine.predict(scenario).itl_s

    assert claim.calibrated.value == pytest.approx(itl(moe, 64) / itl(dense, 64), rel=1e-12)
    assert itl(moe, 1) / itl(dense, 1) < 1.2 < claim.calibrated.value  # similar only while few experts are read


def test_validate_json_parses_and_exits_zero(validate_command):
    status, out, err = validate_command[("validate", "--json")]
    assert status == 0 and err == ""
    data = json.loads(out)
    assert {"workloads", "measurements", "summaries", "targets", "claims", "ideal_model"} <= data.keys()
    row = next(r for r in data["measurements"] if r["id"] == "b25-a100-llama8b-b1-throughput")
    assert row["published"]["value"] == 215 and row["calibrated"]["predicted"] > 0
    assert {"ratio", "abs_pct_error", "off_by_2x"} <= row["calibrated"].keys()
    assert data["summaries"]["ideal"]["measured"]["by_group"]["GPUs"]["n"] > 0


def test_validate_text_lists_rows_summaries_targets_and_claims(validate_command, table):
    status, out, _ = validate_command[("validate",)]
    assert status == 0
    for row in table.measurements:
        assert row.metric in out
    for heading in ("Summary over the papers' measurements", "Targets", "Claims", "ideal"):
        assert heading in out
    assert "not computed yet" in out
    assert "computed as: per regime, the best accelerator's value over the worst's" in out


# ---- served runs ---------------------------------------------------------------------------


def test_a_served_run_replaces_the_run_totals_and_keeps_the_static_latencies(engine):
    scenario = Scenario("llama-3.1-8b", "h100-sxm", batch=4, input_len=10, output_len=4)
    static = engine.predict(scenario)
    run = served_runs(engine, {scenario: static}, {scenario: 10})[scenario]
    assert (run.ttft_s, run.itl_s) == (static.ttft_s, static.itl_s)  # latencies stay the static batch's
    assert run.e2e_latency_s > static.e2e_latency_s  # ten requests, four at a time, then the drain
    assert run.power_W == pytest.approx(run.energy_J / run.e2e_latency_s, rel=1e-12)
    assert run.tokens_per_joule == pytest.approx(run.throughput_total_tok_s / run.power_W, rel=1e-12)


def test_a_fixed_batch_run_is_slower_than_continuous_batching(engine):
    """A fixed-batch image decodes each batch for its longest reply before the next starts;
    continuous batching refills the finished slots."""
    scenario = Scenario("llama-3.1-8b", "h100-sxm", batch=8, input_len=350, output_len=190)
    static = engine.predict(scenario)
    fixed = served_runs(engine, {scenario: static}, {scenario: 200}, {scenario})[scenario]
    continuous = served_runs(engine, {scenario: static}, {scenario: 200})[scenario]
    assert continuous.e2e_latency_s < fixed.e2e_latency_s


def test_at_batch_one_fixed_and_continuous_runs_are_the_same(engine):
    scenario = Scenario("llama-3.1-8b", "wse-3", batch=1, input_len=350, output_len=190)
    static = engine.predict(scenario)
    fixed = served_runs(engine, {scenario: static}, {scenario: 1000}, {scenario})[scenario]
    continuous = served_runs(engine, {scenario: static}, {scenario: 1000})[scenario]
    assert fixed.e2e_latency_s == pytest.approx(continuous.e2e_latency_s, rel=1e-12)
    assert fixed.energy_J == pytest.approx(continuous.energy_J, rel=1e-12)


def test_the_dataflow_machines_batch_eight_rows_are_fixed_batch_runs(report, engine, table):
    """The CS-3 and SN40L ran pre-compiled fixed-batch images (Sec. IV-C): each batch of 8
    decodes until its longest reply ends. The expected longest of 8 exponential replies is H_8 =
    2.718 mean replies, so the run lies near 1,000/8 prefills plus H_8 x the mean decode per batch
    at the batch-8 step."""
    chat = table.workloads["chat"]
    assert chat.fixed_batch == ("wse-3", "sn40l") and "fixed batch size" in chat.fixed_batch_basis
    harmonic = sum(1.0 / k for k in range(1, 9))
    for row_id, accelerator, tp in (("b25-cs3-llama8b-b8-throughput", "wse-3", 1),
                                    ("b25-sn40l-llama8b-peak-throughput", "sn40l", 16)):
        scenario = Scenario("llama-3.1-8b", accelerator, batch=8, input_len=chat.input_len,
                            output_len=chat.output_len, tp=tp)
        step = engine.predict(scenario)
        run_time = 1000 / 8 * (step.prefill.time_s + (chat.output_len - 1) * harmonic * step.itl_s)
        expected = 1000 * (chat.input_len + chat.output_len) / run_time
        row_report = next(r for r in report.rows if r.row.id == row_id)
        assert row_report.calibrated.value == pytest.approx(expected, rel=0.1)


def test_the_chat_workload_is_a_served_run_of_the_papers_thousand_requests(table):
    chat = table.workloads["chat"]
    assert chat.requests == 1000 and "1,000" in chat.requests_basis and chat.server is None
    assert table.workloads["sharma-1024"].requests is None and table.workloads["sharma-1024"].server is None


def test_a_served_run_is_slower_than_its_static_batches_by_the_drain(report, engine, table):
    """H100, Llama 3.3 70B, TP=4 at batch C = 512, N = 1,000 requests, m = 189 decode steps: the
    served run takes N/C static batches plus the drain Σ (m/k)·ITL(k) less the m·ITL(C) those
    batches already count. Step times grow with the batch, so the drain lies between
    m·H_C·ITL(1) and m·H_C·ITL(C) (H_C the harmonic number)."""
    row_report = next(r for r in report.rows if r.row.id == "b25-h100-llama70b-tp4-throughput")
    chat = table.workloads["chat"]
    scenario = Scenario("llama-3.3-70b", "h100-sxm", batch=512, input_len=chat.input_len,
                        output_len=chat.output_len, tp=4)
    static = engine.predict(scenario)
    one = engine.predict(scenario.with_changes(batch=1))
    m = chat.output_len - 1
    harmonic = sum(1.0 / k for k in range(1, 513))
    static_time = 1000 / 512 * static.e2e_latency_s
    shortest = static_time + m * harmonic * one.itl_s - m * static.itl_s
    longest = static_time + m * harmonic * static.itl_s - m * static.itl_s
    tokens = 1000 * (chat.input_len + chat.output_len)
    served = row_report.calibrated.value
    assert tokens / longest <= served <= tokens / shortest
    assert served < static.throughput_total_tok_s


# ---- server scenarios ------------------------------------------------------------------------


SERVER_ROWS = {
    # rate row, derived tokens/J row, accelerator
    "b200": ("s25-b200-generation-rate", "s25-b200-energy-efficiency"),
    "mi300x": ("s25-mi300x-generation-rate", "s25-mi300x-energy-efficiency"),
}


def _mlperf_runs(engine, accelerator):
    """MLPerf's Server scenario for Llama-2-70B on one device in BF16, built here from its
    definition (Poisson arrivals, p99 TTFT <= 2 s, p99 TPOT <= 200 ms, every request 1,024 in
    and 256 out, vLLM's defaults): the capacity search's run at capacity for each seed."""
    scenario = engine.resolve(Scenario("llama-2-70b", accelerator, batch=1, input_len=1024, output_len=256))
    runs = []
    for seed in (0, 1, 2, 3):
        spec = ServingSpec(arrival="poisson", requests=1000, input_distribution="fixed",
                           output_distribution="fixed", seed=seed, policy="vllm",
                           slo_ttft_ms=2000.0, slo_tpot_ms=200.0)
        runs.append(capacity_at_slo(engine, scenario, spec))
    return runs


def test_the_multi_stream_rates_are_the_server_scenarios_runs_at_capacity(report, engine, table):
    """Sharma's ‡ rates are MLPerf Server-scenario figures: each prediction is the output
    throughput of the run at the capacity the bisection finds, averaged over the four seeds, and
    the tokens/J derived from it that run's output tokens over its energy."""
    workload = table.workloads["sharma-1024-server"]
    assert (workload.input_len, workload.output_len, workload.requests) == (1024, 256, 1000)
    assert workload.server == ServerObjective(2000.0, 200.0) and "OpenOrca" in workload.basis
    assert SERVED_SEEDS == (0, 1, 2, 3)
    rows = {r.row.id: r for r in report.rows}
    for accelerator, (rate_id, efficiency_id) in SERVER_ROWS.items():
        runs = _mlperf_runs(engine, accelerator)
        for run in runs:
            # The rate found meets the objective; the next one tried above it does not.
            assert 0 < run.rate_per_s < run.failing_rate_per_s
            assert run.metrics.ttft_s.p99 <= 2.0 and run.metrics.tpot_s.p99 <= 0.2 and not run.metrics.unstable
        throughput = sum(run.metrics.output_tokens_per_s for run in runs) / len(runs)
        per_joule = sum(run.metrics.output_tokens_per_joule for run in runs) / len(runs)
        rate, efficiency = rows[rate_id], rows[efficiency_id]
        assert rate.row.spec.server == workload.server and efficiency.row.spec.server == workload.server
        assert rate.calibrated.value == pytest.approx(throughput, rel=1e-12)
        assert efficiency.calibrated.value == pytest.approx(per_joule, rel=1e-12)
        # Many streams at once: far above one stream's rate, and at the capacity found.
        one_stream = engine.predict(Scenario("llama-2-70b", accelerator, input_len=1024, output_len=256))
        assert rate.calibrated.value > 10 * one_stream.throughput_output_tok_s
        assert [found.rate_rps for found in rate.server] == [tuple(run.rate_per_s for run in runs)]
        # Compared, not a gap: a prediction, a ratio, and the explanation of why it is far off.
        assert rate.row.not_computed is None and rate.ratio("calibrated") is not None
        assert rate.row.in_statistics and not efficiency.row.in_statistics
        assert not rate.off() or "KV cache" in rate.row.explanation
        assert rate.ideal.value > rate.calibrated.value


def test_a_server_run_with_no_capacity_says_why(engine):
    """An objective no rate can meet (a 1 ms p99 TTFT) leaves no prediction, and says so."""
    scenario = engine.resolve(Scenario("llama-3.1-8b", "h100-sxm", batch=1, input_len=512, output_len=16))
    key = (scenario, 40, ServerObjective(1.0, 200.0))
    found = server_runs(engine, {scenario: engine.predict(scenario)}, [key])[key]
    assert found.result is None and found.reason.startswith("no arrival rate meets p99 TTFT <= 1 ms")
    # A setup whose weights do not fit is left to its static result, which says why.
    too_big = engine.resolve(Scenario("llama-2-70b", "a100-80gb", batch=1, input_len=512, output_len=16))
    assert server_runs(engine, {too_big: engine.predict(too_big)}, [(too_big, 40, key[2])]) == {}


def test_server_spec_is_the_mlperf_server_scenario():
    spec = server_spec(1000, ServerObjective(2000.0, 200.0), seed=3).validate()
    assert (spec.arrival, spec.policy, spec.requests, spec.seed) == ("poisson", "vllm", 1000, 3)
    assert (spec.input_distribution, spec.output_distribution) == ("fixed", "fixed")
    assert (spec.slo_ttft_ms, spec.slo_tpot_ms) == (2000.0, 200.0)
    assert (spec.max_num_seqs, spec.max_batched_tokens, spec.memory_fraction) == (None, None, None)  # vLLM's defaults


def test_validate_says_what_the_server_rows_assumed(report):
    text = format_report(report)
    assert ("Workload 'sharma-1024-server': 1024 input, 256 output tokens (assumed; see resources/measurements.md); "
            "a server scenario (MLPerf Inference's Server): runs of 1,000 requests arriving as a Poisson "
            "stream") in text
    assert "p99 TTFT <= 2,000 ms and p99 TPOT <= 200 ms" in text and "(seeds 0, 1, 2, 3)" in text
    (b200,) = [line for line in text.splitlines() if "throughput_output_tok_s" in line and "7,783" in line]
    assert "server capacity" in b200 and "vLLM limits 1,024 sequences" in b200 and "KV cache" in b200
    data = to_dict(report)
    assert data["workloads"]["sharma-1024-server"]["server"] == {"ttft_p99_ms": 2000.0, "tpot_p99_ms": 200.0}
    assert "OpenOrca" in data["workloads"]["sharma-1024-server"]["basis"]
    rows = {row["id"]: row for row in data["measurements"]}
    for rate_id, efficiency_id in SERVER_ROWS.values():
        for row_id in (rate_id, efficiency_id):
            server = rows[row_id]["server"]
            assert {key: server[key] for key in ("arrivals", "requests_per_run", "input_len", "output_len",
                                                  "length_distribution", "policy", "objective", "seeds")} == {
                "arrivals": "poisson", "requests_per_run": 1000, "input_len": 1024, "output_len": 256,
                "length_distribution": "fixed", "policy": "vllm",
                "objective": {"ttft_p99_ms": 2000.0, "tpot_p99_ms": 200.0}, "seeds": [0, 1, 2, 3]}
            (found,) = server["calibrated"]
            assert len(found["capacity_rps"]) == 4 and found["max_num_seqs"] == 1024 and found["kv_cache_tokens"] > 0
            assert rows[row_id]["calibrated"]["predicted"] > 0 and rows[row_id]["not_computed"] is None
    assert rows["s25-b200-power"]["server"] is None  # the TDP rows stay single-stream


# ---- the accuracy targets ---------------------------------------------------------------------


def _measured(report, group):
    return [r for r in report.rows
            if r.row.in_statistics and r.row.kind == "measured" and r.group == group]


def test_no_prediction_is_off_by_more_than_2x_without_an_explanation(report):
    unexplained = [r.row.id for r in report.rows if r.off() and r.row.explanation is None]
    assert unexplained == []


@pytest.mark.xfail(strict=True, reason=(
    "GPUs at 21% median |error| over 32 rows (target 20%; 34% before the serving stack's host time, "
    "per-operator rooflines, the 30 us per-layer floor, the cost of each collective and the activation-quantisation "
    "kernels): the ROCm stack on the MI300X runs further below "
    "the hardware than its 0.8 stack factor, vLLM's expert-parallel path loses more than routing imbalance "
    "and all-to-alls, and multi-process tensor parallelism costs more than the modelled collectives; see "
    "resources/measurements.md"))
def test_gpu_median_error_meets_the_target(report):
    bucket = stats(_measured(report, "GPUs"), "calibrated")
    assert bucket.n >= 30
    assert bucket.median_abs_pct_error <= 20.0


@pytest.mark.xfail(strict=True, reason=(
    "Dataflow at 50% median |error| over 16 rows (target 35%; 57% before the fixed-batch images): the CS-3 "
    "and SN40L runs include per-request time outside the accelerator (HTTP endpoints) that no published "
    "figure sets, and the SN40L's inter-RDU latency and HBM bandwidth are catalog estimates; see "
    "resources/measurements.md"))
def test_dataflow_median_error_meets_the_target(report):
    bucket = stats(_measured(report, "dataflow"), "calibrated")
    assert bucket.n >= 15
    assert bucket.median_abs_pct_error <= 35.0


def test_a_rows_setup_reads_as_the_engine_runs_it(table):
    rows = {row.id: row for row in table.measurements}
    b8 = setup_text(rows["b25-cs3-llama8b-b8-throughput"].spec)
    assert b8.startswith("batch 8, 350 input / 190 output tokens, weights/activations/KV BF16/BF16/BF16")
    assert "a served run of 1,000 requests queued at the start" in b8 and "(wse-3 from fixed-batch images" in b8
    gain = setup_text(rows["b25-tp4-throughput-gain"].spec)
    assert "ratio of (tp 4, batch 512) over (tp 1, batch 128); median over 15 configurations" in gain
    assert "finished requests replaced at once" in gain
    # TTFT and ITL are the static batch's: no served run is claimed for them.
    assert "served run" not in setup_text(rows["b25-a100-over-cs3-itl"].spec)
    server = setup_text(rows["s25-mi300x-generation-rate"].spec)
    assert server.startswith("1,024 input / 256 output tokens, weights/activations/KV BF16/BF16/BF16; a server "
                             "scenario (MLPerf Inference's Server): runs of 1,000 requests arriving as a Poisson "
                             "stream")
    assert "vLLM's scheduler with its default limits" in server and "batch" not in server
