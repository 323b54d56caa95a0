"""The in-memory driver's envelope ids are the version 4 UUIDs ``uuid`` would write for
the same seeded draws (written without importing uuid, and platform with it)."""

from __future__ import annotations

import random
import uuid

from lingxi.session.drivers.memory import _uuids


def test_seeded_ids_are_what_uuid_writes():
    ours, theirs = random.Random(7), random.Random(7)
    draw = _uuids(ours)
    for _ in range(5000):
        assert draw() == str(uuid.UUID(int=theirs.getrandbits(128), version=4))


def test_the_extremes():
    class Fixed(random.Random):
        def __init__(self, value: int) -> None:
            super().__init__()
            self.value = value

        def getrandbits(self, k: int) -> int:
            return self.value

    for value in (0, 2**128 - 1, 0x0123456789ABCDEF0123456789ABCDEF):
        assert _uuids(Fixed(value))() == str(uuid.UUID(int=value, version=4))
