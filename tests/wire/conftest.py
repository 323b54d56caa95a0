"""Fixtures for the wire tests: the signature vectors, a fixed clock, a builder."""

from __future__ import annotations

import json

import pytest
from wirehelpers import AEAD_KEY, GUEST, HOST, KEY, FakeClock, counting_ids, counting_nonces

from lingxi.wire import EnvelopeBuilder, ReceivePipeline


@pytest.fixture(scope="session")
def signature_cases(vectors_dir):
    data = json.loads((vectors_dir / "envelope" / "signatures.json").read_text(encoding="utf-8"))
    return data["cases"]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def builder(clock) -> EnvelopeBuilder:
    return EnvelopeBuilder(GUEST, HOST, KEY, clock=clock, id_factory=counting_ids(),
                           conversation_id="sess-1", aead_key=AEAD_KEY,
                           nonce_factory=counting_nonces())


@pytest.fixture
def pipeline(clock) -> ReceivePipeline:
    return ReceivePipeline(KEY, clock=clock, aead_key=AEAD_KEY)
