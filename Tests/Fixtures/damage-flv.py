#!/usr/bin/env python3
"""Damages an FLV file the way a broken broadcaster or network would, for the hostile-input tests.

  damage-flv.py truncate FRACTION IN OUT    keep the first FRACTION of the bytes (cut mid-tag)
  damage-flv.py corrupt-nal IN OUT          overwrite the insides of H.264 NAL units with noise
  damage-flv.py header FLAGS IN OUT         set the header's track flags (1 video, 4 audio, 5 both)

Deterministic (a fixed seed), so the same input gives the same damaged file.
"""
import random
import struct
import sys


def tags(data):
    """(offset, type, payload offset, payload size) of each tag after the 9-byte header."""
    offset = struct.unpack(">I", data[5:9])[0] + 4  # header, then PreviousTagSize0
    while offset + 11 <= len(data):
        kind = data[offset] & 0x1F
        size = int.from_bytes(data[offset + 1:offset + 4], "big")
        yield offset, kind, offset + 11, size
        offset += 11 + size + 4


def corrupt_nal_units(data):
    """Noise inside the NAL units of video tags from 2 s on: every third picture, keyframes
    included, gets a run of random bytes past its slice header; the length prefixes and the FLV
    framing stay intact, so only the decoder sees the damage."""
    noise = random.Random(10)
    damaged = bytearray(data)
    pictures = 0
    for _, kind, payload, size in tags(data):
        # Video tag, AVC (codec 7), NAL units (packet type 1); the sequence header is left alone.
        if kind != 9 or size < 5 or data[payload] & 0x0F != 7 or data[payload + 1] != 1:
            continue
        timestamp = int.from_bytes(data[payload - 7:payload - 4], "big") | (data[payload - 4] << 24)
        if timestamp < 2000:
            continue
        pictures += 1
        if pictures % 3:
            continue
        position, end = payload + 5, payload + size
        while position + 4 <= end:
            length = int.from_bytes(data[position:position + 4], "big")
            unit = position + 4
            nal_type = data[unit] & 0x1F if unit < end else 0
            if nal_type in (1, 5) and length > 24:
                start = unit + 8
                count = min(length - 8, max(16, length // 3))
                damaged[start:start + count] = bytes(noise.getrandbits(8) for _ in range(count))
            position = unit + length
    return bytes(damaged)


def main():
    mode = sys.argv[1]
    if mode == "truncate":
        fraction, source, target = float(sys.argv[2]), sys.argv[3], sys.argv[4]
        data = open(source, "rb").read()
        result = data[:int(len(data) * fraction)]
    elif mode == "corrupt-nal":
        source, target = sys.argv[2], sys.argv[3]
        result = corrupt_nal_units(open(source, "rb").read())
    elif mode == "header":
        flags, source, target = int(sys.argv[2]), sys.argv[3], sys.argv[4]
        data = bytearray(open(source, "rb").read())
        data[4] = flags
        result = bytes(data)
    else:
        sys.exit(__doc__)
    with open(target, "wb") as out:
        out.write(result)


if __name__ == "__main__":
    main()
