"""Byte sources for nonces, keys and ids.

Production uses ``secrets.token_bytes`` (the OS's randomness). A seeded source
exists for tests and for in-process self-play, where both sides are local and
a reproducible run is the point; it is never the default for a session with
a real peer.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable

Entropy = Callable[[int], bytes]
SYSTEM: Entropy = secrets.token_bytes


def seeded(label: object) -> Entropy:
    """A deterministic byte source for ``label`` (tests and local self-play only)."""
    rng = random.Random(f"lingxi-entropy-{label}")
    return rng.randbytes
