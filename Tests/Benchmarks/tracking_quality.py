#!/usr/bin/python3
"""Scores `facerelay inspect --json` output against the known motion of face-motion.py videos.

    tracking_quality.py FIXTURES RESULTS

RESULTS holds NAME.SMOOTHING.jsonl (inspect --json) and NAME.SMOOTHING.stats.json (inspect
--stats-json) for each sequence; FIXTURES holds NAME.truth.json and face_tile.jsonl (inspect --json
of face_tile.png, the reference landmarks). Prints one table row per sequence and smoothing.
"""
import glob
import json
import math
import os
import sys

SKIP = 10  # frames to settle at the start (first detection, filters priming)


def load_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.startswith("{")]


def apply(m, p):
    return (m[0][0] * p[0] + m[0][1] * p[1] + m[0][2], m[1][0] * p[0] + m[1][1] * p[1] + m[1][2])


def score(frames, truth, reference):
    """Mean error / eye distance, jitter (px), lag (frames), over faces matched to their truth."""
    errors, nose, lag_num, lag_den, found, expected = [], {}, 0.0, 0.0, 0, 0
    previous_truth = {}
    for frame in frames[SKIP:]:
        index = frame["frame"]
        if index >= len(truth["frames"]):
            continue
        for face_index, m in enumerate(truth["frames"][index]):
            points = [apply(m, p) for p in reference]
            centre = (sum(p[0] for p in points) / 68, sum(p[1] for p in points) / 68)
            if not (0 <= centre[0] < 1280 and 0 <= centre[1] < 720):
                continue
            expected += 1
            best, best_distance = None, 1e9
            for face in frame["faces"]:
                c = [sum(p[k] for p in face["landmarks"]) / 68 for k in (0, 1)]
                d = math.dist(c, centre)
                if d < best_distance:
                    best, best_distance = face, d
            eyes = math.dist(points[36], points[45])
            if best is None or best_distance > eyes:
                continue
            found += 1
            tracked = best["landmarks"]
            errors.append(sum(math.dist(tracked[i], points[i]) for i in range(68)) / 68 / eyes)
            nose.setdefault(face_index, []).append((index, tracked[30]))
            # Lag: the part of the centroid error that follows the true velocity, in frames.
            if (face_index, index - 1) in previous_truth:
                v = (centre[0] - previous_truth[(face_index, index - 1)][0], centre[1] - previous_truth[(face_index, index - 1)][1])
                c = [sum(p[k] for p in tracked) / 68 for k in (0, 1)]
                e = (centre[0] - c[0], centre[1] - c[1])
                lag_num += e[0] * v[0] + e[1] * v[1]
                lag_den += v[0] * v[0] + v[1] * v[1]
            previous_truth[(face_index, index)] = centre
    steps = []
    for track in nose.values():
        for (i0, p0), (i1, p1) in zip(track, track[1:]):
            if i1 == i0 + 1:
                steps.append(math.dist(p0, p1) ** 2)
    return {
        "error": sum(errors) / len(errors) if errors else float("nan"),
        "jitter": math.sqrt(sum(steps) / len(steps)) if steps else float("nan"),
        "lag": lag_num / lag_den if lag_den > 1e-6 else float("nan"),
        "found": found / expected if expected else float("nan"),
    }


def main():
    fixtures, results = sys.argv[1], sys.argv[2]
    reference_frame = load_lines(os.path.join(results, "face_tile.jsonl"))[0]
    reference = reference_frame["faces"][0]["rawLandmarks"]
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Fixtures", "face_tile.annotations.json")) as f:
        marked = json.load(f)["points"]
    eyes = math.dist(reference[36], reference[45])
    marked_error = sum(math.dist(reference[int(k)], v) for k, v in marked.items()) / len(marked) / eyes
    print(f"reference: landmarks on face_tile.png vs {len(marked)} hand-marked points: mean {100 * marked_error:.1f}% of the eye distance ({eyes:.0f} px)")
    print()
    print(f"| sequence | smoothing | found | error (% eye dist.) | nose jitter (px/frame) | lag (frames) | track ms/frame (CPU) |")
    print(f"|---|---|---|---|---|---|---|")
    for path in sorted(glob.glob(os.path.join(results, "*.*.jsonl"))):
        name, smoothing = os.path.basename(path).split(".")[:2]
        truth_path = os.path.join(fixtures, name + ".truth.json")
        if not os.path.exists(truth_path):
            continue
        with open(truth_path) as f:
            truth = json.load(f)
        s = score(load_lines(path), truth, reference)
        with open(path.replace(".jsonl", ".stats.json")) as f:
            stats = json.load(f)
        jitter = f"{s['jitter']:.2f}" if name == "still" else "-"
        lag = f"{s['lag']:.2f}" if name in ("translate", "four") else "-"
        print(f"| {name} | {smoothing} | {100 * s['found']:.0f}% | {100 * s['error']:.2f} | {jitter} | {lag} | {stats['track_ms_per_frame']:.2f} |")


if __name__ == "__main__":
    main()
