"""Every built-in over the real wire is sealed end to end, and its record still verifies."""

from __future__ import annotations

import asyncio
import json

import pytest

from lingxi.session import SessionConfig
from lingxi.session.drivers.endpoints import memory_session
from lingxi.session.record.transcript import read_entries
from lingxi.session.record.verify import verify_state_dir
from lingxi.session.runner import load_protocol

HANG_GUARD = 60  # seconds; only stops a broken run from hanging the suite
BUILTINS = ["guess-number", "rock-paper-scissors", "hero-duel", "word-count", "chat",
            "crazy-eights", "short-whist"]


async def _lines(items):
    for item in items:
        yield item
    yield None


@pytest.mark.parametrize("name", BUILTINS)
async def test_every_envelope_of_every_builtin_is_sealed_and_the_record_verifies(name, tmp_path):
    kwargs = {}
    if name == "chat":
        kwargs = {"host_kwargs": {"inputs": _lines(["hi", "/quit"])},
                  "guest_kwargs": {"inputs": _lines(["hello"])}}
    host, guest = await asyncio.wait_for(memory_session(
        load_protocol(name), seed=3, state_dir=tmp_path, config=SessionConfig(peer_timeout=20),
        **kwargs), HANG_GUARD)
    assert host.outcome.status == guest.outcome.status == "completed"
    assert host.receipts_verified and guest.receipts_verified and host.head == guest.head
    for side in ("host", "guest"):
        entries = [entry for _, entry in read_entries(tmp_path / side / "transcript.jsonl")]
        assert entries and all(e["envelope"].get("encrypt") is True for e in entries)
        # the record keeps the opened payload, so the flow mode's own check still runs
        assert all(isinstance(e["envelope"]["payload"].get("action"), str) for e in entries)
        result = verify_state_dir(tmp_path / side)
        assert result.ok, result.problems
        events = [json.loads(line) for line in
                  (tmp_path / side / "events.jsonl").read_text().splitlines()]
        path = next(e for e in events if e["event"] == "wire.path")
        assert path["sealed"] is True and path["via"] == "memory"
