"""The browser UI's server: a Starlette app run by uvicorn inside the session's event loop.

One page (the protocol's ``ui/index.html``, or a generic one), one shared client
script (``/lingxi-ui.js``) and four API routes on the :class:`LiveSession`:

- ``GET /api/state``: ``live.state()`` (who and what, the open decision, the outcome);
- ``GET /api/events``: Server-Sent Events, every past event then the live ones
  (``id:`` is a per-run sequence number; ``Last-Event-ID`` resumes), ``event: state``
  whenever the open decision or the outcome changes, ``event: end`` once finished;
- ``POST /api/decide`` ``{"value": …, "point_id": …}`` and ``POST /api/abort``
  ``{"reason": …}``; typed session errors come back as 409/422
  ``{"ok": false, "code": …, "message": …}``.

Guards: the server binds loopback only; every request's Host must name loopback (a
DNS-rebinding page cannot reach it); every API call carries the run's random token
(``?token=`` or ``X-Lingxi-Token``); a POST must be ``application/json`` (a form on
another site cannot send one without a CORS preflight, which is never granted) and, when
the browser says where it comes from, from this origin. Pages get a Content-Security-Policy
that keeps their requests on this origin and no referrer (the token is in the URL).

A page that came from a registry (a UI folder in the protocol cache, or one carrying
``.lingxi-bundle.json``) is never served as the session's page: ``/`` is then Lingxi's own
shell, which shows which bundle it is and who published it, keeps the token and the
controls, and runs the bundle in a sandboxed frame (``/bundle/…``, no
``allow-same-origin``, its own CSP with no network and no navigation off the page) that
only receives the session's state and events and may only *propose* a legal value,
which the person plays with the shell's own button. Served folders never follow a
symbolic link. ``launch_url()`` is a one-time address for opening a browser without
putting the token on its command line.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import mimetypes
import secrets
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from lingxi.errors import InputError, LingxiError
from lingxi.home import protocol_cache_root
from lingxi.session.net import LiveSession
from lingxi.ui import BUNDLE_META

STATIC = Path(__file__).resolve().parent / "static"
TOKEN_HEADER = "X-Lingxi-Token"
MAX_BODY = 64 * 1024  # bytes of a POST body
HISTORY = 20000  # events kept for a page that connects (or reconnects) late
POLL = 0.2  # seconds between checks of the open decision in an event stream
KEEP_ALIVE = 15.0  # seconds of silence before an SSE comment line
CLOSE_GRACE = 3.0  # seconds close() waits for open connections before cutting them
LINGER = 8.0  # seconds close() waits for pages of a finished session to receive its end
LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}
CONFLICT = {"session.finished", "session.no_pending_decision", "decision.stale"}
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' "
       "'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")
# The shell around a registry page: our scripts only, the bundle's frame from this server.
SHELL_CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
             "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
             "frame-ancestors 'none'")
# A registry page: sandboxed even if opened on its own (an opaque origin: no token, no
# storage of ours, no API), no network at all, no forms, no frames, framed by the shell only.
BUNDLE_CSP = ("sandbox allow-scripts; default-src 'none'; script-src 'self' 'unsafe-inline'; "
              "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
              "connect-src 'none'; frame-src 'none'; child-src 'none'; worker-src 'none'; "
              "object-src 'none'; media-src 'none'; manifest-src 'none'; base-uri 'none'; "
              "form-action 'none'; frame-ancestors 'self'")
LAUNCH_CSP = "default-src 'none'; script-src 'self'; base-uri 'none'; form-action 'none'"
COMMON_HEADERS = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
                  "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY"}
META_LIMIT = 65536  # bytes of that file read at most
LAUNCH_TTL = 120.0  # seconds a one-time launch address stays usable
PAGES = ("auto", "trusted", "isolated")


def _loopback_bind(host: str) -> str:
    """The address to bind: loopback only (``localhost`` means 127.0.0.1)."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise InputError("ui.not_loopback", f"the browser UI listens on loopback only, not on "
                         f"{host!r} (use 127.0.0.1 or ::1)")
    return str(address)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"ok": False, "code": code, "message": message}, status_code=status,
                        headers=COMMON_HEADERS)


def _refused(error: LingxiError) -> JSONResponse:
    """The session refused the request: 409 when it is in the wrong state, else 422."""
    return _error(409 if error.code in CONFLICT else 422, error.code, error.message)


def _json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


class _QuietServer(uvicorn.Server):
    """uvicorn without its signal handlers: Ctrl-C stays the session's (it aborts and tells
    the peer); the UI stops when the caller closes it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _quiet_uvicorn_logs() -> None:
    """uvicorn's own log lines (and an app traceback) never reach the person's terminal."""
    logger = logging.getLogger("uvicorn")
    if not any(isinstance(h, logging.NullHandler) for h in logger.handlers):
        logger.addHandler(logging.NullHandler())
    logger.propagate = False


class UiServer:
    """A running UI: ``url`` (with the token) until ``await close()``."""

    def __init__(self, live: LiveSession, ui_dir: Path | None, host: str, port: int,
                 token: str, page: str = "auto") -> None:
        self.live = live
        self.page_kind = page
        self.ui_dir: Path | None = None
        self.isolated = False
        self.bundle: dict[str, Any] | None = None
        self.use_ui_dir(ui_dir)
        self.host, self.port, self.token = host, port, token
        self._launches: dict[str, float] = {}  # one-time launch codes -> expiry
        self._closing = asyncio.Event()
        self._streams: set[asyncio.Queue[tuple[int, dict[str, Any]]]] = set()
        self._history: deque[tuple[int, dict[str, Any]]] = deque(maxlen=HISTORY)
        self._next_id = 1
        self._seen_pages = 0  # event streams ever opened
        self._unfinished: set[int] = set()  # open streams that have not sent `end` yet
        self._told_end = 0  # streams that sent `end`
        for record in list(live.events):
            self._record(record)
        live.listen(self._record)
        self._server: _QuietServer | None = None
        self._task: asyncio.Task[None] | None = None
        self.app = Starlette(routes=[
            Route("/api/state", self.state, methods=["GET"]),
            Route("/api/events", self.events, methods=["GET"]),
            Route("/api/decide", self.decide, methods=["POST"]),
            Route("/api/abort", self.abort, methods=["POST"]),
            Route("/api/input", self.input, methods=["POST"]),
            Route("/api/page", self.page_info, methods=["GET"]),
            Route("/lingxi-ui.js", self.shared_script, methods=["GET"]),
            Route("/lingxi-ui.css", self.shared_style, methods=["GET"]),
            Route("/lingxi-shell.js", self.shell_script, methods=["GET"]),
            Route("/lingxi-launch.js", self.launch_script, methods=["GET"]),
            Route("/launch/{code}", self.launch, methods=["GET"]),
            Route("/bundle/{path:path}", self.bundle_file, methods=["GET"]),
            Route("/", self.page, methods=["GET"]),
            Route("/{path:path}", self.asset, methods=["GET"]),
        ])
        self._guarded = self._guard(self.app)

    # ------------------------------------------------------------------ surface
    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.base_url}/?token={self.token}"

    def use_ui_dir(self, ui_dir: Path | None) -> None:
        """Serve another UI folder from now on: a guest learns its protocol from the host's
        offer, after the UI started. The generic page reloads itself into the protocol's.
        Whether the folder's page is the session's own or an isolated registry page is
        decided here, once per folder (see :func:`isolated_folder`)."""
        self.ui_dir = ui_dir.resolve() if ui_dir is not None else None
        if self.ui_dir is None:
            self.isolated, self.bundle = False, None
            return
        self.isolated = self.page_kind == "isolated" or (
            self.page_kind == "auto" and isolated_folder(self.ui_dir))
        self.bundle = bundle_facts(self.ui_dir) if self.isolated else None

    def launch_url(self) -> str:
        """A one-time address that opens the page without the token in it (for a browser's
        command line, which any local user can read): it works once, for a short while."""
        code = secrets.token_urlsafe(18)
        now = time.monotonic()
        self._launches = {c: t for c, t in self._launches.items() if t > now}
        self._launches[code] = now + LAUNCH_TTL
        return f"{self.base_url}/launch/{code}"

    async def close(self, *, linger: float = LINGER) -> None:
        """Stop serving: first, for at most ``linger`` seconds, let every page that is (or
        was) following a finished session receive its last events, the final state and
        ``end``; then event streams stop and open connections get a short grace."""
        if self.live.finished and self._seen_pages:
            loop = asyncio.get_running_loop()
            deadline = loop.time() + linger
            while loop.time() < deadline and not self._pages_told_end():
                await asyncio.sleep(POLL / 2)
        self._closing.set()
        server, task = self._server, self._task
        if server is None or task is None or task.done():
            return
        server.should_exit = True
        try:
            await asyncio.wait_for(asyncio.shield(task), CLOSE_GRACE)
        except TimeoutError:
            server.force_exit = True
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        except Exception:  # a failed server task must not stop the caller's shutdown
            pass

    async def __aenter__(self) -> UiServer:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _pages_told_end(self) -> bool:
        """Every open stream has sent ``end``, and some page got it (a page between two
        connections reconnects within the SSE retry time and gets it then)."""
        return not self._unfinished and self._told_end > 0

    # ------------------------------------------------------------ event history
    def _record(self, record: dict[str, Any]) -> None:
        """Every event of the session, numbered (a LiveSession listener, kept after close)."""
        if self._closing.is_set():
            return
        item = (self._next_id, record)
        self._next_id += 1
        self._history.append(item)
        for queue in self._streams:
            queue.put_nowait(item)

    # --------------------------------------------------------------- the guards
    def _guard(self, app: Any) -> Callable[..., Any]:
        async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            request = Request(scope)
            refusal = self._refusal(request)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            try:
                await app(scope, receive, send)
            except Exception as error:  # never a traceback; the page gets one line
                if isinstance(error, LingxiError):
                    response = _error(422, error.code, error.message)
                else:
                    response = _error(500, "ui.internal", type(error).__name__)
                with contextlib.suppress(Exception):
                    await response(scope, receive, send)
        return guarded

    def _host_ok(self, request: Request) -> bool:
        value = request.headers.get("host", "")
        if value.startswith("["):
            name, _, rest = value[1:].partition("]")
            port = rest[1:] if rest.startswith(":") else ""
        else:
            name, _, port = value.partition(":")
        return name.lower() in LOOPBACK_NAMES and port in ("", str(self.port))

    def _refusal(self, request: Request) -> Response | None:
        if not self._host_ok(request):
            return _error(403, "ui.bad_host", "this UI answers to 127.0.0.1 or localhost only")
        if not request.url.path.startswith("/api/"):
            return None
        given = request.headers.get(TOKEN_HEADER) or request.query_params.get("token") or ""
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return _error(403, "ui.bad_token", "missing or wrong token (open the URL the "
                          "session printed)")
        if request.method == "POST":
            kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if kind != "application/json":
                return _error(415, "ui.content_type", "POST bodies must be application/json")
            origin = request.headers.get("origin")
            if origin is not None and origin not in self._origins():
                return _error(403, "ui.bad_origin", "requests from other sites are refused")
        return None

    def _origins(self) -> set[str]:
        hosts = {"localhost", "127.0.0.1", "[::1]"}
        return {f"http://{host}:{self.port}" for host in hosts}

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        await self._guarded(scope, receive, send)

    # ---------------------------------------------------------------- the API
    async def state(self, request: Request) -> Response:
        return Response(_json(self.live.state()), media_type="application/json",
                        headers=COMMON_HEADERS)

    async def _body(self, request: Request) -> dict[str, Any]:
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise _BadRequest(413, "ui.too_large", f"the body is over {MAX_BODY} bytes")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise _BadRequest(400, "ui.bad_json", "the body is not JSON") from None
        if not isinstance(data, dict):
            raise _BadRequest(400, "ui.bad_json", "the body must be a JSON object")
        return data

    async def decide(self, request: Request) -> Response:
        try:
            body = await self._body(request)
            if "value" not in body:
                raise _BadRequest(422, "ui.missing_value", "give the decision as \"value\"")
            point_id = body.get("point_id")
            if point_id is not None and not isinstance(point_id, str):
                raise _BadRequest(422, "ui.bad_point_id", "point_id must be a string")
        except _BadRequest as bad:
            return _error(bad.status, bad.code, bad.message)
        try:
            answered = self.live.answer(body["value"], point_id)
        except LingxiError as error:
            return _refused(error)
        return JSONResponse({"ok": True, "point_id": answered}, headers=COMMON_HEADERS)

    async def abort(self, request: Request) -> Response:
        try:
            body = await self._body(request)
        except _BadRequest as bad:
            return _error(bad.status, bad.code, bad.message)
        reason = body.get("reason")
        if reason is None:
            reason = "aborted in the browser"
        if not isinstance(reason, str):
            return _error(422, "ui.bad_reason", "reason must be a string")
        try:
            self.live.abort(reason[:500] or "aborted in the browser")
        except LingxiError as error:
            return _refused(error)
        return JSONResponse({"ok": True}, headers=COMMON_HEADERS)

    async def input(self, request: Request) -> Response:
        """Free mode (chat): one line of local input, as if typed in the terminal."""
        try:
            body = await self._body(request)
        except _BadRequest as bad:
            return _error(bad.status, bad.code, bad.message)
        line = body.get("line")
        if not isinstance(line, str) or "\n" in line or "\r" in line:
            return _error(422, "ui.bad_line", "line must be one line of text")
        try:
            self.live.send_input(line)
        except LingxiError as error:
            return _refused(error)
        return JSONResponse({"ok": True}, headers=COMMON_HEADERS)

    async def events(self, request: Request) -> Response:
        raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
        try:
            after = max(0, int(raw))
        except ValueError:
            after = 0
        return StreamingResponse(self._stream(after), media_type="text/event-stream",
                                 headers={**COMMON_HEADERS, "X-Accel-Buffering": "no"})

    def _state_key(self) -> tuple[Any, ...]:
        pending = self.live.pending
        return (self.live.info.get("session_id"), pending.point_id if pending else None,
                self.live.finished)

    async def _stream(self, after: int) -> AsyncIterator[str]:
        """Past events, then live ones; a changed state is sent once the events before it
        are out, and the end (final state, then ``end``) only after the last event: a page
        never shows an outcome without the rounds that led to it."""
        queue: asyncio.Queue[tuple[int, dict[str, Any]]] = asyncio.Queue()
        # subscribe and copy in one step (no await between): nothing is lost or doubled
        self._streams.add(queue)
        ident = self._seen_pages
        self._seen_pages += 1
        self._unfinished.add(ident)
        backlog = [item for item in self._history if item[0] > after]
        shown: tuple[Any, ...] = self._state_key()
        first_state = _json(self.live.state())
        try:
            yield "retry: 2000\n\n"
            yield f"event: state\ndata: {first_state}\n\n"
            for number, record in backlog:
                yield _frame(number, record)
            quiet = 0.0
            while not self._closing.is_set():
                while not queue.empty():  # every event already there goes out first
                    number, record = queue.get_nowait()
                    if number > after:
                        yield _frame(number, record)
                key = self._state_key()
                if key != shown:
                    shown = key
                    yield f"event: state\ndata: {_json(self.live.state())}\n\n"
                if self.live.finished and queue.empty():
                    yield "event: end\ndata: {}\n\n"
                    self._told_end += 1
                    self._unfinished.discard(ident)
                    return
                try:
                    number, record = await asyncio.wait_for(queue.get(), POLL)
                except TimeoutError:
                    quiet += POLL
                    if quiet >= KEEP_ALIVE:
                        quiet = 0.0
                        yield ": keep-alive\n\n"
                    continue
                quiet = 0.0
                if number > after:
                    yield _frame(number, record)
        finally:
            self._streams.discard(queue)
            self._unfinished.discard(ident)

    # ------------------------------------------------------------- the pages
    async def page(self, request: Request) -> Response:
        index = contained(self.ui_dir, "index.html") if self.ui_dir is not None else None
        if index is None:
            index, kind = STATIC / "index.html", "generic"
        elif self.isolated:  # a registry's page: our shell, the bundle framed and sandboxed
            index, kind = STATIC / "shell.html", "isolated"
        else:
            kind = "protocol"
        response = _file(index, SHELL_CSP if kind == "isolated" else CSP)
        response.headers["X-Lingxi-Page"] = kind
        return response

    async def page_info(self, request: Request) -> Response:
        """What the shell shows about the page it frames (the bundle's facts are data)."""
        return JSONResponse({"isolated": self.isolated, "bundle": self.bundle},
                            headers=COMMON_HEADERS)

    async def shell_script(self, request: Request) -> Response:
        return _file(STATIC / "lingxi-shell.js")

    async def launch_script(self, request: Request) -> Response:
        return _file(STATIC / "lingxi-launch.js")

    async def launch(self, request: Request) -> Response:
        """A one-time launch address: hands the page its token in the body (kept in the tab's
        sessionStorage by /lingxi-launch.js), never in a URL; used or expired, refused."""
        code = request.path_params["code"]
        expiry = self._launches.pop(code, None)
        if expiry is None or expiry < time.monotonic():
            return _error(403, "ui.launch_used", "this launch address was used or has "
                          "expired: open the URL the session printed")
        body = ("<!doctype html><meta charset=utf-8><title>Lingxi</title>"
                f'<meta name="lingxi-token" content="{self.token}">'
                '<script src="/lingxi-launch.js"></script>')
        return Response(body, media_type="text/html; charset=utf-8",
                        headers={**COMMON_HEADERS, "Content-Security-Policy": LAUNCH_CSP})

    async def bundle_file(self, request: Request) -> Response:
        """A file of a registry page, sandboxed by its own CSP wherever it is opened."""
        relative = request.path_params["path"] or "index.html"
        if not self.isolated or self.ui_dir is None:
            return _error(404, "ui.not_found", "no such file")
        target = contained(self.ui_dir, relative)
        if target is None:
            return _error(404, "ui.not_found", "no such file")
        return _file(target, BUNDLE_CSP, framed=True)  # framed by the shell (frame-ancestors)

    async def shared_script(self, request: Request) -> Response:
        return _file(STATIC / "lingxi-ui.js")

    async def shared_style(self, request: Request) -> Response:
        return _file(STATIC / "lingxi-ui.css")

    async def asset(self, request: Request) -> Response:
        """Another file of the protocol's own UI folder (a stylesheet, an image), inside it
        only; a registry page's files are served under /bundle/ only, sandboxed."""
        target = contained(self.ui_dir, request.path_params["path"]) \
            if self.ui_dir is not None and not self.isolated else None
        if target is None:
            return _error(404, "ui.not_found", "no such file")
        return _file(target)


class _BadRequest(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _frame(number: int, record: dict[str, Any]) -> str:
    return f"id: {number}\ndata: {_json(record)}\n\n"


def _file(path: Path, policy: str = CSP, *, framed: bool = False) -> Response:
    kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    if kind.startswith("text/") or kind in ("application/javascript", "application/json"):
        kind += "; charset=utf-8"
    headers = dict(COMMON_HEADERS)
    if framed:
        del headers["X-Frame-Options"]
    if kind.startswith("text/html") or policy is BUNDLE_CSP:
        headers["Content-Security-Policy"] = policy
    return Response(path.read_bytes(), media_type=kind, headers=headers)


def contained(folder: Path, relative: str) -> Path | None:
    """``folder/relative`` when it is a regular file inside ``folder`` reached without any
    symbolic link and without dotfiles; else None (the caller answers 404)."""
    parts = relative.split("/")
    if any(part in ("", ".", "..") or part.startswith(".") for part in parts):
        return None
    current = folder
    for part in parts:
        current = current / part
        try:
            if current.is_symlink():
                return None
        except OSError:
            return None
    try:
        if not current.is_file() or not current.resolve().is_relative_to(folder):
            return None
    except OSError:
        return None
    return current


def isolated_folder(ui_dir: Path) -> bool:
    """A page from a registry: a UI folder inside the protocol cache (where fetched
    protocols live), or one that carries a bundle's facts file wherever it was put."""
    if (ui_dir / BUNDLE_META).exists():
        return True
    try:
        root = protocol_cache_root().resolve()
    except OSError:
        return False
    return ui_dir.is_relative_to(root)


def bundle_facts(ui_dir: Path) -> dict[str, Any]:
    """What ``.lingxi-bundle.json`` says (bundle id, registry, publisher, who allowed it),
    as data for the shell to show; ``{}`` when it is missing or unreadable."""
    path = ui_dir / BUNDLE_META
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > META_LIMIT:
            return {}
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


async def start_ui(live: LiveSession, ui_dir: Path | None, *, host: str = "127.0.0.1",
                   port: int = 0, page: str = "auto") -> UiServer:
    """Serve ``live`` in this event loop; return once the port accepts connections.

    ``page``: ``auto`` (a registry's page isolated, see :func:`isolated_folder`),
    ``isolated`` (always) or ``trusted`` (the folder's page is the session's own)."""
    if page not in PAGES:
        raise InputError("ui.bad_page", f"page must be one of {', '.join(PAGES)}")
    address = _loopback_bind(host)
    if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
        raise InputError("ui.bad_port", f"port must be 0..65535, not {port!r}")
    sock = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET,
                         socket.SOCK_STREAM)
    try:
        sock.bind((address, port))
    except OSError as error:
        sock.close()
        raise InputError("ui.port_unavailable", f"cannot listen on {address}:{port}: "
                         f"{error.strerror or error}") from None
    sock.setblocking(False)
    ui = UiServer(live, ui_dir, address, sock.getsockname()[1], secrets.token_urlsafe(24),
                  page)
    _quiet_uvicorn_logs()
    config = uvicorn.Config(ui, lifespan="off", log_config=None, log_level="error",
                            access_log=False, server_header=False, http="h11", ws="none",
                            timeout_graceful_shutdown=int(CLOSE_GRACE))
    server = _QuietServer(config)
    ui._server = server
    ui._task = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started:
        if ui._task.done():
            sock.close()
            failure = ui._task.exception() if not ui._task.cancelled() else None
            raise InputError("ui.start_failed", f"the UI server did not start: {failure}")
        await asyncio.sleep(0.01)
    return ui
