"""``lingxi demo``: the main job end to end on embedded defaults.

1. the built-in protocol contracts and their protocol ids;
2. every built-in played against itself through the real session machines,
   receipts verified;
3. rock-paper-scissors against the library of cheating peers;
4. the main job: an embedded registry on SQLite in a temporary folder, the
   built-ins registered, agent "alice" hosting rock-paper-scissors (best of
   3) with ``lingxi host --post``, agent "bob" browsing and ``lingxi join``-ing
   it — two processes, each with its own identity under its own
   $LINGXI_HOME, the game over loopback TCP in signed envelopes — then both
   receipts checked by the registry, ``lingxi session verify`` on both state
   folders and ``lingxi registry verify`` on bob's copy of the log.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from lingxi.cli.common import handle_errors, safe_line
from lingxi.errors import EXIT_FAILED

ENDPOINT_LINE = re.compile(r"on (tcp://[0-9.]+:[0-9]+)")
INVITATION_LINE = re.compile(r"invitation (inv-[0-9a-f]+) posted")


def _lingxi(*args: str) -> list[str]:
    return [sys.executable, "-m", "lingxi", *args]


def _builtins() -> list[tuple[str, str, str]]:
    from lingxi.contract import load_spec
    from lingxi.protocols import builtin_dir, builtin_names

    rows = []
    for name in builtin_names():
        folder = builtin_dir(name)
        if folder is None:
            continue
        spec = load_spec(folder)
        rows.append((name, spec.flow.mode, spec.protocol_id))
    return rows


def _self_play(names: list[str], seed: int, work: Path) -> bool:
    from lingxi.session.runner import run_local

    ok = True
    for name in names:
        result = run_local(name, seed=seed, state_dir=work / "self-play" / name)
        good = result.outcome.ok and result.receipts_verified
        ok &= good
        summary = result.outcome.summary or {}
        click.echo(f"  {name:<22} {'ok  ' if good else 'FAIL'} {result.outcome.status:<10} "
                   f"receipt {result.receipt_hash[:16]}…  {_short(summary)}")
    return ok


def _group_play(names: list[str], seed: int) -> bool:
    """The group (A2N) built-ins: every seat in memory, the record checked as a third party."""
    ok = True
    for name in names:
        proc = subprocess.run(_lingxi("group", "test", name, "--seats", "4", "--seed", str(seed)),
                              capture_output=True, text=True, check=False)
        lines = proc.stdout.splitlines()
        good = proc.returncode == 0
        ok &= good
        click.echo(f"  {name:<22} {'ok  ' if good else 'FAIL'} {lines[0] if lines else ''}")
    return ok


def _short(summary: dict) -> str:
    text = ", ".join(f"{key}={value}" for key, value in summary.items())
    return text if len(text) <= 60 else text[:59] + "…"


def _adversarial(name: str, seed: int) -> bool:
    proc = subprocess.run(_lingxi("protocol", "test", name, "--adversarial", "--seed", str(seed)),
                          capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if "detected" in line.lower()]
    for line in lines[-3:]:
        click.echo(f"  {line.strip()}")
    return proc.returncode == 0


def _registry_call(call):
    from lingxi.cli.registry_common import EMBEDDED, run

    return run(EMBEDDED, call, identity=True, quiet=True)  # the demo names it itself


def _register_agents(homes: dict[str, Path], envs: dict[str, dict[str, str]]) -> bool:
    for who in homes:
        done = subprocess.run(_lingxi("register", "--nickname", who), env=envs[who],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            click.echo(f"  register {who}: {done.stderr.strip()}")
            return False
    return True


def _posted_invitation(host: subprocess.Popen[str]) -> str | None:
    """Read alice's console until her invitation is posted (her endpoint line echoed)."""
    assert host.stderr is not None
    for line in host.stderr:
        found = INVITATION_LINE.search(line)
        if found:
            return found.group(1)
        if ENDPOINT_LINE.search(line):
            click.echo(f"  alice: {line.strip()}")
    return None


def _bob_joins(invitation: str, seed: int, env: dict[str, str],
               guest_dir: Path) -> subprocess.CompletedProcess[str]:
    listed = _registry_call(lambda c: c.browse())["items"]
    mine = next((i for i in listed if i["invitation_id"] == invitation), None) or {}
    click.echo(f"  bob browses: {len(listed)} open invitation(s); {invitation} by "
               f"{mine.get('host_nickname', '?')} ({mine.get('host_agent_id', '?')}) for {mine.get('protocol_id', '?')[:16]}…")
    click.echo(f"  bob joins: lingxi join {invitation} — claims it at the registry (a "
               "single-use ticket bound to bob's key), connects to alice's endpoint, "
               "and alice's host checks the ticket in the handshake")
    guest = subprocess.run(
        _lingxi("join", invitation, "--seed", str(seed), "--state-dir", str(guest_dir)),
        env=env, capture_output=True, text=True, check=False, timeout=60)
    for line in guest.stderr.splitlines():  # bob's console: the claim played out
        if line.startswith(("session started", "round ", "outcome:")):
            click.echo(f"    bob: {line.strip()}")
    return guest


def _folders_verify(folders: tuple[Path, ...]) -> bool:
    ok = True
    for folder in folders:
        check = subprocess.run(_lingxi("session", "verify", str(folder)),
                               capture_output=True, text=True, check=False)
        verdict = check.stdout.strip().splitlines()[-1:] or [check.stderr.strip()]
        click.echo(f"  lingxi session verify {folder.name}: {verdict[0]}")
        ok &= check.returncode == 0
    return ok


def _registry_settled(invitation: str, env: dict[str, str]) -> bool:
    """The registry holds the session as finished, and bob's copy of its log verifies."""
    sessions = _registry_call(lambda c: c.sessions())
    record: dict = next((s for s in sessions.get("items", [])
                         if s.get("invitation_id") == invitation), {})
    click.echo(f"  registry session {record.get('session_id', '?')}: {record.get('status')}, "
               f"receipts {'both verified' if record.get('status') == 'finished' else 'missing'}")
    log = subprocess.run(_lingxi("registry", "verify"), env=env,
                         capture_output=True, text=True, check=False)
    click.echo(f"  lingxi registry verify (bob's copy): "
               f"{(log.stdout.strip().splitlines() or [log.stderr.strip()])[-1]}")
    return record.get("status") == "finished" and log.returncode == 0 and _witnessed(env)


def _witnessed(env: dict[str, str]) -> bool:
    """A witness (its own key) cosigns the log's checkpoint, and bob's `lingxi registry
    verify` requires that cosignature."""
    import asyncio
    import socket
    import threading
    import time

    import httpx
    import uvicorn

    from lingxi.registry.server.app import create_app
    from lingxi.registry.storage.store import Store
    from lingxi.registry.witness import WitnessProcess

    store = Store()
    try:
        key_file = Path(env["LINGXI_HOME"]).parent / "witness" / "w1.key"
        witness = WitnessProcess("http://registry.embedded", key_file, "w1",
                                 transport=httpx.ASGITransport(app=create_app(store)))
        note = asyncio.run(witness.step())
        click.echo("  witness w1 cosigns the log's checkpoint (C2SP signed note):")
        for line in note.splitlines():
            click.echo(f"    {safe_line(line, 200)}")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(witness.app(), port=port, log_level="critical",
                                               lifespan="off"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        ref = f"w1={witness.key.public_hex}@http://127.0.0.1:{port}"
        check = subprocess.run(_lingxi("registry", "verify", "--witness", ref), env=env,
                               capture_output=True, text=True, check=False)
        server.should_exit = True
        thread.join(10)
        click.echo(f"  lingxi registry verify --witness w1=…: "
                   f"{(check.stdout.strip().splitlines() or [check.stderr.strip()])[-1]}")
        return check.returncode == 0
    finally:
        store.close()


def _main_job(name: str, seed: int, work: Path) -> bool:
    """Two agents meet through the embedded registry and play over loopback TCP."""
    os.environ["LINGXI_DATABASE_URL"] = f"sqlite:///{work / 'registry.db'}"
    homes = {who: work / f"{who}-home" for who in ("alice", "bob")}
    envs = {who: {**os.environ, "LINGXI_HOME": str(home)} for who, home in homes.items()}
    if not _register_agents(homes, envs):
        return False
    os.environ["LINGXI_HOME"] = str(homes["alice"])
    registered = _register_builtins()
    click.echo(f"  registry: {work / 'registry.db'}; alice and bob registered; "
               f"{registered} built-in protocols registered")
    host_dir, guest_dir = work / "tcp" / "host", work / "tcp" / "guest"
    host = subprocess.Popen(
        _lingxi("host", "--protocol-dir", name, "--endpoint", "tcp://127.0.0.1:0", "--post",
                "--options", '{"best_of": 3}', "--seed", str(seed), "--accept-timeout", "30",
                "--state-dir", str(host_dir)),
        env=envs["alice"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        invitation = _posted_invitation(host)
        if invitation is None:
            click.echo("  alice did not post an invitation")
            return False
        os.environ["LINGXI_HOME"] = str(homes["bob"])
        guest = _bob_joins(invitation, seed, envs["bob"], guest_dir)
        host_out, _ = host.communicate(timeout=60)
    finally:
        if host.poll() is None:
            host.kill()
    for label, text in (("alice (host)", host_out), ("bob (guest) ", guest.stdout)):
        lines = text.strip().splitlines()[:2]
        click.echo(f"  {label}: {' | '.join(lines) if lines else guest.stderr.strip()}")
    ok = host.returncode == 0 and guest.returncode == 0
    ok &= _folders_verify((host_dir, guest_dir))
    return _registry_settled(invitation, envs["bob"]) and ok


def _register_builtins() -> int:
    from lingxi.cli.meet import ensure_registered
    from lingxi.contract import load_spec
    from lingxi.protocols import builtin_dir, builtin_names

    async def register_all(client) -> int:
        count = 0
        for name in builtin_names():
            folder = builtin_dir(name)
            if folder is not None:
                await ensure_registered(  # the card games share the mental-poker messages
                    client, load_spec(folder),
                    reason="a Lingxi built-in: another game on the same message set")
                count += 1
        return count

    return _registry_call(register_all)


@click.command()
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed for the self-play runs (same seed, same outcomes).")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the session folders here instead of a temporary folder.")
@click.option("--relay", is_flag=True,
              help="Run the journey across the NATS relay instead (needs Debian's "
                   "nats-server): a host that cannot be reached directly, a guest that meets "
                   "it through the relay.")
@handle_errors
def demo(seed: int, keep: Path | None, relay: bool) -> None:
    """Run the built-in demonstration: contracts, self-play, cheaters, a TCP session.

    Everything runs on this machine on loopback; nothing is left behind unless
    --keep names a folder. With --relay: the same journey through the relay.

    Example: lingxi demo (or lingxi demo --relay)
    """
    with tempfile.TemporaryDirectory(prefix="lingxi-demo-") as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if relay:
            from lingxi.cli.demo_relay import relay_journey

            click.echo("Two agents meet through the registry and play through the NATS relay")
            ok = relay_journey(seed, work)
            click.echo("\n" + ("demo ok" if ok else "demo FAILED"))
            if not ok:
                raise SystemExit(EXIT_FAILED)
            return
        rows = _builtins()
        click.echo("1. Built-in protocol contracts (lingxi protocol list)")
        for name, mode, pid in rows:
            click.echo(f"  {name:<22} {mode:<19} {pid}")
        click.echo("\n2. Self-play through the session machines, receipts verified")
        ok = _self_play([name for name, mode, _ in rows if mode != "group"], seed, work)
        ok &= _group_play([name for name, mode, _ in rows if mode == "group"], seed)
        click.echo("\n3. rock-paper-scissors against cheating peers (protocol test --adversarial)")
        ok &= _adversarial("rock-paper-scissors", seed)
        click.echo("\n4. Two agents meet through the registry and play over loopback TCP")
        saved = {k: os.environ.get(k) for k in ("LINGXI_HOME", "LINGXI_DATABASE_URL")}
        try:
            ok &= _main_job("rock-paper-scissors", seed, work)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        click.echo("\n" + ("demo ok" if ok else "demo FAILED"))
    if not ok:
        raise SystemExit(EXIT_FAILED)
