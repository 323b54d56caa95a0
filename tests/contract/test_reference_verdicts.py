"""Lingxi's verdicts agree with the published implementation's, case by case.

The published validator (aigenora 0.1.4) is never a dependency. Its verdicts
on a corpus over every vector spec and on a seeded hypothesis corpus were
recorded by ``benchmarks/record_reference_verdicts.py`` into
``data/reference_verdicts.json``; every one must match Lingxi's (valid or
not). When a venv with the reference exists (``$LINGXI_REFERENCE_VENV``, by
default the benchmarks' ``/tmp/lingxi-bench-aigenora``), fresh hypothesis
cases are also checked against it live.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from verdict_cases import cases

from lingxi.contract import load_spec

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "reference_verdicts.json"
CHILD = HERE.parents[1] / "benchmarks" / "reference_validator.py"
REFERENCE_PYTHON = Path(os.environ.get("LINGXI_REFERENCE_VENV", "/tmp/lingxi-bench-aigenora")
                        ) / "bin" / "python"
RECORD = json.loads(DATA.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def specs(vectors_dir):
    """The vector specs, in the recording's order."""
    return [load_spec(vectors_dir / "protocol_ids" / name) for name, _ in RECORD["specs"]]


def test_the_recording_covers_every_vector_spec_as_it_is_now(vectors_dir, specs):
    on_disk = sorted(p.name for p in (vectors_dir / "protocol_ids").glob("*.spec.json"))
    assert [name for name, _ in RECORD["specs"]] == on_disk
    for spec, (name, recorded_id) in zip(specs, RECORD["specs"], strict=True):
        assert spec.protocol_id == recorded_id, f"{name} changed: re-run the recorder"
    corpora = {row[0] for row in RECORD["cases"]}
    assert corpora == {"vectors", "hypothesis"}
    per_spec = {row[1] for row in RECORD["cases"] if row[0] == "vectors"}
    assert per_spec == set(range(len(specs)))
    assert 0 < sum(row[3] for row in RECORD["cases"]) < len(RECORD["cases"])


@pytest.mark.parametrize("corpus", ["vectors", "hypothesis"])
def test_every_recorded_verdict_matches(specs, corpus):
    differ = []
    rows = [row for row in RECORD["cases"] if row[0] == corpus]
    for _, index, direction, accepted, reason, text in rows:
        ours = specs[index].validate_message(json.loads(text), direction)
        if (not ours) is not accepted:
            differ.append((RECORD["specs"][index][0], direction, text[:120], reason,
                           [f.code for f in ours]))
    assert not differ, f"{len(differ)} of {len(rows)} differ, e.g. {differ[:3]}"


def _reference_available() -> bool:
    if not REFERENCE_PYTHON.exists():
        return False
    probe = subprocess.run([str(REFERENCE_PYTHON), "-c", "import aigenora.proto.validate"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.fixture(scope="module")
def reference(tmp_path_factory, specs):
    if not _reference_available():
        pytest.skip(f"no reference venv at {REFERENCE_PYTHON.parent.parent} (the benchmarks "
                    "create it; the recorded verdicts above still ran)")
    corpus = tmp_path_factory.mktemp("reference") / "specs.json"
    corpus.write_text(json.dumps({"specs": [s.raw for s in specs], "cases": []}))
    child = subprocess.Popen([str(REFERENCE_PYTHON), str(CHILD), str(corpus)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(index: int, direction: str | None, text: str) -> bool:
        assert child.stdin and child.stdout
        child.stdin.write("check " + json.dumps([index, direction, text]) + "\n")
        child.stdin.flush()
        return json.loads(child.stdout.readline())[0]

    yield ask
    assert child.stdin
    child.stdin.write("quit\n")
    child.stdin.close()
    child.wait(timeout=30)


@settings(max_examples=int(os.environ.get("LINGXI_HYPOTHESIS_EXAMPLES", "150")),
          deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fresh_cases_match_the_reference_live(reference, specs, data):
    index, direction, payload = data.draw(cases(specs))
    text = json.dumps(payload)
    ours = specs[index].validate_message(json.loads(text), direction)
    assert (not ours) is reference(index, direction, text), (payload, ours)
