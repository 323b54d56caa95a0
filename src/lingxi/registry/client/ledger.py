"""The client's own copy of what a registry told it: records, signed heads, the server key.

Kept under ``$LINGXI_HOME/registry/servers/<sha256(url)[:16]>/`` as
``records.jsonl`` (every record a write returned, with its seq),
``heads.jsonl`` (every signed head this client checked) and ``server.json``
(the server key first seen, pinned). ``lingxi registry verify`` checks all of
it against the server's current log, which is how a rewritten history shows.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lingxi.home import lingxi_home
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.log import check_log, record_hash


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
        """Remember one ``{"seq", "record"}`` a write answered with."""
        if isinstance(log.get("seq"), int) and isinstance(log.get("record"), dict):
            self._append("records.jsonl", {"seq": log["seq"], "record": log["record"],
                                           "sha256": record_hash(log["record"])})

    def records(self) -> dict[int, dict[str, Any]]:
        return {item["seq"]: item["record"] for item in self._read("records.jsonl")
                if isinstance(item.get("seq"), int) and isinstance(item.get("record"), dict)}

    def heads(self) -> list[dict[str, Any]]:
        return self._read("heads.jsonl")

    def keep_head(self, head: dict[str, Any]) -> None:
        self._append("heads.jsonl", head)

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


async def verify_registry(client: Any, ledger: Ledger) -> dict[str, Any]:
    """Check the ledger's records and heads against the registry's current signed log."""
    head = await client.head()
    entries = await client.log_entries()
    result = check_log(head, entries, records=ledger.records(), earlier_heads=ledger.heads(),
                       pinned_key=ledger.pinned() or head.get("server_public_key"))
    if result.ok:
        ledger.pin(head["server_public_key"])
        ledger.keep_head(head)
    return {**result.to_dict(), "server_public_key": head.get("server_public_key"),
            "ledger": str(ledger.folder)}
