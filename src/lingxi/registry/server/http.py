"""What every registry route shares: bounded bodies, signed requests, typed query values,
JSON answers and coded errors, and the cache of list reads.

Bodies are read with a hard cap before anything parses them; a signed request's
signature is checked against the raw path and body before any handler sees its data.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import Awaitable, Callable, Hashable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send

from lingxi.errors import LingxiError
from lingxi.registry.errors import RegistryError
from lingxi.registry.models.jsonbody import parse_object
from lingxi.registry.models.records import MAX_BODY, RECORD_ID
from lingxi.registry.models.signing import SignedRequest, parse_signed
from lingxi.registry.storage.store import Store

Handler = Callable[[Request], Awaitable[Response]]
RouteSpec = tuple[str, Handler, list[str]]  # (path, handler, methods)


class JSONAnswer(JSONResponse):
    """Compact UTF-8 JSON (no ASCII escapes, no spaces)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def error_answer(error: LingxiError, status: int) -> JSONAnswer:
    """``{"error": {...}}`` with ``status``; a 429 says how long to wait (``Retry-After``)."""
    wait = error.details.get("retry_after_seconds")
    headers = {"retry-after": str(wait)} if status == 429 and isinstance(wait, int) else None
    return JSONAnswer({"error": error.to_dict()}, status_code=status, headers=headers)


async def read_body(request: Request, cap: int = MAX_BODY) -> bytes:
    """The body, refused with 413 once it passes ``cap`` bytes (declared or streamed)."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > cap):
        raise RegistryError("registry.body_too_large", f"the body is over {cap} bytes", status=413)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise RegistryError(
                "registry.body_too_large", f"the body is over {cap} bytes", status=413
            )
        chunks.append(chunk)
    return b"".join(chunks)


def signed_path(request: Request) -> str:
    """The path and query exactly as sent: what the client signed."""
    path = request.scope.get("raw_path") or request.url.path.encode()
    query = request.scope.get("query_string") or b""
    text = path.decode("latin-1")
    return text + ("?" + query.decode("latin-1") if query else "")


async def read_signed(request: Request, store: Store, cap: int = MAX_BODY
                      ) -> tuple[SignedRequest, dict[str, Any], str, bytes]:
    """A signed request's signature over its path and bounded body, then its JSON object:
    ``(signed, data, text, body)``."""
    body = await read_body(request, cap)
    data, text = parse_object(body)  # bounded before anything else looks at the body
    signed = parse_signed(request.headers, request.method, signed_path(request), body,
                          now=store.clock(), window=store.window)
    return signed, data, text, body


class WriteQueue:
    """The process's writer thread: logged writes run there, not in the shared pool.

    Each write is a whole action (authenticate, check, decide, log) queued by a handler
    that awaits its future. The thread takes everything queued and runs it as one
    group commit (``GroupCommit.run_many``: one transaction, a savepoint per write, one
    commit), then settles the batch's futures with one wake-up of each event loop. So a
    write costs no thread-pool hand-off, no contended commit lock and no wake-up of its
    own, and is answered only after the commit that holds it returned. The thread is
    started on demand and ends after ``idle`` seconds without work.
    """

    def __init__(self, store: Store, limit: int = 64, idle: float = 0.5) -> None:
        self.store, self.limit, self.idle = store, limit, idle
        self._jobs: list[tuple[Callable[[], dict[str, Any]], asyncio.AbstractEventLoop,
                               asyncio.Future[dict[str, Any]]]] = []
        self._ready = threading.Condition()
        self._running = False

    async def run(self, action: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        with self._ready:
            self._jobs.append((action, loop, future))
            if not self._running:
                self._running = True
                threading.Thread(target=self._work, name="lingxi-registry-writer",
                                 daemon=True).start()
            else:
                self._ready.notify()
        return await future

    def _work(self) -> None:
        while True:
            with self._ready:
                if not self._jobs:
                    self._ready.wait(self.idle)
                if not self._jobs:
                    self._running = False
                    return
                batch, self._jobs = self._jobs[:self.limit], self._jobs[self.limit:]
            try:
                outcomes = self.store.uow.commits.run_many([job[0] for job in batch])
            except BaseException as error:  # noqa: BLE001 - never strand the waiting writers
                outcomes = [(None, error)] * len(batch)
            by_loop: dict[asyncio.AbstractEventLoop, list[Any]] = {}
            for (_, loop, future), outcome in zip(batch, outcomes, strict=True):
                by_loop.setdefault(loop, []).append((future, outcome))
            for loop, settled in by_loop.items():
                try:
                    loop.call_soon_threadsafe(_settle, settled)
                except RuntimeError:  # that loop is closed: nobody waits for these
                    pass


def _settle(settled: list[Any]) -> None:
    for future, (result, error) in settled:
        if future.done():  # its request was cancelled (the client left)
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


_QUEUES: weakref.WeakKeyDictionary[Store, WriteQueue] = weakref.WeakKeyDictionary()


def write_queue(store: Store) -> WriteQueue:
    """``store``'s writer thread (one per store in this process)."""
    queue = _QUEUES.get(store)
    if queue is None:
        queue = _QUEUES[store] = WriteQueue(store)
    return queue


async def signed_write(store: Store, request: Request, action: Callable[..., dict[str, Any]],
                       *args: Any, cap: int = MAX_BODY) -> Response:
    """A logged write: signature checked, run once per idempotency key on the writer
    thread (the event loop keeps serving reads), 201 when it created something."""
    signed, data, text, _ = await read_signed(request, store, cap)
    key = request.headers.get("idempotency-key")
    act = store.idempotent(key, action)
    # the whole action (key, signature, rate, checks, write) runs on the writer thread:
    # checking on the event loop instead had two threads contend for the GIL, which cost
    # more CPU per post than it overlapped (docs/benchmarks.md)
    result = await write_queue(store).run(lambda: act(signed, *args, data, text))
    return JSONAnswer(result, status_code=201 if result.get("created") else 200)


def query_int(request: Request, name: str, default: int | None = None) -> int | None:
    value = request.query_params.get(name)
    if value is None or value == "":
        return default
    if not value.isdigit() or len(value) > 12:
        raise RegistryError("registry.bad_request", f"{name} must be a non-negative integer")
    return int(value)


def path_id(request: Request, name: str) -> str:
    """A record id from the path; anything else is the 404 of that kind of record."""
    value = request.path_params[name]
    if not RECORD_ID.match(value):
        raise RegistryError(
            f"registry.{name.removesuffix('_id')}_not_found",
            f"no {name.removesuffix('_id')} {value[:80]!r}",
            status=404,
        )
    return value


def hex_id(request: Request, name: str, what: str) -> str:
    value = request.path_params[name]
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise RegistryError(f"registry.{what}_not_found", f"no {what} {value[:80]!r}", status=404)
    return value


def protocol_id(request: Request) -> str:
    return hex_id(request, "protocol_id", "protocol")


class PageCache:
    """Encoded answers of list reads, reused while no write happened anywhere.

    An entry holds the store's change token taken before it was computed and is
    reused only while the token is unchanged (``storage.changes``: on SQLite the
    log size, one indexed one-row read; on PostgreSQL a count this process moves
    on its own commits and on every other process's ``NOTIFY``, with no query)
    and for at most ``ttl`` seconds, which bounds how late a purely time-driven
    change (an invitation expiring, a claim lapsing) shows in a list. A write
    shows at once through the process that made it and, on SQLite, through
    every process; on PostgreSQL another process shows it once the
    notification arrives (at its commit), and never later than ``ttl``.
    """

    def __init__(self, store: Store, ttl: float = 1.0, size: int = 512) -> None:
        self.store, self.ttl, self.size = store, ttl, size
        self._entries: dict[str, tuple[Hashable, float, bytes]] = {}

    def _lookup(self, request: Request) -> tuple[str, Hashable, float, bytes | None]:
        # the path and query as sent (``request.url`` would parse and rebuild them)
        key = request.scope["path"] + "?" + request.scope["query_string"].decode("latin-1")
        version = self.store.change_token()  # before computing: a later write moves it
        now = self.store.clock()
        hit = self._entries.get(key)
        fresh = hit is not None and hit[0] == version and hit[1] > now
        return key, version, now, hit[2] if hit is not None and fresh else None

    def _keep(self, key: str, version: Hashable, now: float, body: bytes) -> bytes:
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key] = (version, now + self.ttl, body)
        return body

    async def get_encoded(self, request: Request,
                          compute: Callable[[], Awaitable[bytes]]) -> Response:
        """:meth:`get` for an answer computed on the event loop (its query awaited) and
        already encoded as :class:`JSONAnswer` would."""
        key, version, now, hit = self._lookup(request)
        if hit is None:
            hit = self._keep(key, version, now, await compute())
        return Response(hit, media_type="application/json")

    def get(self, request: Request, compute: Callable[[], dict[str, Any]]) -> Response:
        key, version, now, hit = self._lookup(request)
        if hit is not None:
            return Response(hit, media_type="application/json")

        def answer() -> bytes:
            return self._keep(key, version, now, bytes(JSONAnswer(compute()).body))

        if self.store.postgres:  # the query waits on the network: not on the event loop
            return _ComputedWhenSent(answer)
        return Response(answer(), media_type="application/json")


class _ComputedWhenSent(Response):
    """A JSON answer computed in the thread pool as it is sent, so the event loop serves
    other requests while its query waits on the database. A refusal raised there reaches
    the app's error handlers as any handler's does (nothing is sent before it)."""

    def __init__(self, compute: Callable[[], bytes]) -> None:
        super().__init__(b"", media_type="application/json")
        self.compute = compute

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await run_in_threadpool(self.compute)
        await Response(body, media_type="application/json")(scope, receive, send)
