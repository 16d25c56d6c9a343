#!/usr/bin/env bash
# Relay overhead: `facerelay run --sticker none` against a plain gst-launch-1.0 relay with the same
# decoder, encoder settings and muxer, both pulling the same 720p30 H.264+AAC stream live from a
# local nginx-rtmp and pushing it back to it. Runs alternate (baseline, facerelay, baseline, ...)
# so that load from elsewhere on the machine hits both alike. Prints CPU and peak RSS per run and
# the medians side by side.
#   Tests/Benchmarks/relay-overhead.sh [RUNS] [PRESET]      (defaults: 3 runs, veryfast)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
preset=${2:-veryfast}
facerelay=${FACERELAY_BIN:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
input=$fixtures/face_720p_bench.mp4
work=$(mktemp -d)
chmod 777 "$work"
port=$(( 20000 + RANDOM % 20000 ))
nginx_pid=$("$root/deploy/rtmp-server.sh" "$work/nginx" "$port")
trap 'kill -QUIT $nginx_pid 2>/dev/null; rm -rf "$work"' EXIT
url=rtmp://127.0.0.1:$port/live

baseline() { # key
  gst-launch-1.0 -q rtmp2src location="$url/in-$1" idle-timeout=15 \
    ! decodebin name=decode caps="video/x-raw; audio/x-raw; audio/mpeg, mpegversion=(int)4" \
    decode. ! videoconvert ! video/x-raw,format=I420 \
      ! x264enc tune=zerolatency speed-preset="$preset" bitrate=2500 key-int-max=60 ! h264parse config-interval=-1 \
      ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=3000000000 \
      ! flvmux name=mux streamable=true ! rtmp2sink location="$url/out-$1" sync=false async-connect=false \
    decode. ! aacparse ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=3000000000 ! mux.
}
facerelay() { # key
  "$facerelay" run --input "$url/in-$1" --output "$url/out-$1" --sticker none --x264-preset "$preset" \
    --bitrate 2500 --keyframe-interval 2 --stats-interval 3600 --stats-json "$work/stats-$1.json" 2> "$work/relay-$1.log"
}

measure() { # name key -> "cpu_seconds wall_seconds peak_rss_kb"
  local name=$1 key=$2
  ( /usr/bin/time -f "%U %S %e %M" -o "$work/time-$key" bash -c "$(declare -f baseline facerelay); url=$url preset=$preset facerelay=$facerelay work=$work; $name $key" ) &
  local relay=$!
  sleep 1
  ffmpeg -nostdin -v error -re -i "$input" -c copy -f flv "$url/in-$key"
  wait $relay
  awk '{printf "%.2f %.2f %d\n", $1 + $2, $3, $4}' "$work/time-$key"
}

printf "%-10s %4s %10s %8s %10s %10s\n" pipeline run cpu_s wall_s cpu_cores peak_rss_mb
declare -a base_cpu base_rss relay_cpu relay_rss
for run in $(seq "$runs"); do
  for name in baseline facerelay; do
    read -r cpu wall rss < <(measure $name "$name-$run")
    printf "%-10s %4d %10.2f %8.2f %10.3f %10.1f\n" $name "$run" "$cpu" "$wall" "$(echo "$cpu / $wall" | bc -l)" "$(echo "$rss / 1024" | bc -l)"
    if [ $name = baseline ]; then base_cpu+=("$cpu"); base_rss+=("$rss"); else relay_cpu+=("$cpu"); relay_rss+=("$rss"); fi
  done
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
bc_cpu=$(median "${base_cpu[@]}"); fr_cpu=$(median "${relay_cpu[@]}")
bc_rss=$(median "${base_rss[@]}"); fr_rss=$(median "${relay_rss[@]}")
echo
echo "median over $runs runs of a 20 s 720p30 stream, x264 $preset:"
printf "  CPU seconds: gst-launch %.2f, facerelay %.2f, ratio %.3f (%+.1f%%)\n" "$bc_cpu" "$fr_cpu" "$(echo "$fr_cpu / $bc_cpu" | bc -l)" "$(echo "($fr_cpu / $bc_cpu - 1) * 100" | bc -l)"
printf "  peak RSS MB: gst-launch %.1f, facerelay %.1f, difference %+.1f MB\n" "$(echo "$bc_rss / 1024" | bc -l)" "$(echo "$fr_rss / 1024" | bc -l)" "$(echo "($fr_rss - $bc_rss) / 1024" | bc -l)"
for stats in "$work"/stats-facerelay-*.json; do
  grep -E '"(frames_out|frames_dropped|stage_ms_per_frame)"' "$stats" | tr -d ' ,\n'; echo
done | sed 's/^/  facerelay stats: /'
