"""README.md opens with the two set-up commands and the one for the long runs, CI runs exactly
the second one, and its catalog counts are the catalog's."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _code_blocks(text: str) -> list[str]:
    return [block.strip() for block in re.findall(r"```(?:bash)?\n(.*?)```", text, flags=re.S)]


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    first, second = _code_blocks(text)[:2]
    before_first = text[: text.index("```")]
    assert before_first.count("\n") < 6, "the commands must come first"
    assert first.endswith(".venv/bin/accelscope") and "packaging/setup.sh" in first
    assert "pytest" in second and "--test" in second


def test_ci_runs_the_readme_test_command():
    second = _code_blocks((ROOT / "README.md").read_text())[1]
    ci_lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert second in ci_lines


def test_readme_then_says_how_to_run_the_long_suite():
    """The default suite leaves the ``slow`` tests out; the third command runs only them."""
    third = _code_blocks((ROOT / "README.md").read_text())[2]
    assert third == ".venv/bin/pytest -m slow"
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "-m 'not slow'" in options["addopts"]
    assert any(marker.startswith("slow:") for marker in options["markers"])


def test_readme_counts_the_bundled_catalog(engine):
    """The README's counts of accelerators and models are the bundled catalog's (it said 34
    models when the catalog had 40)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    accelerators = re.search(r"`resources/accelerators/\*\.toml`: (\d+) accelerators", text)
    models = re.search(r"`resources/models/\*\.toml`: (\d+) models", text)
    assert accelerators and models
    assert int(accelerators.group(1)) == len(engine.catalog.accelerators)
    assert int(models.group(1)) == len(engine.catalog.models)
