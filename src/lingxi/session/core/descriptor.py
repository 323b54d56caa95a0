"""One flow mode, described once: machine, hooks, cheats, summary, offline check.

A :class:`FlowMode` is everything the runtime knows about a mode. Adding a mode
means writing its machine and one descriptor, and registering it in
:mod:`lingxi.session.core.registry`; nothing else branches on mode names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from lingxi.canonical import canonical_json
from lingxi.hooks.methods import HookMethod, ordered, required_names
from lingxi.records import FrozenRecord, frozen_record

if TYPE_CHECKING:
    from lingxi.session.core.adversaries import Case
    from lingxi.session.core.machine import SessionMachine


def _compact(payload: dict[str, Any]) -> str:
    rest = {k: v for k, v in payload.items() if k != "action"}
    text = canonical_json(rest) if rest else ""
    if len(text) > 100:
        text = text[:97] + "..."
    return f"{payload.get('action')} {text}".strip()


def describe(hooks: Any, payload: dict[str, Any]) -> str | None:
    """The hooks' one-line description of a message, or None."""
    try:
        text = hooks.proto_describe(payload)
    except Exception:  # a summary must never fail a finished session
        return None
    return str(text) if text else None


def message_lines(events: Iterable[dict[str, Any]], hooks: Any) -> list[str]:
    """One line per message sent or received (proto_describe, else a compact payload)."""
    lines: list[str] = []
    for event in events:
        if event["event"] not in ("message.sent", "message.received"):
            continue
        sender = event["role"] if event["event"] == "message.sent" else (
            "guest" if event["role"] == "host" else "host")
        text = describe(hooks, event["payload"])
        lines.append(f"{sender}: {text or _compact(event['payload'])}")
    return lines


@frozen_record
class FlowMode(FrozenRecord):
    """A flow mode as the runtime runs it.

    - ``machine_for(spec)``: the machine class for a spec of this mode;
    - ``hook_methods``: every documented hook of the mode, with its signature;
    - ``skeleton_methods(raw)``: the methods a generated ``hooks.py`` contains
      (default: the required ones);
    - ``adversarial_cases(spec, honest)``: the mode's own cheating peers, given
      an honest self-play's events per role;
    - ``out_of_phase_case(spec, cheater)``: replaces the generic out-of-phase
      cheat when the mode's opening differs;
    - ``summary(events, hooks)``: readable lines for a finished session;
    - ``verify(entries, spec)``: an optional offline check of a transcript
      (problems as strings), run by ``lingxi session verify``;
    - ``judge(entries, spec, hooks)``: optional, the verdict a third party
      reaches from one record (``{"verdict", "problems", "notes", ...}``),
      ``hooks`` making the verifier's own started hooks (the game's rules) or
      None; used instead of ``verify`` when present;
    - ``compare(entries_a, entries_b, spec, hooks)``: optional, what two sides'
      records of one session show together (``lingxi session compare``);
    - ``takes_input``: the local side feeds the session lines (``--input``, a page's
      text box: ``proto_on_input``), instead of the hooks alone choosing each message.
    """

    name: str
    machine_for: Callable[[Any], type[SessionMachine]]
    hook_methods: tuple[HookMethod, ...]
    summary: Callable[[Iterable[dict[str, Any]], Any], list[str]] = message_lines  # one pass
    adversarial_cases: Callable[[Any, dict[str, list[dict[str, Any]]]], list[Case]] = (
        lambda spec, honest: [])
    out_of_phase_case: Callable[[Any, str], Case] | None = None
    skeleton_extra: Callable[[dict[str, Any]], tuple[HookMethod, ...]] = lambda raw: ()
    verify: Callable[[list[dict[str, Any]], Any], list[str]] | None = None
    judge: Callable[[list[dict[str, Any]], Any, Any], dict[str, Any]] | None = None
    compare: Callable[[list[dict[str, Any]], list[dict[str, Any]], Any, Any],
                      dict[str, Any]] | None = None
    takes_input: bool = False

    @property
    def required_hooks(self) -> list[str]:
        return required_names(self.hook_methods)

    def skeleton_methods(self, raw: dict[str, Any]) -> list[HookMethod]:
        """Required methods, plus any the spec makes necessary (e.g. a shadow judge)."""
        return ordered([m for m in self.hook_methods if m.required] + list(self.skeleton_extra(raw)))
