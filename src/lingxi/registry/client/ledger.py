"""The client's own copy of what a registry told it: records, checkpoints, the server key.

Kept under ``$LINGXI_HOME/registry/servers/<sha256(url)[:16]>/`` as
``records.jsonl`` (every record a write returned, with its entry),
``heads.jsonl`` (every signed head this client checked, checkpoint included)
and ``server.json`` (the server key and log origin first seen, pinned).

``lingxi registry verify`` checks the registry's current checkpoint against
the last one kept with one consistency proof, and each kept record against
the server's copy with one inclusion proof: O(log n) per item, whatever the
log's size. ``--full`` downloads everything, re-hashes every record, rebuilds
the tree and re-verifies every signed request inside (:mod:`.audit`). A
checkpoint the last kept one is not a prefix of is a fork: both signed
checkpoints are returned as evidence.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from lingxi.errors import LingxiError
from lingxi.home import lingxi_home
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.audit import audit_records
from lingxi.registry.models.checkpoint import open_checkpoint
from lingxi.registry.models.keys import is_hex
from lingxi.registry.models.log import check_log, entry_leaf, head_problem, record_hash
from lingxi.registry.models.merkle import verify_consistency, verify_inclusion
from lingxi.registry.models.witness import require_cosignatures


def ledger_dir(base_url: str) -> Path:
    digest = hashlib.sha256(base_url.rstrip("/").encode()).hexdigest()[:16]
    return lingxi_home() / "registry" / "servers" / digest


class Ledger:
    """Append-only local files; safe to read while another process appends."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _append(self, name: str, item: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        with open(self.folder / name, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(item, ensure_ascii=False, sort_keys=True) + "\n")

    def _read(self, name: str) -> list[dict[str, Any]]:
        path = self.folder / name
        if not path.exists():
            return []
        out = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue  # a line cut short by a crash
            if isinstance(item, dict):
                out.append(item)
        return out

    def keep(self, log: dict[str, Any]) -> None:
        """Remember one ``{"seq", "entry", "record"}`` a write answered with."""
        if isinstance(log.get("seq"), int) and isinstance(log.get("record"), dict):
            self._append("records.jsonl", {"seq": log["seq"], "record": log["record"],
                                           "entry": log.get("entry"),
                                           "sha256": record_hash(log["record"])})

    def kept(self) -> dict[int, dict[str, Any]]:
        """seq -> ``{"record", "entry"}`` as the writes answered them."""
        return {item["seq"]: item for item in self._read("records.jsonl")
                if isinstance(item.get("seq"), int) and isinstance(item.get("record"), dict)}

    def records(self) -> dict[int, dict[str, Any]]:
        return {seq: item["record"] for seq, item in self.kept().items()}

    def latest_head(self) -> dict[str, Any] | None:
        heads = [h for h in self.heads() if isinstance(h.get("size"), int)]
        return max(heads, key=lambda h: h["size"]) if heads else None

    def heads(self) -> list[dict[str, Any]]:
        return self._read("heads.jsonl")

    def keep_head(self, head: dict[str, Any]) -> None:
        self._append("heads.jsonl", head)

    def keep_fork(self, fork: dict[str, Any]) -> None:
        """Evidence of a split view met elsewhere (a peer's checkpoint): kept for good."""
        self._append("forks.jsonl", fork)

    def forks(self) -> list[dict[str, Any]]:
        return [f for f in self._read("forks.jsonl") if isinstance(f.get("evidence"), list)]

    def pinned(self) -> str | None:
        try:
            return json.loads((self.folder / "server.json").read_text())["server_public_key"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def pin(self, key: str) -> None:
        known = self.pinned()
        if known is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            (self.folder / "server.json").write_text(json.dumps({"server_public_key": key}))
        elif known != key:
            raise RegistryError("registry.server_key_changed",
                                "the registry's key differs from the one first seen",
                                status=502, exit_code=1)


@dataclass(frozen=True)
class WitnessRef:
    """A witness a client trusts: its name, Ed25519 public key and URL."""

    name: str
    public_key: str
    url: str

    @classmethod
    def parse(cls, text: str) -> WitnessRef:
        """``NAME=PUBHEX@URL`` (how ``--witness`` and ``$LINGXI_WITNESSES`` spell one)."""
        name, _, rest = text.partition("=")
        key, _, url = rest.partition("@")
        if not name or not is_hex(key, 64) or not url.startswith(("http://", "https://")):
            raise RegistryError("registry.bad_witness",
                                "a witness is NAME=PUBLIC_KEY_HEX@http(s)://HOST:PORT")
        return cls(name, key, url.rstrip("/"))


async def fetch_witness_note(ref: WitnessRef) -> str:
    async with httpx.AsyncClient(timeout=10) as http:
        response = await http.get(ref.url + "/v1/witness/checkpoint")
    if response.status_code != 200:
        raise RegistryError("registry.not_witnessed",
                            f"witness {ref.name} answered {response.status_code}", status=502)
    return response.text


async def verify_registry(client: Any, ledger: Ledger, *, full: bool = False,
                          now: float | None = None, witnesses: tuple[WitnessRef, ...] = (),
                          required: int = 0,
                          fetch: Callable[[WitnessRef], Awaitable[str]] = fetch_witness_note
                          ) -> dict[str, Any]:
    """Check the registry's current checkpoint and the ledger's records against it; with
    ``required`` > 0, that many of ``witnesses`` must have cosigned a checkpoint this view
    extends (or is extended by)."""
    head = await client.head()
    pinned = ledger.pinned()
    problems: list[str] = []
    evidence: list[str] = []
    problem = head_problem(head, pinned_key=pinned or head.get("server_public_key"),
                           now=time.time() if now is None else now)
    if problem:
        problems.append(problem)
    out: dict[str, Any] = {"mode": "full" if full else "proofs", "size": head.get("size"),
                           "root": head.get("root"), "records_checked": 0,
                           "proofs_checked": 0, "requests_checked": 0}
    if not problems:
        last = ledger.latest_head()
        if last is not None:
            await _check_prefix(client, last, head, problems, evidence)
            out["proofs_checked"] += 1
        for seq, item in sorted(ledger.kept().items()):
            out["records_checked"] += 1
            out["proofs_checked"] += await _check_record(client, seq, item, head, problems)
    for fork in ledger.forks():
        problems.append(f"the log forked: evidence kept from {fork.get('source') or 'a peer'}"
                        " (both checkpoints below)")
        evidence += [str(note) for note in fork["evidence"]]
    if required and not problems:
        out["witnessed_by"] = await _check_witnesses(
            client, head, witnesses, required, fetch, problems, evidence,
            time.time() if now is None else now)
    if full and not problems:
        entries = await client.log_entries(records=True)
        audit = check_log(head, entries, records=ledger.records(),
                          earlier_heads=ledger.heads(), pinned_key=pinned)
        more, requests = audit_records(entries)
        problems += audit.problems + more
        out["requests_checked"] = requests
        out["entries_checked"] = len(entries)
    if not problems:
        ledger.pin(head["server_public_key"])
        ledger.keep_head(head)
    return {**out, "ok": not problems, "problems": problems, "evidence": evidence,
            "server_public_key": head.get("server_public_key"), "ledger": str(ledger.folder)}


async def _check_witnesses(client: Any, head: dict[str, Any], witnesses: tuple[WitnessRef, ...],
                           required: int, fetch: Callable[[WitnessRef], Awaitable[str]],
                           problems: list[str], evidence: list[str], now: float) -> list[str]:
    vouched: list[str] = []
    missing: list[str] = []
    for ref in witnesses:
        try:
            note = await fetch(ref)
            require_cosignatures(note, {ref.name: ref.public_key}, 1, now=now)
            point = open_checkpoint(note, head["server_public_key"], origin=head["origin"])
        except (LingxiError, httpx.HTTPError) as error:
            missing.append(f"witness {ref.name}: {error}")
            continue
        if await _one_log(client, point.size, point.root, head):
            vouched.append(ref.name)
        else:
            problems.append(f"the log forked: witness {ref.name} cosigned a checkpoint of size "
                            f"{point.size} that this view (size {head['size']}) does not "
                            "extend (both below)")
            evidence += [note, str(head["checkpoint"])]
    if len(vouched) < required and not problems:
        problems.append(f"{len(vouched)} witness(es) vouch for this view; {required} required"
                        + "".join(f"; {m}" for m in missing))
    return vouched


async def _one_log(client: Any, size: int, root: bytes, head: dict[str, Any]) -> bool:
    """Whether a checkpoint of ``size``/``root`` and ``head`` are views of one log: the
    smaller is a prefix of the larger, by the registry's consistency proof."""
    old, new, old_root, new_root = size, head["size"], root, bytes.fromhex(head["root"])
    if old > new:
        old, new, old_root, new_root = new, old, new_root, old_root
    try:
        proof = [bytes.fromhex(h) for h in (await client.consistency(old, new))["proof"]]
    except RegistryError:
        proof = []
    return verify_consistency(old, new, old_root, new_root, proof)


async def _checked_head(client: Any, ledger: Ledger) -> tuple[dict[str, Any], str, str | None]:
    """The registry's current head, the key it must be signed with (pinned, else its own),
    and what is wrong with it (None: signed by that key and fresh)."""
    head = await client.head()
    key = ledger.pinned() or head.get("server_public_key")
    return head, str(key), head_problem(head, pinned_key=key, now=time.time())


async def checkpoint_to_share(client: Any, ledger: Ledger) -> str | None:
    """The registry's current signed checkpoint, to carry in a session's opening (None when
    the head does not check against the pinned key: then this side claims no view)."""
    head, _, problem = await _checked_head(client, ledger)
    if problem:
        return None
    note = head.get("checkpoint")
    return note if isinstance(note, str) else None


async def compare_peer_checkpoint(client: Any, ledger: Ledger, note: str,
                                  *, session: str = "") -> dict[str, Any]:
    """The checkpoint a peer signed into its session opening, against this client's view
    of the same registry now: two agents that meet notice a split view (issue 18.3).

    ``checked`` is False when the note proves nothing here (another log, or not signed
    by this log's pinned key). A note this view does not extend is a fork: both signed
    checkpoints are the evidence, and the ledger keeps them, so ``lingxi registry
    verify`` keeps failing until someone looks."""
    head, key, problem = await _checked_head(client, ledger)
    if problem:
        return {"ok": False, "checked": False, "problems": [problem], "evidence": []}
    try:
        point = open_checkpoint(note, key, origin=head["origin"])
    except LingxiError as error:
        return {"ok": True, "checked": False, "reason": error.message, "problems": [],
                "evidence": []}
    if await _one_log(client, point.size, point.root, head):
        return {"ok": True, "checked": True, "size": point.size, "problems": [], "evidence": []}
    evidence = [note, str(head["checkpoint"])]
    ledger.keep_fork({"source": f"peer in session {session}".strip(), "evidence": evidence})
    return {"ok": False, "checked": True, "size": point.size, "evidence": evidence,
            "problems": [f"the log forked: the peer was shown a checkpoint of size "
                         f"{point.size} that this view (size {head['size']}) does not extend "
                         "(both below)"]}


async def _check_prefix(client: Any, last: dict[str, Any], head: dict[str, Any],
                        problems: list[str], evidence: list[str]) -> None:
    old, new = last["size"], head["size"]
    if old > new:
        problems.append(f"the log shrank: this client checked a size of {old}, the registry "
                        f"now signs {new}")
    else:
        proof = (await client.consistency(old, new))["proof"]
        if verify_consistency(old, new, bytes.fromhex(last["root"]), bytes.fromhex(head["root"]),
                              [bytes.fromhex(h) for h in proof]):
            return
        problems.append(f"the log forked: the checkpoint of size {old} this client kept is "
                        f"not a prefix of the one of size {new} (both below)")
    evidence += [str(last.get("checkpoint")), str(head.get("checkpoint"))]


async def _check_record(client: Any, seq: int, item: dict[str, Any], head: dict[str, Any],
                        problems: list[str]) -> int:
    record, entry = item["record"], item.get("entry")
    served = await client.log_record(seq)
    if served != record:
        problems.append(f"record {seq} differs from the copy this client kept")
        return 0
    if not isinstance(entry, dict) or entry.get("record_sha256") != record_hash(record):
        problems.append(f"record {seq}: the entry this client kept does not match its record")
        return 0
    if seq > head["size"]:
        problems.append(f"record {seq} is missing from the log (size {head['size']})")
        return 0
    proof = await client.inclusion(seq, head["size"])
    if not verify_inclusion(seq - 1, head["size"], entry_leaf(entry),
                            [bytes.fromhex(h) for h in proof["path"]],
                            bytes.fromhex(head["root"])):
        problems.append(f"record {seq} is not in the signed tree (its inclusion proof fails)")
    return 1
