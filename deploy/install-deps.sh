#!/usr/bin/env bash
# Installs the Debian packages FaceRelay builds, runs and tests with (GStreamer, x264, AAC, SRT,
# nginx-rtmp, ffmpeg, dlib and its 68-point model, OpenCV, NumPy and Pillow for test videos and sticker art, jsonschema for the sticker schema test, jq for the benchmarks, Chromium for the dashboard test). Only what is missing is installed; safe to run again.
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
)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
command -v swift > /dev/null || { echo "Swift 6 is not on PATH: install it from https://www.swift.org/install/linux/ and run this again" >&2; exit 1; }
