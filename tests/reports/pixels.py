"""Reads a screenshot's pixels with zlib alone (no imaging library for one test): enough to tell a
rendered page from a blank one."""

from __future__ import annotations

import struct
import zlib
from collections import Counter


def pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, every pixel as RGB(A) bytes) of a non-interlaced 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    assert header is not None, "a PNG without IHDR"
    width, height, depth, ctype, _, _, interlace = header
    assert depth == 8 and interlace == 0 and ctype in (2, 6), header
    bpp = 3 if ctype == 2 else 4
    raw, stride, prev, out = zlib.decompress(idat), width * bpp, bytearray(width * bpp), []
    for y in range(height):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the PNG row filters
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend(bytes(line[i:i + bpp]) for i in range(0, stride, bpp))
        prev = line
    return width, height, out


def drawn_fraction(data: bytes) -> float:
    """The share of pixels that differ from the most common colour (the background)."""
    _, _, every = pixels(data)
    if not every:
        return 0.0
    background, count = Counter(every).most_common(1)[0]
    return 1 - count / len(every)


def distinct_colours(data: bytes) -> int:
    return len(set(pixels(data)[2]))
