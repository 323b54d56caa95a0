"""The handshake's ephemeral X25519 keys: the direct binding and the public API agree."""

from __future__ import annotations

import os

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from lingxi.wire import handshake


def test_ephemeral_keys_are_the_public_api_keys():
    for _ in range(20):
        raw = os.urandom(32)
        fast = handshake._x25519_from_bytes(raw)
        public = X25519PrivateKey.from_private_bytes(raw)
        assert isinstance(fast, X25519PrivateKey)
        assert handshake._ephemeral_hex(fast) == handshake._ephemeral_hex(public)
        peer = X25519PrivateKey.generate()
        peer_hex = handshake._ephemeral_hex(peer)
        assert handshake._shared(fast, peer_hex) == handshake._shared(public, peer_hex)


def test_a_bad_peer_key_is_refused_the_same_way():
    import pytest
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey

    from lingxi.wire.errors import HandshakeError
    for bad in (b"", b"\x00" * 31, b"\x00" * 33):
        with pytest.raises(ValueError):
            X25519PublicKey.from_public_bytes(bad)
        with pytest.raises(ValueError):
            handshake._x25519_public(bad)
    with pytest.raises(HandshakeError):  # the all-zero point gives no shared secret
        handshake._shared(X25519PrivateKey.generate(), "00" * 32)
