"""Offline check of a session state folder: the hash chain and both receipts."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi.session.errors import SessionError
from lingxi.session.record.recorder import RECEIPTS, SNAPSHOT, TRANSCRIPT
from lingxi.session.record.transcript import check_receipt, load_transcript


@dataclass
class Verification:
    state_dir: str
    entries: int = 0
    head: str | None = None
    problems: list[str] = field(default_factory=list)
    receipts: dict[str, Any] = field(default_factory=dict)
    status: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "state_dir": self.state_dir, "entries": self.entries,
                "transcript_head": self.head, "session_status": self.status,
                "receipts": self.receipts, "problems": self.problems}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SessionError("session.missing_file", f"{path} does not exist") from None
    except ValueError as error:
        raise SessionError("session.bad_state", f"{path}: {error}") from None


def verify_state_dir(state_dir: str | Path) -> Verification:
    """Recompute the transcript chain and check both receipts against it.

    Raises SessionError (exit 2) when the folder is not a session folder; a
    broken chain or a bad receipt is reported in ``problems`` (exit 1).
    """
    folder = Path(state_dir)
    if not folder.is_dir():
        raise SessionError("session.not_found", f"{folder} is not a session state folder")
    snapshot = _read_json(folder / SNAPSHOT)
    receipts = _read_json(folder / RECEIPTS)
    out = Verification(str(folder), status=(snapshot.get("outcome") or {}).get("status"))
    from lingxi.errors import LingxiError
    try:
        transcript = load_transcript(folder / TRANSCRIPT)
    except LingxiError as error:
        if error.code == "session.unreadable":
            raise
        out.problems.append(f"{error.code}: {error.message}")
        return out
    out.entries = len(transcript.entries)
    out.head = transcript.head()
    session_id = snapshot.get("session_id")
    keys = {"local": snapshot.get("public_key"), "peer": snapshot.get("peer_public_key")}
    local = receipts.get("local") or {}
    handshake = local.get("handshake") if isinstance(local, dict) else None
    for which in ("local", "peer"):
        receipt = receipts.get(which)
        if not receipt:
            out.receipts[which] = {"ok": False, "problems": ["missing"]}
            out.problems.append(f"{which} receipt: missing")
            continue
        problems = check_receipt(receipt, transcript, public_key=keys[which],
                                 session_id=session_id, handshake=handshake)
        out.receipts[which] = {"ok": not problems, "role": receipt.get("role"),
                               "head": receipt.get("head"), "problems": problems}
        out.problems.extend(f"{which} receipt: {p}" for p in problems)
    return out
