"""The project's own spec corpus (tests/contract/corpus): complete, valid, and hashed by the rule.

The structural and property tests run on these specs so that a clone without
the published vectors still exercises every flow mode, field type and
parameter type. This module checks that promise, and recomputes each id with
an independent, deliberately plain implementation of the protocol_id rule.
"""

from __future__ import annotations

import hashlib
import json

from lingxi.contract import SUPPORTED_MODES, load_spec
from lingxi.contract.check import KNOWN_FUTURE_MODES
from lingxi.contract.fields import MESSAGE_TYPES, PARAMETER_TYPES


def _types(defn: dict) -> set[str]:
    found = {defn["type"]}
    if defn["type"] == "array":
        found |= _types(defn["items"])
    return found


def _docs(corpus) -> dict[str, dict]:
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in corpus.items()}


def test_corpus_covers_every_flow_mode_field_type_and_parameter_type(corpus):
    docs = _docs(corpus).values()
    modes = {(d.get("flow") or {}).get("mode", "session_loop") for d in docs}
    assert modes == set(SUPPORTED_MODES) | set(KNOWN_FUTURE_MODES)
    field_types = {t for d in docs for m in d["messages"] for f in m["fields"].values()
                   for t in _types(f)}
    assert field_types == set(MESSAGE_TYPES)
    param_types = {p["type"] for d in docs for p in (d.get("parameters") or {}).values()}
    assert param_types == set(PARAMETER_TYPES)


def test_every_corpus_spec_loads_with_only_the_mode_warning(corpus):
    for name, path in corpus.items():
        spec = load_spec(path)
        expected = set() if spec.supported else {"spec.mode_not_supported"}
        assert {w.code for w in spec.warnings} == expected, name


def _plain_id(doc: dict) -> str:
    subset = {k: doc[k] for k in ("messages", "rules", "choices", "commit_reveal", "seats")
              if k in doc}
    flow = doc.get("flow") or {}
    kept = {}
    if flow.get("phases"):
        kept["phases"] = flow["phases"]
    if "mode" in flow and flow["mode"] != "session_loop":
        kept["mode"] = flow["mode"]
    extra = {"simultaneous_round": "round", "authoritative_realtime": "realtime",
             "authoritative_group": "group"}.get(flow.get("mode"))
    if extra in flow:
        kept[extra] = flow[extra]
    if kept:
        subset["flow"] = kept
    if "parameters" in doc:
        subset["parameters"] = {n: {k: v for k, v in p.items() if k != "default"}
                                for n, p in doc["parameters"].items()}
    if "timing" in doc:
        subset["timing"] = doc["timing"]
    text = json.dumps(subset, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_corpus_ids_follow_the_rule(corpus):
    for name, doc in _docs(corpus).items():
        assert load_spec(corpus[name]).protocol_id == _plain_id(doc), name
