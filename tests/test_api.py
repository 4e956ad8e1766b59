"""The README's Python example runs as written, and the engine's public names resolve."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

import accelscope.engine as public

ROOT = Path(__file__).resolve().parent.parent


def readme_python_example() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Python API"):]
    return re.search(r"```python\n(.*?)```", section, flags=re.DOTALL).group(1)


def test_the_readme_example_runs_and_its_numbers_are_the_engines(capsys):
    namespace: dict[str, object] = {}
    exec(compile(readme_python_example(), "README.md", "exec"), namespace)  # noqa: S102 (the README's own code)
    printed = capsys.readouterr().out
    result, sweep, engine = namespace["result"], namespace["sweep"], namespace["engine"]
    assert f"ITL {result.itl_s * 1e3:.2f} ms" in printed and "memory-bound" in printed
    throughput = namespace["throughput"]
    assert throughput.shape == (9,) and np.all(np.diff(throughput) > 0)  # batching raises throughput
    at_64 = engine.predict(namespace["scenario"])
    assert throughput[6] == at_64.throughput_output_tok_s
    assert np.allclose(namespace["intensity"], sweep.decode.flops_per_device / sweep.decode.bytes_per_device)


def test_every_public_name_resolves():
    for name in public.__all__:
        assert getattr(public, name) is not None, name


def test_importing_a_core_value_does_not_load_numba_or_qt():
    code = ("import sys, accelscope.engine.core.scenario, accelscope.engine.catalog; "
            "print(sorted(m for m in ('numba', 'PySide6', 'pyqtgraph') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
