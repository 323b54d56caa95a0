"""A local static HTTP server for a game folder, on 127.0.0.1 and a free port."""

from __future__ import annotations

import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lingxi.playtest.errors import PlayInputError


class _QuietHandler(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript",
                      ".mjs": "text/javascript", ".wasm": "application/wasm"}

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class StaticServer:
    """Serve ``root`` until closed; ``page`` (default index.html) is the game's page in it."""

    def __init__(self, root: Path, page: str = "index.html") -> None:
        root = Path(root).resolve()
        if not (root / page).is_file():
            code = "play.no_index" if page == "index.html" else "play.no_game"
            raise PlayInputError(code, f"{root} has no {page}")
        self.root = root
        self.page = page
        handler = functools.partial(_QuietHandler, directory=str(root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True,
                                        name="lingxi-static")
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}/{self.page}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> StaticServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
