"""The transparency log: the signed head, entries, records and the two kinds of proof."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from lingxi.registry.errors import RegistryError
from lingxi.registry.server.http import JSONAnswer, RouteSpec, query_int
from lingxi.registry.storage.store import Store


def log_routes(store: Store) -> list[RouteSpec]:
    async def log_head(request: Request) -> Response:
        return JSONAnswer(await run_in_threadpool(store.head))

    async def log_checkpoint(request: Request) -> Response:
        head = await run_in_threadpool(store.head)
        return Response(head["checkpoint"], media_type="text/plain; charset=utf-8")

    async def log_entries(request: Request) -> Response:
        records = request.query_params.get("records") in ("1", "true")
        after = query_int(request, "after", 0) or 0
        limit = query_int(request, "limit", 1000) or 1000
        return JSONAnswer(await run_in_threadpool(
            lambda: store.log_entries(after, limit, records=records)))

    async def inclusion(request: Request) -> Response:
        seq, size = query_int(request, "seq"), query_int(request, "size")
        if seq is None or size is None:
            raise RegistryError("registry.bad_request", "seq and size are required")
        return JSONAnswer(await run_in_threadpool(store.inclusion_proof, seq, size))

    async def consistency(request: Request) -> Response:
        old, new = query_int(request, "from"), query_int(request, "to")
        if old is None or new is None:
            raise RegistryError("registry.bad_request", "from and to are required")
        return JSONAnswer(await run_in_threadpool(store.consistency_proof, old, new))

    async def log_record(request: Request) -> Response:
        seq = request.path_params["seq"]
        if not seq.isdigit() or len(seq) > 12:
            raise RegistryError("registry.log_entry_not_found", "no such log entry", status=404)
        return JSONAnswer(store.log_record(int(seq)))

    return [
        ("/v1/log/head", log_head, ["GET"]),
        ("/v1/log/checkpoint", log_checkpoint, ["GET"]),
        ("/v1/log/proof/inclusion", inclusion, ["GET"]),
        ("/v1/log/proof/consistency", consistency, ["GET"]),
        ("/v1/log", log_entries, ["GET"]),
        ("/v1/log/{seq}", log_record, ["GET"]),
    ]
