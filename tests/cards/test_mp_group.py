"""The group layer and the proofs, attacked directly: off-subgroup points,
garbled scalars, every single item of a shuffle proof tampered with."""

from __future__ import annotations

import pytest

from lingxi.cards import group as g
from lingxi.cards import proofs
from lingxi.cards import shuffle as sh
from lingxi.cards.driver import seeded_entropy

ENT = seeded_entropy("group")
P = g.hash_point(b"test", b"P")
ORDER4 = bytes(32)  # y = 0: order 4 on Ed25519; the identity's encoding in ristretto255
ORDER2 = (2**255 - 19 - 1).to_bytes(32, "little")  # y = -1: the point of order 2
ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")


def test_hash_to_curve_lands_in_the_subgroup() -> None:
    points = {g.hash_point(b"test", bytes([i])) for i in range(20)}
    assert len(points) == 20 and all(g.is_point(p) for p in points)


@pytest.mark.parametrize("torsion", [ORDER2, ORDER8])
def test_small_order_and_mixed_points_are_refused(torsion) -> None:
    """Ed25519's torsion points have no ristretto255 encoding: every operation refuses
    them, so a peer cannot smuggle a cofactor component into a product or a sum."""
    assert not g.is_point(torsion)
    x = g.random_scalar(ENT)
    with pytest.raises(g.Degenerate):
        g.mul(x, torsion)
    with pytest.raises(g.Degenerate):
        g.add(P, torsion)
    with pytest.raises(g.Degenerate):
        g.sub(P, torsion)


def test_the_identity_is_no_key_and_no_product() -> None:
    """All-zero bytes encode the identity: not a point a peer may send (is_point), and
    every product with it is refused (an identity result), so it cannot cancel a layer."""
    identity = ORDER4
    assert not g.is_point(identity)
    with pytest.raises(g.Degenerate):
        g.mul(g.random_scalar(ENT), identity)
    assert g.add(P, identity) == P  # a group element: ristretto255 has no cofactor


def test_non_canonical_and_short_inputs_are_refused() -> None:
    non_canonical = (2**255 - 19 + 1).to_bytes(32, "little")  # y = p + 1
    assert not g.is_point(non_canonical)
    for bad in (non_canonical, b"\x01" * 31, b""):
        with pytest.raises(g.Degenerate):
            g.mul(g.sc_from_int(3), bad)
    assert not g.is_scalar(g.L.to_bytes(32, "little"))
    with pytest.raises(g.Degenerate):
        g.base(g.SCALAR_ZERO)  # the identity is never a valid result


def test_schnorr_proof_binds_key_and_context() -> None:
    x = g.random_scalar(ENT)
    key = g.base(x)
    pok = proofs.prove_key(b"ctx", x, key, ENT)
    assert proofs.verify_key(b"ctx", key, pok)
    assert not proofs.verify_key(b"other", key, pok)
    assert not proofs.verify_key(b"ctx", g.base(g.sc_from_int(5)), pok)
    assert not proofs.verify_key(b"ctx", key, pok[:32] + g.L.to_bytes(32, "little"))


def test_dleq_tells_a_wrong_pair_from_a_garbled_proof() -> None:
    x = g.random_scalar(ENT)
    key, q = g.base(x), g.mul(x, P)
    proof = proofs.prove_dleq(b"ctx", x, key, P, q, ENT)
    assert proofs.verify_dleq(b"ctx", key, P, q, proof) is proofs.Dleq.OK
    other = g.mul(x, g.hash_point(b"test", b"Q"))
    # a proof made honestly with x for a false claim (other is not x·P): the key equation
    # holds, the pair equation does not
    wrong = proofs.prove_dleq(b"ctx", x, key, P, other, ENT)
    assert proofs.verify_dleq(b"ctx", key, P, other, wrong) is proofs.Dleq.MISMATCH
    # the same proof offered for the true pair: the challenge no longer matches
    assert proofs.verify_dleq(b"ctx", key, P, q, wrong) is proofs.Dleq.BAD_PROOF
    assert proofs.verify_dleq(b"ctx2", key, P, q, proof) is proofs.Dleq.BAD_PROOF
    for garbage in (b"", bytes(96), proof[:95], proof[:64] + b"\xff" * 32):
        assert proofs.verify_dleq(b"ctx", key, P, q, garbage) is proofs.Dleq.BAD_PROOF
    assert proofs.verify_dleq(b"ctx", key, P, ORDER4, proof) is not proofs.Dleq.OK


def _small_shuffle(n: int = 8):
    cards = [g.hash_point(b"card", bytes([i])) for i in range(n)]
    x = g.random_scalar(ENT)
    key = g.base(x)
    perm = sh.sample_permutation(ENT, n)
    deck, proof = sh.prove_shuffle(b"ctx", x, key, cards, perm, ENT)
    return cards, x, key, perm, deck, proof


def test_shuffle_proof_verifies_and_every_tampered_item_fails() -> None:
    cards, x, key, perm, deck, proof = _small_shuffle()
    assert sh.verify_shuffle(b"ctx", key, cards, deck, proof)
    assert deck == [g.mul(x, cards[j]) for j in perm]
    for i in range(len(proof)):
        for replacement in (g.hash_point(b"junk", bytes([i])), g.sc_from_int(i + 2)):
            tampered = list(proof)
            if tampered[i] == replacement:
                continue
            tampered[i] = replacement
            assert not sh.verify_shuffle(b"ctx", key, cards, deck, tampered), i


def test_shuffle_proof_binds_statement() -> None:
    cards, x, key, perm, deck, proof = _small_shuffle()
    assert not sh.verify_shuffle(b"ctx2", key, cards, deck, proof)
    assert not sh.verify_shuffle(b"ctx", g.base(g.sc_from_int(9)), cards, deck, proof)
    assert not sh.verify_shuffle(b"ctx", key, cards[::-1], deck, proof)
    swapped = deck[1:2] + deck[:1] + deck[2:]
    assert not sh.verify_shuffle(b"ctx", key, cards, swapped, proof)
    assert not sh.verify_shuffle(b"ctx", key, cards, deck, proof[:-1])
    assert not sh.verify_shuffle(b"ctx", key, cards, deck[:-1], proof)
    for foreign in (ORDER4, ORDER8):  # the identity, and an encoding outside the group
        assert not sh.verify_shuffle(b"ctx", key, cards, [foreign] + deck[1:], proof)


def test_permutations_are_permutations() -> None:
    for n in (2, 3, 52, 100):
        assert sorted(sh.sample_permutation(ENT, n)) == list(range(n))


def test_a_machine_without_ristretto255_gets_one_clear_error(monkeypatch) -> None:
    """No libsodium with ristretto255 under any known name: the layer says what to install
    instead of failing later on a missing symbol."""
    from lingxi.cards import sodium

    monkeypatch.setattr(sodium, "_NAMES", ("libdoes-not-exist.so.1", "libc.so.6"))
    with pytest.raises(sodium.SodiumMissing, match="libsodium 1.0.18"):
        sodium._load()


def test_hash_to_the_group_needs_64_uniform_bytes() -> None:
    from lingxi.cards import sodium

    assert sodium.from_hash(bytes(32)) is None
    assert g.is_point(sodium.from_hash(bytes(range(64))) or b"")
