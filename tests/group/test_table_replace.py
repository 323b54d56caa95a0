"""Posted tables (issue 23): a seat vacated mid-game is offered again at the registry and a
new `lingxi join` takes it through the same gate (the log records `replace`, every record
verifies, the group receipt settles both of the seat's sessions); and the host's
`--options`, checked against the spec like a two-party host's, travel in every seat's
invitation so every member plays them. Every seat is its own process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from group.tablehelpers import embedded, posted_seats, register
from lingxi.contract import load_spec
from lingxi.errors import LingxiError
from lingxi.group import verify_records
from lingxi.protocols.catalogue import resolve_folder
from net.relayhelpers import lingxi, processes  # noqa: F401  (processes: a fixture)

AGAIN = re.compile(r"seat (\d+): invitation (inv-[0-9a-f]+) posted again")
HANG = 300





def _record(home: Path) -> dict:
    (path,) = list((home / "groups").glob("group-*-seat*.json"))
    return json.loads(path.read_text())


@pytest.mark.slow
def test_a_member_killed_mid_vote_is_replaced_by_a_new_join(
        tmp_path, processes) -> None:  # noqa: F811
    env = embedded(tmp_path)
    ids = register(tmp_path, ["host", "ann", "bob", "cid"], env)
    host = processes(tmp_path / "host", "group", "host", "group-vote", "--seats", "3",
                     "--post", "--via", "direct", "--json", env=env)
    seats = posted_seats(host, 3)
    ann = processes(tmp_path / "ann", "join", seats[1], "--json", env=env)
    # bob votes by hand and never answers: the vote waits on his commitment
    bob = processes(tmp_path / "bob", "join", seats[2], "--control-mode", "human", env=env,
                    stdin=True)
    bob.wait_for("your vote", 120)
    bob.process.kill()  # mid-game: said its line, never committed
    again = AGAIN.search(host.wait_for("posted again", 60))
    assert again is not None and again.group(1) == "2", host.text()[-2000:]
    cid = processes(tmp_path / "cid", "join", again.group(2), "--json", env=env)
    for member in (ann, cid):
        assert member.wait(HANG) == 0, member.text()[-2000:]
    assert host.wait(HANG) == 0, host.text()[-2000:]
    assert "joined table " in cid.text() and "as seat 2 of 3" in cid.text()

    records = [_record(tmp_path / name) for name in ("host", "ann", "cid")]
    verdict = verify_records(records, require_receipts=True)
    assert verdict.ok, verdict.to_dict()["problems"]
    kinds = [e["kind"] for e in records[0]["entries"]]
    assert "replace" in kinds and "timeout" in kinds
    assert sorted((m["seat"], m["status"]) for m in verdict.members) == [
        (0, "seated"), (1, "seated"), (2, "seated"), (2, "timed_out")]
    tally = records[0]["entries"]
    assert sum(1 for e in tally if e["kind"] == "message"
               and e["body"]["payload"]["action"] == "vote_reveal") == 3
    alone = lingxi(tmp_path / "ann", "session", "verify",
                   str(next((tmp_path / "cid" / "groups").glob("*.json"))), env=env)
    assert alone.returncode == 0, alone.stdout + alone.stderr

    # the registry: the group receipt settled both of seat 2's sessions, bob timed out
    rated = lingxi(tmp_path / "ann", "registry", "rating", ids["bob"], env=env)
    assert "1 table (0 completed, 0 left, 1 timed out)" in rated.stdout, rated.stdout
    rated = lingxi(tmp_path / "ann", "registry", "rating", ids["cid"], env=env)
    assert "1 table (1 completed, 0 left, 0 timed out)" in rated.stdout, rated.stdout
    audit = lingxi(tmp_path / "ann", "registry", "verify", "--full", env=env)
    assert audit.returncode == 0, audit.stdout + audit.stderr


@pytest.mark.slow
def test_a_holdem_table_plays_the_hosts_options(tmp_path, processes) -> None:  # noqa: F811
    env = embedded(tmp_path)
    register(tmp_path, ["host", "ann", "bob"], env)
    options = {"stack": 50, "small_blind": 2, "big_blind": 4}
    host = processes(tmp_path / "host", "host", "--protocol", "holdem", "--seats", "3",
                     "--post", "--endpoint", "tcp://127.0.0.1:0", "--options",
                     json.dumps(options), "--json", env=env)
    seats = posted_seats(host, 3)
    shown = lingxi(tmp_path / "ann", "browse", env=env).stdout
    assert json.dumps(options, sort_keys=True) in shown, shown
    members = [processes(tmp_path / "ann", "join", seats[1], "--json", env=env),
               processes(tmp_path / "bob", "join", seats[2], "--json", env=env)]
    for member in members:
        assert member.wait(HANG) == 0, member.text()[-2000:]
        assert "table options: " + json.dumps(options, sort_keys=True) in member.text()
    assert host.wait(HANG) == 0, host.text()[-2000:]
    for process in (host, *members):  # each seat's own result: the host's stacks
        text = process.text()
        result = json.loads(text[text.index("\n{\n") + 1:])["result"]
        assert sum(result["stacks"]) == 3 * options["stack"], result


def test_posted_table_options_are_checked_like_two_party_ones(tmp_path) -> None:
    env = embedded(tmp_path)
    spec = load_spec(resolve_folder("holdem"))
    with pytest.raises(LingxiError) as refused:
        spec.check_options({"stack": 5})
    code, status = refused.value.code, refused.value.exit_code  # a two-party host's too
    for args in (("host", "--protocol", "holdem", "--seats", "3", "--post"),
                 ("group", "host", "holdem", "--seats", "3", "--post")):
        done = lingxi(tmp_path / "host", *args, "--options", '{"stack": 5}', env=env)
        assert done.returncode == status, (args, done.stdout, done.stderr)
        assert code in done.stderr and "Traceback" not in done.stderr, done.stderr
    table_key = lingxi(tmp_path / "host", "group", "host", "holdem", "--seats", "3", "--post",
                       "--options", '{"lingxi.table": {}}', env=env)
    assert table_key.returncode == 2 and "group.bad_table" in table_key.stderr
    bare = lingxi(tmp_path / "host", "group", "host", "holdem", "--seats", "3", "--options",
                  '{"stack": 50}', env=env)
    assert bare.returncode == 2 and "input.needs_post" in bare.stderr, bare.stderr
