"""A posted table's end at the registry (issue 23): the host (and each member) posts the
final head with every seat's receipt, each seat's session settles, the members' table
counts show in `lingxi registry rating` and `lingxi browse`, and `lingxi registry verify
--full` re-checks the group receipt record. Every seat is its own process."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from group.tablehelpers import embedded, posted_seats, register
from lingxi.registry.storage.store import Store
from net.relayhelpers import lingxi, processes  # noqa: F401  (processes: a fixture)

HANG = 300





def _store(tmp_path: Path) -> Store:
    return Store(f"sqlite:///{tmp_path / 'registry.db'}", key_file=tmp_path / "server.key")


@pytest.mark.slow
def test_a_vote_table_posts_its_group_receipt_settles_and_counts(
        tmp_path, processes) -> None:  # noqa: F811
    env = embedded(tmp_path)
    ids = register(tmp_path, ["host", "ann", "bob"], env)
    host = processes(tmp_path / "host", "group", "host", "group-vote", "--seats", "3",
                     "--post", "--via", "direct", "--json", env=env)
    seats = posted_seats(host, 3)
    members = [processes(tmp_path / "ann", "join", seats[1], "--json", env=env),
               processes(tmp_path / "bob", "join", seats[2], "--json", env=env)]
    for member in members:
        assert member.wait(HANG) == 0, member.text()[-2000:]
    assert host.wait(HANG) == 0, host.text()[-2000:]
    everyone = host.text() + "".join(m.text() for m in members)
    assert "group receipt at the registry" in everyone, everyone[-2000:]
    assert "warning" not in everyone, everyone[-2000:]

    store = _store(tmp_path)
    try:
        for seat in (1, 2):
            invitation = store.invitation(seats[seat])
            session = store.session(invitation["session_id"])
            assert session["status"] == "finished" and session["verified"] is True
            assert session["outcome"]["seat"] == seat
            assert session["outcome"]["outcome"] == "completed"
    finally:
        store.close()

    rated = lingxi(tmp_path / "ann", "registry", "rating", ids["ann"], env=env)
    assert rated.returncode == 0, rated.stderr
    assert "1 table (1 completed, 0 left, 0 timed out)" in rated.stdout, rated.stdout
    proven = json.loads(lingxi(tmp_path / "ann", "registry", "rating", ids["host"], "--json",
                               env=env).stdout)
    assert proven["tables"][0]["completed"] == 1
    audit = lingxi(tmp_path / "bob", "registry", "verify", "--full", env=env)
    assert audit.returncode == 0, audit.stdout + audit.stderr

    # the host's next table shows its count in browse
    again = processes(tmp_path / "host", "group", "host", "group-vote", "--seats", "3",
                      "--post", "--via", "direct", env=env)
    posted_seats(again, 3)
    shown = lingxi(tmp_path / "ann", "browse", env=env).stdout
    assert "[1 table (1 completed, 0 left, 0 timed out)]" in shown, shown
    again.stop()
