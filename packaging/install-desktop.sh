#!/usr/bin/env sh
# Registers graphscope with the desktop (menu entry and icon) for the current user.
# Run after `pip install .` (or with the PyInstaller build's folder on PATH).
set -eu
here="$(cd "$(dirname "$0")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
for size in 16 32 48 64 128 256; do
  mkdir -p "$data/icons/hicolor/${size}x${size}/apps"
  cp "$here/../assets/icons/graphscope-$size.png" "$data/icons/hicolor/${size}x${size}/apps/graphscope.png"
done
mkdir -p "$data/icons/hicolor/scalable/apps" "$data/applications"
cp "$here/../assets/icons/graphscope.svg" "$data/icons/hicolor/scalable/apps/graphscope.svg"
cp "$here/graphscope.desktop" "$data/applications/graphscope.desktop"
command -v update-desktop-database >/dev/null && update-desktop-database "$data/applications" || true
echo "installed graphscope.desktop and icons under $data"
