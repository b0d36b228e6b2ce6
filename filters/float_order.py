"""Floats as unsigned integers that sort the same way, for keys and bins that must order like scores."""
from __future__ import annotations

import struct


def order_key(x: float) -> int:
    """A 64-bit unsigned integer that sorts like the float (-inf < ... < -0.0 <= 0.0 < ... < inf)."""
    (bits,) = struct.unpack(">Q", struct.pack(">d", float(x)))
    return bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)


__all__ = ["order_key"]
