"""Pure rules of built-in mental-poker games, for a protocol's ``proto_mp_*`` hooks.

Each game exposes ``universe()`` (``proto_mp_deck_universe``), ``DEAL``
(``proto_mp_initial_deal``), ``legal_actions`` (the list a person or an
external decider picks from, and ``proto_mp_choose_action``'s domain),
``validate_play`` (``proto_mp_validate_play``), ``apply`` and ``winner``
(``proto_mp_check_winner``). The state is public: hands are hidden by the
cards layer, so the rules see only counts and the cards on the table.
"""

from lingxi.cards.games import crazy_eights, trick

GAMES = {"crazy_eights": crazy_eights, "trick": trick}

__all__ = ["GAMES", "crazy_eights", "trick"]
