"""``lingxi serve`` (a request_response protocol for P2A callers over HTTP) and
``lingxi callers add|list|remove`` (who may call it). See docs/callers.md."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from lingxi.cli.common import (
    POSITIVE_SECONDS,
    handle_errors,
    json_option,
    print_json,
    safe_line,
)
from lingxi.cli.protocol_runtime import allow_skeleton_option, parse_options
from lingxi.errors import InputError
from lingxi.files import write_private_text
from lingxi.serve.errors import ServeError

callers_option = click.option(
    "--callers", "callers_file", metavar="FILE", type=click.Path(dir_okay=False),
    help="The callers file (default $LINGXI_HOME/callers.json).")


def _callers_path(value: str | None) -> Path:
    from lingxi.serve.callers import default_callers_file

    return Path(value) if value else default_callers_file()


def _need_http_stack() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise InputError("serve.missing_dependency", "lingxi serve needs Starlette and uvicorn: "
                         "pip install 'lingxi[serve]'") from None


def _agent_id(value: str | None) -> str:
    from lingxi.serve.callers import check_caller_id

    if value is not None:
        try:
            return check_caller_id(value)
        except InputError as error:
            raise InputError("serve.bad_agent_id", error.message) from None
    from lingxi.wire.identity import Identity

    return Identity.load_or_create()[0].agent_id


@click.command("serve")
@click.option("--protocol-dir", "protocol", required=True, metavar="DIR|NAME",
              help="A request_response protocol folder (spec.json + hooks.py) or built-in name.")
@click.option("--http", "address", required=True, metavar="HOST:PORT",
              help="Where to listen, e.g. 127.0.0.1:8088 (port 0 picks a free one).")
@callers_option
@click.option("--agent-id", metavar="ID",
              help="The agent id callers address (default: this agent's identity).")
@click.option("--public-url", metavar="URL",
              help="The endpoint URL callers are told (default http://HOST:PORT/; set it when "
                   "a proxy stands in front).")
@click.option("--options", "options_text", metavar="JSON", help="Protocol options (or @file).")
@click.option("--window", type=POSITIVE_SECONDS, default=120.0, show_default=True,
              help="Accepted clock difference of a request, in seconds (a TTL only shortens it).")
@click.option("--max-body", type=click.IntRange(1024, 64 << 20), default=1 << 20,
              show_default=True, metavar="BYTES", help="Largest request body accepted.")
@click.option("--body-timeout", type=POSITIVE_SECONDS, default=10.0, show_default=True,
              help="Seconds a request body may take to arrive (a trickling caller is cut off).")
@click.option("--quiet", is_flag=True, help="Do not print a line per request.")
@allow_skeleton_option
@json_option
@handle_errors
def serve(protocol: str, address: str, callers_file: str | None, agent_id: str | None,
          public_url: str | None, options_text: str | None, window: float, max_body: int,
          body_timeout: float, quiet: bool, allow_skeleton_hooks: bool, as_json: bool) -> None:
    """Serve a request_response protocol to registered callers over HTTP.

    Each POST to the URL carries one signed caller:<action> envelope (JSON);
    the answer is the signed reply envelope, or a 4xx with one coded error.
    Callers are registered with `lingxi callers add`; the file is re-read
    when it changes. Prints where it listens (with --json: one JSON line on
    stdout), then one line per request on stderr; Ctrl-C stops it (exit 0).
    Exit 2 when the protocol, address or callers file is unusable.
    """
    _need_http_stack()
    from lingxi.serve.app import create_app
    from lingxi.serve.callers import CallerBook
    from lingxi.serve.run import bind, parse_address, serve_forever, url_for
    from lingxi.serve.service import Service
    from lingxi.session import load_protocol
    from lingxi.wire import AgentEndpoint
    from lingxi.wire.agent_fields import endpoint_url_problem

    host, port = parse_address(address)
    if public_url is not None:
        problem = endpoint_url_problem(public_url)
        if problem is not None or not public_url.lower().startswith(("http://", "https://")):
            raise ServeError("serve.bad_url", f"--public-url {problem or 'must be http(s)://…'}")
    loaded = load_protocol(protocol, allow_skeleton=allow_skeleton_hooks)
    me = _agent_id(agent_id)
    path = _callers_path(callers_file)
    book = CallerBook(path, refuse=frozenset({me}))
    options = parse_options(options_text)
    sock = bind(host, port)
    url = public_url or url_for(host, sock.getsockname()[1])
    endpoint = AgentEndpoint(me, "lingxi", url, agent_name=loaded.spec.name[:200])
    try:
        service = Service(loaded, endpoint, book, clock=time.time, options=options,
                          window_seconds=window)
    except BaseException:
        sock.close()
        raise

    def line(text: str) -> None:
        click.echo(text, err=True)

    app = create_app(service, max_body=max_body, body_seconds=body_timeout,
                     on_answer=None if quiet else line)

    def ready() -> None:
        info = {"url": url, "agent_id": me, "protocol_id": loaded.spec.protocol_id,
                "protocol": loaded.spec.name, "callers": len(book), "callers_file": str(path)}
        if as_json:
            import json

            click.echo(json.dumps(info, ensure_ascii=True))
        else:
            click.echo(safe_line(f"serving {loaded.spec.name} ({loaded.spec.protocol_id[:16]}…) "
                                 f"at {url} as {me}", 400), err=True)
            click.echo(safe_line(f"{len(book)} caller(s) registered in {path}; add one with: "
                                 f"lingxi callers add NAME --callers {path}", 400), err=True)
        if not len(book):
            click.echo("warning: no callers registered yet: every request is refused "
                       "(envelope.bad_sender) until one is added", err=True)
        if host not in ("127.0.0.1", "::1", "localhost"):
            click.echo("warning: plain HTTP beyond loopback: anyone on the path reads the "
                       "payloads; put a TLS proxy in front (--public-url https://…)", err=True)
        sys.stdout.flush()
        sys.stderr.flush()

    serve_forever(app, sock, ready)


@click.group("callers")
def callers() -> None:
    """Register who may call `lingxi serve`, each with its own HMAC key.

    The callers file (default $LINGXI_HOME/callers.json) is private (mode
    0600) and holds every caller's key; `add` shows a new key once.
    """


@callers.command("add")
@click.argument("agent_id")
@callers_option
@click.option("--save-key", metavar="FILE", type=click.Path(dir_okay=False),
              help="Also write the key to FILE (mode 0600; never overwrites) for "
                   "`lingxi call --key-file`.")
@click.option("--replace", is_flag=True,
              help="Give an already registered caller a new key (the old one stops working).")
@json_option
@handle_errors
def callers_add(agent_id: str, callers_file: str | None, save_key: str | None, replace: bool,
                as_json: bool) -> None:
    """Register AGENT_ID as a caller and print its new key (shown only this once).

    The key is 64 hex characters; the caller signs with them as its HMAC key
    (give them to the caller privately). Exit 2 when AGENT_ID is not a valid
    id, is registered already (without --replace), or a file cannot be written.
    """
    from lingxi.serve.callers import add_caller, check_caller_id

    check_caller_id(agent_id)
    path = _callers_path(callers_file)
    if save_key is not None and Path(save_key).exists():
        raise InputError("callers.key_file_exists", f"{save_key} exists; choose another file")
    key = add_caller(path, agent_id, replace=replace)
    if save_key is not None:
        try:
            write_private_text(save_key, key + "\n", exclusive=True)
        except FileExistsError:
            raise InputError("callers.key_file_exists",
                             f"{save_key} appeared meanwhile; the key is printed below") from None
    if as_json:
        print_json({"ok": True, "agent_id": agent_id, "key": key, "callers_file": str(path),
                    "key_file": save_key})
        return
    click.echo(f"registered caller {agent_id} in {path}")
    if save_key is not None:
        click.echo(f"key saved to {save_key} (mode 0600)")
    click.echo("its HMAC key (shown only now; the caller signs with it):")
    click.echo(key)


@callers.command("list")
@callers_option
@json_option
@handle_errors
def callers_list(callers_file: str | None, as_json: bool) -> None:
    """List the registered callers (never their keys).
    """
    from lingxi.serve.callers import list_callers

    path = _callers_path(callers_file)
    rows = list_callers(path)
    if as_json:
        print_json({"ok": True, "callers_file": str(path), "callers": rows})
        return
    if not rows:
        click.echo(f"no callers in {path}")
    for row in rows:
        click.echo(safe_line(f"{row['agent_id']}  added {row['added']}", 200))


@callers.command("remove")
@click.argument("agent_id")
@callers_option
@json_option
@handle_errors
def callers_remove(agent_id: str, callers_file: str | None, as_json: bool) -> None:
    """Forget AGENT_ID: its key stops working (a running server re-reads the file).

    Exit 2 when it is not registered.
    """
    from lingxi.serve.callers import remove_caller

    path = _callers_path(callers_file)
    remove_caller(path, agent_id)
    if as_json:
        print_json({"ok": True, "agent_id": agent_id, "removed": True})
    else:
        click.echo(safe_line(f"removed caller {agent_id} from {path}", 300))
