#!/usr/bin/env python3
"""The table of real-clips.sh: each build on each clip against dlib's stock detector run on every frame
(dlib.CLIP.jsonl) and dlib's stock fit on the build's own boxes (LABEL.CLIP.RUN.dlibfit).
    real_clips.py RESULTS_DIR"""
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tracking_quality import cost, dlib_fits, load_lines  # noqa: E402

SMALLEST = 80   # faces dlib finds at this size or more are the ones to show
WRONG = 10      # % of the eye distance: a shown frame further off is wrong
# dlib not finding a face for this many frames in a row ends an appearance: one missed frame is
# dlib's own flicker, not the face leaving.
GAP = 3


def overlap(a, b):
    w = max(0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    h = max(0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return w * h / (a[2] * a[3] + b[2] * b[3] - w * h)


def error(points, reference):
    eyes = math.dist(reference[36], reference[45])
    return 100 * sum(math.dist(p, q) for p, q in zip(points, reference)) / 68 / eyes


def score(frames, dlib, fits):
    delays, unshown, extra, errors = [], 0, 0, []
    since, shown_yet, last_found = None, False, -GAP - 1
    for index in range(min(len(frames), len(dlib))):
        faces = frames[index]["faces"]
        found = [f["box"] for f in dlib[index]["faces"] if f["box"][2] >= SMALLEST]
        shown = [any(overlap(face["box"], box) > 0.3 for face in faces) for box in found]
        if found:
            if index - last_found > GAP:
                since, shown_yet = index, False
            last_found = index
            if any(shown) and not shown_yet:
                delays.append(index - since)
                shown_yet = True
            elif shown_yet:
                unshown += shown.count(False)
        extra += sum(1 for face in faces if not any(overlap(face["box"], d["box"]) > 0.3 for d in dlib[index]["faces"]))
        for face in faces:
            reference = fits.get((frames[index]["frame"], face["id"]))
            if reference:
                errors.append(error(face["landmarks"], reference))
    if since is not None and not shown_yet:
        delays.append(None)
    return delays, unshown, extra, errors


def spread(values, digits):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    low, high = min(values), max(values)
    return f"{low:.{digits}f}" if f"{low:.{digits}f}" == f"{high:.{digits}f}" else f"{low:.{digits}f}-{high:.{digits}f}"


def main():
    results = sys.argv[1]
    clips = sorted(os.path.basename(p)[len("dlib."):-len(".jsonl")] for p in glob.glob(f"{results}/dlib.*.jsonl"))
    labels = sorted({os.path.basename(p).split(".")[0] for p in glob.glob(f"{results}/*.dlibfit")}, key=lambda l: l != "now")
    print("| clip | build | frames, dlib finds a face | shown after (frames) | not shown while dlib finds it | shown where dlib finds none "
          "| vs dlib on its box: mean % | worst % | frames over 10 % | CPU ms/frame |")
    print("|---" * 10 + "|")
    for clip in clips:
        dlib = load_lines(f"{results}/dlib.{clip}.jsonl")
        found = sum(1 for f in dlib if any(face["box"][2] >= SMALLEST for face in f["faces"]))
        for label in labels:
            rows = []
            for path in sorted(glob.glob(f"{results}/{label}.{clip}.*.jsonl")):
                delays, unshown, extra, errors = score(load_lines(path), dlib, dlib_fits(path[:-len(".jsonl")] + ".dlibfit"))
                rows.append((delays, unshown, extra, errors, cost(path)[0]))
            if not rows:
                continue
            delays = ", ".join("never" if d is None else str(d) for d in rows[0][0]) if len(rows) == 1 else \
                "; ".join("/".join("never" if d is None else str(d) for d in r[0]) for r in rows)
            print(f"| {clip} | {label} | {len(dlib)}, {found} | {delays} | {spread([r[1] for r in rows], 0)} | {spread([r[2] for r in rows], 0)} "
                  f"| {spread([sum(r[3]) / len(r[3]) if r[3] else None for r in rows], 2)} | {spread([max(r[3], default=None) for r in rows], 1)} "
                  f"| {spread([sum(e > WRONG for e in r[3]) for r in rows], 0)} | {spread([r[4] for r in rows], 2)} |")


if __name__ == "__main__":
    main()
