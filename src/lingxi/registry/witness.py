"""``lingxi registry witness``: a separate process that follows a log and cosigns it.

Its own package beside client and server: it follows a log over HTTP (httpx)
and serves what it cosigned (Starlette), with a key file of its own.

Each round it fetches the log's signed checkpoint and the consistency proof
from the last one it cosigned, checks it (:class:`lingxi.registry.models.witness.Witness`),
cosigns, keeps the note in its state file (0600, beside its key) and serves
it at ``GET /v1/witness/checkpoint`` (``text/plain``), with its public key at
``GET /v1/witness/info``. A fork is printed with both signed checkpoints and
the witness stops cosigning that log: it never signs two histories.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from lingxi.registry.errors import RegistryError
from lingxi.registry.models.keys import ServerKey
from lingxi.registry.models.witness import Fork, Witness
from lingxi.registry.storage.secrets import load_server_key, read_secret, write_secret


class WitnessProcess:
    """A witness bound to one log URL, with its key file and state file."""

    def __init__(self, log_url: str, key_file: Path, name: str, *,
                 transport: httpx.AsyncBaseTransport | None = None,
                 clock: Callable[[], float] | None = None) -> None:
        import time

        self.log_url = log_url.rstrip("/")
        self.key: ServerKey = load_server_key(key_file)
        self.state_file = key_file.with_name(key_file.name + ".state.json")
        state = json.loads(read_secret(self.state_file) or "{}")
        self.witness = Witness(self.key, name, state.get("cosigned"))
        self.log_key: str | None = state.get("log_key")
        self.fork: Fork | None = None
        self.served: str | None = None
        self.clock = clock or time.time
        self._http = httpx.AsyncClient(base_url=self.log_url, transport=transport, timeout=15)

    def _save(self) -> None:
        write_secret(self.state_file, json.dumps({"log_key": self.log_key,
                                                  "cosigned": self.witness.state}),
                     replace=True)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _get(self, path: str, **params: Any) -> dict[str, Any]:
        response = await self._http.get(path, params=params or None)
        if response.status_code != 200:
            raise RegistryError("registry.unreachable",
                                f"the log answered {response.status_code} to {path}",
                                status=503, exit_code=1)
        data = response.json()
        if not isinstance(data, dict):
            raise RegistryError("registry.bad_response", "the log did not answer JSON",
                                status=502, exit_code=1)
        return data

    async def step(self) -> str:
        """Fetch, check and cosign the log's current checkpoint; the cosigned note."""
        if self.fork is not None:
            raise self.fork
        head = await self._get("/v1/log/head")
        if self.log_key is None:
            self.log_key = str(head.get("server_public_key"))  # pinned on first sight
        origin = str(head.get("origin"))
        last = self.witness.last(origin)
        proof: list[bytes] = []
        if last is not None:
            from lingxi.registry.models.checkpoint import parse_checkpoint, parse_note

            old = parse_checkpoint(parse_note(last).text).size
            if old <= int(head.get("size", 0)):
                answer = await self._get("/v1/log/proof/consistency", **{
                    "from": old, "to": head["size"]})
                proof = [bytes.fromhex(h) for h in answer.get("proof", [])]
        try:
            note = self.witness.observe(str(head.get("checkpoint")), proof,
                                        log_key=self.log_key, now=int(self.clock()))
        except Fork as fork:
            self.fork = fork
            raise
        self._save()
        self.served = note
        return note

    def cosigned(self) -> str | None:
        """The note cosigned at the last step (its timestamp is that step's), or None."""
        return None if self.fork is not None else self.served

    def app(self) -> Starlette:
        async def checkpoint(request: Request) -> Response:
            note = self.cosigned()
            if note is None:
                return JSONResponse({"error": {"code": "registry.not_witnessed",
                                               "message": "nothing cosigned (yet, or a fork)"}},
                                    status_code=404)
            return PlainTextResponse(note)

        async def info(request: Request) -> Response:
            return JSONResponse({"name": self.witness.name, "public_key": self.key.public_hex,
                                 "log": self.log_url, "log_key": self.log_key,
                                 "fork": self.fork.evidence if self.fork else None})

        return Starlette(routes=[Route("/v1/witness/checkpoint", checkpoint),
                                 Route("/v1/witness/info", info)])

    async def follow(self, interval: float, echo: Callable[[str], None]) -> None:
        """Step every ``interval`` seconds until a fork is found (then report it, stop)."""
        while True:
            try:
                await self.step()
            except Fork as fork:
                echo(f"error: registry.fork: {fork.message}")
                for note in fork.evidence:
                    echo("signed checkpoint:\n" + note)
                return
            except (RegistryError, httpx.HTTPError, ValueError) as error:
                echo(f"witness: {error}")
            await asyncio.sleep(interval)
