#!/usr/bin/env bash
# Regenerate the README's pictures, docs/images/*.png, from `accelscope report` on bundled
# presets: the roofline from "teach-roofline-basics" (three devices, prefill under the flat roof,
# decode on the slope), the other plots from "brunetta-fig2-batch-sweep" (six GPUs, batch 64),
# the scaling and regime tabs from "sharma-scaling-1t-moe" and "sharma-fig8-regimes".
#
#   bash packaging/make_screenshots.sh
#
# Uses .venv (bash packaging/setup.sh makes it); set ACCELSCOPE_PYTHON to use another Python
# environment where accelscope is installed. Renders offscreen, so no display is needed.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${ACCELSCOPE_PYTHON:-.venv/bin/python}
[[ -x $python ]] || {
  echo "make_screenshots: $python not found; run 'bash packaging/setup.sh' first" >&2
  exit 1
}
out=docs/images
# The width the pictures are scaled to: the width of a README on GitHub's desktop layout is
# about 900 px, so 1200 px stays sharp there and on high-density screens without being large.
width_px=1200
# Rendered at twice the report's 1400 x 900 and scaled down, so that lines and text are
# smoothed rather than drawn directly at a fractional size.
render_scale=2
size_limit_bytes=300000

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export QT_QPA_PLATFORM=offscreen

report() {
  local preset=$1
  "$python" -c 'import sys; from accelscope.cli.main import main; sys.exit(main())' \
    report --preset "$preset" --out "$scratch/$preset" --scale "$render_scale" >/dev/null || {
    echo "make_screenshots: 'accelscope report --preset $preset' failed" >&2
    exit 1
  }
}
report teach-roofline-basics
report brunetta-fig2-batch-sweep
report sharma-scaling-1t-moe
report sharma-fig8-regimes

mkdir -p "$out"
# source PNG (from the report's numbered files) -> stable name in docs/images
"$python" - "$scratch" "$out" "$width_px" "$size_limit_bytes" <<'PY'
import sys
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage

scratch, out, width_px, size_limit_bytes = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
app = QGuiApplication(sys.argv[:1])
chosen = {
    "roofline.png": "teach-roofline-basics/*-roofline.png",
    "memory.png": "brunetta-fig2-batch-sweep/*-memory.png",
    "latency.png": "brunetta-fig2-batch-sweep/*-latency.png",
    "sweep.png": "brunetta-fig2-batch-sweep/*-sweep.png",
    "energy.png": "brunetta-fig2-batch-sweep/*-energy.png",
    "scaling.png": "sharma-scaling-1t-moe/*-scaling.png",
    "regimes.png": "sharma-fig8-regimes/*-regimes.png",
}
failed = False
for name, pattern in chosen.items():
    found = sorted(scratch.glob(pattern))
    if not found:
        print(f"make_screenshots: the report wrote no {pattern}", file=sys.stderr)
        failed = True
        continue
    image = QImage(str(found[0]))
    scaled = image.scaled(width_px, round(image.height() * width_px / image.width()),
                          Qt.AspectRatioMode.IgnoreAspectRatio, Qt.TransformationMode.SmoothTransformation)
    # Opaque 24-bit colour: the plots have a white background, and an alpha channel only adds
    # bytes. (A 256-colour palette would be smaller still but loses the faint grid lines.)
    opaque = scaled.convertToFormat(QImage.Format.Format_RGB888)
    target = out / name
    if not opaque.save(str(target), "PNG", 0):  # 0: the strongest compression
        print(f"make_screenshots: could not write {target}", file=sys.stderr)
        failed = True
        continue
    size = target.stat().st_size
    print(f"{target}  {opaque.width()}x{opaque.height()}  {size / 1000:.0f} KB")
    if size > size_limit_bytes:
        print(f"make_screenshots: {target} is {size / 1000:.0f} KB, over {size_limit_bytes / 1000:.0f} KB", file=sys.stderr)
        failed = True
sys.exit(1 if failed else 0)
PY
