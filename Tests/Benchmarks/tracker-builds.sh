# Sourced by tracking-quality.sh and real-clips.sh (with `root` set): the build to measure (FACERELAY,
# or the release build) and BASELINE as "label=binary" in `trackers`, the folder each run's output
# goes to (RESULTS, kept, or a temporary one removed on exit) in `results`, and
# `fit_dlib_on_boxes`.
facerelay=${FACERELAY:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release (or set FACERELAY)" >&2; exit 1; }
# A build outside .build/ does not find the pipeline templates by itself.
export FACERELAY_PIPELINES=${FACERELAY_PIPELINES:-$root/Pipelines}
if [ -n "${RESULTS:-}" ]; then
  results=$RESULTS
  mkdir -p "$results"
else
  results=$(mktemp -d)
  trap 'rm -rf "$results"' EXIT
fi
trackers=("now=$facerelay")
if [ -n "${BASELINE:-}" ]; then trackers+=("before=$BASELINE"); fi

# fit_dlib_on_boxes DLIB_STOCK VIDEO MODEL OUT: dlib's stock shape predictor on every box the tracker
# reported in OUT.jsonl (`inspect --json`), into OUT.dlibfit; its log is shown if it fails.
fit_dlib_on_boxes() {
  /usr/bin/python3 "$root/Tests/Benchmarks/tracking_quality.py" --boxes "$4.jsonl" > "$4.boxes"
  "$1" "$2" "$3" --fit-boxes "$4.boxes" > "$4.dlibfit" 2> "$4.dlibfit.log" ||
    { cat "$4.dlibfit.log" >&2; exit 1; }
}
