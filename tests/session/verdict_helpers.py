"""Builders for the verdict tests: folders cut after the fact, TCP pairs, captured machines."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

from lingxi.cards.payloads import from_payload, to_payload
from lingxi.cards.table import Deal, Params, Table, signing_bytes
from lingxi.session.core.adversaries import Adversary
from lingxi.session.core.machine import SessionConfig
from lingxi.session.record.receipts import receipt_body, sign_receipt
from lingxi.session.record.transcript import Transcript
from lingxi.session.runner import load_protocol

HANG_GUARD = 60


def entries(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]


def rules(name: str, role: str = "host") -> Any:
    """A maker of fresh started hooks: the game's rules for the offline judge."""
    def make() -> Any:
        hooks = load_protocol(name).hooks(role, 0)
        hooks.proto_start()
        return hooks
    return make


class Capture(Adversary):
    """Honest: only keeps a reference to the machine it rides on (its seat key, its party)."""

    def __init__(self) -> None:
        self.machine: Any = None

    def outgoing(self, side, payload, correlation_id):
        self.machine = side.machine
        return [(payload, correlation_id)]


def _cards_index(rows: list[dict[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for i, entry in enumerate(rows):
        payload = entry["envelope"].get("payload") or {}
        if str(payload.get("action", "")).startswith("mp_"):
            out.append((i, from_payload(payload)))
    return out


def claim_point(rows: list[dict[str, Any]], claimant: str) -> int:
    """The entry just after the claimant's first game play: the peer then owes its move."""
    table_n = 1
    plays = [(i, m) for i, m in _cards_index(rows) if m["mp"] == "play" and m["from"] == claimant]
    return plays[table_n if claimant == "host" else 0][0] + 1


def cut_and_claim(source: Path, target: Path, *, at: int, machine: Any,
                  identity: Any, keep_peer_receipt: bool) -> dict[str, Any]:
    """Copy ``source`` to ``target`` keeping its first ``at`` entries, then append the owner's
    signed forfeit claim against the peer, as a cheater who finished the game would.

    The hash chain is recomputed (it has no secret); the owner's own receipt is re-signed
    over the cut record; the peer's receipt is kept or dropped.
    """
    rows = entries(source)[:at]
    cards = [m for _, m in _cards_index(rows)]
    seats = {("host" if e["direction"] == "host_to_guest" else "guest"): e["envelope"]["payload"]
             for e in rows if (e["envelope"].get("payload") or {}).get("action") == "seat"}
    host, guest = seats["host"], seats["guest"]
    params = Params(f"{host['nonce']}:{guest['nonce']}", tuple(host["universe"]),
                    Deal(*host["deal"]), {"host": bytes.fromhex(host["signing_key"]),
                                          "guest": bytes.fromhex(guest["signing_key"])})
    table = Table(params)
    for msg in cards:
        table.apply(msg, verified=True)
    role = machine.role
    claim = {"mp": "forfeit", "from": role, "seq": len(cards), "prev": table.head.hex(),
             "against": machine.peer, "reason": "no answer (after the fact)"}
    claim["sig"] = machine.signing_key.sign(signing_bytes(claim)).signature.hex()
    mine = "host_to_guest" if role == "host" else "guest_to_host"
    last = next(e for e in reversed(rows) if e["direction"] == mine)
    forged = dict(last["envelope"], payload=to_payload(claim), id="cut-after-the-fact")
    target.mkdir(parents=True)
    chain = Transcript()
    with (target / "transcript.jsonl").open("w") as out:
        for entry in rows + [{"direction": mine, "envelope": forged, "local": "sent"}]:
            out.write(json.dumps(chain.add(entry["direction"], entry["envelope"],
                                           entry.get("local", "sent"))) + "\n")
    snapshot = json.loads((source / "snapshot.json").read_text())
    shutil.copy(source / "snapshot.json", target / "snapshot.json")
    receipts = json.loads((source / "receipts.json").read_text())
    body = receipt_body(chain, session_id=snapshot["session_id"],
                        protocol_id=snapshot["protocol_id"], role=role,
                        public_key=identity.public_hex, status="aborted",
                        handshake=receipts["local"].get("handshake"))
    receipts["local"] = sign_receipt(body, identity)
    if not keep_peer_receipt:
        receipts["peer"] = None
    (target / "receipts.json").write_text(json.dumps(receipts))
    return claim


async def tcp_pair(name: str, tmp_path: Path, *, host: dict[str, Any] | None = None,
                   guest: dict[str, Any] | None = None, peer_timeout: float = 10,
                   seed: int = 1) -> tuple[Any, Any]:
    """Host and guest of ``name`` over loopback TCP, each with its own identity and folder."""
    from lingxi.session.core.entropy import seeded
    from lingxi.session.net import guest_session, host_session

    config = SessionConfig(peer_timeout=peer_timeout)
    extra = {"host": dict(host or {}), "guest": dict(guest or {})}
    for role in ("host", "guest"):  # the same deal as the in-memory run with this seed
        extra[role].setdefault("entropy", seeded(f"{seed}-{role}"))
    protocol = load_protocol(name)
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    host_task = asyncio.ensure_future(host_session(
        protocol, "tcp://127.0.0.1:0", state_dir=tmp_path / "h", config=config,
        on_listening=ready.set_result, receipt_timeout=1.0, seed=seed, **extra["host"]))
    endpoint = await asyncio.wait_for(ready, HANG_GUARD)
    guest_result = await asyncio.wait_for(guest_session(
        protocol, endpoint, state_dir=tmp_path / "g", config=config, receipt_timeout=1.0,
        seed=seed, **extra["guest"]), HANG_GUARD)
    host_result = await asyncio.wait_for(host_task, HANG_GUARD)
    return host_result, guest_result


def folder_of(result: Any) -> Path:
    return Path(result.state_dir)
