"""Fast paths must agree with the general code they shortcut, on good and bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lingxi.canonical import canonical_bytes as reference_canonical
from lingxi.wire.envelope import _DECODER, canonical_bytes, decode_json

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**20, 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                               max_size=4),
    max_leaves=15,
)


def _outcome(fn, text):
    try:
        return "ok", fn(text)
    except (ValueError, RecursionError) as error:
        return "error", type(error).__name__, str(error)


@settings(max_examples=300, deadline=None)
@given(value=st.dictionaries(st.text(max_size=6), json_values, max_size=6))
def test_fast_canonical_bytes_equals_lingxi_canonical(value):
    assert canonical_bytes(value) == reference_canonical(value)


@pytest.mark.parametrize("bad", [{"x": float("nan")}, {"x": float("inf")}, {"x": object()},
                                 {"x": {1, 2}}, {"x": b"bytes"}])
def test_fast_canonical_bytes_refuses_what_canonical_refuses(bad):
    with pytest.raises((ValueError, TypeError)):
        reference_canonical(bad)
    with pytest.raises((ValueError, TypeError)):
        canonical_bytes(bad)


def test_a_cyclic_payload_is_refused_not_a_crash():
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises((ValueError, RecursionError)):
        canonical_bytes(cyclic)


@settings(max_examples=400, deadline=None)
@given(value=json_values, before=st.sampled_from(["", " ", "\n", "x"]),
       after=st.sampled_from(["", " ", "\t\n", "}", ",", "x", "{}"]),
       cut=st.integers(0, 40))
def test_decode_json_agrees_with_the_full_decoder(value, before, after, cut):
    text = before + json.dumps(value, ensure_ascii=False) + after
    for candidate in (text, text[:cut], text[cut:]):
        assert _outcome(decode_json, candidate) == _outcome(_DECODER.decode, candidate)


@pytest.mark.parametrize("text", ['{"a":NaN}', '{"a":Infinity}', '{"a":1}{"b":2}', '{"a":1',
                                  '{"a" 1}', "{", "", "[" * 5000 + "]" * 5000,
                                  '{"a":"\\ud800"}', '{"a":1,"a":2}'])
def test_decode_json_edge_cases_agree(text):
    assert _outcome(decode_json, text) == _outcome(_DECODER.decode, text)
