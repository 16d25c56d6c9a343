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

The "yaw" sequence turns the face about the vertical axis instead, out to 90 degrees each way, which
no affine motion of a photo can show: the tile is painted on a vertical cylinder (a textured surface,
not a head: no nose relief, and the back of the head, which the photo does not show, is a flat hair
colour), seen in orthographic projection. Its truth.json says, beside the tile-to-frame matrix of
the unturned tile, the cylinder ("head": axis and radius in tile pixels) and the yaw of every frame
and face ("yaw", degrees, positive turning the nose towards the frame's right), so the true place
of any tile point, and whether it is on the visible side, is known on every frame (see
turned_point).

The "facecam" sequence puts the small face of "small720" on a scene that changes on every frame
(light blocks scrolling by at 8 px per frame, as a game behind a streamer's face cam): what it
measures is the detection a scene that keeps changing costs.
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
        "facecam": (150, 3.0, [small((1280, 720))]),
        "turn": (192, 3.0, [turning]),
        "leave_left": (190, 3.0, [leaving((-1, 0), 840)]),
        "leave_right": (190, 3.0, [leaving((1, 0), 840)]),
        "leave_top": (150, 3.0, [leaving((0, -1), 600)]),
        "leave_bottom": (150, 3.0, [leaving((0, 1), 600)]),
        # Turned about the vertical axis, 0 -> 90 -> -90 -> 0 degrees at 60 degrees/s (render_turned).
        "yaw": (240, 3.0, [still]),
    }


# Sequences whose scene scrolls by under the face: name -> pixels per frame.
SCROLLING = {"facecam": 8}


def scrolling_scene(width, height, rng):
    """Light and dark blocks of random sizes on the grey gradient, twice the frame's width, to scroll."""
    ramp = np.linspace(70, 150, 2 * width, dtype=np.float32)[None, :, None] * np.ones((height, 1, 3), np.float32)
    for _ in range(120):
        w, h = int(rng.integers(20, 160)), int(rng.integers(20, 160))
        x, y = int(rng.integers(0, 2 * width - w)), int(rng.integers(0, height - h))
        ramp[y:y + h, x:x + w] = float(rng.integers(20, 235))
    return ramp.astype(np.uint8)


# Sequences whose single face is turned about the vertical axis: name -> degrees at t seconds.
TURNED = {"yaw": lambda t: yaw_sweep(t)}


# The yaw sequence's cylinder, in tile pixels: its axis halfway between the fit's jaw points at ear
# height (0 and 16, at x = 136 and 357), its radius about 1.7 times half the outer-eye-corner
# distance, as for a human head's breadth.
HEAD_AXIS, HEAD_RADIUS = 247.0, 125.0
HAIR = (118, 96, 62)


def yaw_sweep(t):
    """Degrees at t seconds: half a second frontal, to 90 degrees in 1.5 s, half a second there, back
    and through to -90 degrees in 3 s, half a second there, back to frontal in 1.5 s, half a second."""
    legs = [(0.5, 0, 0), (1.5, 0, 90), (0.5, 90, 90), (3.0, 90, -90), (0.5, -90, -90), (1.5, -90, 0), (0.5, 0, 0)]
    for length, start, end in legs:
        if t < length:
            return start + (end - start) * t / length
        t -= length
    return 0.0


def turned_point(u, v, yaw, axis=HEAD_AXIS, radius=HEAD_RADIUS):
    """Where tile point (u, v) painted on the cylinder lands on the unturned tile's plane once the
    cylinder is turned by yaw degrees, and whether it faces the camera."""
    phi = math.asin(max(-1.0, min(1.0, (u - axis) / radius))) + math.radians(yaw)
    return (axis + radius * math.sin(phi), v), math.cos(phi) > 0


def render_turned(tile, background, m, yaw, rng, sigma):
    """The tile on the cylinder turned by yaw degrees, placed by m (a translation here), rendered
    four times finer across and averaged, so that the squeezed side of the face does not alias."""
    frame = np.asarray(background.convert("RGB"), dtype=np.float32).copy()
    height, width = frame.shape[:2]
    pixels = np.asarray(tile.convert("RGB"), dtype=np.float32)
    size = pixels.shape[0]
    # Only the frame pixels the cylinder can cover are drawn.
    x0 = max(0, math.floor(m[0][2] + HEAD_AXIS - HEAD_RADIUS) - 1)
    x1 = min(width, math.ceil(m[0][2] + HEAD_AXIS + HEAD_RADIUS) + 2)
    y0 = max(0, math.floor(m[1][2]))
    y1 = min(height, math.ceil(m[1][2] + size - 1) + 1)
    fine = 4
    x = x0 + (np.arange((x1 - x0) * fine) + 0.5) / fine - 0.5 - m[0][2]  # tile plane x of each fine column
    on = np.abs(x - HEAD_AXIS) < HEAD_RADIUS
    # The visible surface point under each column, and where it was painted on the tile.
    phi = np.arcsin(np.clip((x - HEAD_AXIS) / HEAD_RADIUS, -1, 1)) - math.radians(yaw)
    front = on & (np.abs(phi) <= math.pi / 2)
    u = HEAD_AXIS + HEAD_RADIUS * np.sin(phi)
    u0 = np.clip(np.floor(u).astype(int), 0, size - 2)
    w = np.clip(u - u0, 0, 1)[None, :, None]
    r = np.clip(np.arange(y0, y1) - m[1][2], 0, size - 1)
    r0 = np.clip(np.floor(r).astype(int), 0, size - 2)
    rw = (r - r0)[:, None, None]
    band = pixels[r0] * (1 - rw) + pixels[r0 + 1] * rw  # the tile's rows at each frame row
    columns = band[:, u0] * (1 - w) + band[:, u0 + 1] * w
    columns[:, ~front] = HAIR
    coverage = on.astype(np.float32)[None, :, None]
    backdrop = np.repeat(frame[y0:y1, x0:x1], fine, axis=1)
    drawn = backdrop * (1 - coverage) + columns * coverage
    frame[y0:y1, x0:x1] = drawn.reshape(y1 - y0, x1 - x0, fine, 3).mean(axis=2)
    frame += rng.normal(0, sigma, (height, width, 1)).astype(np.float32)
    return np.clip(frame, 0, 255).astype(np.uint8)


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
        scene = scrolling_scene(width, height, np.random.default_rng(11)) if name in SCROLLING else None
        encoder = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}",
             "-r", str(FPS), "-i", "-", "-c:v", "libx264", "-preset", "veryfast", "-crf", "16", "-g", "60",
             "-pix_fmt", "yuv420p", target + ".part.mp4"], stdin=subprocess.PIPE)
        truth, yaws = [], []
        for index in range(frames):
            t = index / FPS
            matrices = [tile_to_frame(*motion(t), TILE) for motion in faces]
            if name in TURNED:
                yaw = [TURNED[name](t)]
                encoder.stdin.write(render_turned(tile, background, matrices[0], yaw[0], rng, sigma).tobytes())
                yaws.append(yaw)
            else:
                if scene is not None:
                    offset = (SCROLLING[name] * index) % width
                    background = Image.fromarray(scene[:, offset:offset + width], "RGB").convert("RGBA")
                encoder.stdin.write(render(tile, background, matrices, rng, sigma).tobytes())
            truth.append(matrices)
        encoder.stdin.close()
        if encoder.wait() != 0:
            sys.exit(f"ffmpeg failed on {name}")
        os.replace(target + ".part.mp4", target)
        document = {"tile": TILE, "fps": FPS, "width": width, "height": height, "frames": truth}
        if name in TURNED:
            document.update(head={"axis": HEAD_AXIS, "radius": HEAD_RADIUS}, yaw=yaws)
        with open(os.path.join(out, name + ".truth.json"), "w") as f:
            json.dump(document, f)
    print(out)


if __name__ == "__main__":
    main()
