#!/usr/bin/env bash
# Restreaming: what each further output of one stream costs. `facerelay run` pulls the same 20 s
# 720p30 H.264+AAC stream of a moving face live from a local nginx-rtmp and pushes it back to it
# with 1, then 2, then 4 outputs (`--output` given 1, 2, 4 times: one encode, one pipeline per
# output). Runs alternate (1, 2, 4, 1, 2, 4, ...) so that load from elsewhere hits all alike.
# Prints CPU and peak RSS per run, the medians side by side, and per further output what it adds
# (the target: under 2 % of a core and under 5 MB each).
# Then, in runs of their own (players cost CPU), the latency from ingest to each output: a player
# (frame_arrivals.py: ffmpeg, one decoder thread, no buffering) watches the ingest stream and one
# watches each output, and each frame's arrival on an output is compared with its arrival on the
# ingest by its barcode (median and 90th percentile over the frames; the target: every output
# within one frame, 33 ms, of a single-output relay).
#   Tests/Benchmarks/restream.sh [RUNS] [STICKER]   (defaults: 3 runs, sunglasses)
#   PARTS="cpu latency" (the default) or either alone.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
sticker=${2:-sunglasses}
parts=" ${PARTS:-cpu latency} "
facerelay=${FACERELAY_BIN:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release --product facerelay" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
input=$fixtures/face_720p_close.mp4
seconds=20
work=$(mktemp -d)
chmod 777 "$work"
port=$(( 20000 + RANDOM % 20000 ))
nginx_pid=$("$root/deploy/rtmp-server.sh" "$work/nginx" "$port")
trap '"$root/deploy/rtmp-server.sh" stop $nginx_pid; rm -rf "$work"' EXIT
url=rtmp://127.0.0.1:$port/live

measure() { # key outputs -> "cpu_seconds wall_seconds peak_rss_kb"
  local key=$1 count=$2 outputs=()
  for n in $(seq "$count"); do outputs+=(--output "$url/out-$key-$n"); done
  /usr/bin/time -f "%U %S %e %M" -o "$work/time-$key" "$facerelay" run --input "$url/in-$key" "${outputs[@]}" --sticker "$sticker" \
    --stats-interval 3600 --stats-json "$work/stats-$key.json" 2> "$work/relay-$key.log" &
  local relay=$!
  # Long enough for facerelay to load the landmark model and start pulling before the publisher
  # starts: nginx-rtmp serves a late player from the next keyframe, two seconds later.
  sleep 3
  ffmpeg -nostdin -v error -re -i "$input" -t "$seconds" -c copy -f flv "$url/in-$key"
  wait $relay
  awk '{printf "%.2f %.2f %d\n", $1 + $2, $3, $4}' "$work/time-$key"
}

counts=(1 2 4)
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
if [[ $parts == *" cpu "* ]]; then
  declare -A cpus rsss
  printf "%-8s %4s %8s %8s %10s %12s %s\n" outputs run cpu_s wall_s cpu_cores peak_rss_mb "frames_sent per output (missed)"
  for run in $(seq "$runs"); do
    for count in "${counts[@]}"; do
      key=$count-$run
      read -r cpu wall rss < <(measure "$key" "$count")
      sent=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(' '.join(f\"{o['frames_sent']}({o['frames_missed']})\" for o in s['outputs']))" "$work/stats-$key.json")
      printf "%-8d %4d %8.2f %8.2f %10.3f %12.1f %s\n" "$count" "$run" "$cpu" "$wall" "$(echo "$cpu / $wall" | bc -l)" "$(echo "$rss / 1024" | bc -l)" "$sent"
      cpus[$count]+="$cpu "
      rsss[$count]+="$rss "
    done
  done
  echo
  echo "median over $runs runs of a $seconds s 720p30 stream, sticker $sticker; each further output against one output:"
  one_cpu=$(median ${cpus[1]}); one_rss=$(median ${rsss[1]})
  for count in "${counts[@]}"; do
    cpu=$(median ${cpus[$count]}); rss=$(median ${rsss[$count]})
    if [ "$count" = 1 ]; then
      printf "  %d output   CPU %6.2f s   peak RSS %6.1f MB\n" "$count" "$cpu" "$(echo "$rss / 1024" | bc -l)"
    else
      printf "  %d outputs  CPU %6.2f s   peak RSS %6.1f MB   each further output: %+5.2f %% of a core, %+5.1f MB\n" "$count" "$cpu" "$(echo "$rss / 1024" | bc -l)" \
        "$(echo "($cpu - $one_cpu) / ($count - 1) / $seconds * 100" | bc -l)" "$(echo "($rss - $one_rss) / ($count - 1) / 1024" | bc -l)"
    fi
  done
fi

measure_latency() { # key outputs -> one "median_ms p90_ms frames" line per output
  local key=$1 count=$2 outputs=() watchers=()
  # A player joining mid-stream decodes a few frames before the first keyframe: its complaints go to a log.
  python3 "$root/Tests/Benchmarks/frame_arrivals.py" "$url/in-$key" "$work/arrivals-$key-in" 2> "$work/watch-$key-in.log" & watchers+=($!)
  for n in $(seq "$count"); do
    outputs+=(--output "$url/out-$key-$n")
    python3 "$root/Tests/Benchmarks/frame_arrivals.py" "$url/out-$key-$n" "$work/arrivals-$key-$n" 2> "$work/watch-$key-$n.log" & watchers+=($!)
  done
  "$facerelay" run --input "$url/in-$key" "${outputs[@]}" --sticker "$sticker" --stats-interval 3600 2> "$work/relay-$key.log" &
  local relay=$!
  sleep 3
  ffmpeg -nostdin -v error -re -i "$input" -t "$seconds" -c copy -f flv "$url/in-$key"
  wait $relay
  sleep 1
  kill "${watchers[@]}" 2> /dev/null || true
  wait "${watchers[@]}" 2> /dev/null || true
  python3 "$root/Tests/Benchmarks/frame_arrivals.py" --latency "$work/arrivals-$key-in" $(for n in $(seq "$count"); do echo "$work/arrivals-$key-$n"; done)
}

[[ $parts == *" latency "* ]] || exit 0
echo
printf "%-8s %4s %s\n" outputs run "latency ingest -> each output, ms: median/p90 (frames compared)"
declare -A latencies
for run in $(seq "$runs"); do
  for count in "${counts[@]}"; do
    key=lat-$count-$run
    line=""
    while read -r median p90 frames; do
      line+=" $median/$p90 ($frames)"
      latencies[$count]+="$median "
    done < <(measure_latency "$key" "$count")
    printf "%-8d %4d %s\n" "$count" "$run" "$line"
  done
done
echo
echo "median latency over $runs runs and every output, against one output:"
one_latency=$(median ${latencies[1]})
for count in "${counts[@]}"; do
  value=$(median ${latencies[$count]})
  printf "  %d output%s  %6.1f ms   %+6.1f ms (%+.2f frames)\n" "$count" "$([ "$count" = 1 ] && echo " " || echo "s")" "$value" \
    "$(echo "$value - $one_latency" | bc -l)" "$(echo "($value - $one_latency) / 33.333" | bc -l)"
done
