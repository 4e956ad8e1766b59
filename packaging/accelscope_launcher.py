"""Entry point of the desktop bundle: the ``accelscope`` command, frozen.

Before anything imports numba, point its on-disk kernel cache at a folder of the user cache
that is keyed by the bundled engine's source. Inside a frozen app numba stamps cached kernels
with a hash of the executable instead of the kernel source, and the small launcher executable
can stay the same across builds whose kernels differ; a folder per engine source keeps a
rebuilt bundle from loading kernels compiled from older code.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def _engine_source_digest() -> str:
    """A short hash of the bundled engine's .py files (kept as source in the bundle, see the spec)."""
    import accelscope.engine

    digest = hashlib.sha256()
    for path in sorted(Path(accelscope.engine.__path__[0]).rglob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _point_numba_cache_at_user_folder() -> None:
    if "NUMBA_CACHE_DIR" in os.environ:
        return
    import platformdirs

    folder = Path(platformdirs.user_cache_dir("accelscope")) / "numba-bundle" / _engine_source_digest()
    os.environ["NUMBA_CACHE_DIR"] = str(folder)


# Set by packaging/build_bundle.sh to check the built bundle: open the app as a user would,
# wait until the kernels are ready and the window has painted, save the window as a PNG there
# and quit.
SELF_TEST_VARIABLE = "ACCELSCOPE_BUNDLE_SELF_TEST_PNG"
SELF_TEST_TIMEOUT_MS = 120_000  # a cold start compiles every kernel; far longer means it hangs
SELF_TEST_FAILED = 3


def _arm_self_test(png_path: str) -> None:
    """Create the application first, so the app's own start-up (``accelscope`` with no
    arguments) runs unchanged and this timer watches it from inside the event loop."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    app = QApplication(sys.argv[:1])

    def check() -> None:
        windows = [w for w in app.topLevelWidgets() if w.isVisible() and hasattr(w, "controller")]
        if not windows or not windows[0].controller.ready:
            QTimer.singleShot(50, check)
            return
        app.processEvents()  # the first frame after the kernels are ready
        if not windows[0].grab().save(png_path, "PNG"):
            print(f"self-test: could not write {png_path}", file=sys.stderr)
            app.exit(SELF_TEST_FAILED)
            return
        app.quit()

    def give_up() -> None:
        print(f"self-test: the window was not ready within {SELF_TEST_TIMEOUT_MS / 1000:.0f} s", file=sys.stderr)
        app.exit(SELF_TEST_FAILED)

    QTimer.singleShot(0, check)
    QTimer.singleShot(SELF_TEST_TIMEOUT_MS, give_up)


if __name__ == "__main__":
    _point_numba_cache_at_user_folder()
    self_test_png = os.environ.get(SELF_TEST_VARIABLE)
    if self_test_png:
        _arm_self_test(self_test_png)
        sys.argv = sys.argv[:1]
    from accelscope.cli.main import main

    sys.exit(main())
