#!/usr/bin/python3
"""Portrait stills for sticker previews and placement tests, from astronaut.png.

    portraits.py ASTRONAUT.png OUTDIR

portrait.png is 640x640: the photo scaled by 2.5 with the face centred and headroom above it, so
that a crown or ears stay inside the picture. portrait_rot12.png is the same turned 12 degrees
counter-clockwise (as seen) about the face centre; portrait_small.png is it scaled by 0.75 about the
face centre. portrait_preview.png is the portrait at 320x320, for sticker package previews.
portraits.json gives the face centre, angle and scale of each.
"""
import json
import os
import sys

from PIL import Image

# Centre of the face in astronaut.png (middle of the 200 px face tile at 123,25).
FACE = (223, 125)
SCALE = 2.5
SIZE = 640
CENTRE = (320, 360)
BACKGROUND = (96, 96, 96)


def main():
    photo, out = sys.argv[1], sys.argv[2]
    source = Image.open(photo).convert("RGB")
    scaled = source.resize((round(source.width * SCALE), round(source.height * SCALE)), Image.LANCZOS)
    portrait = Image.new("RGB", (SIZE, SIZE), BACKGROUND)
    portrait.paste(scaled, (round(CENTRE[0] - FACE[0] * SCALE), round(CENTRE[1] - FACE[1] * SCALE)))
    portrait.save(os.path.join(out, "portrait.png"))
    portrait.resize((SIZE // 2, SIZE // 2), Image.LANCZOS).save(os.path.join(out, "portrait_preview.png"))
    # PIL turns counter-clockwise for positive angles; in image coordinates (y down) that is -12 deg.
    portrait.rotate(12, resample=Image.BICUBIC, center=CENTRE, fillcolor=BACKGROUND).save(os.path.join(out, "portrait_rot12.png"))
    small = portrait.resize((round(SIZE * 0.75), round(SIZE * 0.75)), Image.LANCZOS)
    canvas = Image.new("RGB", (SIZE, SIZE), BACKGROUND)
    canvas.paste(small, (round(CENTRE[0] * 0.25), round(CENTRE[1] * 0.25)))
    canvas.save(os.path.join(out, "portrait_small.png"))
    with open(os.path.join(out, "portraits.json"), "w") as f:
        json.dump({"centre": CENTRE, "portrait.png": {"angle": 0, "scale": 1},
                   "portrait_rot12.png": {"angle": -12, "scale": 1},
                   "portrait_small.png": {"angle": 0, "scale": 0.75}}, f)


if __name__ == "__main__":
    main()
