"""``predict --jsonl`` and ``serve --jsonl`` read their input as ``--trace`` reads a trace: within
size and line limits, never from a named pipe or device; good lines are answered and bad ones
named (the first few on stderr, then a count). A number too long for Python to convert, in a
JSONL input or a trace, names the file and line; a user accelerator file that cannot be read is
reported as that file's problem, not as an unknown accelerator."""

from __future__ import annotations

import io
import json
import os

import pytest

from accelscope.cli import arguments
from accelscope.cli.main import main

MODEL, ACCELERATOR = "llama-3.1-8b", "h100-sxm"
GOOD = json.dumps({"model": MODEL, "accelerator": ACCELERATOR})
HUGE = "9" * 5000  # past Python's 4,300-digit int() limit


def refused(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err, captured.err
    assert captured.out == ""
    return captured.err


@pytest.mark.parametrize("command", ["predict", "serve"])
def test_a_device_or_pipe_is_refused_at_once(command, tmp_path, capsys):
    assert main([command, "--jsonl", "/dev/zero"]) == 2
    assert "/dev/zero: not a regular file (a character device)" in refused(capsys)
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # no writer: opening it would wait forever
    assert main([command, "--jsonl", str(fifo)]) == 2
    assert "not a regular file (a named pipe)" in refused(capsys)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path, capsys):
    big = tmp_path / "big.jsonl"
    with big.open("wb") as stream:  # sparse: nothing is written to disk
        stream.truncate(arguments.MAX_JSONL_BYTES + 1)
    assert main(["predict", "--jsonl", str(big)]) == 2
    assert "larger than 64 MB" in refused(capsys)


def test_more_lines_than_the_limit_are_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(arguments, "MAX_JSONL_LINES", 5)
    path = tmp_path / "many.jsonl"
    path.write_text("\n".join([GOOD] * 6) + "\n")
    assert main(["predict", "--jsonl", str(path)]) == 2
    assert "more than 5 lines; split the file" in refused(capsys)
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join([GOOD] * 6) + "\n"))
    assert main(["serve", "--jsonl", "-"]) == 2
    assert "standard input: more than 5 lines" in capsys.readouterr().err


def test_good_lines_are_answered_and_bad_ones_named_within_a_cap(tmp_path, capsys):
    bad = arguments.MAX_SHOWN_ERRORS + 30
    lines = ["garbage"] * bad + ["x" * (arguments.MAX_LINE_CHARS + 10), GOOD]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert main(["predict", "--jsonl", str(path)]) == 2
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert len(err) == arguments.MAX_SHOWN_ERRORS + 1 and "Traceback" not in captured.err
    assert err[0].startswith("accelscope predict: line 1: ")
    assert err[-1].startswith(f"accelscope predict: {bad + 1} of {bad + 2} lines were bad")
    answers = [json.loads(line) for line in captured.out.splitlines()]
    assert len(answers) == len(lines)  # one answer a line, in order
    assert "longer than 65,536 characters" in answers[-2]["error"]
    assert "error" not in answers[-1] and answers[-1]["ttft_ms"] > 0


@pytest.mark.parametrize("command", ["predict", "serve"])
def test_a_number_too_long_to_convert_is_named_plainly(command, tmp_path, capsys):
    path = tmp_path / "digits.jsonl"
    path.write_text(f'{{"model": "{MODEL}", "accelerator": "{ACCELERATOR}", "batch": {HUGE}}}\n')
    assert main([command, "--jsonl", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"accelscope {command}: line 1: a number longer than 4,300 digits" in err
    assert "set_int_max_str_digits" not in err


def test_a_number_too_long_in_a_trace_names_the_file_and_line(tmp_path, capsys):
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"arrival_s": 0, "input_tokens": 10, "output_tokens": 5}\n'
                     f'{{"arrival_s": 1, "input_tokens": {HUGE}, "output_tokens": 5}}\n')
    assert main(["serve", "--trace", str(trace), "--model", MODEL, "--accelerator", ACCELERATOR]) == 2
    err = refused(capsys)
    assert f"{trace}: line 2: a number longer than 4,300 digits" in err


def test_a_broken_user_accelerator_file_is_named_not_called_unknown(tmp_path, capsys, monkeypatch):
    folder = tmp_path / "data" / "accelerators"
    folder.mkdir(parents=True)
    (folder / "my-chip.toml").write_text('id = "my-chip"\nname = \n')
    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(tmp_path / "data"))
    assert main(["predict", "--model", MODEL, "--accelerator", "my-chip"]) == 2
    err = refused(capsys)
    assert "could not be read" in err and f"{folder / 'my-chip.toml'}: not valid TOML" in err
    assert "unknown accelerator" not in err
