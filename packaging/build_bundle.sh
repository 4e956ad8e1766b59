#!/usr/bin/env bash
# Build the one-folder desktop bundle dist/accelscope/ with PyInstaller, then check it works:
# the command line answers, a headless report renders every plot, and the app starts offscreen,
# compiles its kernels into the user cache and paints its window. Exits non-zero, with a line
# saying what failed, on any failure. Prints the build time and the bundle size.
#
#   bash packaging/build_bundle.sh            build and check
#   bash packaging/build_bundle.sh --check    check an existing dist/accelscope/ only
#
# Needs Qt's system libraries (packaging/setup.sh installs them) and Python >= 3.11.
set -euo pipefail
cd "$(dirname "$0")/.."

build_env=build/bundle-venv
bundle=dist/accelscope
executable=$bundle/accelscope
# PyInstaller is a build tool, not something the app runs, so it is installed here into a
# build environment and is not a dependency in pyproject.toml; a user's `pip install` or
# `pipx install` then does not pull it (and its hooks) in.
pyinstaller_requirement="pyinstaller>=6.10,<7"

fail() {
  echo "build_bundle: $*" >&2
  exit 1
}

now() { date +%s.%N; }
seconds_since() { awk -v start="$1" -v end="$(now)" 'BEGIN { printf "%.1f", end - start }'; }

build() {
  local python=${PYTHON:-python3}
  "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || fail "accelscope needs Python 3.11 or newer ($python is $("$python" --version 2>&1))"
  [[ -x $build_env/bin/python ]] || "$python" -m venv "$build_env" || fail "could not create $build_env"
  echo "build_bundle: installing accelscope and PyInstaller into $build_env"
  "$build_env/bin/python" -m pip install --quiet --upgrade pip
  # setuptools builds in build/lib and never empties it: a module deleted from the source would
  # still be shipped.
  rm -rf build/lib build/bdist.*
  # Not editable: an editable install reaches engine/ as accelscope.engine through setuptools'
  # import hook; an ordinary install gives PyInstaller the files a user's install has, under
  # their installed names, with exactly the package data pyproject.toml ships.
  "$build_env/bin/python" -m pip install --quiet --force-reinstall --no-deps . \
    || fail "pip could not install accelscope from $(pwd)"
  "$build_env/bin/python" -m pip install --quiet . "$pyinstaller_requirement" \
    || fail "pip could not install the dependencies or PyInstaller"

  echo "build_bundle: running PyInstaller (about a minute)"
  local started
  started=$(now)
  "$build_env/bin/pyinstaller" --noconfirm --clean --log-level WARN \
    --distpath dist --workpath build/pyinstaller packaging/accelscope.spec \
    || fail "PyInstaller failed (its messages are above)"
  build_seconds=$(seconds_since "$started")
  # The desktop entry and the icon travel with the bundle (packaging/install_desktop_entry.sh
  # installs them for the user).
  cp packaging/accelscope.desktop packaging/install_desktop_entry.sh "$bundle/"
  mkdir -p "$bundle/icons"
  cp resources/icons/accelscope.svg resources/icons/accelscope-*.png "$bundle/icons/"
}

# A PNG that is at least width x height and not blank (a painted plot has many colours).
check_png() {
  local path=$1 min_width=$2 min_height=$3
  [[ -s $path ]] || fail "$path is missing or empty"
  QT_QPA_PLATFORM=offscreen "$build_env/bin/python" - "$path" "$min_width" "$min_height" <<'PY' || exit 1
import sys
from PySide6.QtGui import QImage

path, min_width, min_height = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
image = QImage(path)
if image.isNull():
    sys.exit(f"build_bundle: {path} is not a readable PNG")
if image.width() < min_width or image.height() < min_height:
    sys.exit(f"build_bundle: {path} is {image.width()}x{image.height()}, expected at least {min_width}x{min_height}")
step = max(1, image.width() // 200)
colours = {image.pixel(x, y) for y in range(0, image.height(), step) for x in range(0, image.width(), step)}
if len(colours) < 16:
    sys.exit(f"build_bundle: {path} has only {len(colours)} colours: nothing was painted")
PY
}

check() {
  [[ -x $executable ]] || fail "$executable is missing: build the bundle first"
  [[ -x $build_env/bin/python ]] || fail "$build_env is missing: build the bundle first"
  local scratch
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' RETURN
  # A fresh user cache and data folder, so the check sees a first start and leaves the user's alone;
  # a launch folder outside the repo, so nothing is found there by accident.
  export XDG_CACHE_HOME=$scratch/cache XDG_DATA_HOME=$scratch/data XDG_CONFIG_HOME=$scratch/config
  export QT_QPA_PLATFORM=offscreen
  unset NUMBA_CACHE_DIR
  local root
  root=$(pwd)

  echo "build_bundle: checking the command line"
  (cd "$scratch" && "$root/$executable" catalog) >"$scratch/catalog.txt" 2>"$scratch/catalog.err" \
    || fail "'accelscope catalog' failed: $(tail -n 3 "$scratch/catalog.err")"
  grep -q "h100-sxm" "$scratch/catalog.txt" || fail "'accelscope catalog' does not list the bundled accelerators"
  grep -q "llama-3.1-8b" "$scratch/catalog.txt" || fail "'accelscope catalog' does not list the bundled models"
  ! grep -q "^warning:" "$scratch/catalog.txt" || fail "the bundled catalog has problems: $(grep '^warning:' "$scratch/catalog.txt")"
  (cd "$scratch" && "$root/$executable" presets) >"$scratch/presets.txt" 2>&1 \
    || fail "'accelscope presets' failed: $(tail -n 3 "$scratch/presets.txt")"
  grep -q "teach-roofline-basics" "$scratch/presets.txt" || fail "the bundled presets are missing"

  echo "build_bundle: rendering a report from a bundled preset (compiles the kernels)"
  local started report_cold report_warm
  started=$(now)
  (cd "$scratch" && "$root/$executable" report --preset teach-roofline-basics --out "$scratch/report") \
    >"$scratch/report.log" 2>&1 || fail "'accelscope report' failed: $(tail -n 5 "$scratch/report.log")"
  report_cold=$(seconds_since "$started")
  for plot in roofline memory latency sweep energy; do
    local png
    png=$(ls "$scratch"/report/*"$plot"*.png 2>/dev/null | head -n 1)
    [[ -n $png ]] || fail "the report wrote no PNG for the $plot plot (files: $(ls "$scratch/report" | tr '\n' ' '))"
    check_png "$png" 1400 900
    ls "$scratch"/report/*"$plot"*.svg >/dev/null 2>&1 || fail "the report wrote no SVG for the $plot plot"
  done
  ls "$scratch"/report/*.csv >/dev/null 2>&1 || fail "the report wrote no CSV table"
  local cached
  cached=$(find "$XDG_CACHE_HOME/accelscope" -name '*.nbi' 2>/dev/null | wc -l)
  ((cached > 0)) || fail "numba wrote no cached kernels under the user cache folder ($XDG_CACHE_HOME/accelscope)"
  # A second run from another folder must find the same cache (the kernels' source paths do not
  # depend on where the app is launched).
  mkdir -p "$scratch/elsewhere"
  started=$(now)
  (cd "$scratch/elsewhere" && "$root/$executable" report --preset teach-roofline-basics --out "$scratch/report2") \
    >"$scratch/report2.log" 2>&1 || fail "the second 'accelscope report' failed: $(tail -n 5 "$scratch/report2.log")"
  report_warm=$(seconds_since "$started")
  local cached_after
  cached_after=$(find "$XDG_CACHE_HOME/accelscope" -name '*.nbi' | wc -l)
  ((cached_after == cached)) || fail "the second run made a new kernel cache ($cached -> $cached_after index files)"

  echo "build_bundle: starting the app offscreen until its window has painted"
  started=$(now)
  (cd "$scratch" && ACCELSCOPE_BUNDLE_SELF_TEST_PNG="$scratch/window.png" "$root/$executable") \
    >"$scratch/app.log" 2>&1 || fail "the app did not start and paint: $(tail -n 5 "$scratch/app.log")"
  local app_start
  app_start=$(seconds_since "$started")
  check_png "$scratch/window.png" 640 480
  local on_x11="not checked (no xvfb-run; Debian package xvfb)"
  if command -v xvfb-run >/dev/null 2>&1; then
    echo "build_bundle: starting the app in a real X11 window (Xvfb)"
    # The xcb platform plugin loads system libraries the offscreen one does not (packaging/setup.sh
    # lists them); this is the start a desktop user gets.
    (cd "$scratch" && QT_QPA_PLATFORM=xcb ACCELSCOPE_BUNDLE_SELF_TEST_PNG="$scratch/x11-window.png" \
      xvfb-run -a -s "-screen 0 1600x1000x24" "$root/$executable") >"$scratch/x11.log" 2>&1 \
      || fail "the app did not start in an X11 window: $(tail -n 5 "$scratch/x11.log")"
    check_png "$scratch/x11-window.png" 1200 800
    on_x11="painted"
  fi

  echo "build_bundle: the bundle works"
  echo "  report, first run (kernels compiled): ${report_cold} s; second run (cached kernels): ${report_warm} s"
  echo "  app start to a painted window with ready kernels: ${app_start} s"
  echo "  numba kernel cache: $cached index files under the user cache folder"
  echo "  X11 window under Xvfb: $on_x11"
}

build_seconds=""
if [[ ${1:-} != "--check" ]]; then
  build
fi
check
echo "  bundle: $bundle, $(du -sh "$bundle" | cut -f1) on disk, $(find "$bundle" -type f | wc -l) files"
[[ -n $build_seconds ]] && echo "  PyInstaller build time: ${build_seconds} s"
echo "  run it: $executable   (install a menu entry: bash $bundle/install_desktop_entry.sh)"
