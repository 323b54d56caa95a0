"""The registry's relay calls, beside the client's others (``RegistryClient._call``)."""

from __future__ import annotations

from typing import Any


async def relay_info(client: Any) -> dict[str, Any]:
    """``GET /v1/relay``: the relay's servers and the trust a nats-server needs."""
    return await client._call("GET", "/v1/relay")


async def relay_credential(client: Any, session_id: str, user_key: str) -> dict[str, Any]:
    """``POST /v1/relay/credentials`` (signed): this side's user JWT for one session."""
    return await client._call("POST", "/v1/relay/credentials",
                              body={"session_id": session_id, "user_key": user_key},
                              signed=True)
