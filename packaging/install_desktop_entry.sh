#!/usr/bin/env bash
# Add accelscope to the desktop's application menu for this user: the .desktop entry in
# ~/.local/share/applications and the icon in the hicolor theme. Works from the source tree
# (the entry then starts the `accelscope` command found on PATH, e.g. from pipx) and from inside
# a built bundle (the entry then starts that bundle's executable).
#
#   bash packaging/install_desktop_entry.sh            install
#   bash packaging/install_desktop_entry.sh --remove   remove what install added
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
data_home=${XDG_DATA_HOME:-$HOME/.local/share}
entry=$data_home/applications/accelscope.desktop
icon_sizes=(48 128 256)

if [[ ${1:-} == "--remove" ]]; then
  rm -f "$entry" "$data_home/icons/hicolor/scalable/apps/accelscope.svg"
  for size in "${icon_sizes[@]}"; do rm -f "$data_home/icons/hicolor/${size}x${size}/apps/accelscope.png"; done
  echo "install_desktop_entry: removed"
  exit 0
fi

desktop_file=$here/accelscope.desktop
if [[ -x $here/accelscope ]]; then
  # Inside dist/accelscope/: the bundle's executable, with the icons copied beside it.
  exec_line="Exec=\"$here/accelscope\""  # quoted: the folder may contain spaces
  icons=$here/icons
else
  command -v accelscope >/dev/null 2>&1 \
    || echo "install_desktop_entry: note: no 'accelscope' on PATH yet (pipx install . puts one there)" >&2
  exec_line="Exec=accelscope"
  icons=$here/../resources/icons
fi
[[ -f $desktop_file && -f $icons/accelscope.svg ]] || {
  echo "install_desktop_entry: accelscope.desktop or the icons are missing beside $0" >&2
  exit 1
}

mkdir -p "$(dirname "$entry")" "$data_home/icons/hicolor/scalable/apps"
sed "s|^Exec=.*|$exec_line|" "$desktop_file" >"$entry"
cp "$icons/accelscope.svg" "$data_home/icons/hicolor/scalable/apps/accelscope.svg"
for size in "${icon_sizes[@]}"; do
  mkdir -p "$data_home/icons/hicolor/${size}x${size}/apps"
  cp "$icons/accelscope-$size.png" "$data_home/icons/hicolor/${size}x${size}/apps/accelscope.png"
done
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$data_home/applications" || true
echo "install_desktop_entry: installed $entry"
