"""Compositions the CLI and library callers use: a guest that finds its protocol,
and an offline verification that includes the flow mode's own transcript check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lingxi.session.drivers.endpoints import guest_session as _guest_session
from lingxi.session.drivers.network import DriveResult
from lingxi.session.record.verify import Verification, verify_state_dir
from lingxi.session.runner import LoadedProtocol, find_protocol


async def guest_session(protocol: LoadedProtocol | None, endpoint: str, *,
                        allow_skeleton: bool | None = None, **kwargs: Any) -> DriveResult:
    """Join the host at ``endpoint``; without ``protocol`` the host's offered id is
    looked up among the built-ins and the protocol cache (ids re-verified)."""
    return await _guest_session(
        protocol, endpoint,
        protocol_for=lambda pid: find_protocol(pid, allow_skeleton=allow_skeleton), **kwargs)


def verify_session(state_dir: str | Path, *, peer_key: str | None = None) -> Verification:
    """Chain, both receipts, and the flow mode's offline check when the spec is known."""
    from lingxi.errors import LingxiError
    from lingxi.protocols.catalogue import folder_for_id
    from lingxi.session.core.registry import flow_mode

    entries: list[dict[str, Any]] = []
    result = verify_state_dir(state_dir, peer_key=peer_key, entries=entries)
    if result.problems or not result.protocol_id:
        return result
    try:
        from lingxi.contract import load_spec

        spec = load_spec(folder_for_id(result.protocol_id))
        check = flow_mode(spec.flow.mode).verify
    except LingxiError as error:
        result.notes.append(f"flow check skipped: {error.message}")
        return result
    if check is not None:
        problems = check(entries, spec)
        result.problems.extend(f"flow: {p}" for p in problems)
        result.notes.append(f"flow check ({spec.flow.mode}): "
                            f"{'ok' if not problems else f'{len(problems)} problem(s)'}")
    return result
