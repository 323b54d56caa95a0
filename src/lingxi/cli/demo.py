"""``lingxi demo``: the main job end to end on embedded defaults.

1. the built-in protocol contracts and their protocol ids;
2. every built-in played against itself through the real session machines,
   receipts verified;
3. rock-paper-scissors against the library of cheating peers;
4. a session between two processes over loopback TCP (each with its own
   identity under a temporary $LINGXI_HOME), then ``lingxi session verify``
   on both state folders.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import click

from lingxi.cli.common import handle_errors
from lingxi.errors import EXIT_FAILED

ENDPOINT_LINE = re.compile(r"on (tcp://[0-9.]+:[0-9]+)")


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


def _tcp_session(name: str, seed: int, work: Path) -> bool:
    env_host = {**os.environ, "LINGXI_HOME": str(work / "host-home")}
    env_guest = {**os.environ, "LINGXI_HOME": str(work / "guest-home")}
    host_dir, guest_dir = work / "tcp" / "host", work / "tcp" / "guest"
    host = subprocess.Popen(
        _lingxi("host", "--protocol-dir", name, "--endpoint", "tcp://127.0.0.1:0",
                "--seed", str(seed), "--accept-timeout", "30", "--state-dir", str(host_dir)),
        env=env_host, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        endpoint = None
        assert host.stderr is not None
        for line in host.stderr:
            match = ENDPOINT_LINE.search(line)
            if match:
                endpoint = match.group(1)
                break
        if endpoint is None:
            click.echo("  the host did not start listening")
            return False
        click.echo(f"  host listening on {endpoint}")
        guest = subprocess.run(
            _lingxi("guest", "--endpoint", endpoint, "--seed", str(seed),
                    "--state-dir", str(guest_dir)),
            env=env_guest, capture_output=True, text=True, check=False, timeout=60)
        host_out, _ = host.communicate(timeout=60)
    finally:
        if host.poll() is None:
            host.kill()
    for label, text in (("host ", host_out), ("guest", guest.stdout)):
        first = text.strip().splitlines()[:1]
        click.echo(f"  {label}: {first[0] if first else '(no output)'}")
    ok = host.returncode == 0 and guest.returncode == 0
    for folder in (host_dir, guest_dir):
        check = subprocess.run(_lingxi("session", "verify", str(folder)),
                               capture_output=True, text=True, check=False)
        verdict = check.stdout.strip().splitlines()[-1:] or [check.stderr.strip()]
        click.echo(f"  lingxi session verify {folder.name}: {verdict[0]}")
        ok &= check.returncode == 0
    return ok


@click.command()
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seed for the self-play runs (same seed, same outcomes).")
@click.option("--keep", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write the session folders here instead of a temporary folder.")
@handle_errors
def demo(seed: int, keep: Path | None) -> None:
    """Run the built-in demonstration: contracts, self-play, cheaters, a TCP session.

    Everything runs on this machine on loopback; nothing is left behind unless
    --keep names a folder.
    """
    with tempfile.TemporaryDirectory(prefix="lingxi-demo-") as tmp:
        work = keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        rows = _builtins()
        click.echo("1. Built-in protocol contracts (lingxi protocol list)")
        for name, mode, pid in rows:
            click.echo(f"  {name:<22} {mode:<19} {pid}")
        click.echo("\n2. Self-play through the session machines, receipts verified")
        ok = _self_play([name for name, _, _ in rows], seed, work)
        click.echo("\n3. rock-paper-scissors against cheating peers (protocol test --adversarial)")
        ok &= _adversarial("rock-paper-scissors", seed)
        click.echo("\n4. Two processes over loopback TCP (lingxi host / lingxi guest)")
        ok &= _tcp_session("rock-paper-scissors", seed, work)
        click.echo("\n" + ("demo ok" if ok else "demo FAILED"))
    if not ok:
        raise SystemExit(EXIT_FAILED)
