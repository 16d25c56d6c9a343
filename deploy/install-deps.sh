#!/usr/bin/env bash
# Installs the Debian packages FaceRelay builds, runs and tests with (GStreamer, x264, AAC, SRT,
# nginx-rtmp, ffmpeg, dlib and its 68-point model, OpenCV, NumPy and Pillow for test videos and sticker art, jsonschema for the sticker schema test, jq for the benchmarks, Chromium for the dashboard test), and the checkers of
# the deployment files (systemd-analyze, promtool, kubernetes-validate). Only what is missing is installed; safe to run again.
# A Swift 6 toolchain must already be on PATH (https://www.swift.org/install/linux/).
set -euo pipefail
packages=(
  pkg-config
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly gstreamer1.0-libav gstreamer1.0-tools
  nginx libnginx-mod-rtmp ffmpeg
  libdlib-dev libdlib-data libopencv-dev libblas-dev liblapack-dev
  python3 python3-pip python3-numpy python3-pil python3-jsonschema unzip time bc jq
  chromium python3-websocket
  systemd python3-venv
)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
# Checkers of deploy/ for DeploymentFilesTests, in a cache folder outside the checkout (the test looks
# in the same place): promtool from Debian's prometheus package, unpacked rather than installed, since
# installing it would also enable and start a Prometheus server; kubernetes-validate from PyPI in a
# virtual environment (it carries the Kubernetes JSON schemas, so it checks offline).
tools="${XDG_CACHE_HOME:-$HOME/.cache}/facerelay/deploy-tools"
mkdir -p "$tools"
if [ ! -x "$tools/promtool" ]; then
  echo "installing: promtool (from Debian's prometheus package) in $tools" >&2
  download=$(mktemp -d)
  chmod 0777 "$download"   # apt downloads as its own user
  ( cd "$download" && { apt-get download -qq prometheus 2>/dev/null || { $sudo apt-get update -qq && apt-get download -qq prometheus; }; } )
  dpkg-deb --fsys-tarfile "$download"/prometheus_*.deb | tar -x -O ./usr/bin/promtool > "$tools/promtool.new"
  chmod 0755 "$tools/promtool.new" && mv "$tools/promtool.new" "$tools/promtool"
  rm -rf "$download"
fi
kubernetes_validate=1.37.0
if [ "$("$tools/venv/bin/kubernetes-validate" --version 2>/dev/null)" != "$kubernetes_validate" ]; then
  echo "installing: kubernetes-validate $kubernetes_validate (PyPI) in $tools/venv" >&2
  rm -rf "$tools/venv"
  /usr/bin/python3 -m venv "$tools/venv"
  "$tools/venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$kubernetes_validate" >&2
fi
command -v swift > /dev/null || { echo "Swift 6 is not on PATH: install it from https://www.swift.org/install/linux/ and run this again" >&2; exit 1; }
