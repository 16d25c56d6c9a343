#!/usr/bin/env bash
# Per-stream CPU by stage, checked against the process: `facerelay serve` relays STREAMS live 720p30
# streams (a moving face, looped from a local nginx-rtmp and pushed back to it) with STICKER on;
# after a warm-up, two `ctl stats` readings SECONDS apart give each stream's stages over the same
# interval as the process's own CPU. Prints each stream's stages in ms per frame and % of one core,
# what its stickers cost, and the sum of every stage of every stream against the process CPU.
#   Tests/Benchmarks/stage-cpu.sh [STREAMS] [SECONDS] [STICKER]   (defaults: 1, 20, sunglasses)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
streams=${1:-1}
seconds=${2:-20}
sticker=${3:-sunglasses}
facerelay=${FACERELAY_BIN:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
input=$fixtures/face_720p_close.mp4
work=$(mktemp -d)
chmod 777 "$work"
port=$(( 20000 + RANDOM % 20000 ))
http=$(( port + 1 ))
nginx_pid=$("$root/deploy/rtmp-server.sh" "$work/nginx" "$port")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$root/deploy/rtmp-server.sh" stop "$nginx_pid"
  rm -rf "$work"
}
trap cleanup EXIT
url=rtmp://127.0.0.1:$port/live
cat > "$work/facerelay.yml" <<CONF
control_socket: $work/control.sock
http: 127.0.0.1:$http
defaults:
  sticker: $sticker
  input_timeout_s: 0
  stats_interval_s: 3600
CONF
"$facerelay" serve --config "$work/facerelay.yml" 2> "$work/serve.log" &
pids+=($!)
export FACERELAY_SOCKET=$work/control.sock
for _ in $(seq 600); do [ -S "$FACERELAY_SOCKET" ] && break; sleep 0.1; done
for n in $(seq "$streams"); do
  "$facerelay" ctl start "$url/in-$n" "$url/out-$n" --stream "s$n" > /dev/null
  ffmpeg -nostdin -v error -re -stream_loop -1 -i "$input" -c copy -f flv "$url/in-$n" &
  pids+=($!)
done
sleep 10
"$facerelay" ctl stats --json > "$work/before.json"
sleep "$seconds"
"$facerelay" ctl stats --json > "$work/after.json"
echo "$streams stream(s), sticker $sticker, ${seconds} s, $(nproc) cores"
/usr/bin/python3 - "$work/before.json" "$work/after.json" <<'PY'
import json, sys
before, after = (json.load(open(path))["result"] for path in sys.argv[1:3])
stages = ["decode", "track", "composite", "relay", "encode", "mux"]
previous = {s["stream"]: s for s in before["streams"]}
seconds = after["streams"][0]["duration_s"] - previous[after["streams"][0]["stream"]]["duration_s"]
print(f"{'stream':8} " + " ".join(f"{s:>15}" for s in stages) + f" {'total':>15} {'stickers':>9} {'/transcode':>10}")
grand = 0.0
for stream in after["streams"]:
    old = previous[stream["stream"]]
    frames = stream["frames_out"] - old["frames_out"]
    spent = {s: stream["stages"][s]["cpu_s"] - old["stages"][s]["cpu_s"] for s in stages}
    total = sum(spent.values())
    grand += total
    cell = lambda v: f"{v * 1000 / max(frames, 1):6.2f}ms {v / seconds * 100:5.1f}%"
    stickers = spent["track"] + spent["composite"]
    print(f"{stream['stream']:8} " + " ".join(f"{cell(spent[s]):>15}" for s in stages)
          + f" {cell(total):>15} {stickers / seconds * 100:8.1f}% {stickers / max(spent['decode'] + spent['encode'], 1e-9):10.2f}")
process = after["process"]["cpu_s"] - before["process"]["cpu_s"]
print(f"sum of every stage: {grand:.2f} s of CPU; process: {process:.2f} s; stages / process = {grand / process * 100:.1f}%"
      f" (the rest: the RTMP connection loops of rtmp2src and rtmp2sink, HTTP, the control socket)")
PY
