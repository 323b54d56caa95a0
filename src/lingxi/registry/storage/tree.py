"""The log's Merkle tree in the database: nodes read in one query, appended in the write's
own transaction (so a leaf and the subtrees it completes commit or vanish together)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Connection

from lingxi.registry.models import merkle
from lingxi.registry.storage import driver
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.driver import sql_for

_NODES = select(t.merkle_nodes.c.id, t.merkle_nodes.c.hash).where(
    t.merkle_nodes.c.id.in_(bindparam("ids", expanding=True)))


def node_id(level: int, index: int) -> int:
    return level << 48 | index


def read_nodes(conn: Connection, nodes: Iterable[merkle.Node]) -> dict[merkle.Node, bytes]:
    wanted = {node_id(*n): n for n in nodes}
    if not wanted:
        return {}
    rows = conn.execute(_NODES, {"ids": list(wanted)}).all()
    found = {wanted[row.id]: bytes.fromhex(row.hash) for row in rows}
    if len(found) != len(wanted):
        raise LookupError("the Merkle tree is missing nodes it should have")
    return found


Frontier = dict[merkle.Node, bytes]  # the hashes of the root's subtrees: all an append reads


def append(conn: Connection, index: int, leaf: bytes,
           frontier: Frontier | None = None,
           log_row: dict[str, Any] | None = None,
           row: tuple[str, dict[str, Any]] | None = None) -> tuple[bytes, Frontier]:
    """Store leaf ``index`` and the subtrees it completes; the new root of ``index + 1`` and
    the new frontier. ``frontier`` (the tree of ``index`` leaves' root subtrees, if the
    caller knows it) saves reading them from the database. ``log_row``: the log entry
    of the leaf, stored with the nodes (on PostgreSQL in the same statement), and with
    it ``row``, ``(table, row)``, the record's own row (the same statement too)."""
    siblings, level, i = [], 0, index
    while i % 2 == 1:
        siblings.append((level, i - 1))
        level, i = level + 1, i // 2
    size = index + 1
    roots = merkle.root_nodes(size)
    # the left siblings and the root's other subtrees are all subtrees of the old root
    needed = set(siblings) | set(roots[:-1])
    if frontier is not None and needed <= frontier.keys():
        known = {n: frontier[n] for n in needed}
    else:
        driver.flush(conn)  # what the write queued goes out before this read
        known = read_nodes(conn, needed)
    added = merkle.appended_nodes(index, leaf, lambda lv, ix: known[(lv, ix)])
    sql = sql_for(conn)
    # on PostgreSQL queued with the write's rows: they go out with the next statement
    # sent (the next write's nonce spend, or the commit's flush)
    if log_row is not None and sql.log_and_nodes_add is not None:  # PostgreSQL
        params = {**log_row, "node_ids": [node_id(lv, ix) for lv, ix, _ in added],
                  "node_hashes": [h.hex() for _, _, h in added]}
        if row is None:
            driver.later(conn, sql.log_and_nodes_add, params)
        else:
            table, values = row
            params.update({f"row_{k}": v for k, v in values.items()})
            driver.later(conn, sql.row_log_and_nodes_add(table, values), params)
    else:
        if row is not None:
            driver.later(conn, sql.insert(*row), row[1])
        if log_row is not None:
            driver.later(conn, sql.log_add, log_row)
        driver.send(conn, sql.node_add,
                    [{"id": node_id(lv, ix), "hash": h.hex()} for lv, ix, h in added], many=True)
    known.update({(lv, ix): h for lv, ix, h in added})
    new_frontier = {n: known[n] for n in roots}
    return merkle.root_of(list(new_frontier.values())), new_frontier


def root(conn: Connection, size: int) -> bytes:
    known = read_nodes(conn, merkle.root_nodes(size))
    return merkle.hash_range(0, size, lambda lv, ix: known[(lv, ix)])


def _hashes(conn: Connection, ranges: list[tuple[int, int]]) -> list[bytes]:
    known = read_nodes(conn, merkle.nodes_for(ranges))
    return [merkle.hash_range(a, b, lambda lv, ix: known[(lv, ix)]) for a, b in ranges]


def inclusion(conn: Connection, index: int, size: int) -> list[bytes]:
    return _hashes(conn, merkle.inclusion_ranges(index, size))


def consistency(conn: Connection, old: int, new: int) -> list[bytes]:
    return _hashes(conn, merkle.consistency_ranges(old, new))


def inclusions(conn: Connection, indices: Iterable[int], size: int) -> dict[int, list[bytes]]:
    """Audit paths of several leaves in the tree of ``size``, from one read of nodes."""
    wanted = {i: merkle.inclusion_ranges(i, size) for i in indices}
    known = read_nodes(conn, merkle.nodes_for(r for ranges in wanted.values() for r in ranges))
    return {i: [merkle.hash_range(a, b, lambda lv, ix: known[(lv, ix)]) for a, b in ranges]
            for i, ranges in wanted.items()}
