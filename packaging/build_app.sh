#!/usr/bin/env bash
# Builds the one-folder desktop app with PyInstaller into build/dist/graphscope, then starts it
# offscreen on the demo trace and renders a screenshot, reporting size and start-up time.
set -euo pipefail
cd "$(dirname "$0")/.."
python -m pip install --quiet -e ".[package]"
python -m PyInstaller --noconfirm --log-level WARN --distpath build/dist --workpath build/pyinstaller \
  packaging/graphscope.spec
app=build/dist/graphscope
echo "size: $(du -sh "$app" | cut -f1)"
start=$(date +%s.%N)
QT_QPA_PLATFORM=offscreen "$app/graphscope" open --screenshot build/app-screenshot.png --size 1400x800
end=$(date +%s.%N)
echo "start to screenshot of the demo trace: $(echo "$end - $start" | bc) s (build/app-screenshot.png)"
"$app/graphscope" summary "$app/_internal/graphscope/_assets/demo_trace.sqlite" | head -6
