#!/usr/bin/env bash
# Sticker compositing: CPU ms and heap allocations per frame for one 300x300 sticker on 720p and
# 1080p (cost follows the sticker's area, not the frame's), NV12, a follow3D (perspective) sticker,
# four faces, whole packages on a face tracked on a real photo and the tracking of that face (fit,
# checks, smoothing, pose, expressions), beside the cost of the frame
# copy the draw path makes anyway. Allocations are counted by interposing the allocator.
#   Tests/Benchmarks/sticker-compositing.sh [ROUNDS] [FRAMES]     (defaults: 7 rounds of 200 frames)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
swift build -c release --product facerelay-bench > /dev/null
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
/usr/bin/python3 "$root/Tests/Fixtures/portraits.py" "$fixtures/astronaut.png" "$fixtures"
"$root/.build/release/facerelay-bench" --photo "$fixtures/portrait.png" --stickers "$root/Stickers" \
  --pipelines "$root/Pipelines" --rounds "${1:-7}" --frames "${2:-200}"
