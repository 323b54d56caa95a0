"""Compositions the CLI and library callers use: an offline verification that includes
the flow mode's own transcript check (the guest that finds its protocol is in
:mod:`lingxi.session.net`, with the other sessions over a channel)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lingxi.errors import LingxiError
from lingxi.session.core.registry import flow_mode
from lingxi.session.record.verify import Verification, verify_state_dir
from lingxi.session.runner import find_protocol


def verify_session(state_dir: str | Path, *, peer_key: str | None = None,
                   peer_record: str | Path | None = None) -> Verification:
    """Chain, both receipts, the flow mode's offline check and its verdict.

    The verdict is judged with the protocol's own hooks from the local catalogue
    (the game's rules: whose move it was, whether a game was decided); it is
    weighed against the peer's receipt, and, with ``peer_record`` (the peer's
    folder or transcript), against the peer's record (``session compare``).
    """
    entries: list[dict[str, Any]] = []
    result = verify_state_dir(state_dir, peer_key=peer_key, entries=entries)
    if not result.chain_ok or not result.protocol_id:
        return result
    try:
        spec, hooks = protocol_rules(result.protocol_id, result.role)
    except LingxiError as error:
        result.notes.append(f"flow check skipped: {error.message}")
        return result
    mode = flow_mode(spec.flow.mode)
    if mode.judge is not None:
        judged = mode.judge(entries, spec, hooks)
        result.problems.extend(f"flow: {p}" for p in judged["problems"])
        result.notes.extend(f"flow: {n}" for n in judged.get("notes") or [])
        if hooks is None:
            result.notes.append("flow: the protocol's hooks are not available here: moves are "
                                "not re-judged and whose move it was cannot be told")
        result.judged(judged["verdict"])
        if peer_record is not None:
            from lingxi.session.record.compare import compare_with

            compared = compare_with(entries, peer_record, spec, hooks)
            result.notes.append(f"peer record: {compared['summary']}")
            result.compared = compared
            if compared.get("verdict") is not None and not compared.get("agree"):
                result.problems = [p for p in result.problems if not p.startswith("verdict: ")]
                result.verdict = None
                result.judged(compared["verdict"])
    elif mode.verify is not None:
        problems = mode.verify(entries, spec)
        result.problems.extend(f"flow: {p}" for p in problems)
        result.notes.append(f"flow check ({spec.flow.mode}): "
                            f"{'ok' if not problems else f'{len(problems)} problem(s)'}")
    return result


def protocol_rules(protocol_id: str, role: str | None) -> tuple[Any, Any]:
    """The spec with ``protocol_id`` from the catalogue, and a maker of its hooks, started
    as ``role`` (None when they cannot be loaded here, e.g. a cached spec whose hooks
    were never written): the game's rules for a flow mode's judge."""
    from lingxi.contract import load_spec
    from lingxi.protocols.catalogue import folder_for_id

    folder = folder_for_id(protocol_id)
    try:
        protocol = find_protocol(protocol_id)
    except LingxiError:
        return load_spec(folder), None

    def make() -> Any:
        hooks = protocol.hooks(role if role in ("host", "guest") else "host", 0)
        hooks.proto_start()
        return hooks

    return protocol.spec, make


def compare_records(record_a: str | Path, record_b: str | Path) -> dict[str, Any]:
    """``lingxi session compare``: two records of one session, judged with the protocol's
    own rules from the local catalogue when it has them."""
    from lingxi.session.record.compare import compare, load_record

    a, b = load_record(record_a), load_record(record_b)
    spec = hooks = mode_compare = None
    if a.protocol_id is not None:
        try:
            spec, hooks = protocol_rules(a.protocol_id, "host")
            mode_compare = flow_mode(spec.flow.mode).compare
        except LingxiError:
            spec = None
    out = compare(a, b, mode_compare=mode_compare, spec=spec, hooks=hooks)
    if spec is None:
        out["notes"] = ["the protocol is not in the local catalogue: envelopes compared only"]
    return out
