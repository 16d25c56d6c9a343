#!/usr/bin/python3
"""Moving-face test videos with known truth, from a real photo.

    face-motion.py PHOTO OUTDIR [NAME...]

The face of PHOTO (scikit-image's public-domain astronaut.png) is cut out as a square tile and
placed on a 1280x720 grey gradient with a known affine motion per frame, plus Gaussian sensor noise,
then encoded as H.264 (30 fps). Beside each NAME.mp4, NAME.truth.json holds per frame and per face
the 2x3 matrix that maps tile pixel coordinates to frame pixel coordinates (pixel centres at
integers), so the true position of any point marked on the tile is known on every frame.
The tile itself is written as face_tile.png.
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
    """name -> (frames, noise sigma, [per-face function t -> (scale, angle_deg, dx, dy, centre)])."""
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
    return {
        "still": (150, 3.0, [still]),
        "translate": (240, 3.0, [translate]),
        "scale": (240, 3.0, [scale]),
        "rotate": (240, 3.0, [rotate]),
        "leave": (180, 3.0, [leave]),
        "four": (150, 3.0, [quad(i) for i in range(4)]),
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
    for m in matrices:
        # PIL wants frame -> tile, in continuous coordinates (pixel centres at +0.5).
        forward = np.array([m[0], m[1], [0, 0, 1]])
        shift = np.array([[1, 0, 0.5], [0, 1, 0.5], [0, 0, 1]])
        unshift = np.array([[1, 0, -0.5], [0, 1, -0.5], [0, 0, 1]])
        inverse = shift @ np.linalg.inv(forward) @ unshift
        warped = tile.transform((WIDTH, HEIGHT), Image.AFFINE, tuple(inverse[:2].reshape(-1)), resample=Image.BICUBIC)
        frame.alpha_composite(warped)
    pixels = np.asarray(frame.convert("RGB"), dtype=np.float32)
    pixels += rng.normal(0, sigma, (HEIGHT, WIDTH, 1)).astype(np.float32)
    return np.clip(pixels, 0, 255).astype(np.uint8)


def main():
    photo, out = sys.argv[1], sys.argv[2]
    wanted = sys.argv[3:] or list(sequences())
    os.makedirs(out, exist_ok=True)
    face = Image.open(photo).convert("RGB").crop(CROP).resize((TILE, TILE), Image.LANCZOS)
    face.save(os.path.join(out, "face_tile.png"))
    tile = face.convert("RGBA")
    ramp = np.linspace(70, 150, WIDTH, dtype=np.float32)[None, :, None] * np.ones((HEIGHT, 1, 3), np.float32)
    background = Image.fromarray(ramp.astype(np.uint8), "RGB").convert("RGBA")
    for name, (frames, sigma, faces) in sequences().items():
        if name not in wanted:
            continue
        target = os.path.join(out, name + ".mp4")
        if os.path.exists(target) and os.path.exists(os.path.join(out, name + ".truth.json")):
            continue
        rng = np.random.default_rng(7)
        encoder = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{WIDTH}x{HEIGHT}",
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
            json.dump({"tile": TILE, "fps": FPS, "frames": truth}, f)
    print(out)


if __name__ == "__main__":
    main()
