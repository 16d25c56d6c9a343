#!/usr/bin/python3
"""Moving-face test videos with known truth, from a real photo.

    face-motion.py PHOTO OUTDIR [NAME...]

The face of PHOTO (scikit-image's public-domain astronaut.png) is cut out as a square tile and
placed on a grey gradient (1280x720 unless the sequence says otherwise) with a known affine motion
per frame, plus Gaussian sensor noise, then encoded as H.264 (30 fps). Beside each NAME.mp4,
NAME.truth.json holds the frame size and, per frame and per face, the 2x3 matrix that maps tile
pixel coordinates to frame pixel coordinates (pixel centres at integers), so the true position of
any point marked on the tile is known on every frame. The tile itself is written as face_tile.png.
At scale 1 the face's outer eye corners are 145 px apart and dlib's detector draws a 215 px box.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
from PIL import Image

WIDTH, HEIGHT, FPS = 1280, 720, 30
# The face in astronaut.png (512x512): a square around it, hair to chin.
CROP = (123, 25, 323, 225)
TILE = 480


def sequences():
    """name -> (frames, noise sigma, [per-face function t -> (scale, angle_deg, dx, dy, centre)], size)."""
    centre = (WIDTH / 2, HEIGHT / 2)
    still = lambda t: (1.0, 0.0, 0.0, 0.0, centre)
    translate = lambda t: (1.0, 0.0, 180 * math.sin(2 * math.pi * t / 4), 40 * math.sin(2 * math.pi * t / 3), centre)
    scale = lambda t: (1 + 0.2 * math.sin(2 * math.pi * t / 4), 0.0, 0.0, 0.0, centre)
    rotate = lambda t: (1.0, 20 * math.sin(2 * math.pi * t / 4), 0.0, 0.0, centre)
    # Out through the right edge and back: centre x goes 640 -> 1640 -> 640 over 6 s.
    leave = lambda t: (1.0, 0.0, 1000 * (0.5 - 0.5 * math.cos(2 * math.pi * t / 6)), 0.0, centre)
    def quad(index):
        cx, cy = (320 + 640 * (index % 2), 180 + 360 * (index // 2))
        phase = index * math.pi / 2
        return lambda t: (0.7, 0.0, 30 * math.sin(2 * math.pi * t / 3 + phase), 15 * math.sin(2 * math.pi * t / 2 + phase), (cx, cy))
    # From rest at the left, through the centre at 30 px/frame (900 px/s), to rest at the right and back.
    slide = lambda t: (1.0, 0.0, -450 * math.cos(2 * math.pi * t / math.pi), 0.0, centre)
    # Still, with a jump of a third of the face's width (72 px) between two frames every half second,
    # right, down, left, up.
    steps = [(72, 0), (0, 72), (-72, 0), (0, -72)]
    def jumps(t):
        n = int(round(t * FPS)) // 15
        x = sum(steps[i % 4][0] for i in range(n)) - 36
        y = sum(steps[i % 4][1] for i in range(n)) - 36
        return (1.0, 0.0, x, y, centre)
    # Two faces passing each other at 12 px/frame each, one above the other.
    crossing = [lambda t: (0.6, 0.0, -420 + 360 * t, -120, centre), lambda t: (0.6, 0.0, 420 - 360 * t, 120, centre)]
    # A face about 90 px wide (scale 0.42) drifting slowly, on a 720p and a 1080p frame.
    def small(size):
        return lambda t: (0.42, 0.0, 60 * math.sin(2 * math.pi * t / 5), 0.0, (size[0] * 0.3, size[1] * 0.6))
    # Turned in-plane at 5 degrees per frame, between -60 and +60 degrees.
    def turning(t):
        degrees = (150 * t + 60) % 240
        return (1.0, (degrees if degrees <= 120 else 240 - degrees) - 60, 0.0, 0.0, centre)
    # A face of 172 px out through one edge at 12 px/frame until fully out, a second outside, back in to the centre.
    def leaving(direction, distance):
        def motion(t):
            frame = t * FPS
            travel = distance / 12
            if frame < travel:
                d = 12 * frame
            elif frame < travel + 30:
                d = distance
            else:
                d = max(0.0, distance - 12 * (frame - travel - 30))
            return (0.8, 0.0, direction[0] * d, direction[1] * d, centre)
        return motion
    return {
        "still": (150, 3.0, [still]),
        "translate": (240, 3.0, [translate]),
        "scale": (240, 3.0, [scale]),
        "rotate": (240, 3.0, [rotate]),
        "leave": (180, 3.0, [leave]),
        "four": (150, 3.0, [quad(i) for i in range(4)]),
        "slide": (190, 3.0, [slide]),
        "jumps": (150, 3.0, [jumps]),
        "crossing": (70, 3.0, crossing),
        "small720": (90, 3.0, [small((1280, 720))]),
        "small1080": (90, 3.0, [small((1920, 1080))], (1920, 1080)),
        "turn": (192, 3.0, [turning]),
        "leave_left": (190, 3.0, [leaving((-1, 0), 840)]),
        "leave_right": (190, 3.0, [leaving((1, 0), 840)]),
        "leave_top": (150, 3.0, [leaving((0, -1), 600)]),
        "leave_bottom": (150, 3.0, [leaving((0, 1), 600)]),
    }


def tile_to_frame(scale, angle, dx, dy, centre, tile_size):
    """2x3 matrix: tile pixel (centre at (tile_size-1)/2) -> frame pixel."""
    a = math.radians(angle)
    c, s = math.cos(a) * scale, math.sin(a) * scale
    half = (tile_size - 1) / 2
    tx = centre[0] + dx - (c * half - s * half)
    ty = centre[1] + dy - (s * half + c * half)
    return [[c, -s, tx], [s, c, ty]]


def render(tile, background, matrices, rng, sigma):
    frame = background.copy()
    width, height = frame.size
    for m in matrices:
        # A face shrunk a lot is resampled from a tile shrunk the same way first, so that the
        # bicubic warp does not alias it: the matrix is composed with the shrink.
        shrink = math.hypot(m[0][0], m[1][0])
        source = tile
        if shrink < 0.75:
            size = round(tile.width * shrink)
            source = tile.resize((size, size), Image.LANCZOS)
            k = (tile.width - 1) / (size - 1)
            m = [[m[0][0] * k, m[0][1] * k, m[0][2]], [m[1][0] * k, m[1][1] * k, m[1][2]]]
        # PIL wants frame -> tile, in continuous coordinates (pixel centres at +0.5).
        forward = np.array([m[0], m[1], [0, 0, 1]])
        shift = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        unshift = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]])
        inverse = shift @ np.linalg.inv(forward) @ unshift
        warped = source.transform((width, height), Image.AFFINE, tuple(inverse[:2].reshape(-1)), resample=Image.BICUBIC)
        frame.alpha_composite(warped)
    pixels = np.asarray(frame.convert("RGB"), dtype=np.float32)
    pixels += rng.normal(0, sigma, (height, width, 1)).astype(np.float32)
    return np.clip(pixels, 0, 255).astype(np.uint8)


def main():
    photo, out = sys.argv[1], sys.argv[2]
    wanted = sys.argv[3:] or list(sequences())
    os.makedirs(out, exist_ok=True)
    face = Image.open(photo).convert("RGB").crop(CROP).resize((TILE, TILE), Image.LANCZOS)
    face.save(os.path.join(out, "face_tile.png"))
    tile = face.convert("RGBA")
    for name, (frames, sigma, faces, *size) in sequences().items():
        if name not in wanted:
            continue
        width, height = size[0] if size else (WIDTH, HEIGHT)
        ramp = np.linspace(70, 150, width, dtype=np.float32)[None, :, None] * np.ones((height, 1, 3), np.float32)
        background = Image.fromarray(ramp.astype(np.uint8), "RGB").convert("RGBA")
        target = os.path.join(out, name + ".mp4")
        if os.path.exists(target) and os.path.exists(os.path.join(out, name + ".truth.json")):
            continue
        rng = np.random.default_rng(7)
        encoder = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}",
             "-r", str(FPS), "-i", "-", "-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-g", "60",
             "-pix_fmt", "yuv420p", target + ".part.mp4"], stdin=subprocess.PIPE)
        truth = []
        for index in range(frames):
            t = index / FPS
            matrices = [tile_to_frame(*motion(t), TILE) for motion in faces]
            encoder.stdin.write(render(tile, background, matrices, rng, sigma).tobytes())
            truth.append(matrices)
        encoder.stdin.close()
        if encoder.wait() != 0:
            sys.exit(f"ffmpeg failed on {name}")
        os.replace(target + ".part.mp4", target)
        with open(os.path.join(out, name + ".truth.json"), "w") as f:
            json.dump({"tile": TILE, "fps": FPS, "width": width, "height": height, "frames": truth}, f)
    print(out)


if __name__ == "__main__":
    main()
