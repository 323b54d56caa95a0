"""The Merkle tree against RFC 6962's recursive definitions (a direct transcription here),
its proofs verified, and every tampering refused."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from lingxi.registry.models.merkle import (
    EMPTY,
    MemoryTree,
    leaf_hash,
    node_hash,
    range_nodes,
    root_nodes,
    root_of,
    verify_consistency,
    verify_inclusion,
)


def mth(leaves: list[bytes]) -> bytes:
    n = len(leaves)
    if n == 0:
        return hashlib.sha256(b"").digest()
    if n == 1:
        return leaves[0]
    k = 1 << ((n - 1).bit_length() - 1)
    return node_hash(mth(leaves[:k]), mth(leaves[k:]))


def path(m: int, leaves: list[bytes]) -> list[bytes]:
    n = len(leaves)
    if n <= 1:
        return []
    k = 1 << ((n - 1).bit_length() - 1)
    if m < k:
        return path(m, leaves[:k]) + [mth(leaves[k:])]
    return path(m - k, leaves[k:]) + [mth(leaves[:k])]


def subproof(m: int, leaves: list[bytes], whole: bool) -> list[bytes]:
    n = len(leaves)
    if m == n:
        return [] if whole else [mth(leaves)]
    k = 1 << ((n - 1).bit_length() - 1)
    if m <= k:
        return subproof(m, leaves[:k], whole) + [mth(leaves[k:])]
    return subproof(m - k, leaves[k:], False) + [mth(leaves[:k])]


def tree(n: int) -> tuple[MemoryTree, list[bytes]]:
    leaves = [leaf_hash(f"leaf {i}".encode()) for i in range(n)]
    t = MemoryTree()
    for leaf in leaves:
        t.append(leaf)
    return t, leaves


def test_known_vectors():
    assert MemoryTree().root() == EMPTY
    # RFC 6962's empty-tree hash and the leaf/node domain bytes
    assert EMPTY.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    assert leaf_hash(b"").hex() == hashlib.sha256(b"\x00").hexdigest()


@settings(max_examples=80, deadline=None, derandomize=True)
@given(n=st.integers(1, 70), data=st.data())
def test_roots_and_proofs_match_the_rfc_and_verify(n, data):
    t, leaves = tree(n)
    for size in {n, data.draw(st.integers(1, n))}:
        assert t.root(size) == mth(leaves[:size])
        index = data.draw(st.integers(0, size - 1))
        proof = t.inclusion(index, size)
        assert proof == path(index, leaves[:size])
        assert verify_inclusion(index, size, leaves[index], proof, t.root(size))
        assert not verify_inclusion(index, size, leaf_hash(b"other"), proof, t.root(size))
        if proof:
            bad = list(proof)
            bad[data.draw(st.integers(0, len(bad) - 1))] = b"\x00" * 32
            assert not verify_inclusion(index, size, leaves[index], bad, t.root(size))
        if size > 1:
            assert not verify_inclusion((index + 1) % size, size, leaves[index], proof,
                                        t.root(size))
    old = data.draw(st.integers(0, n))
    proof = t.consistency(old, n)
    assert proof == ([] if old in (0, n) else subproof(old, leaves, True))
    assert verify_consistency(old, n, t.root(old), t.root(n), proof)
    if 0 < old < n:
        forked = list(leaves)
        forked[data.draw(st.integers(0, old - 1))] = leaf_hash(b"rewritten")
        assert not verify_consistency(old, n, mth(forked[:old]), t.root(n), proof)
        assert not verify_consistency(old, n, t.root(old), mth(forked), proof)
        assert not verify_consistency(old, n, t.root(old), t.root(n), proof[:-1])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(n=st.integers(0, 300))
def test_root_from_the_frontier_is_the_rfc_root(n):
    """An append computes the new root from the root's subtrees alone (no recursion):
    the same subtrees ``range_nodes`` names and the same root RFC 6962 defines."""
    t, leaves = tree(n)
    assert root_nodes(n) == range_nodes(0, n)
    assert root_of([t.nodes[node] for node in root_nodes(n)]) == mth(leaves)
