#!/usr/bin/env bash
# Installs the Debian packages FaceRelay builds, runs and tests with (GStreamer, x264, AAC, SRT,
# nginx-rtmp, ffmpeg, dlib and its 68-point model, OpenCV, the sticker picture libraries (libpng, giflib,
# libwebp, librsvg, and rsvg-convert to compare with), libcurl for webhooks, NumPy and Pillow for test videos and sticker art, jsonschema for the sticker schema test, jq for the benchmarks, Chromium for the dashboard test), and the checkers of
# the deployment files (systemd-analyze, promtool, kubernetes-validate). Only what is missing is installed; safe to run again.
# A Swift 6 toolchain must already be on PATH (https://www.swift.org/install/linux/).
# Quiet: one line for each step that has something to do (what, and how long it took), nothing when
# everything is there. The output of every command goes to one log, appended to on each run that
# does something: ${XDG_CACHE_HOME:-$HOME/.cache}/facerelay/install-deps.log. A step that fails
# prints its name, the last 20 lines of its output and the log's path, and the script exits with its status.
set -euo pipefail
packages=(
  pkg-config                    # Tests/Benchmarks/build-dlib-stock.sh
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly gstreamer1.0-libav gstreamer1.0-tools
  nginx libnginx-mod-rtmp ffmpeg
  libdlib-dev libdlib-data libopencv-dev libblas-dev liblapack-dev
  libpng-dev libgif-dev libwebp-dev librsvg2-dev librsvg2-bin
  libcurl4-openssl-dev openssl  # webhooks' POSTs; openssl makes a test's TLS certificate
  python3 python3-pip python3-numpy python3-pil python3-jsonschema unzip time bc jq
  chromium python3-websocket
  systemd python3-venv
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/facerelay"
log="$cache/install-deps.log"
mkdir -p "$cache"
download=""
trap 'rm -rf "$download"' EXIT

# Asks for sudo's password, if it needs one, before a step's line is printed rather than in it.
as_root() {
  [ -z "$sudo" ] || sudo true
}
# Runs a step with all its output in the log and prints one line: what it is, and how long it took.
# COMMAND runs in a subshell where strict mode holds, so it may be a function of several commands;
# on failure, prints the end of its output and exits with its status.
logged=""
step() { # WHAT COMMAND...
  local what=$1 started=$SECONDS status=0
  shift
  if [ -z "$logged" ]; then
    printf '\n#### %s: deploy/install-deps.sh as %s on %s\n' "$(date '+%F %T')" "$(id -un)" "${HOSTNAME:-}" >> "$log"
    logged=1
  fi
  printf '==== %s: %s\n' "$what" "$*" >> "$log"
  local start_of_step
  start_of_step=$(( $(stat -c %s "$log") + 1 ))
  printf 'install: %s ... ' "$what" >&2
  set +e
  ( set -e; "$@" ) >> "$log" 2>&1 < /dev/null
  status=$?
  set -e
  if [ "$status" -ne 0 ]; then
    printf 'failed after %d s (exit status %d)\n' $(( SECONDS - started )) "$status" >&2
    printf 'install: step "%s" failed; the last 20 lines of its output:\n' "$what" >&2
    tail -c +"$start_of_step" "$log" | tail -n 20 | sed 's/^/  | /' >&2
    printf 'install: the full log: %s\n' "$log" >&2
    printf '==== failed after %d s (exit status %d)\n' $(( SECONDS - started )) "$status" >> "$log"
    exit "$status"
  fi
  printf '%d s\n' $(( SECONDS - started )) >&2
  printf '==== done in %d s\n' $(( SECONDS - started )) >> "$log"
}

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  as_root
  step "apt package lists (apt-get update)" $sudo apt-get update -q
  step "apt packages (${#missing[@]} missing)" $sudo env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q -o Dpkg::Use-Pty=0 --no-install-recommends "${missing[@]}"
fi

# Checkers of deploy/ for DeploymentFilesTests, in a cache folder outside the checkout (the test looks
# in the same place): promtool from Debian's prometheus package, unpacked rather than installed, since
# installing it would also enable and start a Prometheus server; kubernetes-validate from PyPI in a
# virtual environment (it carries the Kubernetes JSON schemas, so it checks offline).
tools="$cache/deploy-tools"
mkdir -p "$tools"
unpack_promtool() {
  # apt downloads as its own user; the package lists may need an update first.
  chmod 0777 "$download"
  ( cd "$download" && { apt-get download -q prometheus || { $sudo apt-get update -q && apt-get download -q prometheus; }; } )
  dpkg-deb --fsys-tarfile "$download"/prometheus_*.deb | tar -x -O ./usr/bin/promtool > "$tools/promtool.new"
  chmod 0755 "$tools/promtool.new"
  mv "$tools/promtool.new" "$tools/promtool"
}
if [ ! -x "$tools/promtool" ]; then
  as_root
  download=$(mktemp -d)
  step "promtool (from Debian's prometheus package)" unpack_promtool
fi
kubernetes_validate=1.37.0
make_kubernetes_validate_venv() {
  rm -rf "$tools/venv"
  /usr/bin/python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install --disable-pip-version-check --progress-bar off "kubernetes-validate==$kubernetes_validate"
}
if [ "$("$tools/venv/bin/kubernetes-validate" --version 2>/dev/null)" != "$kubernetes_validate" ]; then
  step "kubernetes-validate $kubernetes_validate (PyPI)" make_kubernetes_validate_venv
fi
command -v swift > /dev/null || { echo "install: Swift 6 is not on PATH: install it from https://www.swift.org/install/linux/ and run this again" >&2; exit 1; }
