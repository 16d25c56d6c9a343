#!/usr/bin/env python3
"""Prints soak.sh's figures as a table with its verdicts, and draws soak.png (RSS and CPU over time).

  soak_report.py OUT_DIR     (reads soak.csv and recoveries.csv from it)
"""
import csv
import sys

from PIL import Image, ImageDraw

out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/soak.csv")))
recoveries = list(csv.DictReader(open(f"{out}/recoveries.csv")))
print(f"{'s':>6} {'rss_mb':>8} {'cpu_cores':>9} {'fps':>6} {'out':>8} {'dropped':>8} {'reconnects':>10}  state")
previous = None
for row in rows:
    seconds, rss, cpu = float(row["seconds"]), float(row["rss_mb"]), float(row["cpu_s"])
    frames = int(row["frames_out"]) if row["frames_out"].isdigit() else 0
    cores = fps = 0.0
    if previous:
        span = seconds - previous[0]
        cores, fps = (cpu - previous[1]) / span, (frames - previous[2]) / span
    previous = (seconds, cpu, frames)
    if int(seconds) % 60 == 0 or row is rows[-1]:
        print(f"{seconds:6.0f} {rss:8.1f} {cores:9.2f} {fps:6.1f} {row['frames_out']:>8} {row['frames_dropped']:>8} {row['reconnects']:>10}  {row['state']}")

def trend(points):
    """Least-squares slope of (seconds, MB) points, in MB per 10 minutes."""
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_r = sum(r for _, r in points) / n
    return sum((t - mean_t) * (r - mean_r) for t, r in points) / sum((t - mean_t) ** 2 for t, _ in points) * 600


# RSS growth after a two-minute warm-up: over every sample, and over the samples taken at the same
# point of each loss cycle (the last one before the platform goes down), which leaves out the swing
# of memory taken and given back within a cycle.
warm = [(float(r["seconds"]), float(r["rss_mb"])) for r in rows if float(r["seconds"]) >= 120]
if len(warm) >= 3:
    print(f"RSS after warm-up: {warm[0][1]:.1f} -> {warm[-1][1]:.1f} MB; trend {trend(warm):+.2f} MB per 10 minutes (target under 1)")
steady = [(float(a["seconds"]), float(a["rss_mb"])) for a, b in zip(rows, rows[1:])
          if float(a["seconds"]) >= 120 and a["state"] == "relaying" and b["state"] != "relaying"]
if len(steady) >= 3:
    print(f"RSS before each upstream loss after warm-up: {', '.join(f'{r:.1f}' for _, r in steady)} MB; trend {trend(steady):+.2f} MB per 10 minutes")
losses = len(recoveries)
recover = [float(r["relaying_again_at_s"]) - float(r["platform_back_at_s"]) for r in recoveries]
flowing = [float(r["output_again_at_s"]) - float(r["platform_back_at_s"]) for r in recoveries]
if recover:
    print(f"upstream losses recovered: {losses}; frames flowing to the platform again {min(flowing):.1f} to {max(flowing):.1f} s after it was back"
          f" (mean {sum(flowing) / len(flowing):.1f} s; target within 5 s); reported relaying (after 2 s without error) {min(recover):.1f} to {max(recover):.1f} s after")
else:
    print("no upstream loss in this run (it needs more than two minutes)")

# soak.png: RSS (top) and CPU cores (bottom) over time.
width, height, margin = 900, 420, 50
image = Image.new("RGB", (width, height), "white")
draw = ImageDraw.Draw(image)
times = [float(r["seconds"]) for r in rows]
series = [("RSS MB", [float(r["rss_mb"]) for r in rows], (40, 90, 200), 0)]
cpu = [0.0] + [(float(b["cpu_s"]) - float(a["cpu_s"])) / max(float(b["seconds"]) - float(a["seconds"]), 1e-9) for a, b in zip(rows, rows[1:])]
series.append(("CPU cores", cpu, (200, 80, 40), 1))
panel = (height - 2 * margin) // 2
for label, values, color, index in series:
    top = margin + index * (panel + 20)
    low, high = min(values), max(values)
    if high - low < 1e-9:
        high = low + 1
    draw.rectangle([margin, top, width - margin, top + panel - 20], outline=(200, 200, 200))
    draw.text((margin + 4, top + 2), f"{label}: {low:.1f} .. {high:.1f}", fill=color)
    span = max(times[-1], 1)
    points = [(margin + t / span * (width - 2 * margin), top + panel - 20 - (v - low) / (high - low) * (panel - 30)) for t, v in zip(times, values)]
    if len(points) > 1:
        draw.line(points, fill=color, width=2)
for r in recoveries:
    x = margin + float(r["lost_at_s"]) / max(times[-1], 1) * (width - 2 * margin)
    draw.line([(x, margin), (x, height - margin)], fill=(160, 160, 160))
draw.text((margin, height - margin + 8), f"seconds (0 .. {times[-1]:.0f}); grey lines: the platform taken down for 8 s", fill=(80, 80, 80))
image.save(f"{out}/soak.png")
print(f"plot: {out}/soak.png; figures: {out}/soak.csv")
