#!/usr/bin/env bash
# Tracking quality and cost on moving-face videos with known truth (Tests/Fixtures/face-motion.py):
# landmark error, jitter on a still face, lag on a moving one, and tracking CPU per frame, for each
# smoothing filter. Needs a release build (swift build -c release).
#   Tests/Benchmarks/tracking-quality.sh [FIXTURE_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
facerelay=$root/.build/release/facerelay
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${1:-${FACERELAY_FIXTURES:-/tmp/facerelay-fixtures}}/motion
"$root/Tests/Fixtures/make-fixtures.sh" "$(dirname "$fixtures")" > /dev/null
"$root/Tests/Fixtures/face-motion.py" "$(dirname "$fixtures")/astronaut.png" "$fixtures" > /dev/null
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
"$facerelay" inspect "$fixtures/face_tile.png" --json --smoothing none > "$results/face_tile.jsonl" 2> /dev/null
for name in still translate scale rotate four; do
  extra=()
  # Four faces of about 150 px: detect down to 120 px.
  [ "$name" = four ] && extra=(--min-face-size 120)
  for smoothing in none lowpass oneeuro; do
    "$facerelay" inspect "$fixtures/$name.mp4" --json --smoothing "$smoothing" "${extra[@]}" \
      --stats-json "$results/$name.$smoothing.stats.json" > "$results/$name.$smoothing.jsonl" 2> /dev/null
  done
done
# inspect's last log line says whether the vision code was built for AVX2/FMA.
"$facerelay" inspect "$fixtures/face_tile.png" 2>&1 | tail -1 | sed 's/.*(vision/vision/; s/)$//'
echo "$(nproc) cores"
/usr/bin/python3 "$root/Tests/Benchmarks/tracking_quality.py" "$fixtures" "$results"
