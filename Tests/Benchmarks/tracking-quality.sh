#!/usr/bin/env bash
# Tracking quality and cost on moving-face videos with known truth (Tests/Fixtures/face-motion.py),
# for every person of the real-face corpus listed in Tests/Fixtures/corpus-people.txt: landmark
# error, frames lost, id changes, faces left on the background, how soon small and re-entering faces
# are found, jitter on a still face (or one held turned), lag on a moving one, and tracking CPU per
# frame, each sequence RUNS times (default 5) with the default settings. Needs a release build
# (swift build -c release), or FACERELAY=path/to/facerelay. BASELINE=path/to/another/facerelay runs
# that build too, alternating with this one run by run, so that both see the same machine load.
# DLIB_STOCK=path/to/binary (from Tests/Benchmarks/build-dlib-stock.sh) runs dlib's stock detector
# and shape predictor the same way, as tracker "dlib", and fits dlib's stock shape predictor on every
# box each other tracker reports (--fit-boxes): the "vs dlib on its box" columns, the landmarks
# against dlib's on the same box.
# VARIANTS="LABEL:NAME=VALUE[,NAME=VALUE] ..." runs this build again per label with those tuning
# constants changed (`inspect --tracker-setting`), to measure what a rule earns: set it so that it
# never acts (e.g. "nowatch:lostWatchFrames=0 norescan:coarseRescanCycles=1000000").
# The sequences are made once per person, as motion/PERSON.SEQ.mp4 beside their truth, and kept.
# SEED=N makes and runs them under another draw of the sensor noise (in motion-seedN/): a row that
# moves from one draw to the next says less than a row that holds. HELD_OUT=1 runs the people of
# Tests/Fixtures/heldout-people.txt instead, from photos no test reads (face-corpus.sh --held-out).
# RESULTS=DIR keeps every run's inspect output there (TRACKER.PERSON.SEQ.RUN.jsonl), to look into a row.
#   [RUNS=5] [FACERELAY=...] [BASELINE=...] [DLIB_STOCK=...] [VARIANTS=...] [PEOPLE="astronaut obama"] \
#     [SEQUENCES="slide jumps"] [SEED=3] [HELD_OUT=1] [RESULTS=DIR] Tests/Benchmarks/tracking-quality.sh [FIXTURE_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/Tests/Benchmarks/tracker-builds.sh"
fixtures=${1:-${FACERELAY_FIXTURES:-/tmp/facerelay-fixtures}}/motion${SEED:+-seed$SEED}
corpus=$(dirname "$fixtures")/corpus
people_list=$root/Tests/Fixtures/corpus-people.txt
if [ -n "${HELD_OUT:-}" ]; then
  corpus=$(dirname "$fixtures")/heldout
  people_list=$root/Tests/Fixtures/heldout-people.txt
  "$root/Tests/Fixtures/face-corpus.sh" "$(dirname "$fixtures")" --held-out
fi
runs=${RUNS:-5}
sequences=${SEQUENCES:-still still_noise webcam translate slide reversal jumps crossing turn small720 small1080 small_face facecam leave_left leave_right leave_top leave_bottom yaw yaw30 turned_noise}
people=${PEOPLE:-$(sed 's/#.*//' "$people_list" | awk 'NF { print $1 }')}
model=/usr/share/dlib/shape_predictor_68_face_landmarks.dat
"$root/Tests/Fixtures/make-fixtures.sh" "$(dirname "$fixtures")" > /dev/null  # also the corpus (face-corpus.sh)
for person in $people; do
  entry=$(sed 's/#.*//' "$people_list" | awk -v p="$person" '$1 == p { print $2, $3 }')
  [ -n "$entry" ] || { echo "$person is not in $people_list" >&2; exit 1; }
  read -r photo crop <<< "$entry"
  # Only the sequences missing (or cut from another photo or crop) are made.
  # shellcheck disable=SC2086
  "$root/Tests/Fixtures/face-motion.py" "$corpus/$photo" "$fixtures" --crop="$crop" --name-prefix "$person." ${SEED:+--seed "$SEED"} $sequences > /dev/null
done
[ -n "${DLIB_STOCK:-}" ] && trackers+=("dlib=$DLIB_STOCK")
declare -A variant_settings
for variant in ${VARIANTS:-}; do
  trackers+=("${variant%%:*}=$facerelay")
  variant_settings[${variant%%:*}]=${variant#*:}
done
# The reference landmarks: each person's unmoved tile, fitted without smoothing.
for person in $people; do
  "$facerelay" inspect "$fixtures/$person.face_tile.png" --json --smoothing none > "$results/$person.face_tile.jsonl" 2> /dev/null
done
for run in $(seq 1 "$runs"); do
  for person in $people; do
    for name in $sequences; do
      video=$fixtures/$person.$name.mp4
      extra=()
      # Two faces of about 130 px: detect down to 120 px, so that the crossing is what is measured.
      [ "$name" = crossing ] && extra=(--min-face-size 120)
      for tracker in "${trackers[@]}"; do
        label=${tracker%%=*} binary=${tracker#*=} out=$results/${tracker%%=*}.$person.$name.$run
        if [ "$label" = dlib ]; then
          # Detection every 5 frames, the stock predictor on every frame; its cost on stderr.
          "$binary" "$video" "$model" --every 5 > "$out.jsonl" 2> "$out.cpu"
        else
          tuned=()
          for setting in $(echo "${variant_settings[$label]:-}" | tr ',' ' '); do tuned+=(--tracker-setting "$setting"); done
          "$binary" inspect "$video" --json "${extra[@]}" "${tuned[@]}" --stats-json "$out.stats.json" > "$out.jsonl" 2> /dev/null
          if [ -n "${DLIB_STOCK:-}" ]; then
            fit_dlib_on_boxes "$DLIB_STOCK" "$video" "$model" "$out"
          fi
        fi
      done
    done
  done
done
# inspect's last log line says whether the vision code was built for AVX2/FMA.
"$facerelay" inspect "$fixtures/$person.face_tile.png" 2>&1 | tail -1 | sed 's/.*(vision/vision/; s/)$//'
echo "$(nproc) cores, $runs runs"
# shellcheck disable=SC2086
/usr/bin/python3 "$root/Tests/Benchmarks/tracking_quality.py" "$fixtures" "$results" $people
