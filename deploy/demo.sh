#!/usr/bin/env bash
# End-to-end demo: installs what is missing, builds FaceRelay, starts a private nginx-rtmp,
# publishes a moving face video to it as a broadcaster would, relays it through facerelay to a
# second stream key as a platform would receive it, with a sticker on the face, records that, and
# prints where it is.
#   deploy/demo.sh [STICKER]        (default: sunglasses; see facerelay stickers list)
# Every step is bounded in time, so the demo ends by itself, with an error if a step got stuck.
# FACERELAY_BIN runs a facerelay already built instead of building one; FACERELAY_DEMO_OUTPUT
# changes where the results go (the test suite runs the demo that way).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sticker=${1:-sunglasses}
out=${FACERELAY_DEMO_OUTPUT:-$root/demo-output}
mkdir -p "$out"
facerelay=${FACERELAY_BIN:-}

# Runs a step for at most SECONDS, then SIGTERM, then SIGKILL 10 s later.
bounded() { # SECONDS COMMAND...
  local seconds=$1; shift
  timeout --kill-after=10 "$seconds" "$@"
}
# Waits, at most SECONDS, for PATTERN to appear in FILE; false if it does not.
await_line() { # SECONDS FILE PATTERN
  local tries=$(( $1 * 10 ))
  for _ in $(seq "$tries"); do
    grep -q -- "$3" "$2" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

bounded 1800 "$root/deploy/install-deps.sh"
if [ -z "$facerelay" ]; then
  echo "== building (release)"
  (cd "$root" && bounded 3600 swift build -c release 2>&1 | tail -1)
  facerelay=$root/.build/release/facerelay
fi
echo "== making the sample face stream (real photo, known motion)"
bounded 900 "$root/Tests/Fixtures/make-fixtures.sh" "$root/.build/test-fixtures" > /dev/null
input=$root/.build/test-fixtures/face_720p_close.mp4
# GStreamer scans every plugin the first time it runs with a registry it has not built yet (a
# fresh machine, or GST_REGISTRY pointing somewhere new), which delays the relay by seconds. Scan
# now, before anything is timed; the relay then starts in a fraction of a second.
echo "== preparing the GStreamer plugin registry"
bounded 300 gst-inspect-1.0 > /dev/null

work=$(mktemp -d)
chmod 777 "$work"
port=$(( 20000 + RANDOM % 20000 ))
nginx_pid=$(bounded 60 "$root/deploy/rtmp-server.sh" "$work/nginx" "$port")
relay=""
cleanup() {
  [ -z "$relay" ] || kill "$relay" 2>/dev/null || true
  "$root/deploy/rtmp-server.sh" stop "$nginx_pid"
  rm -rf "$work"
}
trap cleanup EXIT
ingest=rtmp://127.0.0.1:$port/live/broadcaster
platform=rtmp://127.0.0.1:$port/record/platform
log=$work/nginx/error.log
echo "== nginx-rtmp on 127.0.0.1:$port; relaying $ingest -> $platform (sticker: $sticker)"

rm -f "$out/relayed.flv"
seconds=$(bounded 30 ffprobe -v error -show_entries format=duration -of csv=p=0 "$input")
whole=${seconds%.*}
# The relay pulls the broadcaster's key and publishes to the platform's key; SIGTERM (from the
# bound) makes it finish its output cleanly. Background steps are bounded by timeout directly, so
# that the pid is timeout's, which passes a signal on to its command.
timeout --kill-after=10 $(( whole + 60 )) "$facerelay" run --input "$ingest" --output "$platform" \
  --sticker "$sticker" --stats-interval 4 --stats-json "$out/stats.json" &
relay=$!
# nginx-rtmp gives a player that joins a running stream only what follows the next keyframe, so the
# broadcast starts only once the relay is playing, waiting for it.
if ! await_line 30 "$log" "play: name='broadcaster'"; then
  echo "facerelay did not start pulling $ingest within 30 s; nginx-rtmp's log:" >&2
  cat "$log" >&2
  exit 1
fi
broadcast_started=$SECONDS
bounded $(( whole + 30 )) ffmpeg -nostdin -v error -re -i "$input" -c copy -f flv "$ingest"
broadcast_ended=$SECONDS
relay_status=0
wait "$relay" || relay_status=$?
relay=""
relay_ended=$SECONDS
# The platform's nginx-rtmp records what the relay publishes as it arrives: the recording is whole
# once the relay's connection has closed.
platform_connection=$(grep -o "\*[0-9]* publish: name='platform'" "$log" | head -n 1 | cut -d' ' -f1 || true)
if [ -n "$platform_connection" ] && await_line 30 "$log" "$platform_connection disconnect"; then
  cp "$work/nginx/recorded/platform.flv" "$out/relayed.flv"
fi
echo "== broadcast took $(( broadcast_ended - broadcast_started )) s; the relay ended $(( relay_ended - broadcast_ended )) s after it"
if [ "$relay_status" -ne 0 ]; then
  echo "facerelay ended with status $relay_status (124: stopped after $(( whole + 60 )) s)" >&2
  exit 1
fi
if [ ! -s "$out/relayed.flv" ]; then
  echo "the platform recorded nothing of the relay's stream; nginx-rtmp's log:" >&2
  cat "$log" >&2
  exit 1
fi
bounded 60 ffmpeg -nostdin -v error -y -ss 3 -i "$input" -frames:v 1 "$out/before.png"
bounded 60 ffmpeg -nostdin -v error -y -ss 3 -i "$out/relayed.flv" -frames:v 1 "$out/after.png"
recorded=$(bounded 30 ffprobe -v error -show_entries format=duration -of csv=p=0 "$out/relayed.flv")
echo
echo "== done in $SECONDS s"
echo "relayed stream:  $out/relayed.flv   ($recorded s of the ${seconds} s broadcast; play it: ffplay $out/relayed.flv)"
echo "stills:          $out/before.png  $out/after.png"
echo "stream figures:  $out/stats.json"
bounded 30 ffprobe -v error -show_entries stream=codec_name,width,height,r_frame_rate -of compact "$out/relayed.flv"
