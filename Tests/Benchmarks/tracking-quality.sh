#!/usr/bin/env bash
# Tracking quality and cost on moving-face videos with known truth (Tests/Fixtures/face-motion.py):
# landmark error, frames lost, id changes, faces left on the background, how soon small and
# re-entering faces are found, jitter on a still face, lag on a moving one, and tracking CPU per
# frame, each sequence RUNS times (default 5) with the default settings. Needs a release build
# (swift build -c release). BASELINE=path/to/another/facerelay runs that build too, alternating with
# this one run by run, so that both see the same machine load.
#   [RUNS=5] [BASELINE=...] [SEQUENCES="slide jumps"] Tests/Benchmarks/tracking-quality.sh [FIXTURE_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
facerelay=$root/.build/release/facerelay
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${1:-${FACERELAY_FIXTURES:-/tmp/facerelay-fixtures}}/motion
runs=${RUNS:-5}
sequences=${SEQUENCES:-still translate slide jumps crossing turn small720 small1080 facecam leave_left leave_right leave_top leave_bottom yaw}
"$root/Tests/Fixtures/make-fixtures.sh" "$(dirname "$fixtures")" > /dev/null
# shellcheck disable=SC2086
"$root/Tests/Fixtures/face-motion.py" "$(dirname "$fixtures")/astronaut.png" "$fixtures" $sequences > /dev/null
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
trackers=("now=$facerelay")
[ -n "${BASELINE:-}" ] && trackers+=("before=$BASELINE")
"$facerelay" inspect "$fixtures/face_tile.png" --json --smoothing none > "$results/face_tile.jsonl" 2> /dev/null
for run in $(seq 1 "$runs"); do
  for name in $sequences; do
    extra=()
    # Two faces of about 130 px: detect down to 120 px, so that the crossing is what is measured.
    [ "$name" = crossing ] && extra=(--min-face-size 120)
    for tracker in "${trackers[@]}"; do
      label=${tracker%%=*} binary=${tracker#*=}
      "$binary" inspect "$fixtures/$name.mp4" --json "${extra[@]}" \
        --stats-json "$results/$label.$name.$run.stats.json" > "$results/$label.$name.$run.jsonl" 2> /dev/null
    done
  done
done
# inspect's last log line says whether the vision code was built for AVX2/FMA.
"$facerelay" inspect "$fixtures/face_tile.png" 2>&1 | tail -1 | sed 's/.*(vision/vision/; s/)$//'
echo "$(nproc) cores, $runs runs"
/usr/bin/python3 "$root/Tests/Benchmarks/tracking_quality.py" "$fixtures" "$results"
