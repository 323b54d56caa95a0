"""Messages validated per second, against baselines measured in the same run.

Corpus: for every spec in ../shared/vectors/protocol_ids, every message schema
and each direction it travels, valid payloads built by
``lingxi.contract.samples`` plus invalid mutants of them (wrong type, out of
range / bad value, unknown field, missing required field, unknown action).

Measured (best of --repeat runs over the whole corpus):
  lingxi      Spec.validate_message(payload, direction)   (all errors collected)
  jsonschema  the same schemas as JSON Schema 2020-12, validators compiled once,
              schema picked by action, iter_errors() (all errors collected)
  json.loads  parsing each payload's JSON text (the floor any receiver pays)

Run: .venv/bin/python benchmarks/validate.py [--per-schema N] [--repeat R]
"""

from __future__ import annotations

import argparse
import copy
import json
import platform
import random
import time
from importlib import metadata
from pathlib import Path

import jsonschema

from lingxi.contract import load_spec
from lingxi.contract.samples import sample_payload

VECTORS = Path(__file__).resolve().parents[1].parent / "shared" / "vectors" / "protocol_ids"
DIRECTIONS = ("host_to_guest", "guest_to_host")

_HEX = {"hash": 64, "key": 64, "signature": 128}


def to_json_schema(defn: dict) -> dict:
    """A JSON Schema for one field definition (text limits in characters, not bytes)."""
    t = defn["type"]
    if t == "integer":
        out = {"type": "integer"}
        if "min" in defn:
            out["minimum"] = defn["min"]
        if "max" in defn:
            out["maximum"] = defn["max"]
        return out
    if t == "boolean":
        return {"type": "boolean"}
    if t == "enum":
        return {"type": "string", "enum": defn["values"]}
    if t in ("text", "ot_blob"):
        return {"type": "string", "maxLength": defn.get("max_length",
                                                        2000 if t == "text" else 16384)}
    if t in _HEX:
        return {"type": "string", "pattern": f"^[0-9a-f]{{{_HEX[t]}}}$"}
    if t == "nonce":
        return {"type": "string", "pattern": "^[0-9a-f]{16,64}$"}
    if t == "id":
        return {"type": "string", "pattern": "^[A-Za-z0-9_.:-]{1,128}$"}
    if t == "ciphertext":
        return {"type": "string", "pattern": "^(?:[0-9a-f]{2})*$",
                "maxLength": defn.get("max_length", 512)}
    if t == "ticket":
        return {"type": "string", "minLength": 1, "maxLength": 2048}
    if t == "array":
        out = {"type": "array", "items": to_json_schema(defn["items"])}
        if "min_items" in defn:
            out["minItems"] = defn["min_items"]
        if "max_items" in defn:
            out["maxItems"] = defn["max_items"]
        return out
    if t == "json":
        container = defn.get("container", "any")
        return {} if container == "any" else {"type": container}
    raise ValueError(t)


def message_json_schema(schema) -> dict:
    return {"type": "object", "additionalProperties": False,
            "properties": {k: to_json_schema(d) for k, d in schema.fields.items()},
            "required": [k for k, d in schema.fields.items() if d.get("required") is True]}


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
    rng = random.Random(seed)
    corpus = []  # (spec, compiled jsonschema by action, payload, direction, text)
    for path in sorted(VECTORS.glob("*.spec.json")):
        spec = load_spec(path)
        by_action = {}
        for schema in spec.messages.values():
            validator = jsonschema.Draft202012Validator(message_json_schema(schema))
            for action in schema.fields.get("action", {}).get("values", [schema.name]):
                by_action[action] = validator
        for schema in spec.messages.values():
            for direction in DIRECTIONS:
                if not schema.matches(direction):
                    continue
                for _ in range(per_schema):
                    payload = sample_payload(schema, rng)
                    for item in [payload, *mutants(payload, schema, rng)]:
                        corpus.append((spec, by_action, item, direction,
                                       json.dumps(item, separators=(",", ":"))))
    return corpus


def best_rate(run, count: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-schema", type=int, default=20,
                        help="valid payloads per (message, direction); each gets ~5 mutants")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    corpus = build_corpus(args.per_schema, args.seed)
    n = len(corpus)
    verdicts = [not spec.validate_message(p, d) for spec, _, p, d, _ in corpus]
    valid = sum(verdicts)

    def lingxi_run():
        for spec, _, payload, direction, _ in corpus:
            spec.validate_message(payload, direction)

    def jsonschema_run():
        for _, by_action, payload, _, _ in corpus:
            validator = by_action.get(payload.get("action"))
            if validator is not None:
                list(validator.iter_errors(payload))

    def loads_run():
        loads = json.loads
        for *_, text in corpus:
            loads(text)

    def loads_and_validate_run():
        loads = json.loads
        for spec, _, _, direction, text in corpus:
            spec.validate_message(loads(text), direction)

    valid_only = [c for c, ok in zip(corpus, verdicts, strict=True) if ok]

    def lingxi_valid_run():
        for spec, _, payload, direction, _ in valid_only:
            spec.validate_message(payload, direction)

    def jsonschema_valid_run():
        for _, by_action, payload, _, _ in valid_only:
            list(by_action[payload["action"]].iter_errors(payload))

    rates = {
        "lingxi validate_message": best_rate(lingxi_run, n, args.repeat),
        "jsonschema iter_errors (baseline)": best_rate(jsonschema_run, n, args.repeat),
        "json.loads only (baseline)": best_rate(loads_run, n, args.repeat),
        "json.loads + lingxi validate": best_rate(loads_and_validate_run, n, args.repeat),
    }
    valid_rates = {
        "lingxi, valid messages only": best_rate(lingxi_valid_run, valid, args.repeat),
        "jsonschema, valid messages only": best_rate(jsonschema_valid_run, valid, args.repeat),
    }
    agree = sum(
        (not list(by_action[p["action"]].iter_errors(p))) == ok if p["action"] in by_action
        else not ok
        for (spec, by_action, p, d, _), ok in zip(corpus, verdicts, strict=True))

    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"jsonschema {metadata.version('jsonschema')}")
    print(f"corpus: {n} messages from {len({id(c[0]) for c in corpus})} vector specs "
          f"({valid} valid, {n - valid} invalid); best of {args.repeat}")
    base = rates["jsonschema iter_errors (baseline)"]
    floor = rates["json.loads only (baseline)"]
    for name, rate in rates.items():
        print(f"  {name:36} {rate:12,.0f} msg/s   x{rate / base:6.2f} vs jsonschema   "
              f"x{rate / floor:5.2f} vs json.loads")
    lx, js = valid_rates.values()
    print(f"  {'lingxi, valid messages only':36} {lx:12,.0f} msg/s   x{lx / js:6.2f} vs jsonschema "
          "(valid only)")
    print(f"  {'jsonschema, valid messages only':36} {js:12,.0f} msg/s")
    print(f"verdict agreement with jsonschema: {agree}/{n} (differences: byte vs character "
          "limits, json size limits, direction checks)")


if __name__ == "__main__":
    main()
