"""JSON encodings per round of a self-play: how often a record is turned into text.

Plays rock-paper-scissors (fixed rounds) over the in-memory driver, streaming
to a state folder as ``protocol test`` does, under cProfile, for 20 and for
120 rounds, and prints the calls per round (the difference over 100 rounds) of
every JSON encoder entry point: ``json.dumps``, the wire's fast
``canonical_bytes`` (the C encoder) and ``JSONEncoder.encode`` called directly. Issue 22.7 asked
that each record (an event, a transcript link) be encoded once; the figure
before that work was 32 ``json.dumps`` per round.
Run: .venv/bin/python benchmarks/dumps.py
"""

from __future__ import annotations

import cProfile
import pstats
import tempfile

from lingxi.session.runner import load_protocol, run_pair

ENCODERS = {("__init__.py", "dumps"): "json.dumps", ("envelope.py", "canonical_bytes"):
            "wire canonical_bytes", ("encoder.py", "encode"): "JSONEncoder.encode"}


def counts(rounds: int) -> dict[str, int]:
    protocol = load_protocol("rock-paper-scissors")
    profile = cProfile.Profile()
    with tempfile.TemporaryDirectory() as state:
        profile.enable()
        result = run_pair(protocol, options={"best_of": rounds, "termination": "fixed_rounds"},
                          state_dir=state, keep_events=False)
        profile.disable()
    assert result.host.rounds == rounds, result.host
    found = dict.fromkeys(ENCODERS.values(), 0)
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for (filename, _line, name), (calls, *_rest) in stats.items():
        label = ENCODERS.get((filename.rsplit("/", 1)[-1], name))
        if label is not None:
            found[label] += calls
    return found


def main() -> None:
    short, long = counts(20), counts(120)
    per = {label: (long[label] - short[label]) / 100 for label in ENCODERS.values()}
    per["JSONEncoder.encode"] -= per["json.dumps"]  # json.dumps encodes through it
    for label, value in per.items():
        print(f"{label:<22} {value:6.1f} per round")
    print(f"{'all JSON encodings':<22} {sum(per.values()):6.1f} per round")


if __name__ == "__main__":
    main()
