#!/usr/bin/env bash
# Builds dlib_stock_tracker.cpp (dlib's stock detector and shape predictor, the tracking
# benchmark's baseline) against Debian's libdlib-dev, with the flags Package.swift gives the
# vision code (-O3 -mavx2 -mfma, FACERELAY_PORTABLE=1 without AVX2/FMA): dlib's detector and
# predictor are header templates, so these flags decide their speed and the comparison stays fair.
# Does nothing when OUT_BINARY is newer than the source and this script.
#   Tests/Benchmarks/build-dlib-stock.sh OUT_BINARY
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUT_BINARY" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
src=$here/dlib_stock_tracker.cpp out=$1
if [ "$out" -nt "$src" ] && [ "$out" -nt "$0" ]; then exit 0; fi
mkdir -p "$(dirname "$out")"
flags=(-O3)
[ "${FACERELAY_PORTABLE:-}" = 1 ] || flags+=(-mavx2 -mfma)
# shellcheck disable=SC2046
g++ -std=c++17 "${flags[@]}" -DNDEBUG -DDLIB_DISABLE_ASSERTS -o "$out" "$src" $(pkg-config --cflags --libs dlib-1)
