#!/usr/bin/python3
"""Jitter and lag of the smoothed landmarks under webcam noise, on every person of the real-face corpus.

For each corpus photo with a face: 1280x720 sequences of the photo (its first face scaled to about
180 px), each frame with new Gaussian sensor noise of sigma 6 grey levels, encoded losslessly so the
noise reaches the tracker as it is: the face held still, and sliding right at 2, 6 and 30 px a frame.
`facerelay inspect --json` tracks them. Jitter: RMS frame-to-frame motion of the smoothed nose tip
(point 30) on the still face, after frame 10 (and of all 68 points, mean). Lag: how many frames the
smoothed landmarks trail the raw fit on a slide, mean over the 68 points and the frames after 10.

    noise_jitter.py FACERELAY CORPUS_DIR PIPELINES [SMOOTHING ...]
        one row per person and smoothing, run through facerelay end to end
    noise_jitter.py --tune FACERELAY CORPUS_DIR PIPELINES
        the One Euro filter's pose parameters swept offline on the raw fits (`--smoothing none`)
        of every person, with the same filter as LandmarkSmoothing.swift: the worst person's jitter and
        lag for each pair, and how far it trails a 72 px jump, the pairs that hold jitter under 0.25 px first
"""
import json, math, os, subprocess, sys, tempfile
import numpy as np
from PIL import Image

SIGMA, FACE, FPS = 6.0, 180, 30.0
# OneEuroFilter's defaults (LandmarkSmoothing.swift), of the pose and the shape: minimum cut-off Hz,
# beta, the velocity estimate's cut-off Hz, how many times its input's own noise is taken out of a
# channel's speed (in quadrature), and the held speed's half-life in seconds (0: none).
POSE, SHAPE = (0.4, 0.2, 2.0, 1.5, 1 / 30), (0.2, 0.06, 2.0, 2.0, 0.0)
SPEEDS = (2, 6, 30)
# Where `sequence` puts the face's centre on the first frame.
START_X, CENTRE_Y = 300, 360


def inspect(facerelay, pipelines, path, *args):
    out = subprocess.run([facerelay, "inspect", path, "--json", "--pipelines", pipelines, *args],
                         capture_output=True, text=True, check=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def sequence(photo, box, speed, path):
    """The face still (speed 0) or sliding right at `speed` px a frame, from x = START_X to about 1000."""
    frames = 90 if speed == 0 else min(90, 10 + 700 // speed)
    scale = FACE / box[2]
    image = Image.open(photo).convert("L")
    image = image.resize((max(1, int(image.width * scale)), max(1, int(image.height * scale))), Image.BILINEAR)
    face = np.asarray(image, dtype=np.float32)
    cx, cy = (box[0] + box[2] / 2) * scale, (box[1] + box[3] / 2) * scale
    rng = np.random.default_rng(7)
    encoder = subprocess.Popen(["ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "rawvideo", "-pix_fmt", "gray", "-s", "1280x720",
                                "-framerate", "30", "-i", "-", "-c:v", "libx264", "-qp", "0", "-preset", "ultrafast",
                                "-pix_fmt", "yuv420p", path], stdin=subprocess.PIPE)
    for frame in range(frames):
        canvas = np.full((720, 1280), 96, np.float32)
        x = int(round(START_X - cx + speed * frame))
        y = int(round(CENTRE_Y - cy))
        left, top = max(0, x), max(0, y)
        right, bottom = min(1280, x + face.shape[1]), min(720, y + face.shape[0])
        if right > left and bottom > top:
            canvas[top:bottom, left:right] = face[top - y:bottom - y, left - x:right - x]
        canvas += rng.normal(0, SIGMA, canvas.shape)
        encoder.stdin.write(np.clip(canvas, 0, 255).astype(np.uint8).tobytes())
    encoder.stdin.close()
    encoder.wait()


def tracks(frames, key, speed):
    """The placed face's points (68x2) per frame from frame 10 on, None where it is not shown: of the
    faces shown, the one whose box is centred where `sequence` put it (a group photo shows others)."""
    def placed(k, faces):
        near = [f for f in faces if math.dist((f["box"][0] + f["box"][2] / 2, f["box"][1] + f["box"][3] / 2),
                                              (START_X + speed * k, CENTRE_Y)) < f["box"][2] / 2]
        return np.array(near[0][key]) if near else None
    return [placed(k, f["faces"]) for k, f in enumerate(frames) if k >= 10]


def jitter(points):
    """RMS frame-to-frame motion: of the nose tip, and of all 68 points (mean square over them)."""
    steps = [b - a for a, b in zip(points, points[1:]) if a is not None and b is not None]
    if not steps:
        return float("nan"), float("nan")
    nose = np.mean([s[30, 0] ** 2 + s[30, 1] ** 2 for s in steps]) ** 0.5
    every = np.mean([np.mean(s[:, 0] ** 2 + s[:, 1] ** 2) for s in steps]) ** 0.5
    return float(nose), float(every)


def lag(raw, smooth, speed):
    trail = [float(np.mean(r[:, 0] - s[:, 0])) / speed for r, s in zip(raw, smooth) if r is not None and s is not None]
    return sum(trail) / len(trail) if trail else float("nan")


def one_euro_channel(frames, minimum_cutoff, beta, derivative_cutoff=1.0, allowance=0.0, half_life=0.0, units=None):
    """The One Euro filter on a sequence of arrays of 2D values (None where no face is shown); units:
    per frame, pixels per unit of each coordinate (so that speeds are in px/s), 1 by default. As in
    LandmarkSmoothing.swift, each value learns its input's noise from the second difference (a step
    beyond 3 times the noise so far left out after the first 10) and `allowance` times that noise
    is taken out of the speed in quadrature; a speed seen on two frames in a row is held, halving
    every `half_life` seconds (0: none), and the cut-off follows the larger of it and this frame's."""
    def factor(cutoff):
        tau = 1 / (2 * np.pi * cutoff)
        return 1 / (1 + tau * FPS)
    out, smoothed = None, []
    for k, raw in enumerate(frames):
        if raw is None:
            out = None
            smoothed.append(None)
            continue
        if out is None:
            out, velocity = raw.copy(), np.zeros_like(raw)
            previous, before, mean_square, inputs = raw, None, np.zeros((raw.shape[0], 1)), 1
            last_speed, held = np.zeros((raw.shape[0], 1)), np.zeros((raw.shape[0], 1))
        else:
            unit = units(k, out) if units else 1
            if inputs >= 2:
                square = (((raw - 2 * previous + before) * unit) ** 2).sum(axis=1, keepdims=True)
                seen = inputs - 2
                take = (square <= 9 * mean_square) | (seen < 10)
                mean_square = np.where(take, mean_square + (square - mean_square) / min(seen + 1, 30), mean_square)
            before, previous, inputs = previous, raw, inputs + 1
            velocity = velocity + ((raw - out) * FPS - velocity) * factor(derivative_cutoff)
            speed_square = ((velocity * unit) ** 2).sum(axis=1, keepdims=True)
            speed = np.sqrt(np.maximum(0, speed_square - mean_square / 12 * (FPS * allowance) ** 2))
            if half_life > 0:
                held = np.maximum(np.minimum(speed, last_speed), held * 0.5 ** (1 / FPS / half_life))
                last_speed = speed
                speed = np.maximum(speed, held)
            out = out + (raw - out) * factor(minimum_cutoff + beta * speed)
        smoothed.append(out)
    return smoothed


def rotate(points, angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c * points[:, 0] - s * points[:, 1], s * points[:, 0] + c * points[:, 1]], axis=1)


def one_euro(raw_frames, pose=POSE, shape=SHAPE):
    """LandmarkSmoothing.swift's OneEuroFilter on every frame of one sequence (68x2 arrays or None):
    the pose (centroid; size and roll) with the pose's (minimum cut-off, beta), each point's offset
    from the centroid in the face's frame (unrolled, divided by the size) with the shape's."""
    centres, forms, offsets = [], [], []
    for f in raw_frames:
        if f is None:
            centres.append(None), forms.append(None), offsets.append(None)
            continue
        c = f.mean(axis=0)
        size = max(float(np.sqrt(((f - c) ** 2).sum(axis=1).mean())), 1.0)
        d = f[42:48].mean(axis=0) - f[36:42].mean(axis=0)
        roll = float(np.arctan2(d[1], d[0]))
        centres.append(c[None, :]), forms.append(np.array([[size, roll]])), offsets.append(rotate(f - c, -roll) / size)
    # The roll unwrapped as the filter does: the short way round from the last.
    unwrapped, last = [], None
    for f in forms:
        if f is not None and last is not None:
            f = f.copy()
            f[0, 1] = last[0, 1] + math.remainder(f[0, 1] - last[0, 1], 2 * math.pi)
        unwrapped.append(f)
        last = f
    filtered_forms = one_euro_channel(unwrapped, *pose, units=lambda k, out: np.array([[1.0, out[0, 0]]]))
    filtered_centres = one_euro_channel(centres, *pose)
    filtered_offsets = one_euro_channel(offsets, *shape,
                                        units=lambda k, out: filtered_forms[k][0, 0])
    result = []
    for c, form, o in zip(filtered_centres, filtered_forms, filtered_offsets):
        result.append(None if c is None else c + rotate(o * form[0, 0], form[0, 1]))
    return result


def people(facerelay, pipelines, corpus):
    for name in sorted(os.listdir(corpus)):
        if name.endswith(".pgm"):
            photo = os.path.join(corpus, name)
            faces = inspect(facerelay, pipelines, photo)[0]["faces"]
            if faces:
                yield name[:-4], photo, faces[0]["box"]


def sequences(facerelay, pipelines, corpus, work, smoothing):
    """person -> {speed: frames as inspect printed them}, speed 0 the still face."""
    result = {}
    for person, photo, box in people(facerelay, pipelines, corpus):
        result[person] = {}
        for speed in (0,) + SPEEDS:
            path = os.path.join(work, f"{person}.{speed}.mp4")
            if not os.path.exists(path):
                sequence(photo, box, speed, path)
            result[person][speed] = inspect(facerelay, pipelines, path, "--smoothing", smoothing)
    return result


def report(facerelay, corpus, pipelines, smoothings):
    print(f"{'person':22s} {'smoothing':9s} {'nose px':>8s} {'all px':>7s}" + "".join(f" {f'lag@{s}':>7s}" for s in SPEEDS))
    worst = {}
    with tempfile.TemporaryDirectory() as work:
        for smoothing in smoothings:
            for person, runs in sequences(facerelay, pipelines, corpus, work, smoothing).items():
                nose, every = jitter(tracks(runs[0], "landmarks", 0))
                lags = [lag(tracks(runs[s], "rawLandmarks", s), tracks(runs[s], "landmarks", s), s) for s in SPEEDS]
                print(f"{person:22s} {smoothing:9s} {nose:8.3f} {every:7.3f}" + "".join(f" {v:7.2f}" for v in lags), flush=True)
                w = worst.setdefault(smoothing, [0.0, 0.0] + [0.0] * len(SPEEDS))
                for i, v in enumerate([nose, every] + lags):
                    w[i] = max(w[i], v)
    for smoothing, w in worst.items():
        print(f"{'worst':22s} {smoothing:9s} {w[0]:8.3f} {w[1]:7.3f}" + "".join(f" {v:7.2f}" for v in w[2:]))


def tune(facerelay, corpus, pipelines):
    with tempfile.TemporaryDirectory() as work:
        runs = sequences(facerelay, pipelines, corpus, work, "none")
    raw = {p: {s: tracks(frames, "rawLandmarks", s) for s, frames in r.items()} for p, r in runs.items()}
    # A 72 px jump after 30 still frames, without noise: how far the output trails on the jump's frame.
    step = [np.zeros((68, 2))] * 30 + [np.full((68, 2), 72.0)] * 5
    rows = []
    for cutoff in (0.2, 0.5, 1.0, 2.0):
        for beta in (0.05, 0.1, 0.15, 0.2, 0.3):
            pose = (cutoff, beta) + POSE[2:]
            nose = every = 0.0
            lags = [0.0] * len(SPEEDS)
            for person, seqs in raw.items():
                n, e = jitter(one_euro(seqs[0], pose))
                nose, every = max(nose, n), max(every, e)
                for i, s in enumerate(SPEEDS):
                    lags[i] = max(lags[i], lag(seqs[s], one_euro(seqs[s], pose), s))
            jump = 72 - float(one_euro(step, pose)[30][0, 0])
            rows.append((nose >= 0.25, max(lags), cutoff, beta, nose, every, lags, jump))
    print(f"{len(raw)} people; worst person's figures; the pose's min cutoff Hz and beta, the shape's {SHAPE}")
    print(f"{'cutoff':>6s} {'beta':>6s} {'nose px':>8s} {'all px':>7s}" + "".join(f" {f'lag@{s}':>7s}" for s in SPEEDS) + "  jump px")
    for _, _, cutoff, beta, nose, every, lags, jump in sorted(rows, key=lambda r: (r[0], r[1])):
        print(f"{cutoff:6.2f} {beta:6.3f} {nose:8.3f} {every:7.3f}" + "".join(f" {v:7.2f}" for v in lags) + f" {jump:8.1f}")


if __name__ == "__main__":
    if sys.argv[1] == "--tune":
        tune(*sys.argv[2:5])
    else:
        report(*sys.argv[1:4], sys.argv[4:] or ["none", "lowpass", "oneeuro"])
