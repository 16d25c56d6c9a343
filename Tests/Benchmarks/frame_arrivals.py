#!/usr/bin/env python3
"""Watches a live RTMP stream as a player would and writes when each frame arrived.

    frame_arrivals.py URL OUT          writes "INDEX SECONDS" lines to OUT until killed
    frame_arrivals.py --latency IN OUT [OUT ...]
                                       prints, per OUT, the median and 90th percentile of
                                       (arrival there - arrival in IN) over the frames both saw

The frame index is the fixture's barcode (20 blocks of 64 px in the top 16 rows, make-fixtures.sh).
Frames are decoded by ffmpeg on one thread with no input buffering and written out as soon as each
is decoded, so a watcher adds the same small delay to every stream it watches: compare arrivals
between watchers, not against a clock of their own.
"""
import os
import signal
import statistics
import subprocess
import sys
import time

WIDTH, ROWS, BITS = 1280, 16, 20


def frame_index(rows):
    index = 0
    for bit in range(BITS):
        x = bit * 64 + 32
        value = sum(rows[y * WIDTH + x] for y in range(4, 12)) / 8
        if value > 170:
            index |= 1 << bit
        elif value > 80:
            return None
    return index


def watch(url, out_path):
    decoder = subprocess.Popen(
        ["ffmpeg", "-nostdin", "-v", "error", "-fflags", "nobuffer", "-flags", "low_delay", "-threads", "1",
         "-i", url, "-map", "0:v:0", "-vf", f"crop={WIDTH}:{ROWS}:0:0", "-pix_fmt", "gray",
         "-f", "rawvideo", "-flush_packets", "1", "-"],
        stdout=subprocess.PIPE, bufsize=0)
    signal.signal(signal.SIGTERM, lambda *_: (decoder.kill(), sys.exit(0)))
    size = WIDTH * ROWS
    with open(out_path, "w", buffering=1) as out:
        while True:
            frame = bytearray()
            while len(frame) < size:
                chunk = os.read(decoder.stdout.fileno(), size - len(frame))
                if not chunk:
                    return
                frame += chunk
            arrived = time.time()
            index = frame_index(frame)
            if index is not None:
                out.write(f"{index} {arrived:.6f}\n")


def arrivals(path):
    seen = {}
    with open(path) as lines:
        for line in lines:
            index, seconds = line.split()
            seen.setdefault(int(index), float(seconds))
    return seen


def latency(ingest_path, output_paths):
    ingest = arrivals(ingest_path)
    for path in output_paths:
        output = arrivals(path)
        delays = sorted((output[i] - ingest[i]) * 1000 for i in output if i in ingest)
        if not delays:
            print(f"{path}: no frame seen on both")
            continue
        p90 = delays[int(len(delays) * 0.9)]
        print(f"{statistics.median(delays):.1f} {p90:.1f} {len(delays)}")


if __name__ == "__main__":
    if sys.argv[1] == "--latency":
        latency(sys.argv[2], sys.argv[3:])
    else:
        watch(sys.argv[1], sys.argv[2])
