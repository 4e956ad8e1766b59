"""The command line: predict and catalog, their JSON, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from accelscope.cli.main import main

REQUIRED_KEYS = {
    "ttft_ms", "itl_ms", "e2e_latency_s", "throughput_output_tok_s", "throughput_total_tok_s",
    "power_w", "tokens_per_joule", "devices", "bound", "prefill", "decode", "memory", "assumptions",
}
PHASE_KEYS = {"flops", "bytes", "operational_intensity", "time_ms", "bound"}
MEMORY_KEYS = {"weights_gb", "kv_cache_gb", "recurrent_state_gb", "activations_gb", "overhead_gb", "capacity_gb",
               "fits", "max_batch"}


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(list(args))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _finite(value: object) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return True


def test_predict_json_has_the_documented_keys(capsys, engine):
    status, out, err = run(
        capsys, "predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm",
        "--batch", "1", "--input-len", "1024", "--output-len", "256", "--json",
    )
    assert status == 0 and err == ""
    data = json.loads(out)
    assert REQUIRED_KEYS <= data.keys()
    assert PHASE_KEYS <= data["prefill"].keys() and PHASE_KEYS <= data["decode"].keys()
    assert MEMORY_KEYS <= data["memory"].keys()
    assert data["decode"]["bound"] == "memory" and data["bound"] == "memory"
    # The CLI prints the engine's numbers, scaled to the unit its key names.
    from accelscope.engine.core.scenario import Scenario

    result = engine.predict(Scenario("llama-3.1-8b", "h100-sxm"))
    assert data["itl_ms"] == pytest.approx(result.itl_s * 1e3, rel=1e-12)
    assert data["memory"]["weights_gb"] == pytest.approx(result.memory.weights_bytes / 1e9, rel=1e-12)
    assert data["assumptions"]["memory_efficiency"] == 0.85


def test_predict_text_states_the_host_time_where_there_is_one(capsys):
    """A GPU's serving stack works 1.0 ms + 64 x 25 us = 2.6 ms per decode step and, over the
    8 prefill chunks of 64 x 1,024 tokens, 8 x 1.0 + 64 x 0.025 = 9.6 ms; a wafer-scale engine
    runs its steps without host time, and says nothing of it."""
    status, out, _ = run(capsys, "predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "64")
    assert status == 0
    assert "serving stack's host time: 2.600 ms of each decode step, 9.60 ms of the prefill" in out
    status, out, _ = run(capsys, "predict", "--model", "llama-3.1-8b", "--accelerator", "wse-3", "--batch", "64")
    assert status == 0 and "host time" not in out


def test_predict_precision_flags(capsys):
    status, out, _ = run(
        capsys, "predict", "--model", "qwen3-32b", "--accelerator", "a100-80gb", "--precision", "fp8",
        "--kv-precision", "bf16", "--json",
    )
    data = json.loads(out)
    assert status == 0
    assert data["scenario"]["weight_precision"] == "fp8" and data["scenario"]["kv_precision"] == "bf16"
    assert data["compute_precision"] == "bf16"  # A100 has no FP8 units: W8A8 runs as W8A16
    assert any("no units for the activation format" in text for text in data["warnings"])


def test_predict_starts_from_the_models_own_weight_format(capsys, tmp_path):
    """gpt-oss is published in MXFP4 and DeepSeek-V3 in FP8: without a weight precision or
    --precision, those are the weights; either flag overrides it, and a model with no format
    of its own stays in BF16. JSONL lines follow the same rule."""
    def weights(*flags: str) -> str:
        status, out, _ = run(capsys, "predict", "--accelerator", "h200", "--json", *flags)
        assert status == 0
        return json.loads(out)["scenario"]["weight_precision"]

    assert weights("--model", "gpt-oss-120b") == "mxfp4"
    assert weights("--model", "deepseek-v3", "--tp", "8") == "fp8"
    assert weights("--model", "llama-3.1-8b") == "bf16"
    assert weights("--model", "gpt-oss-120b", "--precision", "bf16") == "bf16"
    assert weights("--model", "gpt-oss-120b", "--weight-precision", "nvfp4") == "nvfp4"
    path = tmp_path / "in.jsonl"
    path.write_text('{"model": "gpt-oss-20b", "accelerator": "h200"}\n'
                    '{"model": "gpt-oss-20b", "accelerator": "h200", "weight_precision": "fp8"}\n')
    status, out, _ = run(capsys, "predict", "--jsonl", str(path))
    assert status == 0
    assert [json.loads(line)["scenario"]["weight_precision"] for line in out.splitlines()] == ["mxfp4", "fp8"]


def test_predict_reports_a_hybrids_recurrent_state(capsys):
    """Nemotron-H 8B keeps 24 Mamba layers' state, 24 x 4,255,744 = 102,137,856 B per sequence
    (test_hybrid_physics works the layer out); at batch 10: 1.021 GB, in the JSON and the text.
    The catalog lists the state per sequence and gpt-oss's own weight format."""
    flags = ("predict", "--model", "nemotron-h-8b", "--accelerator", "h100-sxm", "--batch", "10")
    status, out, _ = run(capsys, *flags, "--json")
    assert status == 0
    assert json.loads(out)["memory"]["recurrent_state_gb"] == pytest.approx(1.02137856, rel=1e-12)
    status, text, _ = run(capsys, *flags)
    assert "recurrent state 1.02 GB" in text
    status, out, _ = run(capsys, "catalog", "--json")
    models = {m["id"]: m for m in json.loads(out)["models"]}
    assert models["nemotron-h-8b"]["recurrent_state_bytes_per_sequence"] == 102_137_856
    assert models["nemotron-h-8b"]["recurrent_layers"] == 24
    assert models["llama-3.1-8b"]["recurrent_state_bytes_per_sequence"] == 0.0
    assert models["gpt-oss-120b"]["native_weight_precision"] == "mxfp4"
    assert models["llama-3.1-8b"]["native_weight_precision"] is None


def test_a_scenario_that_does_not_fit_says_what_would(capsys):
    status, out, _ = run(capsys, "predict", "--model", "llama-3.3-70b", "--accelerator", "h100-sxm", "--json")
    data = json.loads(out)
    assert status == 0
    assert data["fits"] is False and data["memory"]["fits"] is False
    assert "do not fit" in data["fit_reason"]
    assert data["needs"]["tp"] == 2 and 0 < data["needs"]["offload_fraction"] < 1
    assert _finite(data)
    status, text, _ = run(capsys, "predict", "--model", "llama-3.3-70b", "--accelerator", "h100-sxm")
    assert "DOES NOT FIT" in text and "TP=2" in text


def test_predict_model_from_config_json(capsys):
    from pathlib import Path

    config = Path(__file__).parent / "fixtures" / "hf" / "llama-3.1-8b" / "config.json"
    status, out, _ = run(capsys, "predict", "--model", str(config), "--accelerator", "h100-sxm", "--json")
    by_path = json.loads(out)
    _, out, _ = run(capsys, "predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--json")
    by_id = json.loads(out)
    assert status == 0
    assert by_path["itl_ms"] == pytest.approx(by_id["itl_ms"], rel=1e-12)


def test_jsonl_keeps_order_and_reports_bad_lines(capsys, tmp_path):
    lines = [
        {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "batch": 4},
        {"model": "no-such-model", "accelerator": "h100-sxm"},
        {"model": "mixtral-8x7b", "accelerator": "mi300x", "batch": 16, "precision": "fp8", "tp": 2, "ep": 2},
    ]
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    status, out, err = run(capsys, "predict", "--jsonl", str(path))
    results = [json.loads(line) for line in out.splitlines()]
    assert status == 2
    assert len(results) == 3
    assert results[0]["model"] == "llama-3.1-8b" and results[0]["scenario"]["batch"] == 4
    assert "error" in results[1] and "no-such-model" in results[1]["error"]
    assert results[2]["model"] == "mixtral-8x7b" and results[2]["scenario"]["ep"] == 2
    assert err.count("\n") == 1 and "line 2" in err


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "0"], "--batch"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "-3"], "--batch"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "many"], "--batch"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--batch", "99999999999"], "batch"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--offload", "1.5"], "--offload"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--offload", "nan"], "--offload"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--precision", "fp12"], "--precision"),
        (["predict", "--model", "llama-3.1-8", "--accelerator", "h100-sxm"], "did you mean llama-3.1-8b"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100"], "unknown accelerator"),
        (["predict", "--model", "/no/such/config.json", "--accelerator", "h100-sxm"], "not found"),
        (["predict", "--accelerator", "h100-sxm"], "--model"),
        (["predict", "--jsonl", "/no/such/file.jsonl"], "cannot read"),
        (["frobnicate"], "invalid choice"),
        (["predict", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--bogus"], "unrecognized"),
    ],
)
def test_bad_arguments_give_one_line_and_status_2(capsys, args, fragment):
    status, out, err = run(capsys, *args)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and fragment in err
    assert "Traceback" not in err


def test_bad_config_json_names_the_file(capsys, tmp_path):
    config = tmp_path / "broken.json"
    config.write_text("{not json")
    status, _, err = run(capsys, "predict", "--model", str(config), "--accelerator", "h100-sxm")
    assert status == 2 and "broken.json" in err and err.count("\n") == 1


def test_catalog_json_lists_every_id(capsys):
    status, out, _ = run(capsys, "catalog", "--json")
    data = json.loads(out)
    assert status == 0
    assert [a["id"] for a in data["accelerators"]][:3] == ["a100-40gb", "a100-80gb", "h100-sxm"]
    assert len(data["accelerators"]) == 48 and len(data["models"]) == 40
    h100 = next(a for a in data["accelerators"] if a["id"] == "h100-sxm")
    assert h100["peak_flops"]["bf16"] == pytest.approx(989.4e12)
    scout = next(m for m in data["models"] if m["id"] == "llama-4-scout-17b-16e")
    assert scout["moe"]["routed_experts"] == 16


def test_catalog_text(capsys):
    status, out, _ = run(capsys, "catalog")
    assert status == 0 and "h100-sxm" in out and "deepseek-r1" in out


def test_console_script_runs_as_a_process():
    """The installed command, as a user types it."""
    completed = subprocess.run(
        [sys.executable, "-m", "accelscope.cli.main", "predict", "--model", "qwen3-8b", "--accelerator", "wse-3", "--json"],
        capture_output=True, text=True, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["accelerator"] == "wse-3"
