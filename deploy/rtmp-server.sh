#!/usr/bin/env bash
# Starts a private nginx-rtmp on 127.0.0.1 for demos and benchmarks, in the background.
#   rtmp-server.sh DIR PORT    -> prints the nginx pid
#   rtmp-server.sh stop PID    -> stops it, for sure
# Applications: rtmp://127.0.0.1:PORT/live/<key>, and rtmp://127.0.0.1:PORT/record/<key>, which also
# writes every frame published to it to DIR/recorded/<key>.flv as it arrives (whole once the
# publisher has disconnected). Runs as the calling user (no privileges needed).
set -euo pipefail
# A stop by signal alone is not enough: an nginx started from a thread that blocks signals (a test
# runner's) inherits the mask and ignores SIGQUIT and SIGTERM, and a graceful stop can wait on a
# client. SIGTERM, then SIGKILL after 3 s.
if [ "${1:-}" = stop ]; then
  pid=${2:?usage: rtmp-server.sh stop PID}
  kill -TERM "$pid" 2>/dev/null || exit 0
  for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  exit 0
fi
dir=${1:?usage: rtmp-server.sh DIR PORT}
port=${2:?usage: rtmp-server.sh DIR PORT}
mkdir -p "$dir/recorded"
cat > "$dir/nginx.conf" <<CONF
load_module /usr/lib/nginx/modules/ngx_rtmp_module.so;
daemon off;
master_process off;
pid $dir/nginx.pid;
error_log $dir/error.log info;
events { worker_connections 256; }
rtmp {
    server {
        listen 127.0.0.1:$port;
        chunk_size 4096;
        application live { live on; record off; }
        application record { live on; record all; record_path $dir/recorded; record_unique off; }
    }
}
CONF
nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" > "$dir/nginx.out" 2>&1 &
pid=$!
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$pid"; exit 0; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.05
done
echo "nginx-rtmp did not start on 127.0.0.1:$port; see $dir/error.log" >&2
cat "$dir/error.log" >&2 || true
exit 1
