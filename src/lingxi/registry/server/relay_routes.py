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
from starlette.routing import Route

from lingxi.registry.models.records import MAX_BODY
from lingxi.registry.models.relay import server_config
from lingxi.registry.models.signing import parse_signed
from lingxi.registry.storage.relay import issue_credential, relay_keys, relay_servers


def relay_routes(store: Any, read_body: Any, parse: Any, signed_path: Any) -> list[Route]:
    """The routes, given the app's own body reader, JSON parser and signed-path helper."""

    async def info(request: Request) -> Response:
        servers = relay_servers(store)
        trust = (await run_in_threadpool(relay_keys, store)).trust(int(store.clock()))
        return JSONResponse({"servers": servers, "trust": trust,
                             "config": server_config(trust)})

    async def credentials(request: Request) -> Response:
        body = await read_body(request, MAX_BODY)
        signed = parse_signed(request.headers, request.method, signed_path(request), body,
                              now=store.clock(), window=store.window)
        store.authenticate(signed)
        data, _ = parse(body)
        answer = await run_in_threadpool(issue_credential, store, signed.agent_id, data)
        return JSONResponse(answer)

    return [Route("/v1/relay", info, methods=["GET"]),
            Route("/v1/relay/credentials", credentials, methods=["POST"])]
