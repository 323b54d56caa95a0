"""What the posted-table tests share: an embedded registry, registered agents, the seats a
host posted (issue 23)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from net.relayhelpers import lingxi

SEAT = re.compile(r"seat (\d+): invitation (inv-[0-9a-f]+) posted")


def embedded(tmp_path: Path) -> dict:
    """The environment of an embedded registry in ``tmp_path`` (its database and key)."""
    return {"LINGXI_DATABASE_URL": f"sqlite:///{tmp_path / 'registry.db'}",
            "LINGXI_REGISTRY_KEY_FILE": str(tmp_path / "server.key")}


def register(root: Path, names, env: dict) -> dict[str, str]:
    """Register each name (its home under ``root``); their agent ids by name."""
    ids = {}
    for name in names:
        done = lingxi(root / name, "register", "--nickname", name, "--json", env=env)
        assert done.returncode == 0, done.stdout + done.stderr
        ids[name] = json.loads(done.stdout)["agent_id"]
    return ids


def posted_seats(host, count: int) -> dict[int, str]:
    """The invitation of each seat a host process posted, once it has posted ``count``."""
    text = host.wait_for(f"seat {count - 1}: invitation", 60)
    return {int(s): inv for s, inv in SEAT.findall(text)}
