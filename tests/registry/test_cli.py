"""The registry commands on the embedded registry (SQLite under $LINGXI_HOME)."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from lingxi.cli import cli

from .conftest import PROTOCOLS

RPS = str(PROTOCOLS / "rock-paper-scissors")
SERVER_MODULES = ("sqlalchemy", "alembic", "starlette", "uvicorn", "httpx", "psycopg",
                  "lingxi.registry")


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_help_imports_no_registry_dependency():
    code = ("import sys, json; from lingxi.cli import cli\n"
            "for argv in (['--help'], ['protocol', '--help']):\n"
            "    try:\n        cli(argv)\n    except SystemExit:\n        pass\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    loaded = json.loads(proc.stderr.strip().splitlines()[-1])
    assert [m for m in loaded if m.split(".")[0] in SERVER_MODULES
            or m.startswith("lingxi.registry")] == []


def test_register_publish_search_fetch_and_verify(tmp_path, lingxi_home):
    result = invoke("register", "--nickname", "alice", "--json")
    assert result.exit_code == 0, result.output
    agent = json.loads(result.output)["agent_id"]
    result = invoke("protocol", "register", RPS, "--json")
    assert result.exit_code == 0, result.output
    pid = json.loads(result.output)["protocol_id"]
    again = invoke("protocol", "register", RPS)
    assert again.exit_code == 0 and "already registered" in again.output
    found = json.loads(invoke("protocol", "search", "rock", "--json").output)
    assert [p["protocol_id"] for p in found["items"]] == [pid]
    out = tmp_path / "fetched"
    fetched = invoke("protocol", "fetch", pid, "--out", str(out), "--json")
    assert fetched.exit_code == 0, fetched.output
    assert json.loads((out / "spec.json").read_text())["name"].startswith("Rock")
    assert not (out / "ui").exists()
    verified = invoke("registry", "verify", "--json")
    assert verified.exit_code == 0, verified.output
    assert json.loads(verified.output)["records_checked"] == 2
    assert agent.startswith("lx-")


def test_accept_ui_installs_the_bundle_only_when_asked(tmp_path, lingxi_home):
    import asyncio

    from lingxi.cli.registry_common import make_client

    invoke("register", "--nickname", "alice")
    pid = json.loads(invoke("protocol", "register", RPS, "--json").output)["protocol_id"]

    async def publish():
        async with make_client("embedded", identity=True) as client:
            return await client.publish_bundle(pid, {"index.html": b"<p>ui</p>"})

    asyncio.run(publish())
    plain = tmp_path / "plain"
    assert invoke("protocol", "fetch", pid, "--out", str(plain)).exit_code == 0
    assert not (plain / "ui").exists()
    ui = tmp_path / "ui"
    assert invoke("protocol", "fetch", pid, "--out", str(ui), "--accept-ui").exit_code == 0
    assert (ui / "ui" / "index.html").read_bytes() == b"<p>ui</p>"
    # the page says it is a registry's: the UI serves it isolated, wherever it was put
    from lingxi.ui.server import isolated_folder

    facts = json.loads((ui / "ui" / ".lingxi-bundle.json").read_text())
    assert facts["registry"] == "embedded" and len(facts["bundle_id"]) == 64
    assert isolated_folder((ui / "ui").resolve())


def test_preflight_exit_codes(tmp_path, lingxi_home):
    spec = json.loads((PROTOCOLS / "rock-paper-scissors" / "spec.json").read_text())
    spec["parameters"]["best_of"]["max"] = 7
    spec["messages"][1]["fields"]["best_of"]["max"] = 7
    draft = tmp_path / "draft.json"
    draft.write_text(json.dumps(spec))
    assert invoke("protocol", "preflight", str(draft)).exit_code == 0  # nothing known yet
    invoke("register", "--nickname", "alice")
    invoke("protocol", "register", RPS)
    result = invoke("protocol", "preflight", str(draft))
    assert result.exit_code == 1 and "same structure" in result.output
    refused = invoke("protocol", "register", str(draft), "--json")
    assert refused.exit_code == 1
    assert json.loads(refused.output)["error"]["code"] == "registry.near_duplicate"
    ok = invoke("protocol", "register", str(draft), "--allow-new", "--reason", "tournament cap")
    assert ok.exit_code == 0, ok.output


def test_errors_are_one_line_with_exit_codes(tmp_path, lingxi_home):
    missing = invoke("protocol", "fetch", "0" * 64)
    assert missing.exit_code == 1 and "registry.protocol_not_found" in missing.output
    no_key = invoke("protocol", "register", RPS)
    assert no_key.exit_code == 2 and "identity.missing" in no_key.output
    bad = invoke("browse", "--server", "ftp://x")
    assert bad.exit_code == 2 and "registry.bad_server" in bad.output
    down = invoke("browse", "--server", "http://127.0.0.1:9")
    assert down.exit_code == 1 and "registry.unreachable" in down.output
    assert "Traceback" not in down.output + bad.output + missing.output
    empty = invoke("browse")
    assert empty.exit_code == 0 and "no open invitation" in empty.output


def test_server_passes_presence_and_limits_and_refuses_nonsense(monkeypatch):
    import lingxi.registry.server.run as run

    seen = {}
    monkeypatch.setattr(run, "serve", lambda *a, **kw: seen.update(kw))
    assert invoke("server", "--presence-timeout", "9", "--rate-limit", "0",
                  "--claim-limit", "7").exit_code == 0
    assert (seen["presence_timeout"], seen["writes_per_minute"], seen["claims_per_minute"]) \
        == (9.0, None, 7)
    assert invoke("server").exit_code == 0  # the defaults: generous, and on
    assert (seen["presence_timeout"], seen["writes_per_minute"], seen["claims_per_minute"]) \
        == (60.0, 120, 60)
    for bad in (("--presence-timeout", "1"), ("--rate-limit", "-1"), ("--claim-limit", "x")):
        assert invoke("server", *bad).exit_code == 2
