"""A report never clobbers a file: it goes into a new or empty folder, or with --force over the
files an earlier report wrote there (its manifest lists them), never over a user's own file,
never through a symbolic link, never to an empty path; and a failed write (a full disk) leaves the
earlier report whole and names the file and the reason.

These run ``report --tables-only`` (no Qt, well under a second each); the drawn report and
File → Export all put their files through the same writer (``engine.catalog.writing``)."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from accelscope.cli.main import main
from accelscope.engine.catalog import writing
from accelscope.engine.catalog.writing import MANIFEST_NAME, OutputError, OutputFolder

PRESET = "teach-roofline-basics"


def report(folder: Path | str, *extra: str) -> list[str]:
    return ["report", "--preset", PRESET, "--out", str(folder), "--tables-only", *extra]


def one_line_refusal(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def contents(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if not path.is_symlink()}


def test_a_new_folder_is_made_and_a_manifest_lists_what_was_written(tmp_path, capsys):
    folder = tmp_path / "new" / "handout"
    assert main(report(folder)) == 0
    printed = capsys.readouterr().out.split()
    manifest = json.loads((folder / MANIFEST_NAME).read_text())
    assert sorted(manifest["files"]) == sorted(Path(line).name for line in printed)
    assert sorted(path.name for path in folder.iterdir()) == sorted([*manifest["files"], MANIFEST_NAME])


def test_a_folder_with_files_is_refused_without_force(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(report(tmp_path)) == 2
    err = one_line_refusal(capsys)
    assert str(tmp_path) in err and "already holds files" in err and "--force" in err
    assert contents(tmp_path) == {"notes.txt": b"mine"}


def test_force_replaces_an_earlier_reports_files_only(tmp_path, capsys):
    assert main(report(tmp_path)) == 0
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "cost.csv").write_text("stale")  # an earlier report's file: replaced
    # A file the earlier report wrote and this one does not write: removed with the rest of it.
    manifest = json.loads((tmp_path / MANIFEST_NAME).read_text())
    (tmp_path / "old-page.csv").write_text("old")
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({**manifest, "files": [*manifest["files"], "old-page.csv"]}))
    assert main(report(tmp_path)) == 2  # without --force: refused, whatever is there
    capsys.readouterr()
    assert main(report(tmp_path, "--force")) == 0
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "cost.csv").read_text().startswith("# ")
    assert not (tmp_path / "old-page.csv").exists()
    assert "old-page.csv" not in json.loads((tmp_path / MANIFEST_NAME).read_text())["files"]


def test_a_users_own_file_named_like_an_output_is_never_replaced(tmp_path, capsys):
    (tmp_path / "cost.csv").write_text("my own costs")
    (tmp_path / "explain.txt").write_text("my own notes")
    assert main(report(tmp_path, "--force")) == 2
    err = one_line_refusal(capsys)
    assert "was not written by accelscope" in err and ("cost.csv" in err or "explain.txt" in err)
    # Nothing written, nothing left behind: no temporary file, no manifest.
    assert contents(tmp_path) == {"cost.csv": b"my own costs", "explain.txt": b"my own notes"}


@pytest.mark.parametrize("listed", [False, True], ids=["unlisted", "listed-in-the-manifest"])
def test_a_symbolic_link_named_like_an_output_is_never_written_through(tmp_path, capsys, listed):
    folder, outside = tmp_path / "out", tmp_path / "outside.csv"
    folder.mkdir()
    outside.write_text("precious")
    (folder / "cost.csv").symlink_to(outside)
    if listed:  # even a manifest that lists the name does not make a link writable
        document = {"schema": writing.MANIFEST_SCHEMA, "files": ["cost.csv"]}
        (folder / MANIFEST_NAME).write_text(json.dumps(document))
    assert main(report(folder, "--force")) == 2
    err = one_line_refusal(capsys)
    assert "cost.csv is a symbolic link" in err
    assert outside.read_text() == "precious" and (folder / "cost.csv").is_symlink()
    assert sorted(path.name for path in folder.iterdir()) == sorted(["cost.csv", *([MANIFEST_NAME] if listed else [])])


@pytest.mark.parametrize("path", ["", "  "])
def test_an_empty_path_is_refused(tmp_path, capsys, monkeypatch, path):
    monkeypatch.chdir(tmp_path)
    assert main(report(path)) == 2
    assert "--out is an empty path" in one_line_refusal(capsys)
    assert not list(tmp_path.iterdir())
    with pytest.raises(OutputError, match="empty path"):
        OutputFolder(path)


def failing_on(monkeypatch, name: str) -> None:
    """Writes of ``name`` fail as on a full disk, after part of it is written."""
    real = writing._write_temporary

    def write(folder, file_name, data):
        if file_name == name:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(folder, file_name, data)

    monkeypatch.setattr(writing, "_write_temporary", write)


def test_a_failed_write_leaves_the_earlier_report_whole_and_names_the_file(tmp_path, capsys, monkeypatch):
    assert main(report(tmp_path)) == 0
    capsys.readouterr()
    # The earlier report, told apart from what a new one would write.
    for path in tmp_path.iterdir():
        if path.name != MANIFEST_NAME:
            path.write_bytes(path.read_bytes() + b"# earlier\n")
    earlier = contents(tmp_path)
    failing_on(monkeypatch, "regimes.csv")  # halfway through the report
    assert main(report(tmp_path, "--force")) == 2
    err = one_line_refusal(capsys)
    assert f"cannot write {tmp_path / 'regimes.csv'}: No space left on device" in err
    assert "are as they were" in err
    assert contents(tmp_path) == earlier  # every file the earlier report's, no temporary file beside


def test_a_failed_write_into_a_new_folder_leaves_no_folder(tmp_path, capsys, monkeypatch):
    failing_on(monkeypatch, "cost.csv")
    assert main(report(tmp_path / "new")) == 2
    assert "No space left on device" in one_line_refusal(capsys)
    assert not (tmp_path / "new").exists()


def test_a_broken_manifest_is_refused_not_trusted(tmp_path, capsys):
    (tmp_path / MANIFEST_NAME).write_text('{"files": ["../elsewhere.csv"]}')
    assert main(report(tmp_path, "--force")) == 2
    assert "is not a manifest accelscope wrote" in one_line_refusal(capsys)


def test_exporting_one_plot_never_writes_through_a_link(tmp_path):
    outside = tmp_path / "outside.svg"
    outside.write_text("precious")
    (tmp_path / "plot.svg").symlink_to(outside)
    with pytest.raises(OutputError, match="symbolic link"):
        writing.write_file_atomically(tmp_path / "plot.svg", b"<svg/>")
    assert outside.read_text() == "precious"
    writing.write_file_atomically(tmp_path / "plain.svg", b"<svg/>")
    writing.write_file_atomically(tmp_path / "plain.svg", b"<svg></svg>")
    assert (tmp_path / "plain.svg").read_bytes() == b"<svg></svg>"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["outside.svg", "plain.svg", "plot.svg"]
