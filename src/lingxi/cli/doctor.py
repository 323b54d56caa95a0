"""``lingxi doctor``: can this machine take part? One line per check, each with its fix.

Checks, in order: the identity key; the registry (reachable, and its log key the
one pinned here); the relay (reachable, and it accepts a credential the registry
signs — a one-minute probe on a subject of this agent's own, a message sent to
itself and received); direct reachability (the registry connects back to this
machine's address on the port a host would listen on: whether guests can reach
it directly or will need the relay); the clock against the registry's; Chromium
for ``lingxi play``. A failed check exits 1; warnings do not.
"""

from __future__ import annotations

import asyncio
import secrets
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from typing import Any

import click

from lingxi.cli.common import handle_errors, json_option, print_json, safe_line
from lingxi.cli.registry_common import EMBEDDED, make_client, server_option
from lingxi.errors import EXIT_FAILED, LingxiError

SKEW_WARN = 5.0     # seconds: fine for the registry (300 s) and envelopes (120 s), but drifting
SKEW_FAIL = 60.0


@dataclass
class Check:
    name: str
    status: str          # ok | warn | fail | skip
    detail: str
    fix: str = ""


def _line(check: Check) -> str:
    mark = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL", "skip": "skip"}[check.status]
    text = f"{mark} {check.name}: {check.detail}"
    if check.fix and check.status != "ok":
        text += f" — fix: {check.fix}"
    return safe_line(text, 400)


def check_identity() -> tuple[Check, Any]:
    from lingxi.wire.identity import Identity

    try:
        identity = Identity.load()
    except LingxiError as error:
        return Check("identity", "fail", f"{error.code}: {error.message}",
                     "lingxi identity init"), None
    return Check("identity", "ok", f"{identity.agent_id} ({identity.public_hex[:16]}…)"), identity


async def check_registry(client: Any, server: str) -> tuple[Check, dict[str, Any] | None]:
    started = time.monotonic()
    try:
        info = await client.info()
    except LingxiError as error:
        return Check("registry", "fail", f"{server}: {error.code}: {error.message}",
                     "start it (lingxi server) or pass --server URL"), None
    rtt = (time.monotonic() - started) * 1000
    key = info.get("server_public_key")
    pinned = client.ledger.pinned() if client.ledger is not None else None
    if pinned is None:
        return Check("registry", "warn", f"{server} answers in {rtt:.0f} ms; its log key "
                     f"{str(key)[:16]}… is not pinned here yet",
                     "lingxi registry verify (pins the key and checks the log)"), info
    if pinned != key:
        return Check("registry", "fail", f"{server} presents log key {str(key)[:16]}…, not the "
                     f"pinned {pinned[:16]}…",
                     "find out why the registry's key changed before trusting it"), info
    return Check("registry", "ok", f"{server} answers in {rtt:.0f} ms; log key pinned "
                 f"({pinned[:16]}…)"), info


def check_clock(info: dict[str, Any] | None) -> Check:
    from lingxi.wire.timefmt import parse_rfc3339

    if info is None or not isinstance(info.get("time"), str):
        return Check("clock", "skip", "no registry time to compare with")
    try:
        skew = time.time() - parse_rfc3339(info["time"])
    except LingxiError:
        return Check("clock", "skip", "the registry's time is unreadable")
    words = f"{skew:+.1f} s against the registry"
    if abs(skew) > SKEW_FAIL:
        return Check("clock", "fail", words + " (signed requests and envelopes will be refused)",
                     "synchronise the clock (NTP)")
    if abs(skew) > SKEW_WARN:
        return Check("clock", "warn", words, "synchronise the clock (NTP)")
    return Check("clock", "ok", words)


async def check_relay(client: Any, info: dict[str, Any] | None, identity: Any) -> Check:
    from lingxi.natsauth import NKey
    from lingxi.wire.relay_link import RelayCredential, RelayLink

    servers = (info or {}).get("relay") or []
    if not servers:
        return Check("relay", "warn", "the registry names no relay: guests behind a NAT "
                     "cannot reach hosts behind another", "lingxi relay serve, then "
                     "lingxi server --relay nats://HOST:PORT")
    if identity is None:
        return Check("relay", "skip", "needs an identity")
    user, nonce = NKey.generate("user"), secrets.token_hex(8)
    try:
        answer = await client._call("POST", "/v1/relay/probe", signed=True,
                                    body={"user_key": user.public, "nonce": nonce})
        credential = RelayCredential.from_answer(answer, user)
    except LingxiError as error:
        return Check("relay", "fail", f"no probe credential: {error.code}: {error.message}",
                     "lingxi register --nickname NAME (the registry signs for its agents)")
    received: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()

    def arrived(data: bytes) -> None:  # the link hands its one message to the check
        if not received.done():
            received.set_result(data)

    link = RelayLink(credential, reconnect_attempts=1, on_data=arrived)
    started = time.monotonic()
    try:
        await link.open()
        link.publish(nonce.encode())
        data = await asyncio.wait_for(received, 5)
    except LingxiError as error:
        return Check("relay", "fail", f"{', '.join(servers)}: {error.code}: {error.message}",
                     "check the relay runs with this registry's trust (lingxi relay serve "
                     "--server URL)")
    except TimeoutError:
        return Check("relay", "fail", f"{', '.join(servers)} admitted the probe but did not "
                     "deliver its message", "check the relay's log")
    finally:
        await link.close()
    rtt = (time.monotonic() - started) * 1000
    if data != nonce.encode():
        return Check("relay", "fail", "the relay delivered something else", "check the relay")
    return Check("relay", "ok", f"{link.connected_url or servers[0]} accepted the registry's "
                 f"credential; own message back in {rtt:.0f} ms")


async def check_direct(client: Any, port: int, identity: Any, embedded: bool) -> Check:
    if identity is None:
        return Check("direct", "skip", "needs an identity")
    if embedded:
        return Check("direct", "skip", "an embedded registry runs on this machine: it cannot "
                     "tell what guests elsewhere can reach", "pass --server URL of the registry")
    nonce = secrets.token_hex(8)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(nonce.encode() + b"\n")
        await writer.drain()
        writer.close()

    try:
        listener = await asyncio.start_server(answer, "0.0.0.0", port)
    except OSError as error:
        return Check("direct", "warn", f"port {port} cannot be opened here ({error.strerror}); "
                     "a host may already be listening", "pass --port with a free port")
    try:
        result = await client._call("POST", "/v1/reach", signed=True,
                                    body={"port": port, "nonce": nonce})
    except LingxiError as error:
        return Check("direct", "fail", f"{error.code}: {error.message}",
                     "lingxi register --nickname NAME")
    finally:
        listener.close()
    where = str(result.get("address"))
    if result.get("reachable"):
        return Check("direct", "ok", f"the registry reached {where}: guests can connect "
                     f"directly (host with --endpoint tcp://0.0.0.0:{port})")
    return Check("direct", "warn", f"the registry cannot reach {where} "
                 f"({safe_line(result.get('detail'), 120)}): guests will meet you through the "
                 "relay", "nothing, with a relay; or forward the port on your router")


def check_chromium() -> Check:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if shutil.which("/usr/bin/chromium")
                                        else None)
    if path is None:
        return Check("chromium", "warn", "not found (only lingxi play needs it)",
                     "apt-get install chromium")
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True,
                                 timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return Check("chromium", "warn", f"{path} does not run: {error}",
                     "apt-get install --reinstall chromium")
    return Check("chromium", "ok", f"{version or path}")


@click.command("doctor")
@server_option
@click.option("--port", type=click.IntRange(1, 65535), default=7400, show_default=True,
              help="The port a host would listen on (for the direct-reachability check).")
@json_option
@handle_errors
def doctor(server: str, port: int, as_json: bool) -> None:
    """Check this machine: identity, registry, relay, direct reachability, clock, Chromium.

    One line each, with the fix when a check does not pass. Exit 1 when one fails.

    Example: lingxi doctor --server http://127.0.0.1:8470
    """

    identity_check, identity = check_identity()
    checks = [identity_check]

    async def rest() -> None:
        client = make_client(server, identity=identity is not None)
        async with client:
            registry_check, info = await check_registry(client, server)
            checks.append(registry_check)
            if info is None:
                checks.extend([Check("relay", "skip", "no registry"),
                               Check("direct", "skip", "no registry"), check_clock(None)])
                return
            checks.append(await check_relay(client, info, identity))
            checks.append(await check_direct(client, port, identity, server == EMBEDDED))
            checks.append(check_clock(info))

    asyncio.run(rest())
    checks.append(check_chromium())
    failed = any(c.status == "fail" for c in checks)
    if as_json:
        print_json({"ok": not failed, "checks": [asdict(c) for c in checks]})
    else:
        for check in checks:
            click.echo(_line(check))
    if failed:
        raise SystemExit(EXIT_FAILED)
