"""accelscope serve: the scenario flags of predict plus traffic, scheduler and SLO; JSON and
JSONL with the documented keys; bad input is one line on stderr and exit status 2."""

from __future__ import annotations

import dataclasses
import json

import pytest

from accelscope.cli.arguments import _SCENARIO_FLAGS, scenario_keys
from accelscope.cli.main import build_parser, main
from accelscope.cli.serve import OPTION_FIELDS, spec_keys
from accelscope.engine.core.scenario import Scenario
from accelscope.engine.core.serving import ServingSpec

BASE = ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--requests", "200"]
DISTRIBUTION_KEYS = {"mean", "p50", "p90", "p99"}
RESULT_KEYS = {
    "throughput_output_tok_s", "throughput_total_tok_s", "request_rate_rps", "ttft_ms", "itl_ms", "tpot_ms",
    "e2e_latency_s", "goodput_rps", "slo_attainment", "largest_iteration_batch_one_replica",
    "mean_running_all_replicas", "mean_waiting_all_replicas", "preemptions", "kv_blocks_total", "unstable",
    "power_w", "tokens_per_joule", "devices", "warnings", "steady_state", "assumptions",
}


def run(capsys, argv):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_every_scenario_field_has_a_flag_and_a_jsonl_key():
    fields = {f.name for f in dataclasses.fields(Scenario)}
    assert fields <= set(_SCENARIO_FLAGS) and fields <= scenario_keys()
    serve = build_parser().parse_args(["serve", "--model", "m", "--accelerator", "a"])
    predict = build_parser().parse_args(["predict", "--model", "m", "--accelerator", "a"])
    for name in fields - {"activation_precision"}:  # --precision sets the activations
        assert hasattr(serve, name) and hasattr(predict, name), name


def test_every_serving_field_has_a_flag_and_a_jsonl_key():
    renamed = {field: option for option, field in OPTION_FIELDS.items()}
    parsed = build_parser().parse_args(["serve", "--model", "m", "--accelerator", "a"])
    for field in (f.name for f in dataclasses.fields(ServingSpec)):
        key = "rate" if field == "rate_rps" else renamed.get(field, field)
        if field in ("prefill_replicas", "decode_replicas"):
            key = "disaggregate"  # P:D
        assert key in spec_keys(), field
        assert hasattr(parsed, key), field


def test_json_has_the_documented_keys(capsys):
    status, out, err = run(capsys, [*BASE, "--rate", "5", "--json"])
    assert status == 0 and err == ""
    data = json.loads(out)
    assert RESULT_KEYS <= set(data)
    for key in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_latency_s"):
        assert set(data[key]) == DISTRIBUTION_KEYS
        assert data[key]["p50"] <= data[key]["p90"] <= data[key]["p99"]
    assert data["requests"] == 200 and data["finished"] == 200 and data["rate"] == 5.0
    assert data["assumptions"]["policy"] == "vllm" and data["assumptions"]["block_size"] == 16
    assert data["assumptions"]["max_num_seqs"] == 1024  # vLLM's default on an 80 GB H100
    assert not data["unstable"]


def test_text_names_the_traffic_and_the_slo(capsys):
    status, out, _ = run(capsys, [*BASE, "--rate", "5", "--slo-ttft-ms", "500"])
    assert status == 0
    assert "200 requests, 5 requests/s (poisson)" in out and "p99 TTFT 500 ms" in out


def test_offline_closed_loop_and_policies(capsys):
    status, out, _ = run(capsys, [*BASE, "--rate", "inf", "--policy", "trtllm-no-evict", "--json"])
    data = json.loads(out)
    assert status == 0 and data["rate"] == "inf" and data["assumptions"]["block_size"] == 32
    assert data["preemptions"] == 0
    status, out, _ = run(capsys, [*BASE, "--concurrency", "4", "--json"])
    data = json.loads(out)
    assert status == 0 and data["arrival"] == "closed" and data["largest_iteration_batch_one_replica"] <= 4


def test_capacity_and_devices_for_a_target(capsys):
    status, out, _ = run(capsys, [*BASE, "--capacity", "--target-rate", "50", "--json"])
    data = json.loads(out)
    assert status == 0 and data["capacity_rps"] > 0
    assert data["devices_for_target"] == -(-50 // data["capacity_rps"]) * data["devices"]


def test_a_trace_file(capsys, tmp_path):
    trace = tmp_path / "t.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0,100,10\n0.5,200,20\n1.0,50,5\n")
    status, out, _ = run(capsys, ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--trace",
                                  str(trace), "--json"])
    data = json.loads(out)
    assert status == 0 and data["requests"] == 3 and data["finished"] == 3 and data["rate"] is None


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--rate", "-1"], "argument --rate: must be a finite number above 0"),
        (["--rate", "fast"], "argument --rate: expected a number above 0"),
        (["--policy", "sglang"], "argument --policy: invalid choice"),
        (["--disaggregate", "3"], "disaggregate must be P:D"),
        (["--disaggregate", "0:2"], "at least one replica in each pool"),
        (["--length-cv", "0.9", "--input-dist", "uniform"], "uniform lengths need length_cv"),
        (["--trace", "/nonexistent/t.csv"], "--requests cannot be used with --trace"),
        (["--requests", "0"], "argument --requests: must be at least 1"),
        (["--memory-fraction", "2"], "argument --memory-fraction: must be between 0 and 1"),
    ],
)
def test_bad_arguments_are_one_line_and_status_2(capsys, extra, message):
    status, out, err = run(capsys, [*BASE, *extra])
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        # Options that would be ignored are refused, naming them.
        (["--target-rate", "50"], "--target-rate needs --capacity"),
        (["--link-gbps", "100"], "--link-gbps set a custom link: add --link custom"),
        (["--trace", "t.csv", "--rate", "3"], "--rate cannot be used with --trace"),
        # Times that would lose precision.
        (["--rate", "1e-12"], "rate_rps must be at least 1e-06 requests/s"),
        # Prompts the model cannot hold: refused as a trace's are rejected, never cut.
        (["--input-len", "200000"], "exceed Llama 3.1 8B's context of 131,072 tokens"),
        # A prefix as long as the prompts changes nothing.
        (["--prefix-tokens", "2000", "--input-len", "1024"], "--prefix-tokens 2,000 is not shorter than the prompts"),
        # So many replicas that their tables would not fit in memory.
        (["--dp", "100000", "--router", "least-outstanding"], "more than the simulator holds at once"),
        # A static image with no room for its KV cache serves nothing.
        (["--policy", "static", "--memory-fraction", "0.2"], "no memory is left for a KV cache"),
    ],
)
def test_what_serve_would_get_wrong_is_one_line_and_status_2(capsys, argv, message):
    status, out, err = run(capsys, ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", *argv])
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1, err


def test_a_tensor_parallel_size_that_splits_a_head_is_a_warning(capsys):
    status, out, _ = run(capsys, [*BASE, "--tp", "3", "--json"])
    data = json.loads(out)
    assert status == 0 and any("head" in warning for warning in data["warnings"])
    status, out, _ = run(capsys, [*BASE, "--tp", "3"])
    assert status == 0 and out.startswith("warning: ")


def test_json_of_a_run_that_finishes_nothing_has_nulls_not_nan(capsys, tmp_path):
    trace = tmp_path / "long.csv"
    trace.write_text("arrival_s,input_tokens,output_tokens\n0,200000,10\n")
    status, out, _ = run(capsys, ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--trace",
                                  str(trace), "--json"])
    data = json.loads(out)
    assert status == 0 and data["finished"] == 0 and data["rejected"] == 1
    assert data["throughput_output_tok_s"] is None and data["ttft_ms"]["p99"] is None
    status, out, _ = run(capsys, ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--trace",
                                  str(trace)])
    assert status == 0 and "nan" not in out.lower() and "1 requests rejected" in out


def test_a_capacity_is_a_bracket_and_a_disaggregated_deployment_has_one(capsys):
    status, out, _ = run(capsys, ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm",
                                  "--disaggregate", "1:3", "--capacity", "--target-rate", "20", "--json"])
    data = json.loads(out)
    assert status == 0 and data["capacity"]["status"] == "found" and data["devices_for_target"] >= 4
    assert data["capacity"]["meets_slo_rps"] < data["capacity"]["misses_slo_rps"] <= \
        1.03 * data["capacity"]["meets_slo_rps"]


def test_a_json_capacity_flag_must_be_a_boolean(capsys, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps({"model": "llama-3.1-8b", "accelerator": "h100-sxm", "capacity": "false"}) + "\n")
    status, out, err = run(capsys, ["serve", "--jsonl", str(path)])
    assert status == 2 and "capacity must be true or false" in err


def test_jsonl_answers_in_order_with_errors_in_place(capsys, monkeypatch, tmp_path):
    lines = [
        {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "requests": 50, "rate": "inf"},
        {"model": "llama-3.1-8b"},
        {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "requests": 50, "rate": 2, "policy": "static", "batch": 8},
        {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "speed": 3},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    status, out, err = run(capsys, ["serve", "--jsonl", str(path)])
    results = [json.loads(line) for line in out.splitlines()]
    assert status == 2 and len(results) == 4
    assert results[0]["rate"] == "inf" and results[0]["finished"] == 50
    assert results[1] == {"line": 2, "error": "line 2: 'accelerator' must be given as a string"}
    assert results[2]["assumptions"]["policy"] == "static" and results[2]["assumptions"]["static_batch"] == 8
    assert results[3]["line"] == 4 and "unknown key 'speed'" in results[3]["error"]
    assert err.count("\n") == 2
