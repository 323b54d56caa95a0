"""A session's memory does not grow with its length, as the OS sees it (RSS, not timed).

``lingxi protocol test rock-paper-scissors`` runs for 10 and for 1,000 fixed
rounds, each its own process; the kernel's peak RSS of the long run may exceed
the short one's by little. Before events, transcript and evidence streamed
(and before the game's decision view stopped copying every earlier throw) the
long run grew by about 13 KiB a round. benchmarks/memory.py measures 10,000.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

LINGXI = Path(sys.executable).with_name("lingxi")
MIB = 1024 * 1024


def _peak_rss(rounds: int, folder: Path) -> tuple[int, dict]:
    options = json.dumps({"best_of": rounds, "termination": "fixed_rounds"})
    out = folder / "out.json"
    with out.open("wb") as handle:
        process = subprocess.Popen([str(LINGXI), "protocol", "test", "rock-paper-scissors",
                                    "--options", options, "--state-dir", str(folder / "state"),
                                    "--json", "--no-input"], stdout=handle,
                                   stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, out.read_text()[-2000:]
    return usage.ru_maxrss * 1024, json.loads(out.read_text())


@pytest.mark.skipif(not LINGXI.exists(), reason="the lingxi console script is not installed")
def test_a_long_protocol_test_stays_near_a_short_one_in_rss(tmp_path: Path) -> None:
    (tmp_path / "short").mkdir()
    (tmp_path / "long").mkdir()
    short, _ = _peak_rss(10, tmp_path / "short")
    long, data = _peak_rss(1_000, tmp_path / "long")
    assert data["ok"] and data["host"]["rounds"] == 1_000 and len(data["rounds"]) == 1_000
    assert long - short < 6 * MIB, f"{(long - short) / MIB:.1f} MiB more at 1,000 rounds"


def test_the_summary_is_read_back_from_the_folder_not_kept(tmp_path: Path) -> None:
    from lingxi.session.runner import load_protocol, run_pair

    result = run_pair(load_protocol("rock-paper-scissors"), state_dir=tmp_path,
                      options={"best_of": 30, "termination": "fixed_rounds"}, keep_events=False)
    assert result.events == {"host": [], "guest": []}
    rounds = [e for e in result.iter_events("host") if e["event"] == "round"]
    assert [e["round"] for e in rounds] == list(range(1, 31))


def test_a_transcript_line_is_the_canonical_json_of_its_entry(tmp_path: Path) -> None:
    """The line is assembled around the envelope's bytes; it must equal the full encoding."""
    from lingxi.canonical import canonical_json
    from lingxi.session.runner import load_protocol, run_pair

    run_pair(load_protocol("rock-paper-scissors"), state_dir=tmp_path, seed=2)
    lines = (tmp_path / "guest" / "transcript.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines
    for line in lines:
        assert line == canonical_json(json.loads(line))
