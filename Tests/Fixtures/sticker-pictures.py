#!/usr/bin/python3
"""Writes the picture fixtures of the sticker picture tests into FOLDER, from the shipped flame
and heart animations (real art with soft alpha edges, drawn from their SVGs by rsvg-convert):

  animated pictures, each with another decoder's frames as the reference (Pillow, ffmpeg):
    flames.gif, flames.apng, flames.webp, hearts.apng (sub-rectangle frames blended over, and
    disposed to the previous frame), hearts.gif (frames disposed to the background);
    NAME.frames.rgba (every frame, RGBA, one after the other) and NAME.json (size, delays in ms);
  hostile pictures, each refused by what it declares or how it breaks:
    bomb.png (a 12000x12000 picture of zeros in 450 KB), huge-canvas.gif (a 60000x60000
    screen), many-frames.apng (acTL says 100000 frames), huge.webp (a 16000x16000 canvas),
    truncated.gif / truncated.apng / truncated.webp (cut in half), damaged-crc.png,
    second-header.apng (an 8x8 header, acTL, then a 64x64 header and a 64x64 frame),
    second-actl.apng (acTL twice before a valid frame).

    /usr/bin/python3 Tests/Fixtures/sticker-pictures.py FOLDER
"""
import io
import json
import os
import struct
import subprocess
import sys
import zlib

from PIL import Image, ImageSequence

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
folder = sys.argv[1]
os.makedirs(folder, exist_ok=True)


def shipped(package, name, count):
    """The shipped SVG frames, drawn to PNG by librsvg's rsvg-convert."""
    frames = []
    for i in range(count):
        png = subprocess.run(["rsvg-convert", os.path.join(ROOT, "Stickers", package, f"{name}_{i}.svg")], check=True, capture_output=True).stdout
        frames.append(Image.open(io.BytesIO(png)).convert("RGBA"))
    return frames


def reference(name):
    """Another decoder's frames of the written file, every one composed, RGBA, and their delays:
    Pillow's for GIF and WebP, ffmpeg's for APNG (Pillow does not treat a first frame that is
    disposed to the previous one as disposed to the background, as the APNG specification says)."""
    path = os.path.join(folder, name)
    image = Image.open(path)
    frames, delays = [], []
    for frame in ImageSequence.Iterator(image):
        frames.append(frame.convert("RGBA").tobytes())
        delays.append(frame.info.get("duration", 0))
    if name.endswith(".apng"):
        frames = [subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-vsync", "0", "-f", "rawvideo", "-pix_fmt", "rgba", "-"],
                                 check=True, capture_output=True).stdout]
    with open(path + ".frames.rgba", "wb") as out:
        out.write(b"".join(frames))
    with open(path + ".json", "w") as out:
        json.dump({"width": image.width, "height": image.height, "count": len(delays), "delays_ms": delays}, out)


flames = shipped("flames", "flame", 8)
hearts = shipped("hearts", "hearts", 8)
delays = [40, 120, 80, 60, 200, 50, 100, 70]

flames[0].save(os.path.join(folder, "flames.gif"), save_all=True, append_images=flames[1:], duration=delays, loop=0, disposal=2)
flames[0].save(os.path.join(folder, "flames.apng"), format="PNG", save_all=True, append_images=flames[1:], duration=delays, loop=0)
flames[0].save(os.path.join(folder, "flames.webp"), save_all=True, append_images=flames[1:], duration=delays, loop=0, lossless=True)
# Hearts drift: frames differ in part of the canvas, so the writers store sub-rectangles.
hearts[0].save(os.path.join(folder, "hearts.apng"), format="PNG", save_all=True, append_images=hearts[1:], duration=90,
               loop=0, disposal=2, blend=1)
hearts[0].save(os.path.join(folder, "hearts.gif"), save_all=True, append_images=hearts[1:], duration=90, loop=0, disposal=2)
for name in ["flames.gif", "flames.apng", "flames.webp", "hearts.apng", "hearts.gif"]:
    reference(name)


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height, rows_compressed, extra=b""):
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", rows_compressed) + chunk(b"IEND", b"")


# 12000x12000 RGBA of zeros: 576 MB decoded, a few hundred KB written.
compressor = zlib.compressobj(9)
row = b"\x00" * (12000 * 4 + 1)
parts = [compressor.compress(row) for _ in range(12000)] + [compressor.flush()]
with open(os.path.join(folder, "bomb.png"), "wb") as out:
    out.write(png(12000, 12000, b"".join(parts)))

# A GIF whose logical screen is 60000x60000 with one 1x1 frame.
gif = (b"GIF89a" + struct.pack("<HH", 60000, 60000) + b"\x80\x00\x00" + b"\x00\x00\x00\xff\xff\xff"
       + b"\x2c" + struct.pack("<HHHH", 0, 0, 1, 1) + b"\x00" + b"\x02\x02\x44\x01\x00" + b"\x3b")
with open(os.path.join(folder, "huge-canvas.gif"), "wb") as out:
    out.write(gif)

# An APNG of 64x64 that declares 100000 frames (its acTL) before anything is decoded.
small = zlib.compress((b"\x00" + b"\xff\x00\x00\xff" * 64) * 64)
with open(os.path.join(folder, "many-frames.apng"), "wb") as out:
    out.write(png(64, 64, small, chunk(b"acTL", struct.pack(">II", 100000, 0))))

# A WebP whose VP8X canvas is 16000x16000 (the animation holds one small frame).
with open(os.path.join(folder, "flames.webp"), "rb") as source:
    webp = bytearray(source.read())
vp8x = webp.find(b"VP8X")
webp[vp8x + 12:vp8x + 18] = (16000 - 1).to_bytes(3, "little") + (16000 - 1).to_bytes(3, "little")
with open(os.path.join(folder, "huge.webp"), "wb") as out:
    out.write(webp)

for name in ["flames.gif", "flames.apng", "flames.webp"]:
    with open(os.path.join(folder, name), "rb") as source:
        data = source.read()
    with open(os.path.join(folder, "truncated." + name.split(".")[1]), "wb") as out:
        out.write(data[:len(data) // 2])

with open(os.path.join(ROOT, "Stickers", "moustache", "preview.png"), "rb") as source:
    damaged = bytearray(source.read())
damaged[len(damaged) // 2] ^= 0xFF
with open(os.path.join(folder, "damaged-crc.png"), "wb") as out:
    out.write(damaged)


def apng(chunks_before_frame, width, height):
    """One RGBA frame of width x height after the given chunks, with its fcTL and IEND."""
    rows = zlib.compress((b"\x00" + b"\x00\x80\xff\xff" * width) * height)
    control = struct.pack(">IIIIIHHBB", 0, width, height, 0, 0, 1, 10, 0, 0)
    return b"".join(chunks_before_frame) + chunk(b"fcTL", control) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


signature_and_header = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 6, 0, 0, 0))
one_frame = chunk(b"acTL", struct.pack(">II", 1, 0))
# The canvas is allocated at the acTL, at the first header's size; the frame is the second's.
with open(os.path.join(folder, "second-header.apng"), "wb") as out:
    out.write(apng([signature_and_header, one_frame, chunk(b"IHDR", struct.pack(">IIBBBBB", 64, 64, 8, 6, 0, 0, 0))], 64, 64))
with open(os.path.join(folder, "second-actl.apng"), "wb") as out:
    out.write(apng([signature_and_header, one_frame, one_frame], 8, 8))
