#!/usr/bin/env python3
"""Draws images/icon.png (128x128, the Marketplace's size): a prompt chevron and a cursor bar on a rounded
indigo square. Plain Python (zlib + struct, no imaging library), anti-aliased by 4x4 supersampling of signed
distance functions, so the icon can be redrawn anywhere: `python3 scripts/make-icon.py`."""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

SIZE = 128
SAMPLES = 4
BACKGROUND = (0x2B, 0x3A, 0x67)
CHEVRON = (0xF5, 0xF7, 0xFA)
BAR = (0xF2, 0x9E, 0x38)


def rounded_square(x: float, y: float, half: float, radius: float) -> float:
    """Signed distance to a square centred on the origin with rounded corners (negative inside)."""
    qx, qy = abs(x) - half + radius, abs(y) - half + radius
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    return outside + min(max(qx, qy), 0.0) - radius


def segment(x: float, y: float, ax: float, ay: float, bx: float, by: float, width: float) -> float:
    """Signed distance to a stroke of `width` from a to b with round caps."""
    px, py, dx, dy = x - ax, y - ay, bx - ax, by - ay
    t = max(0.0, min(1.0, (px * dx + py * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - t * dx, py - t * dy) - width / 2


def colour_at(x: float, y: float) -> tuple[float, float, float, float]:
    c = SIZE / 2
    if rounded_square(x - c, y - c, 60, 22) > 0:
        return (0.0, 0.0, 0.0, 0.0)
    ink = min(segment(x, y, 34, 38, 64, 64, 15), segment(x, y, 64, 64, 34, 90, 15))
    if ink <= 0:
        return (*CHEVRON, 255.0)
    if segment(x, y, 74, 90, 98, 90, 15) <= 0:
        return (*BAR, 255.0)
    return (*BACKGROUND, 255.0)


def pixels() -> bytes:
    rows = bytearray()
    step = 1 / SAMPLES
    for py in range(SIZE):
        rows.append(0)  # PNG filter type 0 for the row
        for px in range(SIZE):
            acc = [0.0, 0.0, 0.0, 0.0]
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    r, g, b, a = colour_at(px + (sx + 0.5) * step, py + (sy + 0.5) * step)
                    acc = [acc[0] + r * a, acc[1] + g * a, acc[2] + b * a, acc[3] + a]
            alpha = acc[3] / SAMPLES**2
            rgb = [round(v / acc[3]) if acc[3] else 0 for v in acc[:3]]
            rows.extend([*rgb, round(alpha)])
    return bytes(rows)


def chunk(kind: bytes, data: bytes) -> bytes:
    return (
        struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    )


def main() -> None:
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels(), 9))
    png += chunk(b"IEND", b"")
    target = Path(__file__).resolve().parents[1] / "images" / "icon.png"
    target.parent.mkdir(exist_ok=True)
    tmp = target.with_suffix(".png.tmp")
    tmp.write_bytes(png)
    tmp.replace(target)
    print(f"wrote {target} ({len(png)} bytes)")


if __name__ == "__main__":
    main()
