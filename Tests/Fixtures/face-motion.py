#!/usr/bin/python3
"""Moving-face test videos with known truth, from a real photo.

    face-motion.py PHOTO OUTDIR [--crop X,Y,SIDE] [--name-prefix P] [NAME...]

The face of PHOTO (by default scikit-image's public-domain astronaut.png, cut at CROP) is cut out as
a square tile (--crop: left, top and side in photo pixels, the square from hair to chin, 2.28 times
the side of dlib's box and centred 0.022 box sides above its centre, as CROP is on astronaut.png;
parts outside the photo are filled with its edge pixels), resized to TILE pixels, and placed on a
grey gradient (1280x720 unless the sequence says otherwise) with a known affine motion per frame,
plus Gaussian sensor noise, then encoded as H.264 (30 fps). Beside each NAME.mp4, NAME.truth.json
holds the frame size, the photo and crop ("source") and, per frame and per face, the 2x3 matrix that
maps tile pixel coordinates to frame pixel coordinates (pixel centres at integers), so the true
position of any point marked on the tile is known on every frame. The tile itself is written as face_tile.png.
At scale 1 the face's outer eye corners are 145 px apart and dlib's detector draws a 215 px box
(astronaut; a crop chosen by the rule above gives every person about the same). --name-prefix P
writes P + NAME.mp4, P + NAME.truth.json and P + face_tile.png instead (e.g. "grace_hopper."), so
that many people's sequences share one folder. A sequence already there is made again only when its
truth.json names another photo or crop.

The "yaw" sequence turns the face about the vertical axis instead, out to 90 degrees each way, which
no affine motion of a photo can show: the tile is painted on a vertical cylinder (a textured surface,
not a head: no nose relief, and the back of the head, which the photo does not show, is a flat hair
colour), seen in orthographic projection. Its truth.json says, beside the tile-to-frame matrix of
the unturned tile, the cylinder ("head": axis and radius in tile pixels) and the yaw of every frame
and face ("yaw", degrees, positive turning the nose towards the frame's right), so the true place
of any tile point, and whether it is on the visible side, is known on every frame (see
turned_point). The cylinder is placed for astronaut's tile; a crop chosen by the rule above puts the
other faces' jaw midpoints within 25 px of its axis (50 px for the turned Tom_Hanks_54745 of
Tests/Fixtures/corpus-people.txt), and the truth holds for any tile.

The "facecam" sequence puts the small face of "small720" on a scene that changes on every frame
(light blocks scrolling by at 8 px per frame, as a game behind a streamer's face cam): what it
measures is the detection a scene that keeps changing costs.

Webcam-like sequences: "still_noise", a still face with new Gaussian sensor noise of sigma 6 on every
frame; "webcam", a face drifting slowly (translation and a little scale) under noise whose sigma
wanders between 4 and 8, the camera's gain and white balance drifting over time (CAMERA_DRIFT), a
slight motion blur along the motion (the frame is the mean of the face placed at several instants
of an exposure of half a frame interval; the truth is the middle instant), encoded at 1500 kbit/s
instead of the default quality; "small_face", a face of 82-99 px box width (scale 0.38-0.46) moving
slowly; "yaw30", the yaw cylinder turned to 35 degrees one way and held, then to 35 degrees the
other way and held (never beyond 40); "turned_noise", the same turns under the sensor noise of
"still_noise": a streamer looking at a second screen on a webcam, still while turned.
"""
import argparse
import collections
import json
import math
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from PIL import Image

WIDTH, HEIGHT, FPS = 1280, 720, 30
# The face in astronaut.png (512x512): a square around it, hair to chin (dlib's box: 179, 83, 88 px).
CROP = (123, 25, 323, 225)
# The sensor noise's draw of the sequences the tests and the benchmark use (--seed for others).
DEFAULT_SEED = 7
TILE = 480
# Frames rendered at once: one a core.
RENDERERS = os.cpu_count() or 1


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
    # From rest at the left, faster by 2 px a frame each frame up to 30 px/frame, then back and forth
    # across 600 px at that speed, turning straight back at each side without slowing down (a
    # streamer darting aside and back): the frame after a turn, the face is 60 px from where its
    # motion says.
    darting, step = [0], 30
    for speed in range(2, 31, 2):
        darting.append(darting[-1] + speed)
    while len(darting) < 150:
        if not 0 <= darting[-1] + step <= 600:
            step = -step
        darting.append(darting[-1] + step)
    reversal = lambda t: (1.0, 0.0, darting[min(int(round(t * FPS)), len(darting) - 1)] - 300, 0.0, centre)
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
    # A face of 82-99 px box width (dlib's 215 px box at scale 1) drifting slowly about the centre.
    small_face = lambda t: (0.42 + 0.04 * math.sin(2 * math.pi * t / 6), 0.0, 90 * math.sin(2 * math.pi * t / 5),
                            25 * math.sin(2 * math.pi * t / 4), centre)
    # A streamer in front of a webcam: slow sway (at most 5.6 px/frame) and leaning in and out by 8 %.
    webcam = lambda t: (1 + 0.08 * math.sin(2 * math.pi * t / 7), 0.0, 160 * math.sin(2 * math.pi * t / 6),
                        30 * math.sin(2 * math.pi * t / 4), centre)
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
        "reversal": (150, 3.0, [reversal]),
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
        "still_noise": (150, 6.0, [still]),
        "webcam": (240, lambda t: 6 + 2 * math.sin(2 * math.pi * t / 5), [webcam]),
        "small_face": (180, 3.0, [small_face]),
        # Turned to 35 degrees and held, then to -35 degrees and held (hold_sweep).
        "yaw30": (240, 3.0, [still]),
        "turned_noise": (240, 6.0, [still]),
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
TURNED = {"yaw": lambda t: yaw_sweep(t), "yaw30": lambda t: hold_sweep(t), "turned_noise": lambda t: hold_sweep(t)}

# Sequences filmed as by a webcam: name -> t seconds -> (gain, (red, green, blue) white balance),
# factors on the whole frame before the sensor noise: the gain wanders by 12 %, the balance by 6 %
# towards warm and cold, each at its own pace.
CAMERA_DRIFT = {"webcam": lambda t: (1 + 0.12 * math.sin(2 * math.pi * t / 9),
                                     (1 + 0.06 * math.sin(2 * math.pi * t / 5), 1.0, 1 - 0.06 * math.sin(2 * math.pi * t / 5)))}
# Sequences with motion blur: name -> exposure, in frame intervals, centred on the frame's instant.
EXPOSURE = {"webcam": 0.5}
# Encoder settings: the default quality, or a webcam's bit rate.
QUALITY = ["-crf", "16"]
ENCODING = {"webcam": ["-b:v", "1500k", "-maxrate", "1500k", "-bufsize", "1500k"]}


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


def hold_sweep(t):
    """Degrees at t seconds: half a second frontal, to 35 degrees in a second, held 1.5 s, to -35
    degrees in 2 s, held 1.5 s, back to frontal in a second, half a second: within 40 degrees."""
    legs = [(0.5, 0, 0), (1.0, 0, 35), (1.5, 35, 35), (2.0, 35, -35), (1.5, -35, -35), (1.0, -35, 0), (0.5, 0, 0)]
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


def render_turned(tile, background, m, yaw, noise):
    """The tile on the cylinder turned by yaw degrees, placed by m (a translation here), rendered
    four times finer across and averaged, so that the squeezed side of the face does not alias."""
    frame = background.copy()
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
    frame += noise
    return np.clip(frame, 0, 255, out=frame).astype(np.uint8)


def tile_to_frame(scale, angle, dx, dy, centre, tile_size):
    """2x3 matrix: tile pixel (centre at (tile_size-1)/2) -> frame pixel."""
    a = math.radians(angle)
    c, s = math.cos(a) * scale, math.sin(a) * scale
    half = (tile_size - 1) / 2
    tx = centre[0] + dx - (c * half - s * half)
    ty = centre[1] + dy - (s * half + c * half)
    return [[c, -s, tx], [s, c, ty]]


def composite(tile, background, matrices):
    """The faces placed by matrices on the background (float RGB pixels), as float RGB pixels."""
    frame = background.copy()
    height, width = frame.shape[:2]
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
        # Only the frame pixels the tile can reach are warped (with the bicubic kernel's reach of 2 px):
        # a whole-frame warp spent most of a sequence's time on transparent pixels.
        corners = forward @ np.array([[-0.5, source.width - 0.5, -0.5, source.width - 0.5],
                                      [-0.5, -0.5, source.height - 0.5, source.height - 0.5], [1, 1, 1, 1]])
        x0, y0 = max(0, math.floor(corners[0].min()) - 3), max(0, math.floor(corners[1].min()) - 3)
        x1, y1 = min(width, math.ceil(corners[0].max()) + 4), min(height, math.ceil(corners[1].max()) + 4)
        if x1 <= x0 or y1 <= y0:
            continue
        offset = np.array([[1, 0, x0], [0, 1, y0], [0, 0, 1]])
        inverse = shift @ np.linalg.inv(forward) @ unshift @ offset
        warped = source.transform((x1 - x0, y1 - y0), Image.AFFINE, tuple(inverse[:2].reshape(-1)), resample=Image.BICUBIC)
        # The frame holds whole grey levels until the noise: its part under the face goes through
        # PIL's compositing unchanged.
        region = Image.fromarray(frame[y0:y1, x0:x1].astype(np.uint8), "RGB").convert("RGBA")
        region.alpha_composite(warped)
        frame[y0:y1, x0:x1] = np.asarray(region.convert("RGB"), dtype=np.float32)
    return frame


def render(tile, background, matrices, noise, exposure=None, camera=None):
    """One frame: the faces, blurred over exposure (the matrices of several instants) when given,
    then the camera's (gain, white balance) when given, then sensor noise (`sensor_noise`)."""
    if exposure:
        pixels = sum(composite(tile, background, ms) for ms in exposure) / len(exposure)
    else:
        pixels = composite(tile, background, matrices)
    if camera:
        gain, balance = camera
        pixels *= np.array(balance, np.float32) * gain
    pixels += noise
    return np.clip(pixels, 0, 255, out=pixels).astype(np.uint8)


def sensor_noise(seed, sigmas, shape):
    """Each frame's sensor noise (one value per pixel, the same on every channel), with sigmas[i]
    on frame i: drawn in frame order, and so the same draw as one after the other, but on a thread
    while the frames are rendered (drawing it took a third of a sequence's time)."""
    rng = np.random.default_rng(seed)

    def draw(sigma):
        return rng.normal(0, sigma, shape).astype(np.float32)

    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = collections.deque()
        for sigma in sigmas:
            pending.append(pool.submit(draw, sigma))
            if len(pending) > 2:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def exposure_instants(faces, t, exposure):
    """The matrices of every face at instants spread over exposure frame intervals centred on t:
    about one instant per pixel the face travels in it (2 to 8)."""
    def at(u):
        return [tile_to_frame(*motion(u), TILE) for motion in faces]
    half = exposure / FPS / 2
    first, last = at(t - half), at(t + half)
    travel = max(math.hypot(a[0][2] - b[0][2], a[1][2] - b[1][2]) for a, b in zip(first, last))
    count = max(2, min(8, math.ceil(travel) + 1))
    return [at(t - half + 2 * half * k / (count - 1)) for k in range(count)]


def cut_tile(photo, crop):
    """The square crop (left, top, right, bottom) of photo, resized to TILE; parts outside the photo
    are filled with its nearest edge pixels."""
    image = Image.open(photo).convert("RGB")
    left, top, right, bottom = crop
    if left < 0 or top < 0 or right > image.width or bottom > image.height:
        pad = max(0, -left, -top, right - image.width, bottom - image.height)
        pixels = np.pad(np.asarray(image), ((pad, pad), (pad, pad), (0, 0)), mode="edge")
        image = Image.fromarray(pixels)
        crop = (left + pad, top + pad, right + pad, bottom + pad)
    return image.crop(crop).resize((TILE, TILE), Image.LANCZOS)


def stale(truth_path, source):
    """Whether the truth already written there is of another photo, crop or noise draw (older ones name none)."""
    try:
        with open(truth_path) as f:
            written = json.load(f).get("source")
    except (OSError, ValueError):
        return True
    return written is not None and written != source


def arguments():
    parser = argparse.ArgumentParser(description="Moving-face test videos with known truth, from a real photo.")
    parser.add_argument("photo")
    parser.add_argument("outdir")
    parser.add_argument("--crop", help="X,Y,SIDE: the square around the face in photo pixels (default: astronaut.png's); "
                        "write --crop=X,Y,SIDE when X is negative")
    parser.add_argument("--name-prefix", default="", help="put before every file name written (e.g. 'obama.')")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="the sensor noise's draw: the same motion under other noise, to check a result on noise "
                        "the tests never saw")
    parser.add_argument("names", nargs="*", metavar="NAME", help="sequences to make (default: all)")
    args = parser.parse_intermixed_args()
    if args.crop:
        x, y, side = (int(v) for v in args.crop.split(","))
        args.crop = (x, y, x + side, y + side)
    else:
        args.crop = CROP
    unknown = set(args.names) - set(sequences())
    if unknown:
        parser.error("unknown sequences: " + " ".join(sorted(unknown)))
    return args


def main():
    args = arguments()
    out, prefix = args.outdir, args.name_prefix
    wanted = args.names or list(sequences())
    os.makedirs(out, exist_ok=True)
    face = cut_tile(args.photo, args.crop)
    # Every file is written under a name of this process's and then renamed into place: two test
    # runs (a test run and a benchmark) may make sequences of the same photo in one folder at once.
    part = f".{os.getpid()}.part"
    face.save(os.path.join(out, prefix + "face_tile" + part + ".png"))
    os.replace(os.path.join(out, prefix + "face_tile" + part + ".png"), os.path.join(out, prefix + "face_tile.png"))
    tile = face.convert("RGBA")
    source = {"photo": os.path.basename(args.photo), "crop": [args.crop[0], args.crop[1], args.crop[2] - args.crop[0]]}
    if args.seed != DEFAULT_SEED:
        source["seed"] = args.seed
    for name, (frames, sigma, faces, *size) in sequences().items():
        if name not in wanted:
            continue
        width, height = size[0] if size else (WIDTH, HEIGHT)
        ramp = np.linspace(70, 150, width, dtype=np.float32)[None, :, None] * np.ones((height, 1, 3), np.float32)
        background = ramp.astype(np.uint8).astype(np.float32)
        target = os.path.join(out, prefix + name + ".mp4")
        truth_path = os.path.join(out, prefix + name + ".truth.json")
        if os.path.exists(target) and not stale(truth_path, source):
            continue
        sigmas = [sigma(index / FPS) if callable(sigma) else sigma for index in range(frames)]
        noises = sensor_noise(args.seed, sigmas, (height, width, 1))
        scene = scrolling_scene(width, height, np.random.default_rng(11)) if name in SCROLLING else None
        encoder = subprocess.Popen(
            ["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{width}x{height}",
             "-r", str(FPS), "-i", "-", "-c:v", "libx264", "-preset", "veryfast", *ENCODING.get(name, QUALITY), "-g", "60",
             "-pix_fmt", "yuv420p", target + part + ".mp4"], stdin=subprocess.PIPE)
        truth, yaws = [], []
        # Frames are rendered RENDERERS at a time (numpy and Pillow let go of the interpreter lock
        # while they work on pixels) and written in order; each frame's inputs are drawn here in
        # frame order, so the video is the same byte for byte whatever the number of threads.
        with ThreadPoolExecutor(max_workers=RENDERERS) as pool:
            rendered = collections.deque()
            for index in range(frames):
                t = index / FPS
                matrices = [tile_to_frame(*motion(t), TILE) for motion in faces]
                noise = next(noises)
                if name in TURNED:
                    yaw = [TURNED[name](t)]
                    rendered.append(pool.submit(render_turned, tile, background, matrices[0], yaw[0], noise))
                    yaws.append(yaw)
                else:
                    if scene is not None:
                        offset = (SCROLLING[name] * index) % width
                        background = scene[:, offset:offset + width].astype(np.float32)
                    exposure = exposure_instants(faces, t, EXPOSURE[name]) if name in EXPOSURE else None
                    camera = CAMERA_DRIFT[name](t) if name in CAMERA_DRIFT else None
                    rendered.append(pool.submit(render, tile, background, matrices, noise, exposure, camera))
                truth.append(matrices)
                while len(rendered) > RENDERERS:
                    encoder.stdin.write(rendered.popleft().result().data)
            while rendered:
                encoder.stdin.write(rendered.popleft().result().data)
        encoder.stdin.close()
        if encoder.wait() != 0:
            sys.exit(f"ffmpeg failed on {name}")
        document = {"tile": TILE, "fps": FPS, "width": width, "height": height, "source": source, "frames": truth}
        if name in TURNED:
            document.update(head={"axis": HEAD_AXIS, "radius": HEAD_RADIUS}, yaw=yaws)
        with open(truth_path + part, "w") as f:
            json.dump(document, f)
        os.replace(truth_path + part, truth_path)
        os.replace(target + part + ".mp4", target)
    print(out)


if __name__ == "__main__":
    main()
