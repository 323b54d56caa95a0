"""The RFC 6962 / RFC 9162 Merkle tree: hashes, proofs and their verification.

Leaves hash as ``SHA-256(0x00 || data)``, interior nodes as
``SHA-256(0x01 || left || right)``, the empty tree as ``SHA-256("")``; a tree
of ``n`` leaves splits at the largest power of two below ``n``. Every range
the RFC's recursions visit is a run of *aligned perfect subtrees*, so a log
stores one hash per perfect subtree — node ``(level, index)`` covers leaves
``[index·2^level, (index+1)·2^level)`` — and answers any root or proof from
O(log n) of them (:func:`range_nodes` says which, so storage reads them in
one query). The verifiers follow RFC 9162 §2.1.3.2 and §2.1.4.2 literally.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable

EMPTY = hashlib.sha256(b"").digest()
Node = tuple[int, int]  # (level, index)
Getter = Callable[[int, int], bytes]


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two strictly below ``n`` (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def _perfect(a: int, b: int) -> Node | None:
    size = b - a
    if size & (size - 1) == 0 and a % size == 0:
        return size.bit_length() - 1, a // size
    return None


def range_nodes(a: int, b: int) -> list[Node]:
    """The stored nodes whose hashes give ``MTH(D[a:b])``, left to right."""
    if a >= b:
        return []
    node = _perfect(a, b)
    if node is not None:
        return [node]
    k = _split(b - a)
    return range_nodes(a, a + k) + range_nodes(a + k, b)


def hash_range(a: int, b: int, get: Getter) -> bytes:
    """``MTH(D[a:b])`` from stored nodes (``EMPTY`` for an empty range)."""
    if a >= b:
        return EMPTY
    node = _perfect(a, b)
    if node is not None:
        return get(*node)
    k = _split(b - a)
    return node_hash(hash_range(a, a + k, get), hash_range(a + k, b, get))


def inclusion_ranges(index: int, size: int) -> list[tuple[int, int]]:
    """The ranges whose hashes form the audit path of leaf ``index`` in a tree of ``size``."""
    def path(m: int, a: int, b: int) -> list[tuple[int, int]]:
        if b - a <= 1:
            return []
        k = _split(b - a)
        if m < k:
            return path(m, a, a + k) + [(a + k, b)]
        return path(m - k, a + k, b) + [(a, a + k)]

    if not 0 <= index < size:
        raise ValueError(f"leaf {index} is not in a tree of {size}")
    return path(index, 0, size)


def consistency_ranges(old: int, new: int) -> list[tuple[int, int]]:
    """The ranges whose hashes prove a tree of ``old`` leaves is a prefix of one of ``new``."""
    def sub(m: int, a: int, b: int, whole: bool) -> list[tuple[int, int]]:
        if m == b - a:
            return [] if whole else [(a, b)]
        k = _split(b - a)
        if m <= k:
            return sub(m, a, a + k, whole) + [(a + k, b)]
        return sub(m - k, a + k, b, False) + [(a, a + k)]

    if not 0 <= old <= new:
        raise ValueError(f"a tree of {old} cannot be a prefix of one of {new}")
    if old == 0 or old == new:
        return []
    return sub(old, 0, new, True)


def nodes_for(ranges: Iterable[tuple[int, int]]) -> set[Node]:
    return {node for a, b in ranges for node in range_nodes(a, b)}


def appended_nodes(index: int, leaf: bytes, get: Getter) -> list[tuple[int, int, bytes]]:
    """The perfect subtrees completed by appending ``leaf`` at ``index``: ``(level, i, hash)``.

    ``get`` must return the left siblings, which were completed earlier.
    """
    out = [(0, index, leaf)]
    level, i, current = 0, index, leaf
    while i % 2 == 1:
        current = node_hash(get(level, i - 1), current)
        level, i = level + 1, i // 2
        out.append((level, i, current))
    return out


def root_nodes(size: int) -> list[Node]:
    """``range_nodes(0, size)`` without the recursion (every append asks): one perfect
    subtree per set bit of ``size``, the largest first."""
    out, start = [], 0
    for level in range(size.bit_length() - 1, -1, -1):
        if size >> level & 1:
            out.append((level, start >> level))
            start += 1 << level
    return out


def root_of(hashes: list[bytes]) -> bytes:
    """``MTH`` of a tree from the hashes of its :func:`root_nodes`, left to right: each
    split takes the largest perfect subtree off the left, so the root folds from the
    right (``EMPTY`` for no leaves)."""
    if not hashes:
        return EMPTY
    current = hashes[-1]
    for left in reversed(hashes[:-1]):
        current = node_hash(left, current)
    return current


def verify_inclusion(index: int, size: int, leaf: bytes, path: list[bytes],
                     root: bytes) -> bool:
    """RFC 9162 §2.1.3.2: is ``leaf`` at ``index`` in the tree of ``size`` with ``root``?"""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn, sn = fn >> 1, sn >> 1
        else:
            r = node_hash(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(old: int, new: int, old_root: bytes, new_root: bytes,
                       proof: list[bytes]) -> bool:
    """RFC 9162 §2.1.4.2: is the tree ``(old, old_root)`` a prefix of ``(new, new_root)``?"""
    if not 0 <= old <= new:
        return False
    if old == new:
        return not proof and old_root == new_root
    if old == 0:
        return not proof and old_root == EMPTY
    if not proof:
        return False
    if old & (old - 1) == 0:
        proof = [old_root, *proof]
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            if not fn & 1:
                while not fn & 1 and fn != 0:
                    fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == old_root and sr == new_root


class MemoryTree:
    """A whole tree in memory: what a full audit rebuilds from every leaf it re-hashed."""

    def __init__(self) -> None:
        self.nodes: dict[Node, bytes] = {}
        self.size = 0

    def get(self, level: int, index: int) -> bytes:
        return self.nodes[(level, index)]

    def append(self, leaf: bytes) -> None:
        for level, index, value in appended_nodes(self.size, leaf, self.get):
            self.nodes[(level, index)] = value
        self.size += 1

    def root(self, size: int | None = None) -> bytes:
        return hash_range(0, self.size if size is None else size, self.get)

    def inclusion(self, index: int, size: int | None = None) -> list[bytes]:
        return [hash_range(a, b, self.get)
                for a, b in inclusion_ranges(index, self.size if size is None else size)]

    def consistency(self, old: int, new: int | None = None) -> list[bytes]:
        return [hash_range(a, b, self.get)
                for a, b in consistency_ranges(old, self.size if new is None else new)]
