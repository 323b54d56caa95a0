"""Message validation against json.loads and the published validator, in one run.

Corpus: for every spec in ../shared/vectors/protocol_ids, every message schema
and each direction it travels, valid payloads built by
``lingxi.contract.samples`` plus invalid mutants of them (wrong type, out of
range, unknown field, missing required field, unknown action).

Measured, in interleaved rounds (CPU time of the process doing the work):
  lingxi      Spec.validate_message(payload, direction) on the parsed payloads
              (every problem collected as findings)
  reference   aigenora 0.1.4's validate_message_obj on the same parsed payloads,
              in its own venv and process (benchmarks/reference_validator.py)
  json.loads  parsing each payload's JSON text (the floor any receiver pays)
The verdicts (valid or not) of lingxi and the reference are compared on every
case; any difference is printed and makes the exit status 1. Without the
reference the script exits non-zero.

Goals (issue 22.2): lingxi >= 0.6 of json.loads and >= 3x the reference.
Run: .venv/bin/python benchmarks/validate.py [--per-schema N] [--rounds R]
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import reference

from lingxi.contract import load_spec
from lingxi.contract.samples import sample_payload

VECTORS = Path(__file__).resolve().parents[1].parent / "shared" / "vectors" / "protocol_ids"
CHILD = Path(__file__).resolve().parent / "reference_validator.py"
DIRECTIONS = ("host_to_guest", "guest_to_host")


def mutants(payload: dict, schema, rng: random.Random) -> list[dict]:
    """Realistic invalid versions of a valid payload."""
    out = []
    fields = [k for k in schema.fields if k != "action"]
    if fields:
        name = rng.choice(fields)
        bad = copy.deepcopy(payload)
        bad[name] = {"integer": "7", "boolean": "true"}.get(schema.fields[name]["type"], 12345)
        out.append(bad)
    ints = [k for k, d in schema.fields.items() if d["type"] == "integer" and "max" in d]
    if ints:
        name = rng.choice(ints)
        out.append({**payload, name: schema.fields[name]["max"] + 1})
    out.append({**payload, "cheat": True})
    required = [k for k, d in schema.fields.items() if d.get("required") and k != "action"]
    if required:
        bad = dict(payload)
        bad.pop(rng.choice(required))
        out.append(bad)
    out.append({**payload, "action": "no_such_action"})
    return out


def build_corpus(per_schema: int, seed: int):
    """``(specs, cases)``: cases are (spec index, payload, direction, JSON text)."""
    rng = random.Random(seed)
    specs, cases = [], []
    paths = sorted(VECTORS.glob("*.spec.json"))
    if not paths:
        raise SystemExit(f"no vector specs under {VECTORS}")
    for path in paths:
        spec = load_spec(path)
        index = len(specs)
        specs.append(spec)
        for schema in spec.messages.values():
            for direction in DIRECTIONS:
                if not schema.matches(direction):
                    continue
                for _ in range(per_schema):
                    payload = sample_payload(schema, rng)
                    for item in [payload, *mutants(payload, schema, rng)]:
                        cases.append((index, item, direction,
                                      json.dumps(item, separators=(",", ":"))))
    return specs, cases


class Reference:
    """The published validator in its own process, driven over stdin/stdout."""

    def __init__(self, python: Path, specs, cases) -> None:
        self._file = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
        json.dump({"specs": [s.raw for s in specs],
                   "cases": [[i, d, t] for i, _, d, t in cases]}, self._file)
        self._file.close()
        self._proc = subprocess.Popen([str(python), str(CHILD), self._file.name],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, command: str) -> str:
        assert self._proc.stdin and self._proc.stdout
        self._proc.stdin.write(command + "\n")
        self._proc.stdin.flush()
        line = self._proc.stdout.readline()
        if not line:
            raise SystemExit("baseline missing: the reference validator process ended")
        return line

    def close(self) -> None:
        if self._proc.poll() is None:
            assert self._proc.stdin
            self._proc.stdin.write("quit\n")
            self._proc.stdin.close()
            self._proc.wait(timeout=30)
        Path(self._file.name).unlink(missing_ok=True)


def cpu_seconds(run) -> float:
    start = time.process_time()
    run()
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-schema", type=int, default=20,
                        help="valid payloads per (message, direction); each gets ~5 mutants")
    parser.add_argument("--rounds", type=int, default=7,
                        help="interleaved rounds; each times one pass of every contender")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    specs, cases = build_corpus(args.per_schema, args.seed)
    n = len(cases)
    ref = Reference(reference.ensure(), specs, cases)
    try:
        ours = [not specs[i].validate_message(p, d) for i, p, d, _ in cases]
        theirs = json.loads(ref.ask("verdicts"))
        differ = [(c, ok, r) for c, ok, r in zip(cases, ours, theirs, strict=True)
                  if ok != r[0]]

        def lingxi_run():
            for i, payload, direction, _ in cases:
                specs[i].validate_message(payload, direction)

        def loads_run():
            loads = json.loads
            for *_, text in cases:
                loads(text)

        def loads_and_validate_run():
            loads = json.loads
            for i, _, direction, text in cases:
                specs[i].validate_message(loads(text), direction)

        times: dict[str, list[float]] = {"lingxi": [], "reference": [], "loads": [],
                                         "loads+lingxi": []}
        for _ in range(args.rounds):
            times["lingxi"].append(cpu_seconds(lingxi_run))
            times["reference"].append(float(ref.ask("time")))
            times["loads"].append(cpu_seconds(loads_run))
            times["loads+lingxi"].append(cpu_seconds(loads_and_validate_run))
    finally:
        ref.close()

    valid = sum(ours)
    by_spec = Counter(specs[i].name for i, *_ in cases)
    print(f"python {platform.python_version()} on {platform.machine()}; reference "
          f"{reference.PACKAGE} {reference.VERSION} in {reference.VENV}")
    print(f"corpus: {n} messages from {len(specs)} vector specs ({valid} valid, {n - valid} "
          f"invalid); {args.rounds} interleaved rounds, CPU time per pass")
    print("  per spec: " + ", ".join(f"{name} {count}" for name, count in sorted(by_spec.items())))
    best = {k: min(v) for k, v in times.items()}
    rate = {k: n / t for k, t in best.items()}
    for name, label in (("lingxi", "lingxi validate_message"),
                        ("reference", "reference validate_message_obj (baseline)"),
                        ("loads", "json.loads only (baseline)"),
                        ("loads+lingxi", "json.loads + lingxi validate")):
        print(f"  {label:44} {rate[name]:11,.0f} msg/s  {best[name] * 1000:8.2f} ms/pass "
              f"(best of {args.rounds})")
    vs_loads = [lo / lx for lx, lo in zip(times["lingxi"], times["loads"], strict=True)]
    vs_ref = [rf / lx for lx, rf in zip(times["lingxi"], times["reference"], strict=True)]
    print(f"lingxi vs json.loads: {best['loads'] / best['lingxi']:.2f} of its rate on the best "
          f"passes; per round {min(vs_loads):.2f}-{max(vs_loads):.2f}, median "
          f"{statistics.median(vs_loads):.2f}  (goal >= 0.6)")
    print(f"lingxi vs reference:  {best['reference'] / best['lingxi']:.2f}x its rate on the "
          f"best passes; per round {min(vs_ref):.2f}-{max(vs_ref):.2f}x, median "
          f"{statistics.median(vs_ref):.2f}x  (goal >= 3)")
    print(f"verdicts agree with the reference on {n - len(differ)}/{n} cases")
    for (i, payload, direction, _), ok, (_, reason) in differ[:20]:
        print(f"  DIFFER {specs[i].name} {direction}: lingxi {'accepts' if ok else 'refuses'}, "
              f"reference {reason or 'accepts'}: {json.dumps(payload)[:160]}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
