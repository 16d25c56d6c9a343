#!/usr/bin/env bash
# Relay overhead: `facerelay run --sticker none` against a plain gst-launch-1.0 relay with the same
# decoder, encoder settings and muxer, and, for each STICKER given, `facerelay run --sticker
# STICKER` (tracking plus stickers) against both. All pull the same 20 s 720p30 H.264+AAC stream of
# a moving face live from a local nginx-rtmp and push it back to it. Runs alternate (baseline,
# facerelay, stickers, baseline, ...) so that load from elsewhere on the machine hits all alike.
# Prints CPU and peak RSS per run, the medians side by side, and facerelay's own per-frame figures.
#   Tests/Benchmarks/relay-overhead.sh [RUNS] [PRESET] [STICKER...]   (defaults: 3 runs, veryfast)
# $RELAY_ARGS adds options to every facerelay run (e.g. RELAY_ARGS="--detection-interval 60").
# BEFORE=path/to/another/facerelay runs that build too, in the same rounds ("before none", "before
# STICKER"), with the pipeline templates of BEFORE_PIPELINES when given (a build's own templates).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
preset=${2:-veryfast}
stickers=("${@:3}")
before=${BEFORE:-}
before_pipelines=${BEFORE_PIPELINES:-}
facerelay=${FACERELAY_BIN:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
input=$fixtures/face_720p_close.mp4
work=$(mktemp -d)
chmod 777 "$work"
port=$(( 20000 + RANDOM % 20000 ))
nginx_pid=$("$root/deploy/rtmp-server.sh" "$work/nginx" "$port")
trap '"$root/deploy/rtmp-server.sh" stop $nginx_pid; rm -rf "$work"' EXIT
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
facerelay() { # key [sticker] [build]
  local build=${3:-$facerelay} templates=()
  if [ "$build" != "$facerelay" ] && [ -n "$before_pipelines" ]; then templates=(--pipelines "$before_pipelines"); fi
  "$build" run "${templates[@]}" --input "$url/in-$1" --output "$url/out-$1" --sticker "${2:-none}" --x264-preset "$preset" \
    --bitrate 2500 --keyframe-interval 2 --stats-interval 3600 --stats-json "$work/stats-$1.json" $relay_args 2> "$work/relay-$1.log"
}

measure() { # key command... -> "cpu_seconds wall_seconds peak_rss_kb system_seconds minor_faults"
  local key=$1; shift
  ( /usr/bin/time -f "%U %S %e %M %R" -o "$work/time-$key" bash -c "$(declare -f baseline facerelay); url=$url preset=$preset facerelay=$facerelay before_pipelines='$before_pipelines' work=$work relay_args='${RELAY_ARGS:-}'; $*" ) &
  local relay=$!
  # Long enough for facerelay to load the landmark model and start pulling before the publisher
  # starts: nginx-rtmp serves a late player from the next keyframe, two seconds later.
  sleep 3
  ffmpeg -nostdin -v error -re -i "$input" -c copy -f flv "$url/in-$key"
  wait $relay
  awk '{printf "%.2f %.2f %d %.2f %d\n", $1 + $2, $3, $4, $2, $5}' "$work/time-$key"
}

# Variants: the gst-launch baseline, facerelay without stickers, then facerelay with each sticker.
variants=(baseline none "${stickers[@]}")
if [ -n "$before" ]; then for variant in none "${stickers[@]}"; do variants+=("before:$variant"); done; fi
declare -A cpus rsss
# sys_s and minor page faults: memory mapped and faulted in anew shows there, whatever the load.
printf "%-18s %4s %10s %8s %10s %10s %7s %9s\n" pipeline run cpu_s wall_s cpu_cores peak_rss_mb sys_s minflt_k
for run in $(seq "$runs"); do
  for variant in "${variants[@]}"; do
    key=$variant-$run
    if [ "$variant" = baseline ]; then command="baseline $key"; label=gst-launch
    elif [ "${variant#before:}" != "$variant" ]; then key=before-${variant#before:}-$run; command="facerelay $key ${variant#before:} $before"; label="before ${variant#before:}"
    else command="facerelay $key $variant"; label="facerelay $variant"; fi
    read -r cpu wall rss sys faults < <(measure "$key" "$command")
    printf "%-18s %4d %10.2f %8.2f %10.3f %10.1f %7.2f %9.1f\n" "$label" "$run" "$cpu" "$wall" "$(echo "$cpu / $wall" | bc -l)" "$(echo "$rss / 1024" | bc -l)" \
      "$sys" "$(echo "$faults / 1000" | bc -l)"
    cpus[$variant]+="$cpu "
    rsss[$variant]+="$rss "
  done
done
median() { printf "%s\n" "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
echo
echo "median over $runs runs of a 20 s 720p30 stream, x264 $preset (ratios against gst-launch, then against facerelay none):"
bc_cpu=$(median ${cpus[baseline]}); bc_rss=$(median ${rsss[baseline]})
none_cpu=$(median ${cpus[none]}); none_rss=$(median ${rsss[none]})
printf "  %-18s CPU %6.2f s   peak RSS %6.1f MB\n" gst-launch "$bc_cpu" "$(echo "$bc_rss / 1024" | bc -l)"
for variant in "${variants[@]:1}"; do
  cpu=$(median ${cpus[$variant]}); rss=$(median ${rsss[$variant]})
  printf "  %-18s CPU %6.2f s (%+6.1f%%, %+6.1f%%)   peak RSS %6.1f MB (%+6.1f MB, %+6.1f MB)\n" "$(echo "facerelay $variant" | sed 's/^facerelay before:/before /')" "$cpu" \
    "$(echo "($cpu / $bc_cpu - 1) * 100" | bc -l)" "$(echo "($cpu / $none_cpu - 1) * 100" | bc -l)" \
    "$(echo "$rss / 1024" | bc -l)" "$(echo "($rss - $bc_rss) / 1024" | bc -l)" "$(echo "($rss - $none_rss) / 1024" | bc -l)"
done
echo "facerelay's own figures per run (stage: the frame thread's Swift stage; track: tracking on both threads; sticker: placement and blending):"
for stats in "$work"/stats-*.json; do
  printf "  %-22s " "$(basename "$stats" .json | sed 's/^stats-//')"
  grep -E '"(frames_out|frames_dropped|stage_ms_per_frame|track_ms_per_frame|sticker_ms_per_frame|faces_tracked|lightened_frames|load_level)"' "$stats" | tr -d ' ,\n'; echo
done
