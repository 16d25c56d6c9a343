#!/usr/bin/env bash
# Serve capacity: how many live 720p30 streams one `facerelay serve` (release build, every stream
# with STICKER) relays in real time, against as many plain gst-launch-1.0 transcodes; the serve
# process's memory per stream; and how many frames a live sticker switch takes.
#   Tests/Benchmarks/serve-capacity.sh [SECONDS] [STICKER]      (defaults: 30, sunglasses)
# Everything runs on 127.0.0.1: an ingest nginx-rtmp built from the shipped
# deploy/nginx-facerelay.conf (ports substituted, as the tests do), a second nginx-rtmp as the
# platform, and ffmpeg broadcasters publishing face_720p_close.mp4 (-re -stream_loop -1, so each
# is a live 30 fps stream) to live/keyN. Every process started here is stopped on exit, and every
# wait has a time limit.
#
# 1. Capacity, for N = 1, 2, 3 (and 4 when 3 keeps up), facerelay and gst-launch alternating:
#    - facerelay: a fresh `facerelay serve`; the N publishes reach it through nginx-rtmp's
#      on_publish, and it relays each to the platform. gst-launch: N pipelines with the decoder,
#      x264 settings and muxer of relay-overhead.sh (veryfast, zerolatency, 2500 kbit/s, keyframe
#      every 2 s, flvmux ! rtmp2sink), from an ingest nginx-rtmp with the same configuration minus
#      the on_* notifications (nothing would answer them) to the platform.
#    - At the platform, one ffmpeg per stream plays it (-c copy, no decoding) and writes its
#      progress (frames received, timestamp of the latest) ten times a second. After the streams
#      are relaying and the players receive, a warm-up of $WARMUP s (6), then SECONDS measured.
#    - fps: frames received at the platform per wall second over the window, per stream; for
#      facerelay also its own frames_out rate and frames_dropped from `ctl stats --json`.
#    - lag growth: lag = wall clock - stream timestamp of the latest frame received, sampled every
#      second; growth = median of the last 5 samples - median of the first 5. A relay that keeps
#      up holds it steady; one that falls behind makes it grow (or loses frames, which shows in fps).
#    - keeps real time: every stream >= 98 % of the input's 30 fps, lag growth <= $LAG_LIMIT s
#      (0.3) on every stream, and for facerelay frames_dropped grown by at most 10 over the window.
#    - cores: CPU seconds per wall second of the serve process (facerelay) or of the N pipelines.
#      "others' cores": CPU busy on the machine in the window (/proc/stat) minus every process this
#      script started (relays, publishers, players, nginx): load from elsewhere on the machine.
# 2. Memory: a fresh serve's VmRSS and RssAnon (/proc/PID/status, median of 3 readings) idle,
#    then with 1, 2 and 3 streams, each added once the previous ones relay, after 8 s of settling.
#    Marginal per stream = (with 3 - with 1) / 2: the first stream also pays for what is loaded
#    once (GStreamer plugins, codec libraries). Beside it, in the same part, one plain gst-launch
#    relay of the same input (RssAnon: its decoder, encoder and queues; libraries are shared
#    between processes): a stream of serve is to hold at most 0.8 times that.
# 3. Switch delay, in frames: one stream, recorded at the platform from its first frame (the
#    recorder plays before the stream is published, and ends by itself after the stream does).
#    serve_capacity.py switches it $SWITCHES (5) times, 1.5 s apart (none, STICKER, none, ...), on
#    one control-socket connection, each time: `stats`, `set-sticker`, `stats`. (One connection,
#    not `facerelay ctl` per request: starting a ctl process takes about a frame, which would blur
#    where the reply falls.) frames_out just after the reply counts the frames that had left the
#    frame stage by then, so frame number frames_out (counting from 0) is the first that could
#    carry the new look. Delay = number of the first frame with the new look - frames_out after
#    the reply (0: the very next frame); when a frame left the stage between the request and the
#    reply it is a range up to the count before the request, and the max takes the upper end.
#    The first frame with the new look is found twice: from `ctl subscribe sticker` events (their
#    pts is the output time of the frame the new look was put on, looked up in the recording),
#    and from the recording's pixels (sticker on or off against the input frame with the same
#    barcode index). The recording is checked to hold every frame facerelay output (count, first
#    timestamp 0, no gaps), so its frame k is facerelay's k-th frame; the table says when not.
#
# Single runs vary with the shared machine's load ("others' cores" shows it); rerun to compare.
# PARTS="memory" (any of capacity, memory, switch) runs only those parts. BEFORE=path/to/another
# facerelay measures that build's memory too, in the same part (with BEFORE_PIPELINES as its
# pipeline templates when given).
# Logs and recordings are kept in the work folder with KEEP_WORK=1, and after a failure; SMAPS=1
# keeps there each memory reading's /proc/PID/smaps too (anonymous memory by mapping).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-30}
sticker=${2:-sunglasses}
warmup=${WARMUP:-6}
lag_limit=${LAG_LIMIT:-0.3}
facerelay=${FACERELAY_BIN:-$root/.build/release/facerelay}
[ -x "$facerelay" ] || { echo "build first: swift build -c release" >&2; exit 1; }
fixtures=${FACERELAY_FIXTURES:-$root/.build/test-fixtures}
"$root/Tests/Fixtures/make-fixtures.sh" "$fixtures" > /dev/null
input=$fixtures/face_720p_close.mp4
input_fps=30
min_fps=$(echo "$input_fps * 0.98" | bc -l)
clk_tck=$(getconf CLK_TCK)
work=$(mktemp -d)
mkdir -p "$work/log"

# MARK: processes

pids=()
# spawn NAME COMMAND...: runs COMMAND in the background, output to $work/log/NAME.log; pid in $spawned.
spawn() {
  "${@:2}" > "$work/log/$1.log" 2>&1 < /dev/null &
  spawned=$!
  pids+=("$spawned")
}
alive() { [ -e "/proc/$1" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" != Z ]; }
# stop SECONDS PID...: SIGTERM, then SIGKILL for whatever still runs after SECONDS.
stop() {
  local limit=$1 pid; shift
  for pid; do kill -TERM "$pid" 2>/dev/null || true; done
  local deadline=$(( $(date +%s) + limit ))
  for pid; do
    while alive "$pid" && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
}
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  local running=() pid
  for pid in "${pids[@]}"; do alive "$pid" && running+=("$pid"); done
  [ ${#running[@]} -eq 0 ] || stop 10 "${running[@]}"
  if [ "${KEEP_WORK:-0}" = 1 ] || [ "$status" != 0 ]; then echo "work folder kept (logs in log/): $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; fails with WHAT after SECONDS.
wait_for() {
  local limit=$1 what=$2; shift 2
  local deadline=$(( $(date +%s) + limit ))
  until "$@"; do
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "gave up after $limit s waiting for $what" >&2; return 1; fi
    sleep 0.2
  done
}
accepts() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() {
  local port
  while :; do
    port=$(( 20000 + RANDOM % 20000 ))
    accepts "$port" || { [[ " ${taken:-} " == *" $port "* ]] || break; }
  done
  taken="${taken:-} $port"
  echo "$port"
}

# MARK: servers

ingest_port=$(free_port); plain_port=$(free_port); platform_port=$(free_port); http_port=$(free_port)
ingest=rtmp://127.0.0.1:$ingest_port/live
plain=rtmp://127.0.0.1:$plain_port/live
platform=rtmp://127.0.0.1:$platform_port/live

# nginx NAME PORT [plain]: nginx-rtmp from the shipped ingest configuration, on 127.0.0.1:PORT with
# FaceRelay's HTTP port; "plain" leaves out the on_* notifications (for the gst-launch runs).
nginx_ingest() {
  local dir=$work/$1
  mkdir -p "$dir"
  {
    echo "load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;"
    echo "daemon off; master_process off; pid $dir/nginx.pid; error_log $dir/error.log info;"
    echo "events { worker_connections 256; }"
    grep -v -E '^(load_module|worker_processes|events)' "$root/deploy/nginx-facerelay.conf" \
      | sed -e "s/listen 1935;/listen 127.0.0.1:$2;/" -e "s/127.0.0.1:8190/127.0.0.1:$http_port/" \
      | if [ "${3:-}" = plain ]; then grep -v -E '^\s*on_(publish|play|publish_done) '; else cat; fi
  } > "$dir/nginx.conf"
  spawn "$1" nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log"
  wait_for 10 "nginx $1 on port $2" accepts "$2"
}
nginx_ingest ingest "$ingest_port"
nginx_ingest ingest-plain "$plain_port" plain
pids+=("$("$root/deploy/rtmp-server.sh" "$work/platform" "$platform_port")")   # the platform

# serve NAME: a fresh `facerelay serve` routing every key of live/ to the platform with STICKER;
# sets serve_pid and sock.
serve() {
  local dir=$work/$1
  mkdir -p "$dir"
  sock=$dir/control.sock
  cat > "$dir/facerelay.yml" <<YML
control_socket: $sock
http: 127.0.0.1:$http_port
defaults:
  sticker: $sticker
  stats_interval_s: 3600
rtmp:
  ingest: rtmp://127.0.0.1:$ingest_port
  applications:
    live:
      upstream: $platform/{key}
      sticker: $sticker
YML
  local templates=()
  if [ -n "${serve_pipelines:-}" ]; then templates=(--pipelines "$serve_pipelines"); fi
  spawn "$1" "${serve_build:-$facerelay}" serve --config "$dir/facerelay.yml" "${templates[@]}"
  serve_pid=$spawned
  wait_for 60 "facerelay serve ($work/log/$1.log)" eval '[ -S "$sock" ] && accepts "$http_port"'
}
ctl() { timeout 10 "$facerelay" ctl "$@" --socket "$sock" --json; }
relaying() { [ "$(ctl streams | jq '[.result.streams[] | select(.state == "relaying")] | length')" -ge "$1" ]; }

publish() { # NAME URL
  spawn "$1" ffmpeg -nostdin -v error -re -stream_loop -1 -i "$input" -c copy -f flv "$2"
}
gst_relay() { # NAME FROM TO
  spawn "$1" gst-launch-1.0 -q rtmp2src location="$2" idle-timeout=15 \
    ! decodebin name=decode caps="video/x-raw; audio/x-raw; audio/mpeg, mpegversion=(int)4" \
    decode. ! videoconvert ! video/x-raw,format=I420 \
      ! x264enc tune=zerolatency speed-preset=veryfast bitrate=2500 key-int-max=60 ! h264parse config-interval=-1 \
      ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=3000000000 \
      ! flvmux name=mux streamable=true ! rtmp2sink location="$3" sync=false async-connect=false \
    decode. ! aacparse ! queue max-size-buffers=0 max-size-bytes=0 max-size-time=3000000000 ! mux.
}
watch_stream() { # NAME URL PROGRESS: plays URL at the platform without decoding, progress 10 times a second
  spawn "$1" ffmpeg -nostdin -v error -progress "$3" -stats_period 0.1 -rw_timeout 20000000 -i "$2" -map 0:v -c copy -f null -
}

# MARK: measuring

# The last complete block of an ffmpeg -progress file: "frames out_time_us".
progress() {
  awk -F= '$1 == "frame" { f = $2 } $1 == "out_time_us" { o = $2 } $1 == "progress" { F = f; O = o }
           END { print (F == "" ? 0 : F), (O == "" || O == "N/A" ? 0 : O) }' "$1" 2>/dev/null || echo "0 0"
}
receiving() { local file; for file; do [ "$(progress "$file" | cut -d' ' -f1)" -gt 0 ] || return 1; done; }
now() { date +%s.%N; }
cpu_ticks() { # PID... -> their user+system ticks
  local pid total=0 ticks
  for pid; do ticks=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | awk '{ print $12 + $13 }') || ticks=0; total=$((total + ${ticks:-0})); done
  echo "$total"
}
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }
smaller() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 < b + 0) ? a : b }'; }
larger() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 > b + 0) ? a : b }'; }
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# facerelay's own counters, "stream frames_out frames_dropped" per line.
serve_counters() { ctl stats | jq -r '.result.streams[] | "\(.stream) \(.frames_out) \(.frames_dropped)"' | sort; }

# measure LABEL N PROGRESS_FILES... -- CPU_PIDS...: warm-up, then the window; sets fps_min, lag_max,
# cores, others (and for facerelay fr_fps_min, dropped_max); per-stream lines go to $work/details.
measure() {
  local label=$1 n=$2; shift 2
  local files=() cpu_pids=()
  while [ "$1" != -- ]; do files+=("$1"); shift; done; shift
  cpu_pids=("$@")
  wait_for 30 "$label: every platform player receiving" receiving "${files[@]}"
  sleep "$warmup"
  local t1 t2 c1 c2 a1 a2 m1 m2 k frames out_us r1=0 r2=0
  if [ "$label" = facerelay ]; then serve_counters > "$work/counters1"; r1=$(status_mb "${cpu_pids[0]}" VmRSS); fi
  t1=$(now); c1=$(cpu_ticks "${cpu_pids[@]}"); a1=$(cpu_ticks "${pids[@]}"); m1=$(machine_ticks)
  for k in "${!files[@]}"; do progress "${files[$k]}" > "$work/start-$k"; : > "$work/lag-$k"; done
  local end=$(( $(date +%s) + seconds )) t
  while [ "$(date +%s)" -lt "$end" ]; do
    sleep 1
    t=$(now)
    for k in "${!files[@]}"; do
      read -r frames out_us < <(progress "${files[$k]}")
      echo "$t $out_us" | awk '{ printf "%.3f\n", $1 - $2 / 1e6 }' >> "$work/lag-$k"
    done
  done
  t2=$(now); c2=$(cpu_ticks "${cpu_pids[@]}"); a2=$(cpu_ticks "${pids[@]}"); m2=$(machine_ticks)
  if [ "$label" = facerelay ]; then serve_counters > "$work/counters2"; r2=$(status_mb "${cpu_pids[0]}" VmRSS); fi
  local wall fps lag f1 f2
  wall=$(echo "$t2 - $t1" | bc -l)
  fps_min=999; lag_max=-999
  for k in "${!files[@]}"; do
    read -r f1 _ < "$work/start-$k"; read -r f2 _ < <(progress "${files[$k]}")
    fps=$(echo "($f2 - $f1) / $wall" | bc -l)
    lag=$(echo "$(tail -n 5 "$work/lag-$k" | median) - $(head -n 5 "$work/lag-$k" | median)" | bc -l)
    fps_min=$(smaller "$fps" "$fps_min"); lag_max=$(larger "$lag" "$lag_max")
    printf "    %-9s N=%d stream %d: %5d frames at the platform in %.1f s = %6.2f fps, lag growth %+.2f s\n" \
      "$label" "$n" "$((k + 1))" "$((f2 - f1))" "$wall" "$fps" "$lag" >> "$work/details"
  done
  cores=$(echo "($c2 - $c1) / $clk_tck / $wall" | bc -l)
  machine=$(echo "$(nproc) * ($(cut -d' ' -f1 <<< "$m2") - $(cut -d' ' -f1 <<< "$m1")) / ($(cut -d' ' -f2 <<< "$m2") - $(cut -d' ' -f2 <<< "$m1"))" | bc -l)
  others=$(echo "$machine - ($a2 - $a1) / $clk_tck / $wall" | bc -l)
  if [ "$label" = facerelay ]; then
    fr_fps_min=999; dropped_max=0
    local stream o1 d1 o2 d2
    while read -r stream o1 d1 o2 d2; do
      fps=$(echo "($o2 - $o1) / $wall" | bc -l)
      fr_fps_min=$(smaller "$fps" "$fr_fps_min")
      [ $((d2 - d1)) -gt "$dropped_max" ] && dropped_max=$((d2 - d1))
      printf "    facerelay N=%d %s: frames_out %d -> %d (%.2f fps), frames_dropped %d -> %d\n" "$n" "$stream" "$o1" "$o2" "$fps" "$d1" "$d2" >> "$work/details"
    done < <(join "$work/counters1" "$work/counters2")
    printf "    facerelay N=%d serve VmRSS %.1f MB at the window's start, %.1f MB at its end\n" "$n" "$r1" "$r2" >> "$work/details"
  fi
}
status_mb() { awk -v field="$2:" '$1 == field { printf "%.1f\n", $2 / 1024 }' "/proc/$1/status"; }   # PID FIELD
keeps_up() { # FPS LAG [DROPPED]
  [ "$(echo "$1 >= $min_fps && $2 <= $lag_limit" | bc -l)" = 1 ] && [ "${3:-0}" -le 10 ]
}

# MARK: 1. capacity

run_facerelay() { # N
  local n=$1 k files=() started=()
  serve "serve-n$n"
  started+=("$serve_pid")
  for k in $(seq "$n"); do publish "publish-fr-n$n-$k" "$ingest/key$k"; started+=("$spawned"); done
  wait_for 40 "facerelay: $n streams relaying" relaying "$n"
  for k in $(seq "$n"); do
    watch_stream "watch-fr-n$n-$k" "$platform/key$k" "$work/progress-fr-n$n-$k"
    started+=("$spawned"); files+=("$work/progress-fr-n$n-$k")
  done
  measure facerelay "$n" "${files[@]}" -- "$serve_pid"
  fr_rss=$(status_mb "$serve_pid" VmRSS)
  stop 20 "${started[@]:1}"   # publishers and players: each publish's end stops its stream
  stop 20 "$serve_pid"
}
run_gst() { # N
  local n=$1 k files=() started=() relays=()
  for k in $(seq "$n"); do gst_relay "gst-n$n-$k" "$plain/key$k" "$platform/gst-key$k"; relays+=("$spawned"); done
  sleep 1
  for k in $(seq "$n"); do publish "publish-gst-n$n-$k" "$plain/key$k"; started+=("$spawned"); done
  for k in $(seq "$n"); do
    watch_stream "watch-gst-n$n-$k" "$platform/gst-key$k" "$work/progress-gst-n$n-$k"
    started+=("$spawned"); files+=("$work/progress-gst-n$n-$k")
  done
  measure gst "$n" "${files[@]}" -- "${relays[@]}"
  if [ "$n" = 1 ]; then gst_rss=$(status_mb "${relays[0]}" VmRSS); gst_anon=$(status_mb "${relays[0]}" RssAnon); fi
  stop 20 "${started[@]}" "${relays[@]}"
}

echo "serve capacity: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), facerelay $(git -C "$root" rev-parse --short HEAD), sticker $sticker"
echo "  input: face_720p_close.mp4 looped live at $input_fps fps; window $seconds s after $warmup s of warm-up"
echo "  keeps real time: every stream >= $(printf %.1f "$min_fps") fps at the platform, lag growth <= $lag_limit s (facerelay: frames_dropped grows <= 10)"
parts=" ${PARTS:-capacity memory switch} "
if [[ $parts == *" capacity "* ]]; then
declare -A rows
fr_best=0; gst_best=0; fr_ok_so_far=1; gst_ok_so_far=1
n=1
while :; do
  run_facerelay "$n"
  if keeps_up "$fps_min" "$lag_max" "$dropped_max"; then fr_ok=yes; else fr_ok=no; fi
  row=$(printf "%2d | %6.2f %6.2f %7d %+7.2f %6.2f %7.0f %4s |" "$n" "$fps_min" "$fr_fps_min" "$dropped_max" "$lag_max" "$cores" "$fr_rss" "$fr_ok")
  fr_others=$others
  run_gst "$n"
  if keeps_up "$fps_min" "$lag_max"; then gst_ok=yes; else gst_ok=no; fi
  rows[$n]="$row$(printf " %6.2f %+7.2f %6.2f %4s | %4.2f %4.2f" "$fps_min" "$lag_max" "$cores" "$gst_ok" "$fr_others" "$others")"
  [ "$fr_ok" = yes ] && [ "$fr_ok_so_far" = 1 ] && fr_best=$n || fr_ok_so_far=0
  [ "$gst_ok" = yes ] && [ "$gst_ok_so_far" = 1 ] && gst_best=$n || gst_ok_so_far=0
  if [ "$n" -ge 3 ] && { [ "$n" -ge 4 ] || { [ "$fr_ok" = no ] && [ "$gst_ok" = no ]; }; }; then break; fi
  n=$((n + 1))
done
echo
echo "1. capacity (fps: min over the N streams; platform = frames received by a player at the platform, own = facerelay's frames_out)"
echo " N | facerelay serve: fps platform / own, dropped, lag+ s, cores, RSS MB, real time | gst-launch x N: fps, lag+ s, cores, real time | others' cores fr / gst"
for k in $(printf "%s\n" "${!rows[@]}" | sort -n); do echo "${rows[$k]}"; done
echo "largest N in real time: facerelay serve $fr_best, gst-launch $gst_best"
echo "  per stream:"
cat "$work/details"
fi

# MARK: 2. memory

rss_mb() { local pid=$1 field=${2:-VmRSS} i; for i in 1 2 3; do status_mb "$pid" "$field"; sleep 1; done | median; }
# memory_of LABEL BUILD [TEMPLATES]: a fresh serve of BUILD idle, then with 1, 2 and 3 streams;
# prints its rows and sets marginal_anon.
memory_of() {
  local label=$1 k peak marginal started=() rss=() anon=()
  serve_build=$2 serve_pipelines=${3:-} serve "serve-memory-$label"
  started+=("$serve_pid")
  sleep 3
  rss[0]=$(rss_mb "$serve_pid"); anon[0]=$(rss_mb "$serve_pid" RssAnon)
  for k in 1 2 3; do
    publish "publish-memory-$label-$k" "$ingest/mem-$label-$k"; started+=("$spawned")
    wait_for 40 "memory: $k streams relaying" relaying "$k"
    sleep 8
    rss[$k]=$(rss_mb "$serve_pid"); anon[$k]=$(rss_mb "$serve_pid" RssAnon)
    [ -z "${SMAPS:-}" ] || cp "/proc/$serve_pid/smaps" "$work/smaps-$label-$k"
  done
  peak=$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/$serve_pid/status")
  stop 20 "${started[@]:1}"
  stop 20 "$serve_pid"
  echo "   $label ($2):"
  printf "     idle      %7.1f MB               RssAnon %6.1f MB\n" "${rss[0]}" "${anon[0]}"
  for k in 1 2 3; do
    printf "     %d stream%-2s %7.1f MB  (%+6.1f MB)  RssAnon %6.1f MB  (%+6.1f MB)\n" "$k" "$([ "$k" -gt 1 ] && echo s)" "${rss[$k]}" \
      "$(echo "${rss[$k]} - ${rss[$((k - 1))]}" | bc -l)" "${anon[$k]}" "$(echo "${anon[$k]} - ${anon[$((k - 1))]}" | bc -l)"
  done
  marginal=$(echo "(${rss[3]} - ${rss[1]}) / 2" | bc -l)
  marginal_anon=$(echo "(${anon[3]} - ${anon[1]}) / 2" | bc -l)
  printf "     peak (VmHWM) %.1f MB; marginal per stream (2nd and 3rd): VmRSS %.1f MB, RssAnon %.1f MB; first stream %.1f MB (one-time loading included)\n" \
    "$peak" "$marginal" "$marginal_anon" "$(echo "${rss[1]} - ${rss[0]}" | bc -l)"
}
# The plain transcode of the same input, relaying on its own: its RssAnon after the same settling.
gst_memory() {
  local relay
  gst_relay gst-memory "$plain/mem-gst" "$platform/mem-gst"; relay=$spawned
  sleep 1
  publish publish-gst-memory "$plain/mem-gst"
  wait_for 40 "memory: the gst-launch relay's output" eval 'ffprobe -v error -rw_timeout 5000000 -show_entries stream=codec_type -of csv=p=0 "$platform/mem-gst" 2>/dev/null | grep -q video'
  sleep 8
  gst_rss=$(rss_mb "$relay"); gst_anon=$(rss_mb "$relay" RssAnon)
  [ -z "${SMAPS:-}" ] || cp "/proc/$relay/smaps" "$work/smaps-gst"
  stop 20 "$spawned" "$relay"
}
if [[ $parts == *" memory "* ]]; then
  echo
  echo "2. memory (median of 3 readings; sticker $sticker)"
  gst_memory
  printf "   one plain gst-launch-1.0 relay of the same input: VmRSS %.1f MB, RssAnon %.1f MB\n" "$gst_rss" "$gst_anon"
  memory_of facerelay "$facerelay"
  printf "     a stream of serve against the plain relay's RssAnon: %.2fx (target <= 0.8)\n" "$(echo "$marginal_anon / $gst_anon" | bc -l)"
  if [ -n "${BEFORE:-}" ]; then
    memory_of before "$BEFORE" "${BEFORE_PIPELINES:-}"
    printf "     a stream of serve against the plain relay's RssAnon: %.2fx\n" "$(echo "$marginal_anon / $gst_anon" | bc -l)"
  fi
fi

# MARK: 3. switch delay

if [[ $parts == *" switch "* ]]; then
serve serve-switch
switch_started=("$serve_pid")
# The recorder plays before the stream exists, so it gets the stream from its first frame; it ends
# by itself 8 s after the stream ends (rw_timeout), which leaves a complete, finalised file.
spawn record-switch ffmpeg -nostdin -v error -rw_timeout 8000000 -i "$platform/switch" -map 0:v -c copy -copyts -f flv "$work/switch.flv"
recorder=$spawned
spawn subscribe-switch "$facerelay" ctl subscribe sticker --json --socket "$sock"
switch_started+=("$spawned")
sleep 1
publish publish-switch "$ingest/switch"; publisher=$spawned
wait_for 40 "switch: the stream relaying" relaying 1
wait_for 20 "switch: a face tracked" eval '[ "$(ctl streams | jq ".result.streams[0].faces")" -ge 1 ]'
sleep 3
switches=${SWITCHES:-5}
timeout $((switches * 2 + 30)) /usr/bin/python3 "$root/Tests/Benchmarks/serve_capacity.py" switch "$sock" switch "$sticker" "$switches" 1.5 \
  > "$work/switches.jsonl"
sleep 1
stop 20 "$publisher"   # the publish's end ends the stream, whose end-of-stream ends the recording
wait_for 30 "switch: the recording to end" eval '! alive "$recorder"' || true
stop 10 "$recorder"
stop 20 "${switch_started[@]}"
final_out=$(sed -n 's/.*stream=switch .*stream ended frames_in=[0-9]* frames_out=\([0-9]*\).*/\1/p' "$work/log/serve-switch.log")
echo
echo "3. switch delay, in frames, from the set-sticker reply to the first output frame with the new look"
timeout 120 /usr/bin/python3 "$root/Tests/Benchmarks/serve_capacity.py" looks "$input" "$work/switch.flv" "$work/switches.jsonl" "$work/log/subscribe-switch.log" "${final_out:-0}"
fi
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
