"""The registry's relay routes, mounted beside the others in ``create_app``.

- ``GET /v1/relay`` (public): the relay's servers and the trust a nats-server
  needs (operator and account JWTs: all public), with a ready configuration.
- ``POST /v1/relay/credentials`` (signed by the host or the guest): a short-lived
  user JWT for one session's subjects (``lingxi.registry.models.relay``). It
  changes nothing, so it is not logged; a replayed request only mints another
  JWT for the same user key, which is useless without that key's seed.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from lingxi.registry.models.relay import server_config
from lingxi.registry.server.http import RouteSpec, read_signed
from lingxi.registry.storage.relay import (
    issue_credential,
    issue_probe,
    relay_keys,
    relay_servers,
)
from lingxi.registry.storage.store import Store


def relay_routes(store: Store) -> list[RouteSpec]:
    """``(path, handler, methods)`` of the relay routes."""

    async def authenticated(request: Request) -> tuple[str, dict[str, Any]]:
        """The caller's agent id once its signed request checks, and the body's object."""
        signed, data, _, _ = await read_signed(request, store)
        await run_in_threadpool(store.authenticate, signed)
        return signed.agent_id, data

    async def info(request: Request) -> Response:
        servers = relay_servers(store)
        trust = (await run_in_threadpool(relay_keys, store)).trust(int(store.clock()))
        return JSONResponse({"servers": servers, "trust": trust,
                             "config": server_config(trust)})

    async def credentials(request: Request) -> Response:
        agent, data = await authenticated(request)
        return JSONResponse(await run_in_threadpool(issue_credential, store, agent, data))

    async def probe(request: Request) -> Response:
        agent, data = await authenticated(request)
        return JSONResponse(await run_in_threadpool(issue_probe, store, agent, data))

    async def reach(request: Request) -> Response:
        """Connect back to the caller's own address and port: can guests reach it?"""
        _, data = await authenticated(request)
        address = request.client.host if request.client is not None else None
        return JSONResponse(await connect_back(address, data))

    return [("/v1/relay", info, ["GET"]),
            ("/v1/relay/credentials", credentials, ["POST"]),
            ("/v1/relay/probe", probe, ["POST"]),
            ("/v1/reach", reach, ["POST"])]


async def connect_back(address: str | None, body: dict[str, Any]) -> dict[str, Any]:
    """Try ``address:port`` (the caller's own address only: never a target it names), read
    what answers within 2 s and say whether it is the caller's ``nonce``."""
    import asyncio

    from lingxi.registry.errors import RegistryError

    port, nonce = body.get("port"), body.get("nonce")
    if type(port) is not int or not 1 <= port <= 65535 or not isinstance(nonce, str) \
            or not nonce.isalnum() or not 8 <= len(nonce) <= 32:
        raise RegistryError("registry.bad_request", "port 1-65535 and an 8-32 letter nonce",
                            status=422)
    if address is None or address in ("testclient",):
        raise RegistryError("registry.bad_request", "the caller's address is unknown",
                            status=422)
    where = f"tcp://[{address}]:{port}" if ":" in address else f"tcp://{address}:{port}"
    try:
        async with asyncio.timeout(2.0):
            reader, writer = await asyncio.open_connection(address, port)
            try:
                seen = await reader.read(64)
            finally:
                writer.close()
    except (OSError, TimeoutError) as error:
        return {"address": where, "reachable": False,
                "detail": str(error) or type(error).__name__}
    return {"address": where, "reachable": seen.strip() == nonce.encode(),
            "detail": "answered" if seen.strip() == nonce.encode() else
            "something else answers on that port"}
