"""Hostile arguments to every sub-command: negative, zero, huge, non-numeric, NaN, empty, odd
unicode, unknown ids, and paths that cannot be read (missing, a folder, no permission, binary
garbage, nested too deeply, over the size limit). Each gives exit status 2 and exactly one line
on stderr, never a traceback."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from accelscope.cli.main import build_parser, main
from accelscope.engine.core.scenario import MAX_BATCH, MAX_PARALLEL, MAX_TOKENS

COMMANDS = set(build_parser()._subparsers._group_actions[0].choices)  # argparse keeps them there
MODEL, ACCELERATOR, PRESET = "llama-3.1-8b", "h100-sxm", "teach-roofline-basics"
HUGE_DIGITS = "9" * 5000  # past Python's 4,300-digit int() limit


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """Hostile files and folders, by placeholder name."""
    folder = tmp_path_factory.mktemp("hostile")
    found = {"folder": folder / "a-folder", "missing": folder / "missing.json"}
    found["folder"].mkdir()
    (found["folder"] / "config.json").mkdir()  # a folder where the config.json should be
    contents: dict[str, bytes] = {
        "binary.json": bytes(range(256)) * 4,
        "binary.toml": b"\xff\xfe\x00" + bytes(range(128, 256)),
        "binary.jsonl": b"\xff\xfe\x00garbage\x80\n",
        "empty.json": b"",
        "deep.json": b"[" * 100_000 + b"]" * 100_000,
        "deep.toml": b"x = " + b"[" * 100_000 + b"]" * 100_000,
        "deep.jsonl": b"[" * 100_000 + b"]" * 100_000 + b"\n",
        "huge.json": b"{" + b" " * (11 * 1024 * 1024) + b"}",
        "text.jsonl": "garbage \u2028 not json\n".encode(),
        "list.jsonl": b"[1, 2, 3]\n",
        "nan.jsonl": json.dumps({"model": MODEL, "accelerator": ACCELERATOR, "batch": float("nan")}).encode() + b"\n",
        "offload.jsonl": f'{{"model": "{MODEL}", "accelerator": "{ACCELERATOR}", "offload": 1{"0" * 400}}}\n'.encode(),
        "digits.jsonl": f'{{"model": "{MODEL}", "accelerator": "{ACCELERATOR}", "batch": {HUGE_DIGITS}}}\n'.encode(),
        "types.jsonl": json.dumps({"model": MODEL, "accelerator": ACCELERATOR, "tp": "2"}).encode() + b"\n",
        "unknown.jsonl": json.dumps({"model": "nope", "accelerator": "\n"}).encode() + b"\n",
        "preset-garbage.json": b'{"schema": "accelscope.preset/1", "name": ' + b"[" * 50_000,
        "line\nbreak.json": b"{}",
        "unreadable.json": b"{}",
    }
    for name, data in contents.items():
        (folder / name).write_bytes(data)
        found[name] = folder / name
    (folder / "unreadable.json").chmod(0)
    return {name: str(path) for name, path in found.items()}


def predict(*extra: str) -> list[str]:
    return ["predict", "--model", MODEL, "--accelerator", ACCELERATOR, *extra]


NUMBERS = ["-1", "0", "", "abc", "1.5", "1e3", "nan", "inf", "-inf", "0x10", "\x00", HUGE_DIGITS]
LIMITS = {
    "--batch": MAX_BATCH, "--input-len": MAX_TOKENS, "--output-len": MAX_TOKENS,
    "--tp": MAX_PARALLEL, "--pp": MAX_PARALLEL, "--ep": MAX_PARALLEL, "--dp": MAX_PARALLEL,
}
CASES: list[tuple[str, list[str]]] = [
    *[(f"{flag} {value[:8]!r}", predict(flag, value)) for flag in LIMITS for value in NUMBERS],
    *[(f"{flag} over the limit", predict(flag, str(limit + 1))) for flag, limit in LIMITS.items()],
    *[(f"--offload {value[:8]!r}", predict("--offload", value))
      for value in ["-0.1", "1.01", "nan", "inf", "-inf", "", "abc", "1e309", HUGE_DIGITS]],
    *[(f"{flag} {value!r}", predict(flag, value))
      for flag in ("--precision", "--weight-precision", "--kv-precision") for value in ("fp6", "", "BF16")],
    ("predict alone", ["predict"]),
    ("predict no accelerator", ["predict", "--model", MODEL]),
    ("predict unknown flag", predict("--bogus")),
    ("predict flag without value", ["predict", "--model"]),
    ("unknown model", ["predict", "--model", "gpt-5", "--accelerator", ACCELERATOR]),
    ("unknown accelerator", ["predict", "--model", MODEL, "--accelerator", "h100"]),
    ("empty model", ["predict", "--model", "", "--accelerator", ACCELERATOR]),
    ("line break in an id", ["predict", "--model", MODEL, "--accelerator", "h100\nsxm"]),
    ("line break in a path", ["predict", "--model", "models/x\ny.json", "--accelerator", ACCELERATOR]),
    ("line separator in a path", ["predict", "--model", "x\u2028y.json", "--accelerator", ACCELERATOR]),
    ("undecodable path", ["predict", "--model", "x\udcff.json", "--accelerator", ACCELERATOR]),
    ("path up and out", ["predict", "--model", "../../../../etc/passwd", "--accelerator", ACCELERATOR]),
    ("very long id", ["predict", "--model", "m" * 100_000, "--accelerator", ACCELERATOR]),
    *[(f"model file {name}", ["predict", "--model", "{" + name + "}", "--accelerator", ACCELERATOR])
      for name in ("folder", "missing", "binary.json", "binary.toml", "empty.json", "deep.json", "deep.toml",
                   "huge.json", "line\nbreak.json", "unreadable.json")],
    *[(f"jsonl {name}", ["predict", "--jsonl", "{" + name + "}"])
      for name in ("folder", "missing", "binary.jsonl", "deep.jsonl", "text.jsonl", "list.jsonl", "nan.jsonl",
                   "offload.jsonl", "digits.jsonl", "types.jsonl", "unknown.jsonl", "unreadable.json")],
    ("jsonl without a file", ["predict", "--jsonl"]),
    ("no command", ["--json"]),
    ("unknown command", ["nonsense"]),
    ("unknown command with a line break", ["non\nsense"]),
    ("catalog extra argument", ["catalog", "extra"]),
    ("catalog unknown flag", ["catalog", "--bogus"]),
    ("catalog flag with a value", ["catalog", "--json=yes"]),
    ("presets extra argument", ["presets", "extra"]),
    ("presets unknown flag", ["presets", "--bogus"]),
    ("validate extra argument", ["validate", "extra"]),
    ("validate unknown flag", ["validate", "--bogus"]),
    ("report nothing", ["report"]),
    ("report no out", ["report", "--preset", "teach-roofline-basics"]),
    ("report no preset", ["report", "--out", "{folder}"]),
    *[(f"report --scale {value[:8]!r}", ["report", "--preset", PRESET, "--out", "{folder}", "--scale", value])
      for value in ["0", "-1", "nan", "inf", "", "abc", "5", "1e309", HUGE_DIGITS]],
    *[(f"report --preset {name!r}", ["report", "--preset", value, "--out", "{folder}"])
      for name, value in [("empty", ""), ("unknown", "no-such-preset"), ("line break", "x\ny"),
                          ("folder", "{folder}"), ("missing", "{missing}"), ("binary", "{binary.json}"),
                          ("deep", "{deep.json}"), ("garbage", "{preset-garbage.json}"), ("huge", "{huge.json}"),
                          ("empty file", "{empty.json}"), ("unreadable", "{unreadable.json}")]],
]


def expand(args: list[str], files: dict[str, str]) -> list[str]:
    expanded = []
    for arg in args:
        if arg.startswith("{") and arg.endswith("}") and arg[1:-1] in files:
            arg = files[arg[1:-1]]
        expanded.append(arg)
    return expanded


def assert_refused(status: int, err: str, args: list[str]) -> None:
    shown = repr(args)[:200]
    assert status == 2, f"exit status {status} for {shown}: {err[:300]!r}"
    assert "Traceback" not in err, f"traceback for {shown}"
    # str.splitlines() also breaks at \u2028, \x1c-\x1e, \x85...: a terminal may too.
    assert len(err.splitlines()) == 1 and err.endswith("\n"), f"not one line on stderr for {shown}: {err[:300]!r}"


@pytest.mark.parametrize(("case", "args"), CASES, ids=[case for case, _ in CASES])
def test_hostile_arguments_give_one_line_and_status_2(case, args, files, capsys):
    if args[0] not in COMMANDS and args[0] in ("validate", "report"):
        pytest.skip(f"no {args[0]} sub-command in this version")
    if "unreadable" in case and os.geteuid() == 0:
        pytest.skip("running as root: a file without read permission can still be read")
    args = expand(args, files)
    status = main(args)
    captured = capsys.readouterr()
    assert_refused(status, captured.err, args)


def test_report_into_an_existing_file_is_refused(files, capsys, tmp_path, qapp):
    """The one hostile report argument that gets as far as rendering: --out names a file."""
    target = tmp_path / "a-file"
    target.write_text("kept")
    status = main(["report", "--preset", "teach-roofline-basics", "--out", str(target), "--scale", "1"])
    assert_refused(status, capsys.readouterr().err, ["report", "--out", str(target)])
    assert target.read_text() == "kept"


def test_jsonl_garbage_on_stdin_gives_one_line_per_bad_line(monkeypatch, capsys):
    good = json.dumps({"model": MODEL, "accelerator": ACCELERATOR})
    lines = ["\x00\x01 binary-ish", "[" * 5000, '{"model": NaN}', "", good]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    status = main(["predict", "--jsonl", "-"])
    captured = capsys.readouterr()
    assert status == 2 and "Traceback" not in captured.err
    assert len(captured.err.splitlines()) == 3  # one per bad line; the blank line is skipped
    results = [json.loads(line) for line in captured.out.splitlines()]
    assert [("error" in result) for result in results] == [True, True, True, False]


@pytest.fixture
def hostile_user_folder(tmp_path, monkeypatch, files):
    """A user data folder full of broken catalog and preset files."""
    root = tmp_path / "user"
    for kind, suffixes in (("accelerators", (".toml",)), ("models", (".toml", ".json")), ("presets", (".json",))):
        folder = root / kind
        folder.mkdir(parents=True)
        for suffix in suffixes:
            (folder / f"binary{suffix}").write_bytes(bytes(range(256)))
            deep = Path(files["deep.toml" if suffix == ".toml" else "deep.json"])
            (folder / f"deep{suffix}").write_bytes(deep.read_bytes())
            (folder / f"a-folder{suffix}").mkdir()
            (folder / f"empty{suffix}").write_bytes(b"")
    monkeypatch.setenv("ACCELSCOPE_DATA_DIR", str(root))
    return root


@pytest.mark.parametrize(
    "args",
    [
        ["catalog"], ["catalog", "--json"], ["presets"], ["presets", "--json"],
        predict(), predict("--json"),
        # A whole validation (~20 s): the long run of the set.
        pytest.param(["validate"], marks=pytest.mark.slow),
    ],
    ids=["catalog", "catalog-json", "presets", "presets-json", "predict", "predict-json", "validate"],
)
def test_broken_user_files_do_not_break_the_commands(args, hostile_user_folder, capsys):
    """Broken files in the user's folder are reported (catalog, presets) or ignored (predict,
    validate); the commands still work."""
    if args[0] not in COMMANDS:
        pytest.skip(f"no {args[0]} sub-command in this version")
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out
    if args[0] == "catalog" and "--json" in args:
        assert len(json.loads(captured.out)["problems"]) == 12
