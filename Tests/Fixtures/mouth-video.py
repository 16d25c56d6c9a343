#!/usr/bin/python3
"""The close-face scene of make-fixtures.sh with the mouth opening on known frames.

    mouth-video.py PHOTO > frames.rgb      (raw rgb24, 1280x720, 30 fps, 210 frames)

PHOTO is scikit-image's astronaut.png; the face stays still where close_video puts it at t = 0.
The mouth is as photographed (lips parted in a smile, below the mouthOpen threshold) on frames
0-59 and 120-209, and dropped open on frames 60-119. The switch is a single-frame step so the
truth is exact; the barcode and beeps are added by make-fixtures.sh.
"""
import sys

import numpy as np
from PIL import Image

WIDTH, HEIGHT, FRAMES = 1280, 720, 210
OPEN = range(60, 120)
FACE_AT = (190, 20)  # close_video's overlay position at t = 0
# Measured with `facerelay inspect FRAME.png --json` on this scene's closed frame (frame pixels):
# inner lip corners 60 (548, 268) and 64 (616, 271); lower inner lip 67, 66, 65 at y 283.6, 285.4,
# 284.5 (x 571, 581, 592), inner lip gap / width 0.17; chin (point 8) at y 334. The split runs
# 2 px above the lower inner lip, along the bottom edge of the upper teeth, so the teeth stay up.
SPLIT_X = [548, 571, 581.5, 592, 616]
SPLIT_Y = [268, 281.6, 283.4, 282.5, 270.7]
MOUTH_CENTRE, MOUTH_HALF = 582, 34
CHIN_Y, JAW_HALF = 334, 75
# mouthOpen needs inner gap / width >= 0.08 + 0.5 * (0.55 - 0.08) = 0.315 (gap about 21 px for this
# 68 px mouth). The lips are 12 px apart already; a 20 px drop gives a gap of about 30 px (0.44,
# coefficient about 0.75), far enough from the threshold to survive landmark jitter and smoothing.
DROP = 20
INTERIOR = np.array([45, 18, 20], np.float32)  # dark red mouth interior


def open_mouth(frame, drop):
    """Drops the lower lip and chin by up to `drop` px: a vertical shift that is widest at the
    mouth (tapering to the corners, so the opening is lens shaped), widens towards the jaw and
    fades out over the neck, with the opened gap filled by the mouth interior."""
    src = frame.astype(np.float32)
    ys, xs = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float32)
    split = np.interp(xs[0], SPLIT_X, SPLIT_Y)[None, :]
    # Half-width of the moving part grows from the mouth corners at the lip line to the jaw at the
    # chin, so the chin moves as one piece instead of stretching into a point.
    t = np.clip((ys - split) / (CHIN_Y - split.min()), 0, 1)
    half = MOUTH_HALF + (JAW_HALF - MOUTH_HALF) * t
    u = np.clip((xs - MOUTH_CENTRE) / half, -1, 1)
    fade = np.clip(1 - (ys - CHIN_Y) / 40, 0, 1)  # 40 px > DROP keeps the neck mapping monotonic
    shift = drop * (1 - u * u) * fade * (ys >= split)
    # Backward mapping with linear interpolation between rows.
    sy = ys - shift
    y0 = np.floor(sy).astype(int)
    w = (sy - y0)[..., None]
    x = xs.astype(int)
    moved = src[y0, x] * (1 - w) + src[np.minimum(y0 + 1, HEIGHT - 1), x] * w
    out = np.where((ys >= split)[..., None], moved, src)
    # Gap between the split and the shifted lower lip, with a 1 px soft edge on both sides.
    inside = np.clip(np.minimum(ys - split + 0.5, split + shift - ys + 0.5), 0, 1)[..., None] * (shift > 0)[..., None]
    out = out * (1 - inside) + INTERIOR * inside
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def main():
    photo = Image.open(sys.argv[1]).convert("RGB")
    face = photo.crop((0, 0, 512, 250)).resize((900, 440), Image.BICUBIC)
    studio = Image.new("RGB", (WIDTH, HEIGHT), (0x60, 0x60, 0x60))
    studio.paste(face, FACE_AT)
    closed = np.asarray(studio)
    opened = open_mouth(closed, DROP)
    closed, opened = closed.tobytes(), opened.tobytes()
    for index in range(FRAMES):
        sys.stdout.buffer.write(opened if index in OPEN else closed)


if __name__ == "__main__":
    main()
