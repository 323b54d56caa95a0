"""Malformed, oversized and hostile messages give typed errors only.

Each example mutates an honest peer message (wrong types, missing or unknown
fields, huge arrays and strings, out-of-range positions, non-points), re-signs
it with the peer's real key half the time so the content checks are reached,
and hands it to a copy of the receiving party. Anything but a CardsError (or
acceptance of a message that is still valid) is a bug. The offline audit is
fuzzed the same way and must always return a report.
"""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lingxi.cards import CardsError, audit
from lingxi.cards.driver import Wire, make_pair
from lingxi.cards.table import signing_bytes

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=False), st.text(max_size=80),
                         st.sampled_from(["00" * 32, "ff" * 32, "AB" * 32, "0" * 192, "-1"]))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)),
    max_leaves=12)
huge = st.sampled_from([["00" * 32] * 9000, "a" * 200_000, list(range(20_000)), 2**40, -5])


def _resign(party, msg: dict) -> dict:
    msg = dict(msg)
    try:
        msg["sig"] = party._signer.sign(signing_bytes(msg)).signature.hex()
    except (TypeError, ValueError):
        pass  # not canonical JSON (NaN, a lone surrogate); leave the old signature
    return msg


def _small_game_transcript() -> dict:
    """A whole game over 10 cards: cheap to replay for every fuzzed transcript."""
    from nacl.signing import SigningKey

    from lingxi.cards import Deal, MentalPokerParty
    from lingxi.cards.driver import seeded_entropy
    universe = [f"c{i}" for i in range(10)]
    hs, gs = b"\x01" * 32, b"\x02" * 32
    deal = Deal(2, 2, 1)
    host = MentalPokerParty("host", "small", universe, seeded_entropy("sh"), signing_seed=hs,
                            peer_identity=bytes(SigningKey(gs).verify_key), deal=deal)
    guest = MentalPokerParty("guest", "small", universe, seeded_entropy("sg"), signing_seed=gs,
                             peer_identity=bytes(SigningKey(hs).verify_key), deal=deal)
    wire = Wire(host, guest)
    wire.send(host.hello())
    wire.send(host.shuffle())
    wire.send(guest.shuffle())
    wire.send(host.play(4))
    wire.send(guest.draw())
    wire.send(guest.play(next(iter(guest.hand()))))
    wire.send(host.open())
    assert audit(host.transcript()).ok
    return host.transcript()


@pytest.fixture(scope="module")
def scene():
    host, guest = make_pair("crazy_eights", "fuzz")
    wire = Wire(host, guest)
    wire.send(host.hello())
    shuffle_msg = host.shuffle()
    wire.send(shuffle_msg)
    before_deal = copy.deepcopy(host)
    guest_shuffle = guest.shuffle()
    wire.send(guest_shuffle)
    wire.send(host.play(14))
    draw = guest.draw()
    host_copy = copy.deepcopy(host)
    wire.send(draw)
    play = guest.play(next(iter(guest.hand())))
    return {"host": host, "guest": guest, "draw": (host_copy, draw, guest),
            "shuffle": (before_deal, guest_shuffle, guest),
            "play": (copy.deepcopy(host), play, guest), "transcript": _small_game_transcript()}


def _deliver(receiver, msg) -> None:
    party = copy.deepcopy(receiver)
    try:
        party.receive(msg, party.check(msg))
    except CardsError as exc:
        assert exc.code.startswith("cards.")


SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@SETTINGS
@given(which=st.sampled_from(["draw", "play", "shuffle"]), field=st.text(max_size=10),
       value=st.one_of(json_values, huge), resign=st.booleans(), drop=st.booleans())
def test_mutated_messages_give_typed_errors(scene, which, field, value, resign, drop) -> None:
    receiver, msg, sender = scene[which]
    msg = dict(msg)
    keys = [k for k in msg if k != "sig"]
    target = keys[len(field) % len(keys)] if field == "" or field not in msg else field
    if drop and target in msg:
        del msg[target]
    else:
        msg[target if field != "new" else "unexpected_field"] = value
    if resign:
        msg = _resign(sender, msg)
    _deliver(receiver, msg)


@pytest.mark.parametrize("field,value", [("note", "\ud800"), ("card", "\udfff"),
                                         ("card", "A" * 300), ("position", True),
                                         ("position", 1.0), ("seq", -1), ("nullifier", "AB" * 32)])
def test_hostile_scalars_give_typed_errors(scene, field, value) -> None:
    receiver, msg, sender = scene["play"]
    for resign in (False, True):
        bad = dict(msg, **{field: value})
        _deliver(receiver, _resign(sender, bad) if resign else bad)


@SETTINGS
@given(value=json_values)
def test_non_messages_give_typed_errors(scene, value) -> None:
    receiver, _, _ = scene["play"]
    _deliver(receiver, value)


@SETTINGS
@given(index=st.integers(0, 400), field=st.sampled_from(
    ["deck", "proof", "positions", "shares", "proofs", "share", "card", "secret", "format",
     "universe", "identities", "deal", "messages", "rejected"]), value=st.one_of(json_values, huge))
def test_fuzzed_transcripts_always_give_a_report(scene, index, field, value) -> None:
    t = copy.deepcopy(scene["transcript"])
    messages = t["messages"]
    if field in ("format", "universe", "identities", "deal", "messages", "rejected"):
        t[field] = value
    else:
        m = messages[index % len(messages)]
        m[field] = value
    report = audit(t)
    assert not report.ok
    assert report.code and report.code.startswith("cards.")
