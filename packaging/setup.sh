#!/usr/bin/env bash
# Set up accelscope on a fresh Debian/Ubuntu machine: the system libraries Qt needs (for the
# offscreen tests and for a real window), then a virtual environment in .venv with the app
# installed in editable mode. With --test, the test tools too. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[[ "${1:-}" == "--test" ]] && extras="[test]"

qt_libraries=(
  # offscreen rendering (tests, headless reports)
  libegl1 libgl1 libx11-6 libdbus-1-3 libfontconfig1 libfreetype6 libglib2.0-0 libxkbcommon0
  # a real window on X11 (the xcb platform plugin)
  libx11-xcb1 libxkbcommon-x11-0 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1
  libxcb-randr0 libxcb-render-util0 libxcb-shape0 libxcb-xkb1 libxcb-glx0 libxcb-sync1 libxcb-xfixes0
)
# The tests render exported SVGs with librsvg too (rsvg-convert), beside Qt's own renderer.
[[ -n $extras ]] && qt_libraries+=(librsvg2-bin)
if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for package in "${qt_libraries[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    echo "setup: installing Qt system libraries: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "setup: no apt-get here; make sure Qt's system libraries (libEGL, libGL, xcb) are installed" >&2
fi

python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  echo "setup: accelscope needs Python 3.11 or newer ($python is $("$python" --version 2>&1))" >&2
  exit 1
}
[[ -x .venv/bin/python ]] || "$python" -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".${extras}"
# Compile the engine's and the serving simulator's kernels now, once: later starts load them from
# the on-disk cache, so that the first window (and its Serving tab) answers at once.
echo "setup: compiling the kernels (once)"
# The engine's and the simulator's kernels are independent: compiled side by side, one per core.
.venv/bin/python -c 'from accelscope.engine.physics.engine import Engine
Engine().warm_up()' &
engine_compile=$!
.venv/bin/python -c 'from accelscope.engine.studies.serving.run import warm_up_simulator
warm_up_simulator()'
wait "$engine_compile"
echo "setup: ready (.venv/bin/accelscope)"
