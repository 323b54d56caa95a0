"""Record the published validator's verdicts for the differential test.

aigenora must never be a Lingxi dependency, so ``make test`` cannot ask it
directly. This script asks it once, in its own venv (``reference.py``), and
writes what it said to ``tests/contract/data/reference_verdicts.json``:

- the vector corpus: every message of every spec in ../shared/vectors, each
  way, valid and with each field pushed to and past its bounds
  (``verdict_cases.corpus_cases``);
- a hypothesis corpus: a seeded draw of ``verdict_cases.cases`` (valid
  messages with 0-3 random changes each).

``tests/contract/test_reference_verdicts.py`` then checks Lingxi's verdict on
every recorded case (and, when the reference venv exists, on fresh cases
live). Re-run after changing the case generators or the vectors:

Run: .venv/bin/python benchmarks/record_reference_verdicts.py [--examples N]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

import reference
from hypothesis import HealthCheck, Phase, given, seed, settings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "contract"))

from verdict_cases import cases, corpus_cases  # noqa: E402

from lingxi.contract import load_spec  # noqa: E402

VECTORS = ROOT.parent / "shared" / "vectors" / "protocol_ids"
OUT = ROOT / "tests" / "contract" / "data" / "reference_verdicts.json"
CHILD = Path(__file__).resolve().parent / "reference_validator.py"
SEED = 20261201


def _text(payload) -> str:
    """Compact JSON; non-ASCII as itself unless a lone surrogate forces escapes."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(payload, separators=(",", ":"))
    return text


def hypothesis_cases(specs, count: int) -> list:
    drawn: list = []

    @seed(SEED)
    @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(cases(specs))
    def collect(case):
        drawn.append(case)

    collect()
    return drawn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=600,
                        help="cases in the hypothesis corpus")
    args = parser.parse_args()
    paths = sorted(VECTORS.glob("*.spec.json"))
    if not paths:
        raise SystemExit(f"no vector specs under {VECTORS}")
    specs = [load_spec(path) for path in paths]
    corpora = {"vectors": corpus_cases(specs, random.Random(SEED)),
               "hypothesis": hypothesis_cases(specs, args.examples)}
    flat = [(name, case) for name, group in corpora.items() for case in group]
    texts = [_text(payload) for _, (_, _, payload) in flat]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"specs": [s.raw for s in specs],
                   "cases": [[i, d, t] for (_, (i, d, _)), t in zip(flat, texts, strict=True)]},
                  f)
    try:
        done = subprocess.run([str(reference.ensure()), str(CHILD), f.name], input="verdicts\n",
                              capture_output=True, text=True, check=True)
    finally:
        Path(f.name).unlink()
    verdicts = json.loads(done.stdout.splitlines()[0])
    head = {"reference": f"{reference.PACKAGE} {reference.VERSION}",
            "recorded_by": "benchmarks/record_reference_verdicts.py",
            "specs": [[path.name, spec.protocol_id] for path, spec in zip(paths, specs,
                                                                           strict=True)],
            "row": ["corpus", "spec index", "direction", "accepted", "reason (cut)", "payload"]}
    rows = [json.dumps([name, i, d, ok, reason[:60], text], ensure_ascii=False)
            for (name, (i, d, _)), text, (ok, reason) in zip(flat, texts, verdicts, strict=True)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # one case per line, so a re-recording shows as a readable diff
    body = json.dumps(head, ensure_ascii=False)[:-1] + ', "cases": [\n' + ",\n".join(rows)
    OUT.write_text(body + "\n]}\n", encoding="utf-8")
    accepted = sum(ok for ok, _ in verdicts)
    print(f"{len(flat)} cases ({len(corpora['vectors'])} vector, {len(corpora['hypothesis'])} "
          f"hypothesis), {accepted} accepted by the reference -> {OUT.relative_to(ROOT)} "
          f"({OUT.stat().st_size:,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
