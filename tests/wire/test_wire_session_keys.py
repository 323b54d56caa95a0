"""No module keeps a session's keys once the session's objects are gone (issue 19.5).

A session's HMAC and AEAD keys live in its builder and receive pipeline (each
holds its own keyed HMAC and cipher); signing, verifying, sealing and opening
must not leave a key, or a state keyed by it, in any module-level cache.
"""

from __future__ import annotations

import gc
import os
import sys
import types

import pytest
from wirehelpers import GUEST, HOST, FakeClock

from lingxi.wire import EnvelopeBuilder, ReceivePipeline, compute_signature, sign_envelope
from lingxi.wire.envelope import Envelope


def _holds(value, key: bytes, depth: int = 0, seen=None) -> bool:
    """Whether ``value`` (module state, walked a few levels deep) contains ``key``."""
    seen = seen if seen is not None else set()
    if id(value) in seen or depth > 4:
        return False
    seen.add(id(value))
    if isinstance(value, bytes | bytearray):
        return bytes(value) == key
    if isinstance(value, dict):
        return any(_holds(k, key, depth + 1, seen) or _holds(v, key, depth + 1, seen)
                   for k, v in list(value.items()))
    if isinstance(value, list | tuple | set | frozenset):
        return any(_holds(item, key, depth + 1, seen) for item in list(value))
    return False


def _wire_modules_holding(key: bytes) -> list[str]:
    return [name for name, module in list(sys.modules.items())
            if name.startswith("lingxi") and isinstance(module, types.ModuleType)
            and _holds(vars(module), key)]


@pytest.mark.parametrize("encrypt", [False, True])
def test_a_finished_session_leaves_its_key_nowhere(encrypt):
    key, aead_key = os.urandom(32), os.urandom(32)  # fresh objects: only this test has them
    before = sys.getrefcount(key), sys.getrefcount(aead_key)
    clock = FakeClock()
    builder = EnvelopeBuilder(GUEST, HOST, key, clock=clock, conversation_id="s",
                              aead_key=aead_key)
    pipeline = ReceivePipeline(key, clock=clock, aead_key=aead_key)
    for turn in range(3):
        env = builder.build({"action": "move", "turn": turn}, encrypt=encrypt)
        assert pipeline.accept(env.to_bytes()).payload["turn"] == turn
    loose = Envelope.from_dict(builder.build({"action": "move", "turn": 9}).to_dict())
    assert sign_envelope(loose, key).signature == compute_signature(loose, key)
    assert _wire_modules_holding(key) == _wire_modules_holding(aead_key) == []
    del builder, pipeline, env, loose
    gc.collect()
    assert (sys.getrefcount(key), sys.getrefcount(aead_key)) == before
    assert _wire_modules_holding(key) == _wire_modules_holding(aead_key) == []


def test_a_pipeline_keeps_one_keyed_hmac_per_sender_key_and_is_bounded():
    clock = FakeClock()
    keys = {f"peer-{i}": os.urandom(32) for i in range(40)}
    pipeline = ReceivePipeline(lambda agent: keys[agent], clock=clock)
    for agent, key in keys.items():
        sender = type(GUEST)(agent, "sys", "tcp://127.0.0.1:1")
        env = EnvelopeBuilder(sender, HOST, key, clock=clock).build({"action": "m"})
        pipeline.accept(env.to_bytes(), expect_conversation_id=None)
    assert 0 < len(pipeline._keyed) <= 16
