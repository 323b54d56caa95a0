"""``lingxi relay serve``: Debian's nats-server, configured to admit the registry's users only.

The relay is not Lingxi code: it is ``nats-server`` (2.9), trusting the
registry's operator key, so only users the registry signed — one session's
host or guest, for that session's subjects — get in. ``--print-config`` writes
that configuration for an existing NATS deployment or cluster instead.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import handle_errors, json_option, print_json
from lingxi.cli.registry_common import run, server_option
from lingxi.errors import EXIT_USAGE, InputError, LingxiError
from lingxi.home import lingxi_home
from lingxi.textsafe import terminal_safe

_HOSTPORT = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})")
_NATS_URL = re.compile(r"nats://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})/?")


def _host_port(value: str, what: str) -> str:
    match = _HOSTPORT.fullmatch(value.strip())
    if match is None or not 1 <= int(match.group(2)) <= 65535:
        raise InputError("input.bad_address", f"{what} must be HOST:PORT, got {value[:80]!r}")
    return value.strip()


def check_relay_urls(urls: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``nats://HOST:PORT`` each (exit 2 otherwise)."""
    for url in urls:
        match = _NATS_URL.fullmatch(url.strip())
        if match is None or not 1 <= int(match.group(2)) <= 65535:
            raise InputError("input.bad_relay", f"a relay is nats://HOST:PORT, got {url[:80]!r}")
    return tuple(url.strip().rstrip("/") for url in urls)


def nats_server_binary(path: str | None = None) -> str:
    found = path or shutil.which("nats-server") or next(
        (p for p in ("/usr/sbin/nats-server", "/usr/bin/nats-server") if os.path.exists(p)), None)
    if found is None:
        raise LingxiError("relay.no_nats_server", "nats-server is not installed "
                          "(Debian: apt-get install nats-server)", exit_code=EXIT_USAGE)
    return found


async def fetch_trust(client: Any) -> dict[str, Any]:
    """The registry's relay trust (``GET /v1/relay``), checked for its shape."""
    answer = await client._call("GET", "/v1/relay")
    trust = answer.get("trust") if isinstance(answer, dict) else None
    if not isinstance(trust, dict) or not all(
            isinstance(trust.get(k), str) for k in ("operator_jwt", "system_account",
                                                    "account")) \
            or not isinstance(trust.get("accounts"), dict):
        raise LingxiError("registry.bad_response", "the registry's /v1/relay answer is "
                          "malformed", exit_code=1)
    return trust


@click.group("relay")
def relay() -> None:
    """Run the NATS relay through which agents behind NATs meet (nats-server).

    Example: lingxi relay serve --listen 0.0.0.0:4222 --server http://127.0.0.1:8470
    """


@relay.command("serve")
@click.option("--listen", default="127.0.0.1:4222", show_default=True, metavar="HOST:PORT",
              help="Where clients connect (nats://HOST:PORT is what `lingxi server --relay` "
                   "names).")
@server_option
@click.option("--cluster-listen", metavar="HOST:PORT",
              help="Join a cluster: listen for other relay nodes here.")
@click.option("--route", "routes", multiple=True, metavar="nats://HOST:PORT",
              help="Another node's cluster address (repeatable).")
@click.option("--monitor", metavar="HOST:PORT", help="nats-server's HTTP monitoring port.")
@click.option("--state-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Where the configuration and log go (default $LINGXI_HOME/relay).")
@click.option("--print-config", is_flag=True,
              help="Print the configuration (for an existing deployment) and exit.")
@click.option("--nats-server", "binary", metavar="PATH", help="The nats-server binary.")
@json_option
@handle_errors
def serve(listen: str, server: str, cluster_listen: str | None, routes: tuple[str, ...],
          monitor: str | None, state_dir: Path | None, print_config: bool, binary: str | None,
          as_json: bool) -> None:
    """Run nats-server so that only the registry's users get in.

    The configuration trusts the registry's operator key (fetched from the
    registry at --server); every user the registry signs may publish and
    subscribe on its own session's subjects only, and a client without such a
    credential is refused. Run the registry with `lingxi server --relay
    nats://HOST:PORT` so it hands out credentials for this relay.

    Example: lingxi relay serve --listen 0.0.0.0:4222 --server http://127.0.0.1:8470
    """
    from lingxi.registry.models.relay import server_config

    listen = _host_port(listen, "--listen")
    if cluster_listen:
        cluster_listen = _host_port(cluster_listen, "--cluster-listen")
    routes = check_relay_urls(routes)
    if routes and not cluster_listen:
        raise InputError("input.needs_cluster", "--route goes with --cluster-listen")
    trust = run(server, fetch_trust)
    if print_config:
        text = server_config(trust, cluster_listen=cluster_listen, routes=routes)
        if as_json:
            print_json({"ok": True, "config": text, "account": trust["account"]})
        else:
            click.echo(text, nl=False)
        return

    folder = state_dir or (lingxi_home() / "relay")
    folder.mkdir(parents=True, exist_ok=True)
    port = listen.rsplit(":", 1)[1]
    config = folder / f"nats-{port}.conf"
    log = folder / f"nats-{port}.log"
    config.write_text(server_config(trust, listen=listen, cluster_listen=cluster_listen,
                                    routes=routes, monitor=monitor), encoding="utf-8")
    command = [nats_server_binary(binary), "-c", str(config), "-l", str(log)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               preexec_fn=_die_with_parent)
    ready = _wait_ready(process, log)
    if as_json:
        print_json({"ok": ready, "relay": f"nats://{listen}", "config": str(config),
                    "log": str(log), "account": trust["account"], "pid": process.pid})
    elif ready:
        click.echo(f"relay on nats://{listen} (nats-server pid {process.pid}), admitting the "
                   f"registry's account {trust['account'][:12]}…; log {log}", err=True)
    if not ready:
        raise LingxiError("relay.failed", "nats-server did not start: "
                          + _last_error(process, log), exit_code=1)
    sys.stderr.flush()
    signal.signal(signal.SIGTERM, lambda *_: process.terminate())
    try:
        process.wait()
    except KeyboardInterrupt:
        process.terminate()
        process.wait(10)


def _die_with_parent() -> None:
    """In the child: nats-server ends when this command ends, however it ends (Linux)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _wait_ready(process: subprocess.Popen[bytes], log: Path, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        try:
            if "Server is ready" in log.read_text(encoding="utf-8", errors="replace"):
                return True
        except OSError:
            pass
        time.sleep(0.05)
    process.terminate()
    return False


def _last_error(process: subprocess.Popen[bytes], log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines()
                 if "[FTL]" in line or "[ERR]" in line]
    except OSError:
        lines = []
    if not lines and process.stderr is not None:
        lines = (process.stderr.read() or b"").decode(errors="replace").splitlines()

    return terminal_safe(lines[-1] if lines else f"exit status {process.poll()}", 300)
