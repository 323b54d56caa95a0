"""Sigma proofs with Fiat–Shamir: knowledge of a key, and equality of logs.

Both are sent in commitment form (the prover's commitments plus the response)
rather than challenge form, so a verifier can tell *which* equation failed:
the one tying the proof to the sender's published key (a forged or garbled
proof) or the one tying the share or face to the deck entry (a wrong share, a
wrong face). Every challenge hashes a caller-supplied context (session, roles,
step and position, see :mod:`lingxi.cards.table`) and the whole statement.
"""

from __future__ import annotations

from enum import Enum

from lingxi.cards import group as g

POK_DOMAIN = b"lingxi/cards/pok/v1"
DLEQ_DOMAIN = b"lingxi/cards/dleq/v1"
POK_SIZE = 64
DLEQ_SIZE = 96


def prove_key(ctx: bytes, secret: bytes, key: bytes, entropy: g.Entropy) -> bytes:
    """Schnorr proof that the sender knows ``secret`` with ``key = secret·G``."""
    k = g.random_scalar(entropy)
    t = g.base(k)
    c = g.hash_scalar(POK_DOMAIN, ctx, key, t)
    return t + g.sc_add(k, g.sc_mul(c, secret))


def verify_key(ctx: bytes, key: bytes, proof: bytes) -> bool:
    if len(proof) != POK_SIZE or not g.is_scalar(proof[32:]):
        return False
    t, s = proof[:32], proof[32:]
    try:
        c = g.hash_scalar(POK_DOMAIN, ctx, key, t)
        return g.base(s) == g.add(t, g.mul(c, key))
    except g.Degenerate:
        return False


class Dleq(Enum):
    OK = "ok"
    BAD_PROOF = "bad_proof"  # not a proof under the sender's key
    MISMATCH = "mismatch"  # a proof under the key, for a different pair


def prove_dleq(ctx: bytes, secret: bytes, key: bytes, p: bytes, q: bytes,
               entropy: g.Entropy) -> bytes:
    """Proof that ``log_G(key) == log_P(Q)`` (Chaum–Pedersen)."""
    k = g.random_scalar(entropy)
    t1, t2 = g.base(k), g.mul(k, p)
    c = g.hash_scalar(DLEQ_DOMAIN, ctx, key, p, q, t1, t2)
    return t1 + t2 + g.sc_add(k, g.sc_mul(c, secret))


def verify_dleq(ctx: bytes, key: bytes, p: bytes, q: bytes, proof: bytes) -> Dleq:
    """Check a Chaum–Pedersen proof; 1 fixed-base and 3 variable-base products."""
    if len(proof) != DLEQ_SIZE or not g.is_scalar(proof[64:]):
        return Dleq.BAD_PROOF
    t1, t2, s = proof[:32], proof[32:64], proof[64:]
    try:
        c = g.hash_scalar(DLEQ_DOMAIN, ctx, key, p, q, t1, t2)
        if g.base(s) != g.add(t1, g.mul(c, key)):
            return Dleq.BAD_PROOF
    except g.Degenerate:
        return Dleq.BAD_PROOF
    try:
        if g.mul(s, p) != g.add(t2, g.mul(c, q)):
            return Dleq.MISMATCH
    except g.Degenerate:
        return Dleq.MISMATCH
    return Dleq.OK
