"""Registry commands: ``server``, ``register``, ``browse``, ``registry verify``,
and ``protocol register|fetch|search|preflight``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from lingxi.cli.common import handle_errors, json_option, print_json, safe_line
from lingxi.cli.registry_common import _import_registry, run, server_option
from lingxi.errors import EXIT_FAILED, EXIT_USAGE, InputError, LingxiError
from lingxi.files import write_private_json
from lingxi.registry.models.records import (
    DEFAULT_CLAIMS_PER_MINUTE,
    DEFAULT_PRESENCE_TIMEOUT,
    DEFAULT_WRITES_PER_MINUTE,
)


@click.command("server")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8470, show_default=True, type=click.IntRange(1, 65535))
@click.option(
    "--database-url",
    default=None,
    metavar="URL",
    help="SQLAlchemy URL (default $LINGXI_DATABASE_URL, else SQLite under $LINGXI_HOME/registry).",
)
@click.option(
    "--claim-timeout",
    default=60.0,
    show_default=True,
    type=click.FloatRange(1, 3600),
    help="Seconds a claim holds an invitation unless the host confirms it.",
)
@click.option("--access-log", is_flag=True, help="Log every request.")
@click.option(
    "--relay",
    "relay",
    multiple=True,
    metavar="nats://HOST:PORT",
    help="The relay (lingxi relay serve) whose credentials this registry signs; "
    "repeat for every node of a cluster. Default: $LINGXI_RELAY.",
)
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The registry's Ed25519 key file (0600; created if missing). Default: "
    "$LINGXI_REGISTRY_KEY_FILE, else $LINGXI_HOME/registry/server.key.",
)
@click.option(
    "--endpoint-policy",
    type=click.Choice(["lan", "public"]),
    default="lan",
    show_default=True,
    help="Which invitation endpoints to accept: public and loopback addresses "
    "(public), or also private LAN ones (lan). Link-local (cloud metadata) "
    "addresses are always refused.",
)
@click.option(
    "--max-open-invitations",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Open invitations one host may have at a time.",
)
@click.option(
    "--presence-timeout",
    type=click.FloatRange(3, 3600),
    default=DEFAULT_PRESENCE_TIMEOUT,
    show_default=True,
    help="Seconds without a heartbeat from its host (sent every third of this) after "
    "which an open invitation is withdrawn.",
)
@click.option(
    "--rate-limit",
    type=click.IntRange(0),
    default=DEFAULT_WRITES_PER_MINUTE,
    show_default=True,
    help="Signed requests one agent may make a minute, per server process (0: no limit).",
)
@click.option(
    "--claim-limit",
    type=click.IntRange(0),
    default=DEFAULT_CLAIMS_PER_MINUTE,
    show_default=True,
    help="Claim attempts on one invitation a minute, all guests together (0: no limit).",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 64),
    default=1,
    show_default=True,
    help="Server processes on the one port and database (each keeps its own rate-limit "
    "counts, so an agent may make up to this many times --rate-limit a minute).",
)
@handle_errors
def server(
    host: str,
    port: int,
    database_url: str | None,
    claim_timeout: float,
    access_log: bool,
    relay: tuple[str, ...],
    key_file: str | None,
    endpoint_policy: str,
    max_open_invitations: int,
    presence_timeout: float,
    rate_limit: int,
    claim_limit: int,
    workers: int,
) -> None:
    """Run the community registry: JSON API under /v1, docs at /docs, the page at /.

    The database is migrated on start. Several processes may share one
    database and act as one registry (--workers N starts N on one port; each
    process keeps its own rate-limit counts).
    """

    _import_registry()
    from lingxi.registry.server.run import serve

    def ready(store: Any) -> None:
        click.echo(
            f"registry on http://{host}:{port} ({store.info()['backend']}); "
            f"server key {store.key.public_hex}",
            err=True,
        )

    from lingxi.cli.relay import check_relay_urls

    serve(
        host,
        port,
        database_url,
        claim_timeout=claim_timeout,
        access_log=access_log,
        ready=ready,
        relay=check_relay_urls(relay),
        key_file=key_file,
        endpoint_policy=endpoint_policy,
        max_open_invitations=max_open_invitations,
        presence_timeout=presence_timeout,
        writes_per_minute=rate_limit or None,
        claims_per_minute=claim_limit or None,
        workers=workers,
    )


@click.command("register")
@click.option("--nickname", required=True, help="The name others see; one key per nickname.")
@server_option
@json_option
@handle_errors
def register(nickname: str, server: str, as_json: bool) -> None:
    """Register this agent's identity key under a nickname (creates the key if needed)."""
    answer = run(server, lambda c: c.register(nickname), identity="create")
    if as_json:
        print_json(answer)
        return
    state = "registered" if answer.get("created") else "already registered"
    click.echo(f"{state}: {answer['nickname']} = {answer['agent_id']}")


def _row(inv: dict[str, Any]) -> str:
    options = json.dumps(inv["options"], ensure_ascii=False, sort_keys=True)
    name = inv.get("protocol_name") or inv["protocol_id"][:12]
    host = inv["host_agent_id"]
    who = f"{inv['host_nickname']} ({host})" if inv.get("host_nickname") else host
    rating = rating_text(inv.get("host_rating"))
    return (
        f"{inv['invitation_id']}  {name}  host {who}  {rating}  {options}  "
        f"{inv['endpoint']}  until {inv['expires_at']}"
    )


def rating_text(rated: dict[str, Any] | None) -> str:
    """``rating 1516 (1 game)``, or ``unrated`` for an agent with no rated game."""
    if not rated or rated.get("rating") is None:
        return "unrated"
    games = rated["games"]
    return f"rating {rated['rating']} ({games} game{'' if games == 1 else 's'})"


def sort_by_rating(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Highest host rating first, unrated hosts last (stable otherwise)."""
    return sorted(items, key=lambda inv: -(inv.get("host_rating") or {}).get("rating", -1))


@click.command("browse")
@click.option(
    "--sort",
    "sort",
    type=click.Choice(["newest", "rating"]),
    default="newest",
    show_default=True,
    help="Order of this page: newest first or by host rating.",
)
@click.option("--protocol-id", default=None, help="Only this protocol.")
@click.option("--type", "type_", default=None, help="Only protocols of this type (game, …).")
@click.option("--name", default=None, help="Protocol name contains.")
@click.option("--host", "host_agent", default=None, help="Only this host's agent id.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100))
@click.option("--cursor", default=None, help="next_cursor of the previous page.")
@server_option
@json_option
@handle_errors
def browse(
    protocol_id: str | None,
    type_: str | None,
    name: str | None,
    host_agent: str | None,
    limit: int,
    cursor: str | None,
    server: str,
    as_json: bool,
    sort: str = "newest",
) -> None:
    """List open invitations, newest first."""
    page = run(
        server,
        lambda c: c.browse(
            protocol_id=protocol_id,
            type=type_,
            name=name,
            host=host_agent,
            limit=limit,
            cursor=cursor,
        ),
    )
    if sort == "rating":
        page["items"] = sort_by_rating(page["items"])
    from lingxi.cli.table import table_line, table_rows

    plain, tables = table_rows(page["items"])  # a group table's seats: one row per table
    if as_json:
        print_json({**page, "tables": tables})
        return
    if not page["items"]:
        click.echo("no open invitation")
    for table in tables:
        click.echo(safe_line(table_line(table), 1200))
    for inv in plain:
        click.echo(safe_line(_row(inv)))  # names, options, endpoints: registry text
    if page["next_cursor"]:
        click.echo(f"more: --cursor {page['next_cursor']}")


@click.group("registry")
def registry() -> None:
    """Check the registry's transparency log against this agent's own copy."""


def _witness_refs(given: tuple[str, ...]) -> tuple[Any, ...]:
    import os

    from lingxi.registry.client.ledger import WitnessRef

    texts = list(given) or [
        w for w in os.environ.get("LINGXI_WITNESSES", "").split(",") if w.strip()
    ]
    return tuple(WitnessRef.parse(t.strip()) for t in texts)


@registry.command("rating")
@click.argument("agent_id")
@click.option("--protocol-id", default=None, help="Only this protocol.")
@server_option
@json_option
@handle_errors
def rating(agent_id: str, protocol_id: str | None, server: str, as_json: bool) -> None:
    """Print an agent's Elo ratings and posted tables, proven from the registry's log."""
    answer = run(server, lambda c: c.ratings(agent_id, protocol_id))
    if as_json:
        print_json(answer)
        return
    from lingxi.cli.table import tables_text

    if not answer["items"] and not answer.get("tables"):
        click.echo(safe_line(f"{agent_id}: unrated"))
    for item in answer["items"]:
        click.echo(safe_line(f"{agent_id}  {item['protocol_id']}  {rating_text(item)}"))
    for item in answer.get("tables") or []:  # posted tables: outcome counts, no Elo
        click.echo(safe_line(f"{agent_id}  {item['protocol_id']}  {tables_text(item)}"))


@registry.command("verify")
@click.option(
    "--full",
    is_flag=True,
    help="Audit everything: download every record, re-hash it, rebuild the tree and "
    "re-verify every signed request inside.",
)
@click.option(
    "--witness",
    "witnesses",
    multiple=True,
    metavar="NAME=KEY@URL",
    help="A witness to ask for its cosigned checkpoint (repeat; default "
    "$LINGXI_WITNESSES, comma-separated).",
)
@click.option(
    "--witnesses-required",
    "required",
    type=click.IntRange(0, 16),
    default=None,
    help="How many of the witnesses must vouch for this view (default: all given).",
)
@server_option
@json_option
@handle_errors
def verify(
    full: bool, witnesses: tuple[str, ...], required: int | None, server: str, as_json: bool
) -> None:
    """Check the registry's signed checkpoint against the last one this agent kept.

    One consistency proof from the last checkpoint kept, one inclusion proof
    and a fresh copy per record this agent received: O(log n) each. Exit 0
    when all hold; exit 1 on a rewritten, forked, shrunk or stale log, or a
    record changed on the server (a fork prints both signed checkpoints).
    """
    from lingxi.registry.client.ledger import verify_registry

    refs = _witness_refs(witnesses)
    needed = len(refs) if required is None else required
    if needed > len(refs):
        raise InputError(
            "registry.bad_witness",
            f"--witnesses-required {needed} but {len(refs)} witness(es) given",
        )
    result = run(
        server, lambda c: verify_registry(c, c.ledger, full=full, witnesses=refs, required=needed)
    )
    if as_json:
        print_json(result)
    else:
        click.echo(
            f"log: {result['size']} entries, root {str(result['root'])[:16]}…, "
            f"{result['records_checked']} kept records, {result['proofs_checked']} "
            f"proofs checked"
            + (f", {result['requests_checked']} signed requests re-verified" if full else "")
            + (
                f", witnessed by {', '.join(result['witnessed_by'])}"
                if result.get("witnessed_by")
                else ""
            )
        )
        for problem in result["problems"]:
            click.echo(f"  problem: {safe_line(problem, 400)}", err=True)
        for note in result["evidence"]:
            click.echo("  signed checkpoint:", err=True)
            for line in note.splitlines():
                click.echo(f"    {safe_line(line, 200)}", err=True)
        click.echo("registry log verified" if result["ok"] else "registry log FAILED")
    if not result["ok"]:
        raise SystemExit(EXIT_FAILED)


@registry.command("witness")
@click.option("--name", required=True, help="This witness's name (in its cosignature lines).")
@click.option(
    "--key-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Its own Ed25519 key (0600; created if missing). Default: "
    "$LINGXI_HOME/witness/<name>.key.",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8471, show_default=True)
@click.option(
    "--interval",
    type=click.FloatRange(0.2, 3600),
    default=10.0,
    show_default=True,
    help="Seconds between two looks at the log.",
)
@click.option(
    "--server",
    "server",
    required=True,
    metavar="URL",
    help="The registry whose log this witness follows.",
)
@handle_errors
def witness(
    name: str, key_file: str | None, host: str, port: int, interval: float, server: str
) -> None:
    """Follow a registry's log, check each checkpoint extends the last one, cosign it.

    Serves the cosigned checkpoint at /v1/witness/checkpoint for clients
    (`lingxi registry verify --witness NAME=KEY@URL`). On a fork it prints
    both signed checkpoints and stops cosigning. Runs until interrupted.
    """
    import asyncio

    from lingxi.cli.registry_common import _import_registry

    _import_registry()
    import uvicorn

    from lingxi.home import lingxi_home
    from lingxi.registry.witness import WitnessProcess

    path = Path(key_file) if key_file else lingxi_home() / "witness" / f"{name}.key"
    process = WitnessProcess(server, path, name)
    click.echo(
        f"witness {name} on http://{host}:{port}, key {process.key.public_hex}, following {server}",
        err=True,
    )

    async def main() -> None:
        config = uvicorn.Config(
            process.app(), host=host, port=port, log_level="warning", lifespan="off"
        )
        web = uvicorn.Server(config)
        serving = asyncio.ensure_future(web.serve())

        def echo(text: str) -> None:  # a registry's checkpoint text is foreign: escape it
            for line in text.splitlines():
                click.echo(safe_line(line, 400), err=True)

        await process.follow(interval, echo)
        await serving

    asyncio.run(main())


# ---------------------------------------------------------------- protocol subcommands


def _read_spec(source: str) -> dict[str, Any]:
    from lingxi.contract.source import read_spec_document

    doc, _, _ = read_spec_document(source)
    return doc


@click.command("register")
@click.argument("spec_path", metavar="SPEC")
@click.option(
    "--allow-new",
    is_flag=True,
    help="Register even though known protocols have the same structure.",
)
@click.option(
    "--reason",
    default=None,
    help="Why a parameter of the known one cannot do "
    "(required with --allow-new; stored and shown).",
)
@server_option
@json_option
@handle_errors
def protocol_register(
    spec_path: str, allow_new: bool, reason: str | None, server: str, as_json: bool
) -> None:
    """Publish a spec.json (file or protocol folder); the registry computes its id."""
    if reason and not allow_new:
        raise InputError("registry.reason_without_allow_new", "--reason goes with --allow-new")
    spec = _read_spec(spec_path)
    answer = run(
        server,
        lambda c: c.register_protocol(spec, allow_new=allow_new, reason=reason),
        identity=True,
    )
    if as_json:
        print_json(answer)
        return
    state = "registered" if answer.get("created") else "already registered"
    click.echo(f"{state}: {answer['protocol_id']}")


@click.command("preflight")
@click.argument("spec_path", metavar="SPEC")
@server_option
@json_option
@handle_errors
def protocol_preflight(spec_path: str, server: str, as_json: bool) -> None:
    """Report known protocols whose messages and flow match this draft's.

    Only a different message structure makes a new protocol; a draft that
    differs in values only should become parameters of the known one.
    Exit 1 when near-duplicates exist, 0 when the draft is new or registered.
    """
    spec = _read_spec(spec_path)
    report = run(server, lambda c: c.preflight(spec))
    if as_json:
        print_json(report)
    else:
        click.echo(
            f"protocol_id {report['protocol_id']}"
            + (" (already registered)" if report["registered"] else "")
        )
        for near in report["near_duplicates"]:
            click.echo(safe_line(f"  same structure: {near['name']}  {near['protocol_id']}"))
        if report["converges"]:
            click.echo(
                "converge: add parameters to a known protocol, or register with "
                "--allow-new --reason TEXT"
            )
        elif not report["registered"]:
            click.echo("new structure: nothing known matches")
    if report["converges"]:
        raise SystemExit(EXIT_FAILED)


@click.command("fetch")
@click.argument("protocol_id")
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder to write spec.json into (default: the protocol cache).",
)
@click.option(
    "--accept-ui",
    is_flag=True,
    help="Also install the protocol's UI bundle (static files) into ui/.",
)
@click.option(
    "--bundle",
    "bundle_id",
    default=None,
    help="Which bundle with --accept-ui (default: the first published).",
)
@server_option
@json_option
@handle_errors
def protocol_fetch(
    protocol_id: str,
    out: Path | None,
    accept_ui: bool,
    bundle_id: str | None,
    server: str,
    as_json: bool,
) -> None:
    """Download a spec by protocol_id, re-checking that it hashes to that id.

    A folder without hooks.py also gets a skeleton hooks.py to fill in (hooks
    are never downloaded).
    """
    from lingxi.protocols.catalogue import install_spec
    from lingxi.session import skeleton_methods_for

    if bundle_id and not accept_ui:
        raise InputError("registry.bundle_without_accept", "--bundle goes with --accept-ui")

    async def fetch(client: Any) -> tuple[dict, dict[str, bytes] | None, dict[str, Any]]:
        record = await client.protocol(protocol_id)  # one proven answer: spec and bundles
        spec = await client.fetch_spec(protocol_id, record)
        if not accept_ui:
            return spec, None, {}
        bundles = record["bundles"]
        if not bundles:
            raise LingxiError(
                "registry.no_bundle", "this protocol has no UI bundle", exit_code=EXIT_FAILED
            )
        listed = {b["bundle_id"]: b for b in bundles}
        chosen = bundle_id or bundles[0]["bundle_id"]
        if chosen not in listed:
            raise LingxiError(
                "registry.bundle_not_found",
                f"this protocol has no UI bundle {safe_line(chosen, 80)}",
                exit_code=EXIT_FAILED,
            )
        return spec, await client.bundle(protocol_id, chosen), listed[chosen]

    spec, files, listing = run(server, fetch)
    chosen = listing.get("bundle_id")
    installed = install_spec(spec, skeleton_methods_for(spec), out)  # + a skeleton hooks.py
    folder = installed.folder
    written = list(installed.files)
    for path, content in sorted((files or {}).items()):
        target = folder / "ui" / path
        if folder.resolve() not in target.resolve().parents:
            raise LingxiError(
                "registry.bundle_refused", f"{path} leaves the folder", exit_code=EXIT_USAGE
            )
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(f"ui/{path}")
    if files:  # the page is a registry's: the UI serves it isolated, naming its bundle
        from lingxi.ui import BUNDLE_META

        # the registry publishes a protocol's bundles only from its registrant
        write_private_json(
            folder / "ui" / BUNDLE_META,
            {
                "bundle_id": chosen,
                "registry": server,
                "publisher": {"agent_id": listing.get("created_by")},
                "allowed_by": "the protocol's registrant (the only agent the registry lets "
                "publish its bundles)",
            },
        )
    data = {
        "protocol_id": protocol_id,
        "folder": str(folder),
        "files": written,
        "bundle_id": chosen,
        "skeleton": str(installed.skeleton) if installed.skeleton else None,
    }
    if as_json:
        print_json(data)
    else:
        click.echo(f"fetched {protocol_id} into {folder} ({len(written)} files)")
        if installed.skeleton:
            click.echo(
                f"wrote a hooks skeleton at {installed.skeleton}: write the hooks "
                "before hosting or joining with it"
            )


@click.command("search")
@click.argument("text", required=False)
@click.option("--name", default=None, help="Name contains.")
@click.option("--type", "type_", default=None, help="Type equals (game, chat, service, …).")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 100))
@click.option("--cursor", default=None, help="next_cursor of the previous page.")
@server_option
@json_option
@handle_errors
def protocol_search(
    text: str | None,
    name: str | None,
    type_: str | None,
    limit: int,
    cursor: str | None,
    server: str,
    as_json: bool,
) -> None:
    """Search registered protocols by text (name or description), name and type."""
    page = run(
        server, lambda c: c.search(q=text, name=name, type=type_, limit=limit, cursor=cursor)
    )
    if as_json:
        print_json(page)
        return
    if not page["items"]:
        click.echo("no protocol found")
    for item in page["items"]:
        click.echo(safe_line(f"{item['protocol_id']}  {item['name']}  ({item['type'] or '-'})"))
    if page["next_cursor"]:
        click.echo(f"more: --cursor {page['next_cursor']}")
