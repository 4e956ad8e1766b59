"""The command line's cost: predict and serve take the price and site flags and print the cost
keys, known where a price is and null (with the reason) where none is; bad values are one
line on stderr and exit status 2."""

from __future__ import annotations

import json

import pytest

from accelscope.cli.main import main

PREDICT = ["predict", "--model", "llama-3.1-8b", "--batch", "16"]
SERVE = ["serve", "--model", "llama-3.1-8b", "--accelerator", "h100-sxm", "--requests", "120", "--rate", "3"]
COST_KEYS = {"usd_per_hour", "usd_per_mtok_output", "usd_per_mtok_total", "energy_share", "tco_usd_per_year"}


def run(capsys, argv):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_predict_prints_the_cost_keys_known_and_unknown(capsys):
    status, out, err = run(capsys, [*PREDICT, "--accelerator", "h100-sxm", "--json"])
    assert status == 0 and err == ""
    data = json.loads(out)
    cost = data["cost"]
    assert COST_KEYS <= set(cost["rental"]) and COST_KEYS <= set(cost["ownership"])
    rental, owned = cost["rental"], cost["ownership"]
    # The book's rental: $2.49 per device-hour, over the tokens the engine computed.
    assert rental["known"] and rental["price"]["usd"] == 2.49 and rental["price"]["date"] == "early 2026"
    assert rental["usd_per_mtok_output"] == pytest.approx(2.49 / (3600 * data["throughput_output_tok_s"]) * 1e6)
    assert rental["usd_per_mtok_total"] == pytest.approx(2.49 / (3600 * data["throughput_total_tok_s"]) * 1e6)
    assert rental["tco_usd_per_year"] == pytest.approx(2.49 * 8760)
    # No purchase price for the H100 in the book: unknown, never 0.
    assert not owned["known"] and owned["price"] is None and "no purchase price" in owned["unknown"]
    assert all(owned[key] is None for key in COST_KEYS)
    assert cost["site"]["pue"]["value"] == 1.58 and cost["site"]["pue"]["grade"] == "third-party"


def test_predict_takes_the_price_and_site_flags(capsys):
    status, out, _ = run(capsys, [*PREDICT, "--accelerator", "h100-sxm", "--tp", "2", "--json", "--price-per-hour",
                                  "3", "--purchase-price", "30000", "--electricity-per-kwh", "0.2", "--pue", "1.25",
                                  "--amortisation-years", "5", "--utilisation", "0.5", "--hosting-per-device-year",
                                  "1000"])
    assert status == 0
    data = json.loads(out)
    rental, owned = data["cost"]["rental"], data["cost"]["ownership"]
    assert rental["usd_per_hour"] == pytest.approx(6.0) and rental["price"]["grade"] == "own"
    assert rental["tco_usd_per_year"] == pytest.approx(6.0 * 8760 * 0.5)
    # Owned: 2 x 30,000 / (5 x 4,380 h) + energy + 2 x 1,000 / 4,380 h per hour served.
    capital, hosting = 60_000 / (5 * 4380), 2000 / 4380
    assert owned["capital_usd_per_hour"] == pytest.approx(capital)
    assert owned["hosting_usd_per_hour"] == pytest.approx(hosting)
    energy = owned["energy_usd_per_hour"]
    assert energy / (1.25 * 0.2) * 1e3 > data["power_w"]  # idle devices over the idle half of the year add to the run's
    assert owned["usd_per_hour"] == pytest.approx(capital + hosting + energy)
    assert owned["energy_share"] == pytest.approx(energy / owned["usd_per_hour"])
    assert owned["tco_usd_per_year"] == pytest.approx(owned["usd_per_hour"] * 4380)


def test_predict_text_says_rented_and_owned(capsys):
    status, out, _ = run(capsys, [*PREDICT, "--accelerator", "m4-max"])
    assert status == 0
    assert "cost, rented: per token unknown: no rental price is known for m4-max" in out and "--price-per-hour" in out
    assert "cost, owned: per token unknown: no purchase price is known for m4-max" in out
    status, out, _ = run(capsys, [*PREDICT, "--accelerator", "l40s"])
    assert "cost, rented: $1.58 per device-hour (Atlantic.Net, n.d.) -> $1.58 per hour" in out
    assert "cost, owned: $8,500 per device (Hugging Face hardware page, n.d.)" in out


@pytest.mark.parametrize(("flags", "message"), [
    (["--pue", "0.5"], "pue must be at least 1"),
    (["--utilisation", "1.5"], "utilisation must be above 0 and at most 1"),
    (["--price-per-hour", "0"], "must be a finite number above 0"),
    (["--purchase-price", "-3"], "must be a finite number above 0"),
    (["--electricity-per-kwh", "cheap"], "expected a number above 0"),
])
def test_bad_cost_flags_are_one_line_and_status_2(capsys, flags, message):
    status, out, err = run(capsys, [*PREDICT, "--accelerator", "h100-sxm", *flags])
    assert status == 2 and out == "" and err.count("\n") == 1 and message in err


def test_predict_jsonl_takes_the_cost_keys(capsys, tmp_path):
    lines = tmp_path / "in.jsonl"
    lines.write_text("\n".join(json.dumps(line) for line in (
        {"model": "llama-3.1-8b", "accelerator": "m4-max", "purchase_price": 3999, "utilisation": 0.25},
        {"model": "llama-3.1-8b", "accelerator": "h100-sxm", "pue": 0.2},
    )) + "\n")
    status, out, err = run(capsys, ["predict", "--jsonl", str(lines)])
    assert status == 2 and "pue must be at least 1" in err
    first, second = (json.loads(line) for line in out.splitlines())
    owned = first["cost"]["ownership"]
    assert owned["known"] and owned["price"]["usd"] == 3999 and owned["capital_usd_per_hour"] == pytest.approx(
        3999 / (4 * 8760 * 0.25))
    assert "error" in second


def test_serve_prints_the_cost_at_the_achieved_rate_and_at_capacity(capsys):
    status, out, err = run(capsys, [*SERVE, "--json", "--capacity", "--purchase-price", "30000"])
    assert status == 0, err
    data = json.loads(out)
    achieved, at_capacity = data["cost"], data["cost_at_capacity"]
    assert achieved["rental"]["usd_per_mtok_output"] == pytest.approx(
        2.49 / (3600 * data["throughput_output_tok_s"]) * 1e6)
    assert COST_KEYS <= set(achieved["ownership"]) and achieved["ownership"]["known"]
    assert at_capacity["rental"]["known"] and data["capacity_rps"] > 0
    status, out, _ = run(capsys, [*SERVE, "--accelerator", "m4-max"])
    assert status == 0 and "cost at the achieved rate, rented: per token unknown: no rental price" in out
