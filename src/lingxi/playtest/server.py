"""A local static HTTP server for a game folder, on 127.0.0.1 and a free port.

Published builds are often made for a base path (Vite's ``base: '/game/'``, webpack's
``publicPath``): their page asks for ``/game/assets/index-….js``, which a server of the
folder at ``/`` answers 404, so the game never starts (issue 24.4). The folder can be
served under such a base; requests outside it get 404 as on the real host, and every
404 is counted (``missing``) so a run can say which files the game did not get.
"""

from __future__ import annotations

import functools
import re
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from lingxi.playtest.errors import PlayInputError

MAX_MISSING = 50  # paths of 404s kept (the count is complete)
_BASE = re.compile(r"^/(?:[A-Za-z0-9._~-]+/)*$")


def normalize_base(base: str) -> str:
    """``base`` as ``/`` or ``/a/b/`` (a leading and trailing slash); refused when it is not a
    plain URL path."""
    text = "/" + base.strip().strip("/") + "/" if base.strip().strip("/") else "/"
    if not _BASE.match(text) or "/../" in text or "/./" in text:
        raise PlayInputError("play.bad_base",
                             f"--base must be a URL path such as /game/, not {base[:80]!r}")
    return text


class _Missing:
    """The 404s a server answered: a count and the first paths (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self.paths: list[str] = []

    def add(self, path: str) -> None:
        with self._lock:
            self.count += 1
            if len(self.paths) < MAX_MISSING and path not in self.paths:
                self.paths.append(path[:200])


class _QuietHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript",
                      ".mjs": "text/javascript", ".wasm": "application/wasm"}

    def __init__(self, *args: Any, base: str, missing: _Missing, **kwargs: Any) -> None:
        self.base = base
        self.missing = missing
        super().__init__(*args, **kwargs)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def translate_path(self, path: str) -> str:
        # only paths under the base are the folder's; anything else maps nowhere (a 404)
        raw = urlsplit(path).path
        if not raw.startswith(self.base):
            return str(Path(self.directory) / ".lingxi-outside-base" / "none")
        return super().translate_path("/" + path[len(self.base):])

    def send_error(self, code: int, message: str | None = None,
                   explain: str | None = None) -> None:
        if code == 404:
            self.missing.add(unquote(urlsplit(self.path).path))
        super().send_error(code, message, explain)


class StaticServer:
    """Serve ``root`` under ``base`` until closed; ``page`` (default index.html) is the game's
    page in it."""

    def __init__(self, root: Path, page: str = "index.html", base: str = "/") -> None:
        root = Path(root).resolve()
        if not (root / page).is_file():
            code = "play.no_index" if page == "index.html" else "play.no_game"
            raise PlayInputError(code, f"{root} has no {page}")
        self.root = root
        self.page = page
        self.base = normalize_base(base)
        self.missing = _Missing()
        handler = functools.partial(_QuietHandler, directory=str(root), base=self.base,
                                    missing=self.missing)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True,
                                        name="lingxi-static")
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}{self.base}{self.page}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StaticServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
