#!/usr/bin/env bash
# Soak: `facerelay serve` relays one stickered 720p30 stream for MINUTES through real nginx-rtmp
# (a looping ffmpeg broadcaster -> ingest nginx -> facerelay -> platform nginx), switching its
# sticker over the control socket every 5 s and taking the platform down for 8 s every minute.
# Every 10 s it records RSS, CPU, frames and reconnects; at the end it prints them as a table, the
# RSS growth after warm-up, each upstream loss and how long the stream took to relay again once the
# platform was back, and draws soak.png (RSS and CPU over time).
#   Tests/Benchmarks/soak.sh [MINUTES] [OUT_DIR]     (defaults: 10, ./soak-results)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
minutes=${1:-10}
out=$(mkdir -p "${2:-soak-results}" && cd "${2:-soak-results}" && pwd)
facerelay=${FACERELAY_BIN:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
work=$(mktemp -d)
chmod 777 "$work"
ingest_port=$(( 20000 + RANDOM % 20000 ))
platform_port=$(( ingest_port + 1 ))
http_port=$(( ingest_port + 2 ))
ingest_pid=$("$root/deploy/rtmp-server.sh" "$work/ingest" "$ingest_port")
platform_pid=$("$root/deploy/rtmp-server.sh" "$work/platform" "$platform_port")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  "$root/deploy/rtmp-server.sh" stop "$ingest_pid"
  "$root/deploy/rtmp-server.sh" stop "$platform_pid"
  rm -rf "$work"
}
trap cleanup EXIT
cat > "$work/facerelay.yml" <<CONF
control_socket: $work/control.sock
http: 127.0.0.1:$http_port
defaults:
  sticker: sunglasses
  input_timeout_s: 0
  reconnect_max_delay_s: 2
CONF
"$facerelay" serve --config "$work/facerelay.yml" 2> "$out/serve.log" &
serve_pid=$!
pids+=($serve_pid)
export FACERELAY_SOCKET=$work/control.sock
for _ in $(seq 600); do [ -S "$FACERELAY_SOCKET" ] && break; sleep 0.1; done
"$facerelay" ctl start "rtmp://127.0.0.1:$ingest_port/live/in" "rtmp://127.0.0.1:$platform_port/live/out" --stream soak > /dev/null
ffmpeg -nostdin -v error -re -stream_loop -1 -i "$fixtures/face_720p_close.mp4" -c copy -f flv "rtmp://127.0.0.1:$ingest_port/live/in" &
pids+=($!)

stickers=(sunglasses cat flames carnival none landmarks crown)
figure() { "$facerelay" ctl streams --json 2>/dev/null | jq -r ".result.streams[0].$1 // \"gone\""; }
echo "seconds,rss_mb,cpu_s,frames_out,frames_dropped,reconnects,state" > "$out/soak.csv"
echo "lost_at_s,platform_back_at_s,output_again_at_s,relaying_again_at_s" > "$out/recoveries.csv"
start=$(date +%s.%N)
elapsed() { echo "$(date +%s.%N) - $start" | bc; }
ticks=$(( minutes * 60 * 4 ))
sticker_index=0
down_since=""
for tick in $(seq 1 "$ticks"); do
  sleep 0.25
  kill -0 "$serve_pid" 2>/dev/null || { echo "facerelay serve died: see $out/serve.log" >&2; exit 1; }
  seconds=$(( tick / 4 ))
  if (( tick % 20 == 0 )); then
    sticker_index=$(( (sticker_index + 1) % ${#stickers[@]} ))
    "$facerelay" ctl set-sticker soak "${stickers[$sticker_index]}" > /dev/null
  fi
  # Every minute from the second on: the platform goes away for 8 s.
  if (( tick % 240 == 0 && seconds >= 120 )); then
    reconnects_before=$("$facerelay" ctl stats soak --json | jq -r '.result.streams[0].output_reconnects')
    "$root/deploy/rtmp-server.sh" stop "$platform_pid"
    lost=$(elapsed)
    sleep 8
    platform_pid=$("$root/deploy/rtmp-server.sh" "$work/platform" "$platform_port")
    back=$(elapsed)
    down_since=$lost
    frames_at_back=$(figure frames_out)
    flowing_at=""
  fi
  # The output flows again once frames reach a rebuilt egress.
  if [ -n "$down_since" ] && [ -z "$flowing_at" ] && [ "$(figure frames_out)" -gt "$frames_at_back" ]; then
    flowing_at=$(elapsed)
  fi
  # Recovered: the stream reconnected since the loss and its state is relaying again (which
  # FaceRelay reports once the new output has run without error for 2 s).
  if [ -n "$down_since" ] && [ "$(figure state)" = relaying ] \
     && [ "$("$facerelay" ctl stats soak --json | jq -r '.result.streams[0].output_reconnects')" -gt "$reconnects_before" ]; then
    echo "$down_since,$back,${flowing_at:-$(elapsed)},$(elapsed)" >> "$out/recoveries.csv"
    down_since=""
  fi
  if (( tick % 40 == 0 )); then
    stats=$("$facerelay" ctl stats soak --json)
    rss=$(awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$serve_pid/status")
    cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$serve_pid/stat")
    echo "$seconds,$rss,$cpu,$(echo "$stats" | jq -r '.result.streams[0] | "\(.frames_out),\(.frames_dropped),\(.output_reconnects)"'),$(figure state)" >> "$out/soak.csv"
  fi
done
/usr/bin/python3 "$root/Tests/Benchmarks/soak_report.py" "$out"
