"""Verifiable shuffle of a masked deck: permute, raise to one secret, prove it.

A party holding secret ``x`` (public key ``Y = x·G``) turns deck ``C`` into
``D_i = x·C_{π(i)}`` and proves, without revealing ``π`` or ``x``, that ``D``
is a permutation of ``x·C`` for the same ``x`` as ``Y``. The argument is the
Terelius–Wikström proof of a shuffle as laid out by Haenni et al.
("Pseudo-Code Algorithms for Verifiable Re-encryption Mix-Nets", 2017),
adapted from ElGamal re-encryption to exponentiation: the re-encryption
equation ``Σ u'_i·e'_i = Enc(0; r') + Σ u_j·e_j`` becomes
``Σ u'_i·D_i = x·Σ u_j·C_j`` together with ``Y = x·G``.

Proof layout (``4N + 5`` 32-byte items): permutation commitments ``c_1..c_N``,
chain commitments ``ĉ_1..ĉ_N``, challenge ``c``, responses ``s1..s4``,
``ŝ_1..ŝ_N``, ``s'_1..s'_N``. Group operations for ``N`` cards: the prover
makes ``5N`` variable-base and ``3N + 5`` fixed-base products, the verifier
``6N + 2`` variable-base and ``N + 4`` fixed-base ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from lingxi.cards import group as g

SHUFFLE_DOMAIN = b"lingxi/cards/shuffle/v1"
GEN_DOMAIN = b"lingxi/cards/generator/v1"


def proof_items(n: int) -> int:
    return 4 * n + 5


@lru_cache(maxsize=8)
def generators(n: int) -> tuple[bytes, tuple[bytes, ...], bytes]:
    """``H``, ``H_1..H_N`` and ``Σ H_i``: independent generators nobody knows logs of."""
    h = g.hash_point(GEN_DOMAIN, b"chain")
    hs = tuple(g.hash_point(GEN_DOMAIN, b"perm" + i.to_bytes(4, "big")) for i in range(n))
    total = hs[0]
    for p in hs[1:]:
        total = g.add(total, p)
    return h, hs, total


def sample_permutation(entropy: g.Entropy, n: int) -> list[int]:
    """A uniform permutation of ``range(n)`` (Fisher–Yates, rejection sampling)."""
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = (1 << 32) - ((1 << 32) % bound)
        while True:
            v = int.from_bytes(entropy(4), "big")
            if v < limit:
                break
        j = v % bound
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def permute(seq: Sequence[Any], perm: list[int]) -> list[Any]:
    """Output position ``i`` takes input ``perm[i]``."""
    return [seq[j] for j in perm]


def mask_and_permute(secret: bytes, deck_in: list[bytes], perm: list[int]) -> list[bytes]:
    """The shuffle itself: ``D_i = x·C_{π(i)}`` (the proof is made over this)."""
    return [g.mul(secret, p) for p in permute(deck_in, perm)]


def _sum(points: list[bytes]) -> bytes:
    acc = points[0]
    for p in points[1:]:
        acc = g.add(acc, p)
    return acc


def _challenges(ctx: bytes, key: bytes, deck_in: list[bytes], deck_out: list[bytes],
                commits: list[bytes]) -> list[bytes]:
    seed = g.digest(SHUFFLE_DOMAIN + b"/u", ctx, key, b"".join(deck_in), b"".join(deck_out),
                    b"".join(commits))
    return g.hash_scalars(SHUFFLE_DOMAIN + b"/u", seed, len(deck_in))


def _final_challenge(ctx: bytes, key: bytes, deck_in: Sequence[bytes], deck_out: Sequence[bytes],
                     commits: Sequence[bytes], chain: Sequence[bytes],
                     ts: list[bytes], t_hat: list[bytes]) -> bytes:
    return g.hash_scalar(SHUFFLE_DOMAIN + b"/c", ctx, key, b"".join(deck_in),
                         b"".join(deck_out), b"".join(commits), b"".join(chain),
                         b"".join(ts), b"".join(t_hat))


def prove_shuffle(ctx: bytes, secret: bytes, key: bytes, deck_in: list[bytes],
                  perm: list[int], entropy: g.Entropy) -> tuple[list[bytes], list[bytes]]:
    """Mask and permute ``deck_in``; return the new deck and its proof items."""
    n = len(deck_in)
    h, hs, _ = generators(n)
    rnd = g.random_scalar
    deck_out = mask_and_permute(secret, deck_in, perm)
    r = [rnd(entropy) for _ in range(n)]
    commits: list[bytes] = [b""] * n
    for i, j in enumerate(perm):
        commits[j] = g.add(g.base(r[j]), hs[i])
    u = _challenges(ctx, key, deck_in, deck_out, commits)
    u_p = [u[j] for j in perm]
    # r̄ = Σ r_j, r̃ = Σ r_j·u_j
    r_bar, r_tilde = g.SCALAR_ZERO, g.SCALAR_ZERO
    for j in range(n):
        r_bar = g.sc_add(r_bar, r[j])
        r_tilde = g.sc_add(r_tilde, g.sc_mul(r[j], u[j]))
    # chain ĉ_i = r̂_i·G + u'_i·ĉ_{i-1}, ĉ_0 = H; R̂ = Σ r̂_i ∏_{k>i} u'_k
    chain: list[bytes] = []
    prev, r_chain = h, g.SCALAR_ZERO
    r_hat = [rnd(entropy) for _ in range(n)]
    for i in range(n):
        prev = g.add(g.base(r_hat[i]), g.mul(u_p[i], prev))
        chain.append(prev)
        r_chain = g.sc_add(r_hat[i], g.sc_mul(u_p[i], r_chain))
    w1, w2, w3, w4 = rnd(entropy), rnd(entropy), rnd(entropy), rnd(entropy)
    w_hat = [rnd(entropy) for _ in range(n)]
    w_p = [rnd(entropy) for _ in range(n)]
    t1, t2 = g.base(w1), g.base(w2)
    t3 = _sum([g.base(w3)] + [g.mul(w_p[i], hs[i]) for i in range(n)])
    # t4 = Σ ω'_i·D_i − ω4·Σ u_j·C_j = Σ_i (x·ω'_i − ω4·u'_i)·C_{π(i)}
    t4 = _sum([g.mul(g.sc_sub(g.sc_mul(secret, w_p[i]), g.sc_mul(w4, u_p[i])), deck_in[j])
               for i, j in enumerate(perm)])
    t5 = g.base(w4)
    t_hat = []
    for i in range(n):
        before = h if i == 0 else chain[i - 1]
        t_hat.append(g.add(g.base(w_hat[i]), g.mul(w_p[i], before)))
    c = _final_challenge(ctx, key, deck_in, deck_out, commits, chain, [t1, t2, t3, t4, t5],
                         t_hat)
    s1 = g.sc_add(w1, g.sc_mul(c, r_bar))
    s2 = g.sc_add(w2, g.sc_mul(c, r_chain))
    s3 = g.sc_add(w3, g.sc_mul(c, r_tilde))
    s4 = g.sc_add(w4, g.sc_mul(c, secret))
    s_hat = [g.sc_add(w_hat[i], g.sc_mul(c, r_hat[i])) for i in range(n)]
    s_p = [g.sc_add(w_p[i], g.sc_mul(c, u_p[i])) for i in range(n)]
    return deck_out, commits + chain + [c, s1, s2, s3, s4] + s_hat + s_p


def verify_shuffle(ctx: bytes, key: bytes, deck_in: list[bytes], deck_out: list[bytes],
                   proof: list[bytes]) -> bool:
    """True when ``proof`` shows ``deck_out`` is a permutation of ``key``'s log times ``deck_in``.

    Any malformed item (non-canonical scalar, point outside the subgroup,
    identity result) makes it False; it never raises on peer input.
    """
    n = len(deck_in)
    if n < 2 or len(deck_out) != n or len(proof) != proof_items(n):
        return False
    if any(len(item) != 32 for item in proof):
        return False
    commits, chain = proof[:n], proof[n:2 * n]
    c, s1, s2, s3, s4 = proof[2 * n:2 * n + 5]
    s_hat, s_p = proof[2 * n + 5:3 * n + 5], proof[3 * n + 5:]
    if not all(g.is_scalar(s) for s in proof[2 * n:]):
        return False
    h, hs, h_total = generators(n)
    try:
        u = _challenges(ctx, key, deck_in, deck_out, commits)
        neg_c = g.sc_neg(c)
        c_bar = g.sub(_sum(commits), h_total)
        t1 = g.add(g.base(s1), g.mul(neg_c, c_bar))
        u_prod = u[0]
        for uj in u[1:]:
            u_prod = g.sc_mul(u_prod, uj)
        c_hat = g.sub(chain[-1], g.mul(u_prod, h))
        t2 = g.add(g.base(s2), g.mul(neg_c, c_hat))
        # t3 = s3·G + Σ s'_i·H_i − c·Σ u_j·c_j
        t3 = _sum([g.base(s3)] + [g.mul(s_p[i], hs[i]) for i in range(n)]
                  + [g.mul(g.sc_mul(neg_c, u[j]), commits[j]) for j in range(n)])
        # t4 = Σ s'_i·D_i − s4·Σ u_j·C_j
        neg_s4 = g.sc_neg(s4)
        t4 = _sum([g.mul(s_p[i], deck_out[i]) for i in range(n)]
                  + [g.mul(g.sc_mul(neg_s4, u[j]), deck_in[j]) for j in range(n)])
        t5 = g.add(g.base(s4), g.mul(neg_c, key))
        t_hat = []
        for i in range(n):
            before = h if i == 0 else chain[i - 1]
            t_hat.append(g.add(g.add(g.base(s_hat[i]), g.mul(s_p[i], before)),
                               g.mul(neg_c, chain[i])))
    except g.Degenerate:
        return False
    return c == _final_challenge(ctx, key, deck_in, deck_out, commits, chain,
                                 [t1, t2, t3, t4, t5], t_hat)
