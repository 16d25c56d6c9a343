# Sourced by tracking-quality.sh and real-clips.sh (with `root` set): the build to measure (FACERELAY,
# or the release build) and BASELINE as "label=binary" in `trackers`, and the folder each run's output
# goes to (RESULTS, kept, or a temporary one removed on exit) in `results`.
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
