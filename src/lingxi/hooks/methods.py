"""The documented hook methods, as building blocks for the flow modes.

Each flow mode's descriptor (``lingxi.session.core.registry``) lists the
methods its hooks have, from these definitions; that list is the single source
for skeleton generation (which methods a generated ``hooks.py`` must contain)
and for the check that a loaded hooks class implements every required method.
"""

from __future__ import annotations

from lingxi.records import FrozenRecord, frozen_record


@frozen_record
class HookMethod(FrozenRecord):
    name: str
    signature: str  # parameters after ``self``, as written in a skeleton
    returns: str
    doc: str
    required: bool = True


START = HookMethod(
    "proto_start", "", "None",
    "Called once the session options are known (self.ctx.options). Set up state here.",
    required=False)
NEXT = HookMethod(
    "proto_next_message", "allowed, decision=None", "HookResult",
    "Your turn: return HookResult(response=<payload>) for one of the message names in "
    "`allowed`, or HookResult() to wait when the flow also lets the peer speak now. "
    "`decision` is the value chosen for the DecisionPoint you returned, if any.")
ON_MESSAGE = HookMethod(
    "proto_on_message", "message", "HookResult | None",
    "A validated message from the peer. Return a HookResult with an optional response, "
    "completed=True when the session is over for you, or abort='reason'.")
DECISION_POINT = HookMethod(
    "proto_decision_point", "allowed", "DecisionPoint | None",
    "Optional: before proto_next_message, describe the choice to make (legal values, a "
    "state summary for the decider, your default). None = no decision needed.",
    required=False)
FINISH = HookMethod(
    "proto_finish", "outcome", "dict | None",
    "Optional: the session ended; return a summary (e.g. {'winner': 'host'}) for the outcome.",
    required=False)
DESCRIBE = HookMethod(
    "proto_describe", "message", "str | None",
    "Optional: one readable line for a message in the per-round summary.",
    required=False)
ROUND_POINT = HookMethod(
    "proto_round_point", "round_no", "DecisionPoint",
    "Optional: the decision for this round's value (default: legal = the spec's choices).",
    required=False)
ROUND_CHOOSE = HookMethod(
    "proto_round_choose", "round_no, point", "value",
    "Pick this round's value (one of point.legal). The engine commits to it (SHA256(value:nonce)) "
    "and reveals it; you never build commit or reveal messages yourself.")
ROUND_JUDGE = HookMethod(
    "proto_round_judge", "round_no, host_value, guest_value", "dict",
    "Host only: build the round result message from both revealed values "
    "(include game_over: true when the game ends).")
ROUND_JUDGE_PURE = HookMethod(
    "proto_round_judge_pure", "prior, round_no, host_value, guest_value", "dict",
    "Optional, side-effect free: recompute the judged fields of a round from the previous "
    "round result (`prior`, None in round 1), both values and self.ctx.options. With "
    "spec shadow_judge: true the guest uses it to check every host result.",
    required=False)
ON_INPUT = HookMethod(
    "proto_on_input", "line", "HookResult | None",
    "Free mode: one line of local input (script file or stdin); return the message to send "
    "(HookResult(response=...)) or completed=True to end.")

MP_DECK_UNIVERSE = HookMethod(
    "proto_mp_deck_universe", "", "list[str]",
    "mental_poker: the deck's card labels, in a fixed order (ids: A-Z a-z 0-9 _ . : + -, "
    "2..512 distinct). The engine maps each label to a group element and masks the deck.")
MP_INITIAL_DEAL = HookMethod(
    "proto_mp_initial_deal", "", "dict",
    "mental_poker: how many cards each side is dealt and how many are turned face up: "
    "{'host': n, 'guest': n, 'table': n} (the host turns the table cards first).")
MP_LEGAL_ACTIONS = HookMethod(
    "proto_mp_legal_actions", "view", "list[dict]",
    "mental_poker: every action this side may take now, [] when it is not its move. An "
    "action is {'action': 'play', 'card': label, 'note'?: text}, {'action': 'draw'} or "
    "{'action': 'pass'}. `view` holds role, hand (my faces), table (face-up cards), history "
    "(every public move: by, action, card, note), stock and hand_sizes. With control mode "
    "human or hybrid this list is what the person or decider picks from.")
MP_CHOOSE_ACTION = HookMethod(
    "proto_mp_choose_action", "view, legal", "dict",
    "mental_poker: pick one of `legal` (the autonomous choice, and the fallback or "
    "suggestion in human/hybrid mode). The engine draws, proves and plays the card itself.")
MP_VALIDATE_PLAY = HookMethod(
    "proto_mp_validate_play", "view, role, action", "str | None",
    "mental_poker: why `role`'s `action` is against the rules given the public state in "
    "`view` (None when legal). Asked for every move of both sides; a peer's illegal move "
    "ends the session with mental_poker.illegal_play. The face of a played card is already "
    "proven by the engine.")
MP_CHECK_WINNER = HookMethod(
    "proto_mp_check_winner", "view", "str | None",
    "mental_poker: 'host', 'guest' or 'draw' once the game is over, else None. The host then "
    "opens its masking key, the guest answers, and both sides audit every card.")
MP_POINT = HookMethod(
    "proto_mp_point", "view, legal", "DecisionPoint | None",
    "Optional, mental_poker: this side's move as a player reads it: a prompt (`message`) "
    "and the state that matters (`view`: the top card, the suit to follow, your hand, the "
    "score…), for the person at the terminal or page and for a model. The legal actions "
    "stay the engine's. None keeps the engine's view.",
    required=False)
MP_AUDIT = HookMethod(
    "proto_mp_audit", "view, faces", "str | None",
    "Optional, mental_poker: after both openings, `faces` is the face of every deck "
    "position; return why a hidden rule was broken (e.g. a revoke), else None.",
    required=False)
MP_TURN = HookMethod(
    "proto_mp_turn", "view", "str | None",
    "Optional, mental_poker, side-effect free: whose move it is in the public game ('host' "
    "or 'guest'), None once it is over; from the public parts of `view` only (the hand may "
    "be empty: `lingxi session verify` asks it offline). It decides which side owes the next "
    "step, so a forfeit claimed by the side to move blames that side.",
    required=False)

COMMON_OPTIONAL = (START, DECISION_POINT, FINISH, DESCRIBE)


def ordered(methods: tuple[HookMethod, ...] | list[HookMethod]) -> list[HookMethod]:
    """Required methods first, each name once (the order skeletons are written in)."""
    seen: dict[str, HookMethod] = {}
    for method in methods:
        seen.setdefault(method.name, method)
    return sorted(seen.values(), key=lambda m: not m.required)


def required_names(methods: tuple[HookMethod, ...] | list[HookMethod]) -> list[str]:
    return [m.name for m in ordered(methods) if m.required]
