#!/usr/bin/env python3
"""The tables of real-clips.sh: each build on each clip against dlib's stock detector run on every frame
(dlib.CLIP.jsonl) and dlib's stock fit on the build's own boxes (LABEL.CLIP.RUN.dlibfit); and on the
clips whose blinks are labelled (CLIP_DIR/CLIP.tag), the build's blink events against the labels; on the
clips where one person's camera switches to another's (CLIP_DIR/CLIP.switch), whether the first person's
track goes on to the second and how the second's expressions differ from the second clip run alone.
    real_clips.py RESULTS_DIR CLIP_DIR"""
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


def labelled_blinks(path):
    """The labelled blinks of an eyeblink8-format file (FRAME:BLINK:...; BLINK -1 outside a blink), as
    (first, last) frames."""
    blinks = {}
    for line in open(path):
        fields = line.strip().split(":")
        if line.startswith("#") or len(fields) < 2 or fields[1] == "-1":
            continue
        first, last = blinks.get(fields[1], (int(fields[0]), int(fields[0])))
        blinks[fields[1]] = (min(first, int(fields[0])), max(last, int(fields[0])))
    return sorted(blinks.values())


def eyes_closed(frames):
    """The spans of frames (first, last) on which an eye's blink expression is on for the first face."""
    spans, start = [], None
    for frame in frames:
        on = bool(frame["faces"]) and any(name.startswith("blink") for name in frame["faces"][0].get("expressionsOn", []))
        if on and start is None:
            start = frame["frame"]
        elif not on and start is not None:
            spans.append((start, frame["frame"] - 1))
            start = None
    if start is not None:
        spans.append((start, frames[-1]["frame"]))
    return spans


def blink_row(frames, blinks):
    """Labelled blinks caught (an eye on within the blink), and the events and frames on outside every
    labelled blink."""
    spans = eyes_closed(frames)
    caught = sum(1 for first, last in blinks if any(a <= last and b >= first for a, b in spans))
    outside = [(a, b) for a, b in spans if not any(a <= last and b >= first for first, last in blinks)]
    frames_outside = sum(1 for a, b in spans for f in range(a, b + 1) if not any(first <= f <= last for first, last in blinks))
    return caught, len(outside), frames_outside, spans


def switch_row(frames, alone, start, end):
    """On a clip where one person's camera switched to another's (CLIP.switch: the second clip alone,
    the frame of this clip its first frame is, the first frame after the transition): whether a face
    shown after the switch keeps an id shown before it (the first person's track going on to the second
    person), and, from 10 frames after the transition on, the frames where the expressions on for the
    first shown face differ from those on for the first shown face of the second clip run alone, by
    expression (judged against the first person's rest, the second person's eyes and brows read
    otherwise)."""
    def first_shown(frame):
        return frame["faces"][0] if frame["faces"] else None
    before = {face["id"] for frame in frames if frame["frame"] < start for face in frame["faces"]}
    after = {face["id"] for frame in frames if frame["frame"] >= end for face in frame["faces"]}
    by_frame = {frame["frame"]: frame for frame in alone}
    differing, compared = {}, 0
    for frame in frames:
        if frame["frame"] < end + 10 or frame["frame"] - start not in by_frame:
            continue
        compared += 1
        ours, theirs = first_shown(frame), first_shown(by_frame[frame["frame"] - start])
        names = set(ours["expressionsOn"] if ours else []) ^ set(theirs["expressionsOn"] if theirs else [])
        for name in names:
            differing[name] = differing.get(name, 0) + 1
        if names:
            differing["any"] = differing.get("any", 0) + 1
    return bool(before & after), differing, compared


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

    switched = [clip for clip in clips if os.path.exists(f"{sys.argv[2]}/{clip}.switch")] if len(sys.argv) > 2 else []
    if switched:
        print()
        print("| clip | build | the first person's track goes on to the second (runs) | frames whose expressions differ from the second clip alone, "
              "each run: all (by expression) |")
        print("|---" * 4 + "|")
    for clip in switched:
        alone, start, end = open(f"{sys.argv[2]}/{clip}.switch").read().split()
        for label in labels:
            rows = []
            for path in sorted(glob.glob(f"{results}/{label}.{clip}.*.jsonl")):
                alone_path = f"{results}/{label}.{alone}.{path.split('.')[-2]}.jsonl"
                if os.path.exists(alone_path):
                    rows.append(switch_row(load_lines(path), load_lines(alone_path), int(start), int(end)))
            if not rows:
                continue
            differ = "; ".join(f"{r[1].get('any', 0)} of {r[2]}" + (" (" + ", ".join(f"{k} {v}" for k, v in sorted(r[1].items()) if k != "any") + ")"
                               if len(r[1]) > 1 else "") for r in rows)
            print(f"| {clip} | {label} | {sum(r[0] for r in rows)} of {len(rows)} | {differ} |")

    tagged = [clip for clip in clips if os.path.exists(f"{sys.argv[2]}/{clip}.tag")] if len(sys.argv) > 2 else []
    if not tagged:
        return
    print()
    print("| clip | build | labelled blinks | caught (each run) | eyes on outside a blink: events / frames | eyes on (frames, first run) |")
    print("|---" * 6 + "|")
    for clip in tagged:
        blinks = labelled_blinks(f"{sys.argv[2]}/{clip}.tag")
        for label in labels:
            rows = [blink_row(load_lines(path), blinks) for path in sorted(glob.glob(f"{results}/{label}.{clip}.*.jsonl"))]
            if not rows:
                continue
            print(f"| {clip} | {label} | {', '.join(f'{a}-{b}' for a, b in blinks)} | {'; '.join(str(r[0]) for r in rows)} "
                  f"| {spread([r[1] for r in rows], 0)} / {spread([r[2] for r in rows], 0)} | {', '.join(f'{a}-{b}' for a, b in rows[0][3])} |")


if __name__ == "__main__":
    main()
