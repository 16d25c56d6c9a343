#!/usr/bin/env bash
# End-to-end demo: installs what is missing, builds FaceRelay, starts a private nginx-rtmp,
# publishes a moving face video to it as a broadcaster would, relays it through facerelay to a
# second stream key as a platform would receive it, with a sticker on the face, records that, and
# prints where it is.
#   deploy/demo.sh [STICKER]        (default: sunglasses; see facerelay stickers list)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sticker=${1:-sunglasses}
out=$root/demo-output
mkdir -p "$out"
"$root/deploy/install-deps.sh"
echo "== building (release)"
(cd "$root" && swift build -c release 2>&1 | tail -1)
echo "== making the sample face stream (real photo, known motion)"
"$root/Tests/Fixtures/make-fixtures.sh" "$root/.build/test-fixtures" > /dev/null
input=$root/.build/test-fixtures/face_720p_close.mp4

work=$(mktemp -d)
chmod 777 "$work"
port=$(( 20000 + RANDOM % 20000 ))
nginx_pid=$("$root/deploy/rtmp-server.sh" "$work/nginx" "$port")
trap 'kill -QUIT $nginx_pid 2>/dev/null || true; rm -rf "$work"' EXIT
ingest=rtmp://127.0.0.1:$port/live/broadcaster
platform=rtmp://127.0.0.1:$port/live/platform
echo "== nginx-rtmp on 127.0.0.1:$port; relaying $ingest -> $platform (sticker: $sticker)"

rm -f "$out/relayed.flv"
seconds=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$input")
ffmpeg -nostdin -v error -i "$platform" -t "$(echo "$seconds - 0.3" | bc)" -c copy -y "$out/relayed.flv" &
recorder=$!
"$root/.build/release/facerelay" run --input "$ingest" --output "$platform" --sticker "$sticker" \
  --stats-interval 4 --stats-json "$out/stats.json" &
relay=$!
sleep 1
ffmpeg -nostdin -v error -re -i "$input" -c copy -f flv "$ingest"
wait $relay
# The recorder stops by itself after the stream's duration; the platform key stays open, so a
# recorder still waiting after that is stopped.
for _ in $(seq 50); do kill -0 $recorder 2>/dev/null || break; sleep 0.1; done
kill -INT $recorder 2>/dev/null || true
wait $recorder || true
ffmpeg -nostdin -v error -y -ss 3 -i "$input" -frames:v 1 "$out/before.png"
ffmpeg -nostdin -v error -y -ss 3 -i "$out/relayed.flv" -frames:v 1 "$out/after.png"
echo
echo "== done"
echo "relayed stream:  $out/relayed.flv   (play it: ffplay $out/relayed.flv)"
echo "stills:          $out/before.png  $out/after.png"
echo "stream figures:  $out/stats.json"
ffprobe -v error -show_entries stream=codec_name,width,height,r_frame_rate -of compact "$out/relayed.flv"
