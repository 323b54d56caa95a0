"""The registry's relay keys, kept in a 0600 file beside its signing key.

Every registry process on one database signs relay credentials with the same
account key (given the same key files), so a guest's credential from one
process and the host's from another admit both to one session. The first
process to need them creates them, under the log-head lock every write takes;
seeds an older version kept in the ``meta`` table are moved out to the file.
"""

from __future__ import annotations

import json
import os
from typing import Any

from sqlalchemy import delete, select

from lingxi.registry.models.relay import RelayKeys
from lingxi.registry.storage import schema as t
from lingxi.registry.storage.secrets import load_relay_seeds, relay_path

META_KEY = "relay_keys"


def relay_keys(store: Any) -> RelayKeys:
    """The store's relay keys, created on first use."""
    cached = getattr(store, "relay_key_cache", None)
    if cached is not None:
        return cached
    with store.uow.transaction() as (conn, _):
        row = conn.execute(select(t.meta.c.value).where(t.meta.c.key == META_KEY)).first()
        legacy = json.loads(row[0]) if row is not None else None
        seeds = load_relay_seeds(relay_path(store.key_file), legacy,
                                 lambda: RelayKeys.generate().to_seeds())
        keys = RelayKeys.from_seeds(seeds)
        if row is not None:  # an older version kept them in the database: moved out
            conn.execute(delete(t.meta).where(t.meta.c.key == META_KEY))
    store.relay_key_cache = keys
    return keys


def relay_servers(store: Any) -> list[str]:
    """The NATS URLs this registry's relay listens on: ``lingxi server --relay``, else
    ``$LINGXI_RELAY`` (comma-separated; how an embedded registry learns of one)."""
    configured = getattr(store, "relay_servers", None)
    if configured:
        return list(configured)
    return [url.strip() for url in os.environ.get("LINGXI_RELAY", "").split(",") if url.strip()]


def issue_credential(store: Any, agent_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """A relay credential for the host or the guest of a current session.

    Refused: no relay configured (``registry.no_relay``), a malformed body
    (``registry.bad_request``), an unknown session, a signer who is neither of
    its parties (``registry.not_party``), a session that is over or whose
    claim lapsed (``registry.session_closed``).
    """
    from lingxi.registry.errors import RegistryError
    from lingxi.registry.models.records import RECORD_ID

    servers = relay_servers(store)
    if not servers:
        raise RegistryError("registry.no_relay", "this registry has no relay "
                            "(lingxi server --relay nats://HOST:PORT)", status=404)
    session_id, user_key = body.get("session_id"), body.get("user_key")
    if not isinstance(session_id, str) or not RECORD_ID.match(session_id) \
            or "." in session_id:
        raise RegistryError("registry.bad_request", "session_id must be a session record id",
                            status=422)
    with store.reader.connect() as conn:
        row = conn.execute(select(t.sessions).where(t.sessions.c.session_id == session_id)
                           ).mappings().first()
    if row is None:
        raise RegistryError("registry.session_not_found", f"no session {session_id}",
                            status=404)
    if agent_id == row["host_agent_id"]:
        role = "host"
    elif agent_id == row["guest_agent_id"]:
        role = "guest"
    else:
        raise RegistryError("registry.not_party", "only the host or the guest of this session "
                            "gets its relay credential", status=403)
    now = store.clock()
    lapsed = row["status"] == "claimed" and (row["claim_deadline"] or 0) <= now
    if row["status"] not in ("claimed", "confirmed", "receipted") or lapsed:
        state = "a lapsed claim" if lapsed else row["status"]
        raise RegistryError("registry.session_closed", f"this session is {state}",
                            status=409)
    keys = relay_keys(store)
    try:
        credential = keys.credential(user_key=str(user_key), role=role,
                                     session_id=session_id, now=int(now),
                                     ttl=int(getattr(store, "relay_ttl", 0) or 900))
    except ValueError as error:
        raise RegistryError("registry.bad_request", f"user_key: {error}", status=422) from None
    return {**credential, "servers": servers}


def issue_probe(store: Any, agent_id: str, body: dict[str, Any]) -> dict[str, Any]:
    """A one-minute credential for ``lingxi doctor`` to check that the relay admits it."""
    from lingxi.registry.errors import RegistryError
    from lingxi.registry.models.relay import probe_credential

    servers = relay_servers(store)
    if not servers:
        raise RegistryError("registry.no_relay", "this registry has no relay "
                            "(lingxi server --relay nats://HOST:PORT)", status=404)
    nonce = body.get("nonce")
    if not isinstance(nonce, str) or not nonce.isalnum() or not 8 <= len(nonce) <= 32:
        raise RegistryError("registry.bad_request", "nonce is 8-32 letters or digits",
                            status=422)
    try:
        answer = probe_credential(relay_keys(store), user_key=str(body.get("user_key")),
                                  agent_id=agent_id, nonce=nonce, now=int(store.clock()))
    except ValueError as error:
        raise RegistryError("registry.bad_request", f"user_key: {error}", status=422) from None
    return {**answer, "servers": servers}
