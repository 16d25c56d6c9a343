#!/usr/bin/env bash
# Fetches the real-face corpus from PyPI packages (never committed; docs/face-corpus.md says where each
# photo comes from and under which licence) and writes each photo as an 8-bit grey PGM, and beside it
# in its own colours as an RGB PNG (what face-motion.py cuts its tiles from; Tests/Fixtures/corpus-people.txt):
#   face-corpus.sh OUTDIR        -> OUTDIR/corpus/*.pgm, OUTDIR/corpus/*.png
# Fourteen people: scikit-image's astronaut.png (Eileen Collins) and camera.png (a cameraman too small
# and turned for dlib: a photo with no face it finds), matplotlib's grace_hopper.jpg, face_recognition
# 1.3.0's test photos (Barack Obama in five photos, two of them cut off by the frame's edge, and Joe
# Biden), and insightface 2.1's t1.jpg (six people round a table, heads turned and tilted),
# Tom_Hanks_54745.png (a 112 px crop) and four photos of people wearing masks (no face dlib finds).
set -euo pipefail
out=${1:?usage: face-corpus.sh OUTDIR}
mkdir -p "$out/corpus"
cd "$out/corpus"
# .complete holds what the folder has: an older one (empty, grey PGMs only) is made again.
[ "$(cat .complete 2> /dev/null)" = "pgm png" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch() { python3 -m pip download --no-deps -q -d "$tmp" "$@" >&2; }
fetch --only-binary=:all: scikit-image
unzip -o -q -j "$tmp"/scikit_image-*.whl 'skimage/data/astronaut.png' 'skimage/data/camera.png' -d "$tmp/photos"
fetch --only-binary=:all: matplotlib
unzip -o -q -j "$tmp"/matplotlib-*.whl 'matplotlib/mpl-data/sample_data/grace_hopper.jpg' -d "$tmp/photos"
fetch --no-binary=:all: face_recognition==1.3.0
tar -xzf "$tmp"/face_recognition-1.3.0.tar.gz -C "$tmp/photos" --strip-components=3 \
  face_recognition-1.3.0/tests/test_images/{obama,obama2,obama3,biden,obama_partial_face,obama_partial_face2}.jpg
fetch --no-binary=:all: insightface==2.1
tar -xzf "$tmp"/insightface-2.1.tar.gz -C "$tmp/photos" --strip-components=4 \
  insightface-2.1/insightface/data/images/{t1,mask_black,mask_blue,mask_green,mask_white}.jpg \
  insightface-2.1/insightface/data/images/Tom_Hanks_54745.png
/usr/bin/python3 - "$tmp/photos" <<'PY'
import os, sys
from PIL import Image
source = sys.argv[1]
for name in sorted(os.listdir(source)):
    photo = Image.open(os.path.join(source, name))
    photo.convert("L").save(os.path.splitext(name)[0] + ".pgm")
    photo.convert("RGB").save(os.path.splitext(name)[0] + ".png")
PY
echo "pgm png" > .complete
