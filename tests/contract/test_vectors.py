"""Every shared vector loads, hashes to its published id, and is usable."""

from __future__ import annotations

import json

import pytest

from lingxi.contract import SUPPORTED_MODES, canonical_subset, load_spec, protocol_id


def test_every_vector_hashes_to_its_published_id(protocol_vectors):
    assert len(protocol_vectors) >= 8
    for name, (path, published) in protocol_vectors.items():
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert protocol_id(doc) == published, name
        assert load_spec(path).protocol_id == published, name


def test_every_vector_loads_and_unsupported_modes_are_flagged(protocol_vectors):
    for name, (path, _) in protocol_vectors.items():
        spec = load_spec(path)
        codes = {w.code for w in spec.warnings}
        if spec.flow.mode in SUPPORTED_MODES:
            assert spec.supported and "spec.mode_not_supported" not in codes, name
        else:
            assert not spec.supported and "spec.mode_not_supported" in codes, name


@pytest.mark.parametrize("key", ["name", "description", "type", "family", "decision",
                                 "pricing", "spec_version", "shadow_judge"])
def test_presentation_keys_do_not_change_the_id(protocol_vectors, key):
    path, published = protocol_vectors["rock-paper-scissors.spec.json"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc[key] = {"changed": True}
    assert protocol_id(doc) == published


@pytest.mark.parametrize("key", ["messages", "rules", "choices", "commit_reveal", "timing"])
def test_contract_keys_change_the_id(protocol_vectors, key):
    path, published = protocol_vectors["rock-paper-scissors.spec.json"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc[key] = ["changed"]
    assert protocol_id(doc) != published


def test_parameter_default_is_outside_the_id_but_bounds_are_inside(protocol_vectors):
    path, published = protocol_vectors["crazy-eights.spec.json"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["parameters"]["hand_size"]["default"] = 7
    assert protocol_id(doc) == published
    doc["parameters"]["hand_size"]["max"] = 8
    assert protocol_id(doc) != published


def test_flow_subset_rules():
    assert canonical_subset({"flow": {"mode": "session_loop", "phases": []}}) == {}
    assert canonical_subset({"flow": {"mode": "free", "end_when": "either_ends"}}) == {
        "flow": {"mode": "free"}}
    sub = canonical_subset({"flow": {"mode": "simultaneous_round", "round": {"a": 1},
                                     "realtime": {"b": 2}}})
    assert sub == {"flow": {"mode": "simultaneous_round", "round": {"a": 1}}}
    sub = canonical_subset({"flow": {"mode": "authoritative_group", "group": {"g": 1},
                                     "round": {"a": 1}}})
    assert sub == {"flow": {"mode": "authoritative_group", "group": {"g": 1}}}
