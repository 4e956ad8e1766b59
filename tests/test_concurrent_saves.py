"""Atomic saves under contention: several processes save different presets to one path with
``save_preset`` while this process reads the file over and over.

Every read must be one writer's complete preset, byte for byte, and must load with
``load_preset``: never a mix of two, a truncated file, or a missing one (the file exists
before the writers start, and a rename never leaves the name empty). At the end the folder
holds the preset file alone: no temporary file is left behind.

The default suite runs 3 writers x 100 saves; ``pytest -m slow tests/test_concurrent_saves.py``
runs ``ACCELSCOPE_SAVE_WRITERS`` x ``ACCELSCOPE_SAVE_COUNT`` (default 8 x 2,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from accelscope.engine.catalog.presets import (
    PresetError,
    bundled_preset_files,
    load_preset,
    preset_to_json,
    save_preset,
)

FAST = (3, 100)
SLOW = (int(os.environ.get("ACCELSCOPE_SAVE_WRITERS", "8")), int(os.environ.get("ACCELSCOPE_SAVE_COUNT", "2000")))
MAX_FAILURES_SHOWN = 10

# One writer: builds its preset from the document on stdin (form checked, no catalog needed),
# waits for the start file so all writers begin together, then saves it over and over.
WRITER = """
import json, os, sys, time
from pathlib import Path
from accelscope.engine.catalog.presets import preset_from_json, save_preset
path, start, count = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
preset = preset_from_json(json.loads(sys.stdin.read()), "<writer>", None)
print("ready", flush=True)
while not start.exists():
    time.sleep(0.001)
for _ in range(count):
    save_preset(preset, path)
print("done", count, flush=True)
"""


def serialised(document: dict) -> str:
    """What save_preset writes for ``document``."""
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def writer_presets(catalog, writers: int) -> list:
    """A different valid preset per writer: the bundled ones in turn, each under its own name."""
    bundled = bundled_preset_files()
    presets = []
    for number in range(writers):
        preset = load_preset(bundled[number % len(bundled)], catalog)
        presets.append(replace(preset, name=f"Writer {number}", description=f"Saved by writer {number}."))
    return presets


def hammer(catalog, folder: Path, writers: int, saves: int) -> dict:
    folder.mkdir(parents=True)
    path = folder / "shared.json"
    start = folder.parent / "start"  # outside the checked folder
    presets = writer_presets(catalog, writers)
    documents = [preset_to_json(preset) for preset in presets]
    expected = {serialised(document): preset.name for document, preset in zip(documents, presets, strict=True)}
    assert len(expected) == writers  # every writer's file is told apart from the others'
    save_preset(presets[0], path)  # the file exists before any writer starts
    assert path.read_text(encoding="utf-8") in expected  # the serialisation above is save_preset's

    environment = dict(os.environ)
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(start), str(saves)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
        )
        for _ in range(writers)
    ]
    failures: list[str] = []
    reads = loads = 0
    seen: dict[str, int] = {}
    try:
        for process, document in zip(processes, documents, strict=True):
            process.stdin.write(json.dumps(document))
            process.stdin.close()
        for process in processes:
            line = process.stdout.readline()
            assert line.strip() == "ready", f"a writer did not start: {line!r} {process.stderr.read()}"
        start.touch()
        deadline = time.monotonic() + 1800
        while any(process.poll() is None for process in processes):
            assert time.monotonic() < deadline, "the writers did not finish in time"
            # Two separate reads: the raw bytes, then the loader (which opens the file again).
            try:
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError) as error:
                failures.append(f"read {reads}: {type(error).__name__}: {error}")
            else:
                if text in expected:
                    seen[expected[text]] = seen.get(expected[text], 0) + 1
                else:
                    failures.append(f"read {reads}: not one writer's complete preset ({len(text)} chars): {text[:120]!r}")
            reads += 1
            try:
                preset = load_preset(path, catalog)
            except PresetError as error:
                failures.append(f"load {loads}: {error}")
            else:
                if preset.name not in expected.values():
                    failures.append(f"load {loads}: unexpected preset {preset.name!r}")
            loads += 1
        outputs = [(process.stdout.read(), process.stderr.read()) for process in processes]
        for process in processes:
            process.wait(timeout=60)
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()
    for process, (out, err) in zip(processes, outputs, strict=True):
        assert process.returncode == 0, f"a writer failed:\n{err}"
        assert out.split() == ["done", str(saves)], out
    leftovers = sorted(entry.name for entry in folder.iterdir() if entry.name != path.name)
    final = path.read_text(encoding="utf-8")
    return {
        "writers": writers, "saves": writers * saves, "reads": reads, "loads": loads,
        "failures": failures, "seen": seen, "leftovers": leftovers, "final_ok": final in expected,
    }


def check(figures: dict) -> None:
    print(
        f"\nconcurrent saves: {figures['writers']} writers, {figures['saves']} saves; "
        f"{figures['reads']} reads and {figures['loads']} loads; {len(figures['failures'])} failures; "
        f"presets seen {figures['seen']}; leftovers {figures['leftovers'] or 'none'}"
    )
    shown = "\n".join(figures["failures"][:MAX_FAILURES_SHOWN])
    assert not figures["failures"], f"{len(figures['failures'])} bad reads, the first:\n{shown}"
    assert not figures["leftovers"], f"temporary files left: {figures['leftovers']}"
    assert figures["final_ok"]
    assert figures["reads"] > 0


def test_concurrent_saves_never_show_a_partial_file(catalog, tmp_path):
    check(hammer(catalog, tmp_path / "presets", *FAST))


@pytest.mark.slow
def test_concurrent_saves_never_show_a_partial_file_long(catalog, tmp_path):
    check(hammer(catalog, tmp_path / "presets", *SLOW))
