#!/usr/bin/python3
"""The sticker-switch part of serve-capacity.sh.

    serve_capacity.py switch SOCKET STREAM STICKER COUNT INTERVAL
        Switches STREAM COUNT times (none, STICKER, none, ...; landmarks instead of none when STICKER
        is none), INTERVAL seconds apart, on one control-socket connection. Around each set-sticker
        it asks for the stream's stats, so frames_out just before the request and just after the
        reply bracket the reply (the socket round trip is well under a frame). One JSON line each.

    serve_capacity.py looks INPUT RECORDING SWITCHES EVENTS FRAMES_OUT
        Relates each switch to the recording of the stream at the platform (a complete recording:
        frame k of it is the k-th frame facerelay output). For each recorded frame, the barcode
        gives the input frame it shows, and the pixels that differ from that input frame by more
        than 40 grey levels (below the barcode, at 320x180) tell whether the sticker is on (> 150
        pixels) or off (< 30; encoding alone changes next to none). Prints one row per switch and
        the largest delay. FRAMES_OUT is facerelay's count at the stream's end, to check that the
        recording holds every frame.
"""
import json
import socket
import subprocess
import sys
import time

import numpy as np

W, H = 320, 180
BARCODE_ROWS = 4  # 16 of 720 rows
ON, OFF = 150, 30


def switch(path, stream, sticker, count, interval):
    other = "landmarks" if sticker == "none" else "none"
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(10)
    client.connect(path)
    reader = client.makefile("r")
    ident = 0

    def request(command, **arguments):
        nonlocal ident
        ident += 1
        client.sendall((json.dumps(dict(id=ident, command=command, **arguments)) + "\n").encode())
        reply = json.loads(reader.readline())
        if not reply.get("ok"):
            raise SystemExit(f"{command} failed: {reply}")
        return reply["result"]

    def figures():
        entry = request("stats", stream=stream)["streams"][0]
        return entry["frames_out"], entry["frames_dropped"]

    for n in range(1, count + 1):
        target = other if n % 2 else sticker
        out_before, dropped_before = figures()
        sent = time.monotonic()
        request("set-sticker", stream=stream, sticker=target)
        replied = time.monotonic()
        out_after, dropped_after = figures()
        print(json.dumps(dict(switch=n, to=target, out_before=out_before, out_after=out_after,
                              dropped_before=dropped_before, dropped_after=dropped_after,
                              reply_ms=round((replied - sent) * 1000, 2))), flush=True)
        time.sleep(interval)


def grey_frames(path):
    raw = subprocess.run(["ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0",
                          "-vf", f"scale={W}:{H}:flags=area", "-fps_mode", "passthrough",
                          "-pix_fmt", "gray", "-f", "rawvideo", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, np.uint8).reshape(-1, H, W)


def frame_times(path):
    text = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries",
                           "frame=best_effort_timestamp_time", "-of", "csv=p=0", path],
                          check=True, capture_output=True, text=True).stdout
    return [float(line.split(",")[0]) for line in text.split() if line.strip()]


def barcode(picture):
    """The 20-bit frame index in the top rows (64-pixel blocks at full size, 16 here); None if unreadable."""
    index = 0
    for bit in range(20):
        value = (int(picture[1, bit * 16 + 8]) + int(picture[2, bit * 16 + 8])) // 2
        if value > 170:
            index |= 1 << bit
        elif value > 80:
            return None
    return index


def looks(input_path, recording, switches_path, events_path, frames_out):
    reference = {}
    for picture in grey_frames(input_path):
        index = barcode(picture)
        if index is not None:
            reference.setdefault(index, picture.astype(np.int16))
    pictures = grey_frames(recording)
    times = frame_times(recording)
    states = []  # per recorded frame: "on", "off" or "?"
    for picture in pictures:
        index = barcode(picture)
        if index is None or index not in reference:
            states.append("?")
            continue
        changed = int((np.abs(picture[BARCODE_ROWS:].astype(np.int16) - reference[index][BARCODE_ROWS:]) > 40).sum())
        states.append("on" if changed > ON else "off" if changed < OFF else "?")
    count = min(len(pictures), len(times))
    with open(switches_path) as f:
        switches = [json.loads(line) for line in f if line.startswith("{")]
    with open(events_path) as f:
        events = [json.loads(line) for line in f if line.startswith('{"event"')]
    start = times[0] if times else 0.0
    gaps = sum(1 for a, b in zip(times, times[1:]) if b - a > 1.5 / 30)
    complete = count == frames_out and abs(start) < 0.002 and gaps == 0
    print(f"  recording at the platform: {count} frames from {start:.3f} s, {gaps} gaps; facerelay output {frames_out} "
          f"-> {'complete' if complete else 'NOT complete: the frame numbers below are unreliable'}")
    print("  delay = number of the first frame with the new look - frames_out around the reply (a range when")
    print("  a frame left the stage between the stats before the request and the stats after the reply)")
    print("  switch  to          frames_out before/after  dropped  event frame  delay  first seen  delay  reply ms")
    worst = {"event": None, "seen": None}
    show = lambda value: "-" if value is None else str(value)

    def delay(kind, frame, entry):
        if frame is None:
            return "-"
        low, high = frame - entry["out_after"], frame - entry["out_before"]
        worst[kind] = high if worst[kind] is None else max(worst[kind], high)
        return str(low) if low == high else f"{low}..{high}"

    for number, entry in enumerate(switches):
        want = "off" if entry["to"] == "none" else "on"
        event = events[number] if number < len(events) else None
        event_frame = None
        if event is not None and count:
            # The event's pts is that frame's output time; the recording starts at the stream's first frame.
            nearest = min(range(count), key=lambda k: abs(times[k] - start - event["pts"]))
            if abs(times[nearest] - start - event["pts"]) < 0.002:
                event_frame = nearest
        seen = next((k for k in range(entry["out_before"], count) if states[k] == want), None)
        print(f"  {entry['switch']:>6}  {entry['to']:<10}  {entry['out_before']:>11} / {entry['out_after']:<10}  "
              f"{entry['dropped_after']:>7}  {show(event_frame):>11}  {delay('event', event_frame, entry):>5}  {show(seen):>10}  "
              f"{delay('seen', seen, entry):>5}  {entry['reply_ms']:>8}")
    print(f"  max delay (upper end): {show(worst['event'])} frames by the sticker events, {show(worst['seen'])} frames seen in the "
          f"recording (target <= 2)")


if __name__ == "__main__":
    if sys.argv[1] == "switch":
        switch(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), float(sys.argv[6]))
    elif sys.argv[1] == "looks":
        looks(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]))
    else:
        raise SystemExit(__doc__)
