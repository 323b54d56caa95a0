"""Fairness: a one-sided adversarial permutation still gives a uniform deal, and
a curious party that records everything predicts unseen cards only at chance.

Deterministic (seeded entropy) and fast: the distribution test runs the real
permutation sampler and the real composition of the two shuffles but no
proofs; the prediction test runs the real masking (no proofs) over many deals
and the real protocol over a few games. Each has a control that breaks the
property the way the published implementation did, to show the test can fail.
"""

from __future__ import annotations

import math
import random

from lingxi.cards import group as g
from lingxi.cards.driver import Wire, make_pair, seeded_entropy
from lingxi.cards.games import crazy_eights
from lingxi.cards.party import MentalPokerParty
from lingxi.cards.shuffle import mask_and_permute, permute, sample_permutation
from lingxi.cards.table import CARD_DOMAIN

UNIVERSE = crazy_eights.universe()
N = len(UNIVERSE)
CHI2_CRIT_51_P001 = 86.66  # chi-square, 51 degrees of freedom, p = 0.001
DEALS = 3000


def _chi2(counts: list[int], total: int) -> float:
    expected = total / len(counts)
    return sum((c - expected) ** 2 / expected for c in counts)


def _deal(first_perm: list[int], second_perm: list[int]) -> list[str]:
    """Faces by final position, composed exactly as the protocol does."""
    return permute(permute(UNIVERSE, first_perm), second_perm)


ADVERSARIAL = {
    "identity": lambda prev: list(range(N)),
    "reversed": lambda prev: list(range(N))[::-1],
    "aces_first": lambda prev: [0, 13, 26, 39] + [i for i in range(N) if i % 13],
    # replay: undo the honest side's permutation from the previous game (known after its opening)
    "replay_previous_inverse": lambda prev: sorted(range(N), key=lambda i: prev[i]),
}


def _first_card_counts(adversary: str, adversary_first: bool, deals: int = DEALS,
                       honest_shuffles: bool = True) -> list[int]:
    entropy = seeded_entropy(f"fair-{adversary}-{adversary_first}")
    counts = [0] * N
    prev = list(range(N))
    for _ in range(deals):
        honest = sample_permutation(entropy, N) if honest_shuffles else list(range(N))
        adv = ADVERSARIAL[adversary](prev)
        faces = _deal(adv, honest) if adversary_first else _deal(honest, adv)
        counts[UNIVERSE.index(faces[0])] += 1
        prev = honest
    return counts


def test_one_sided_adversarial_permutations_still_deal_uniformly() -> None:
    for adversary in ADVERSARIAL:
        for first in (True, False):
            chi2 = _chi2(_first_card_counts(adversary, first), DEALS)
            assert chi2 < CHI2_CRIT_51_P001, (adversary, first, chi2)


def test_control_without_the_honest_shuffle_is_caught_by_the_chi_square() -> None:
    chi2 = _chi2(_first_card_counts("aces_first", False, honest_shuffles=False), DEALS)
    assert chi2 > 100 * CHI2_CRIT_51_P001


def test_sampler_is_uniform_over_positions() -> None:
    entropy = seeded_entropy("sampler")
    counts = [[0] * N for _ in range(3)]
    for _ in range(DEALS):
        perm = sample_permutation(entropy, N)
        for row, pos in zip(counts, (0, 17, 51), strict=True):
            row[perm[pos]] += 1
    for row in counts:
        assert _chi2(row, DEALS) < CHI2_CRIT_51_P001


class _FixedGuest(MentalPokerParty):
    """A guest whose permutation is chosen adversarially (reversed), with real proofs."""

    def prepare_shuffle(self):
        from lingxi.cards import shuffle as sh
        from lingxi.cards.party import PreparedShuffle
        perm = list(range(self.params.n))[::-1]
        deck, proof = sh.prove_shuffle(self._ctx("shuffle"), self._secret, self.key,
                                       self.table.decks[-1], perm, self._entropy)
        return PreparedShuffle(self.table.head.hex(), tuple(perm), tuple(deck), tuple(proof))


def test_real_protocol_composes_shuffles_as_simulated() -> None:
    host, guest = make_pair("crazy_eights", "compose", cls_guest=_FixedGuest)
    wire = Wire(host, guest)
    wire.send(host.hello())
    prep = host.prepare_shuffle()
    wire.send(host.shuffle(prep))
    wire.send(guest.shuffle())
    wire.send(host.play(14))
    wire.send(host.open())
    assert host.faces == _deal(list(prep.perm), list(range(N))[::-1])
    assert host.faces == guest.faces


# -- a curious party predicting unseen cards --------------------------------------------------

POINTS = [g.hash_point(CARD_DOMAIN, c.encode()) for c in UNIVERSE]


def _predictors(view: dict) -> dict[str, callable]:
    """Guesses of the face at a position from everything the curious side holds."""
    own_perm, stripped = view["perm"], view["stripped"]
    return {
        # if the other shuffle leaked or kept order, my own order would show through
        "my_order": lambda k: UNIVERSE[own_perm[k]],
        "universe_order": lambda k: UNIVERSE[k],
        # any structure in the other side's masked points (a byte of my unmasked view)
        "point_bytes": lambda k: UNIVERSE[stripped[k][0] % N],
        "point_parity": lambda k: UNIVERSE[(stripped[k][31] & 0x7F) % N],
    }


def _simulated_view(seed: int, honest_first: bool = True) -> tuple[dict, dict, list[str]]:
    """Real masking and shuffles, no proofs: the host's and guest's views and the faces."""
    ent = seeded_entropy(f"view-{seed}")
    xh, xg = g.random_scalar(ent), g.random_scalar(ent)
    ph = sample_permutation(ent, N) if honest_first else list(range(N))
    pg = sample_permutation(ent, N)
    d1 = mask_and_permute(xh, POINTS, ph)
    d2 = mask_and_permute(xg, d1, pg)
    inv_h, inv_g = g.sc_inv(xh), g.sc_inv(xg)
    faces = _deal(ph, pg)
    host = {"role": "host", "perm": ph, "stripped": [g.mul(inv_h, e) for e in d2]}
    guest = {"role": "guest", "perm": pg, "stripped": [g.mul(inv_g, e) for e in d2]}
    return host, guest, faces


def _score(views: list[tuple[dict, list[str], set[int]]]) -> dict[str, tuple[int, float, float]]:
    """Hits per predictor, with the chance expectation and variance (best blind guess)."""
    out: dict[str, list[float]] = {}
    for view, faces, unseen in views:
        p = 1 / len(unseen)
        for name, guess in _predictors(view).items():
            hits, exp, var = out.setdefault(name, [0, 0.0, 0.0])
            hits += sum(guess(k) == faces[k] for k in unseen)
            out[name] = [hits, exp + p * len(unseen), var + p * (1 - p) * len(unseen)]
    return {k: (int(v[0]), v[1], v[2]) for k, v in out.items()}


def _at_chance(scores) -> bool:
    return all(h <= e + 4 * math.sqrt(v) + 1 for h, e, v in scores.values())


def _views(games: int, honest_first: bool = True):
    deal = crazy_eights.DEAL
    mine = {"host": set(deal.positions("host")), "guest": set(deal.positions("guest"))}
    out = []
    for seed in range(games):
        host, guest, faces = _simulated_view(seed, honest_first)
        out.append((host, faces, set(range(N)) - mine["host"]))
        out.append((guest, faces, set(range(N)) - mine["guest"]))
    return out


def test_curious_party_predicts_unseen_cards_at_chance() -> None:
    scores = _score(_views(40))
    assert _at_chance(scores), scores


def test_control_with_the_published_flaw_is_predicted() -> None:
    # the first shuffler keeps universe order (only one side really shuffles)
    scores = _score(_views(10, honest_first=False))
    assert not _at_chance(scores)
    hits, expected, _ = scores["my_order"]
    assert hits > 10 * expected


def test_curious_party_on_real_games_predicts_at_chance() -> None:
    views = []
    for seed in range(3):
        host, guest = make_pair("crazy_eights", f"curious-{seed}")
        wire = Wire(host, guest)
        perms = {}

        def shuffled(p: MentalPokerParty, perms: dict = perms) -> dict:
            prep = p.prepare_shuffle()
            perms[p.role] = list(prep.perm)
            return p.shuffle(prep)
        wire.send(host.hello())
        wire.send(shuffled(host))
        wire.send(shuffled(guest))
        wire.send(host.play(14))
        final = host.table.decks[-1]
        recorded = {r: p for r, p in (("host", host), ("guest", guest))}
        wire.send(host.open())
        faces = host.faces
        for role, party in recorded.items():
            inv = g.sc_inv(party._secret)
            view = {"role": role, "perm": perms[role], "stripped": [g.mul(inv, e) for e in final]}
            unseen = set(range(N)) - set(party.cards) - set(party.table.played)
            views.append((view, faces, unseen))
    assert _at_chance(_score(views))


def test_seeded_entropy_is_deterministic() -> None:
    a, b = seeded_entropy(1), seeded_entropy(1)
    assert a(40) == b(40)
    assert random.Random(1).randbytes(8) == seeded_entropy(1)(8)
