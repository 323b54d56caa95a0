"""Checking a spec document: every problem as a Finding with code and path.

This is the single place that decides what a valid contract is; the loader
builds :mod:`lingxi.contract.model` values only from documents with no error
findings. Rules follow the published spec.json format; decisions
where they are silent are listed in docs/contract.md.
"""

from __future__ import annotations

from typing import Any

from lingxi.contract.commit_reveal import block_problems
from lingxi.contract.fields import (
    MESSAGE_TYPES,
    PARAMETER_TYPES,
    check_definition,
    compile_field,
)
from lingxi.contract.model import (
    BOTH,
    DEFAULT_MODE,
    DEFAULT_SPEC_VERSION,
    DIRECTIONS,
    GROUP_DIRECTIONS,
    KNOWN_SPEC_VERSIONS,
    REPEAT_UNTIL_GAME_OVER,
    SCHEMA_DIRECTIONS,
    SUPPORTED_MODES,
)
from lingxi.contract.seats import check_group_directions, check_seats
from lingxi.contract.source import json_kind
from lingxi.errors import Report

SPEC_TYPES = ("game", "service", "chat")
DECISION_MODES = ("auto", "manual")
TIMEOUT_ACTIONS = ("fallback", "abort")
END_WHEN = ("either_ends",)
KNOWN_FUTURE_MODES = ("authoritative_realtime", "authoritative_group")
# Action namespaces the session engine speaks itself (offer/accept, heartbeats,
# aborts, receipts): a protocol message there could be mistaken for one of them.
RESERVED_ACTION_PREFIXES = ("control.", "session.")


def reserved_prefix(action: str) -> str | None:
    """The engine namespace ``action`` falls in (case-insensitive), or None."""
    lowered = action.lower()
    return next((p for p in RESERVED_ACTION_PREFIXES if lowered.startswith(p)), None)


def check_spec_document(doc: Any, *, allow_unknown_version: bool = False,
                        duplicate_keys: list[str] | None = None) -> Report:
    """All findings for ``doc``; ``report.ok`` means it can be loaded."""
    report = Report()
    if not isinstance(doc, dict):
        report.add("spec.not_object", f"a spec must be a JSON object, got {json_kind(doc)}")
        return report
    for key in duplicate_keys or []:
        report.add("spec.duplicate_key", f"key {key!r} appears twice in one object; "
                   "readers could disagree on its value")
    _check_version(doc, report, allow_unknown_version)
    _check_header(doc, report)
    group = check_seats(doc, report)
    check_group_directions(doc, group, report)
    messages, declared = _check_messages(doc, report)
    params = _check_parameters(doc, report)
    _check_flow(doc, declared, params, report)
    _check_choices(doc, report)
    _check_commit_reveal(doc, report)
    _check_rules(doc, report)
    _check_decision(doc, report)
    if "shadow_judge" in doc and not isinstance(doc["shadow_judge"], bool):
        report.add("spec.bad_type", "shadow_judge must be true or false", "shadow_judge")
    if "timing" in doc and not isinstance(doc["timing"], dict):
        report.add("spec.bad_type", "timing must be an object", "timing")
    _best_practices(doc, messages, report)
    return report


def _check_version(doc: dict[str, Any], report: Report, allow_unknown: bool) -> None:
    version = doc.get("spec_version", DEFAULT_SPEC_VERSION)
    if not isinstance(version, str):
        report.add("spec.bad_type", f"spec_version must be a string, got {json_kind(version)}",
                   "spec_version")
    elif version not in KNOWN_SPEC_VERSIONS:
        text = (f"unknown spec_version {version!r} (this runtime knows "
                f"{', '.join(KNOWN_SPEC_VERSIONS)})")
        if allow_unknown:
            report.warn("spec.unknown_version", text, "spec_version")
        else:
            report.add("spec.unknown_version", text, "spec_version")


def _check_header(doc: dict[str, Any], report: Report) -> None:
    if "name" not in doc:
        report.add("spec.missing_field", "name is required", "name")
    elif not isinstance(doc["name"], str) or not doc["name"].strip():
        report.add("spec.bad_type", "name must be a non-empty string", "name")
    for key in ("description", "family"):
        if key in doc and not isinstance(doc[key], str):
            report.add("spec.bad_type", f"{key} must be a string", key)
    if "type" in doc:
        kind = doc["type"]
        if not isinstance(kind, str):
            report.add("spec.bad_type", "type must be a string", "type")
        elif kind not in SPEC_TYPES:
            report.warn("spec.unknown_type", f"type {kind!r} is not one of "
                        f"{', '.join(SPEC_TYPES)}", "type")


def _check_messages(doc: dict[str, Any], report: Report) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Check messages; return ``(well-formed, declared)`` as ``name -> message``.

    *declared* also holds messages with a good name but other problems, so the
    flow checks do not repeat those problems as "undeclared message".
    """
    found: dict[str, dict[str, Any]] = {}
    declared: dict[str, dict[str, Any]] = {}
    if "messages" not in doc:
        report.add("spec.missing_field", "messages is required", "messages")
        return found, declared
    messages = doc["messages"]
    if not isinstance(messages, list):
        report.add("spec.bad_type", f"messages must be an array, got {json_kind(messages)}",
                   "messages")
        return found, declared
    if not messages:
        report.warn("spec.no_messages", "messages is empty: no message can be exchanged",
                    "messages")
    seen_actions: dict[tuple[str, str], str] = {}
    for index, message in enumerate(messages):
        path = f"messages[{index}]"
        if not isinstance(message, dict):
            report.add("spec.bad_message", f"a message must be an object, got "
                       f"{json_kind(message)}", path)
            continue
        if not _message_well_formed(message, path, declared, report) \
                or _reserved_actions(message, path, report):
            continue
        found[message["name"]] = message
        _claim_actions(message, path, seen_actions, report)
    return found, declared


def _message_well_formed(message: dict[str, Any], path: str, declared: dict[str, dict[str, Any]],
                         report: Report) -> bool:
    """Name (declared once), direction and fields; a good name is declared even when
    another part is wrong. Every problem is reported, not only the first."""
    name: Any = message.get("name")
    ok = True
    if not isinstance(name, str) or not name:
        report.add("spec.missing_field" if name is None else "spec.bad_type",
                   "message name must be a non-empty string", f"{path}.name")
        ok = False
    elif name in declared:
        report.add("spec.duplicate_message", f"message name {name!r} is declared twice",
                   f"{path}.name")
        ok = False
    else:
        declared.setdefault(name, message)
    direction: Any = message.get("direction")
    if direction in GROUP_DIRECTIONS:
        pass  # which spec may use them: check_group_directions
    elif direction not in SCHEMA_DIRECTIONS:
        report.add("spec.bad_direction", f"direction must be one of "
                   f"{', '.join(SCHEMA_DIRECTIONS)}, got {direction!r}", f"{path}.direction")
        ok = False
    fields: Any = message.get("fields")
    if not isinstance(fields, dict) or not fields:
        report.add("spec.bad_fields", "fields must be a non-empty object", f"{path}.fields")
        return False
    for fname, defn in fields.items():
        if check_definition(defn, f"{path}.fields.{fname}", report,
                            allowed=MESSAGE_TYPES) is None:
            ok = False
    return ok


def _reserved_actions(message: dict[str, Any], path: str, report: Report) -> bool:
    """Report every action in the engine's reserved namespace; True when there was one."""
    reserved = [a for a in message_actions(message) if reserved_prefix(a)]
    for action in reserved:
        report.add("spec.reserved_action", f"action {action!r} is in the engine's "
                   f"reserved namespace {reserved_prefix(action)!r}; pick another name",
                   f"{path}.fields.action" if "action" in message["fields"] else f"{path}.name")
    return bool(reserved)


def _claim_actions(message: dict[str, Any], path: str, seen: dict[tuple[str, str], str],
                   report: Report) -> None:
    """Each (action, direction) selects one message: a second claim is reported."""
    direction = message["direction"]
    sides = ("host_to_guest", "guest_to_host") if direction == BOTH else (direction,)
    for action in message_actions(message):
        for side in sides:
            other = seen.get((action, side))
            if other is not None:
                report.add("spec.duplicate_action", f"action {action!r} {side} is claimed "
                           f"by both {other!r} and {message['name']!r}",
                           f"{path}.fields.action")
            else:
                seen[(action, side)] = message["name"]


def message_actions(message: dict[str, Any]) -> list[str]:
    """The action values that select ``message``: its action enum, else its name."""
    action = message.get("fields", {}).get("action")
    if isinstance(action, dict) and action.get("type") == "enum":
        values = action.get("values")
        if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
            return list(dict.fromkeys(values))
    return [message["name"]]


def _check_parameters(doc: dict[str, Any], report: Report) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    if "parameters" not in doc:
        return found
    params = doc["parameters"]
    if not isinstance(params, dict):
        report.add("spec.bad_type", f"parameters must be an object, got {json_kind(params)}",
                   "parameters")
        return found
    for name, defn in params.items():
        path = f"parameters.{name}"
        ftype = check_definition(defn, path, report, allowed=PARAMETER_TYPES,
                                 where="parameter")
        if ftype is None:
            continue
        if "required" in defn:
            report.warn("spec.unknown_key", "parameters are always optional; 'required' is "
                        "ignored", f"{path}.required")
        if "default" in defn and _definition_ok(defn, path, report):
            out: list[Any] = []
            compile_field(defn, "spec")(defn["default"], f"{path}.default", out)
            for finding in out:
                report.add("spec.bad_default", f"default does not fit the parameter: "
                           f"{finding.message}", finding.path)
        found[name] = defn
    return found


def _definition_ok(defn: dict[str, Any], path: str, report: Report) -> bool:
    return not any(f.is_error and f.path.startswith(path) for f in report.findings)


def _resolve_ref(ref: str, messages: dict[str, dict[str, Any]]) -> tuple[str, str] | None:
    parts = ref.split(".")
    if len(parts) != 3 or parts[1] != "fields":
        return None
    message = messages.get(parts[0])
    fields = message.get("fields") if message else None
    if not isinstance(fields, dict) or parts[2] not in fields:
        return None
    return parts[0], parts[2]


def _check_flow(doc: dict[str, Any], messages: dict[str, dict[str, Any]], params: dict[str, dict[str, Any]],
                report: Report) -> None:
    if "flow" not in doc:
        return
    flow = doc["flow"]
    if not isinstance(flow, dict):
        report.add("spec.bad_flow", f"flow must be an object, got {json_kind(flow)}", "flow")
        return
    mode = _check_mode(flow.get("mode", DEFAULT_MODE), report)
    _check_phases(flow, messages, params, report)
    if mode == "simultaneous_round":
        _check_round(flow.get("round"), messages, report)
    if "end_when" in flow:
        _check_end_when(flow["end_when"], mode, messages, report)
    for key, kind in (("realtime", "authoritative_realtime"), ("group", "authoritative_group")):
        if key in flow and not isinstance(flow[key], dict):
            report.add("spec.bad_flow", f"flow.{key} must be an object (used by mode {kind})",
                       f"flow.{key}")


def _check_mode(mode: Any, report: Report) -> str | None:
    """The flow mode; an unsupported one loads (and hashes) with a warning."""
    if not isinstance(mode, str) or not mode:
        report.add("spec.bad_flow", "flow.mode must be a non-empty string", "flow.mode")
        return None
    if mode not in SUPPORTED_MODES:
        known = " (a mode of the wider protocol family)" if mode in KNOWN_FUTURE_MODES else ""
        report.warn("spec.mode_not_supported", f"flow mode {mode!r}{known} is not supported by "
                    f"this runtime (supported: {', '.join(SUPPORTED_MODES)}); the spec loads "
                    "and hashes but cannot be run", "flow.mode")
    return mode


def _check_round(rnd: Any, messages: dict[str, dict[str, Any]], report: Report) -> None:
    if not isinstance(rnd, dict):
        report.add("spec.bad_round", "simultaneous_round requires flow.round with "
                   "value_field and value_type_ref", "flow.round")
        return
    field = rnd.get("value_field")
    if not isinstance(field, str) or not field:
        report.add("spec.bad_round", "round.value_field must be a non-empty string",
                   "flow.round.value_field")
    ref = rnd.get("value_type_ref")
    if not isinstance(ref, str) or not ref:
        report.add("spec.bad_round", "round.value_type_ref must be a string like "
                   "'reveal.fields.choice'", "flow.round.value_type_ref")
    elif _resolve_ref(ref, messages) is None:
        report.add("spec.bad_round", f"round.value_type_ref {ref!r} does not name a "
                   "declared message field (<message>.fields.<field>)",
                   "flow.round.value_type_ref")


def _check_end_when(end_when: Any, mode: str | None, messages: dict[str, dict[str, Any]],
                    report: Report) -> None:
    if end_when not in END_WHEN:
        report.add("spec.bad_end_when", f"end_when must be one of {', '.join(END_WHEN)}, "
                   f"got {end_when!r}", "flow.end_when")
    elif mode != "free":
        report.warn("spec.end_when_ignored", "end_when only applies to mode free",
                    "flow.end_when")
    elif "end" not in messages:
        report.warn("spec.no_end_message", "end_when either_ends expects an 'end' message",
                    "flow.end_when")


def _check_phases(flow: dict[str, Any], messages: dict[str, dict[str, Any]], params: dict[str, dict[str, Any]],
                  report: Report) -> None:
    if "phases" not in flow:
        return
    phases = flow["phases"]
    if not isinstance(phases, list):
        report.add("spec.bad_phase", "flow.phases must be an array", "flow.phases")
        return
    for index, phase in enumerate(phases):
        path = f"flow.phases[{index}]"
        if not isinstance(phase, dict):
            report.add("spec.bad_phase", "a phase must be an object", path)
            continue
        if "phase" in phase and not isinstance(phase["phase"], str):
            report.add("spec.bad_phase", "phase name must be a string", f"{path}.phase")
        if "repeat" in phase:
            _check_repeat(phase["repeat"], params, f"{path}.repeat", report)
        exchange = phase.get("exchange")
        if not isinstance(exchange, list) or not exchange:
            report.add("spec.bad_phase", "a phase needs a non-empty exchange array",
                       f"{path}.exchange")
            continue
        for step_index, step in enumerate(exchange):
            _check_step(step, messages, f"{path}.exchange[{step_index}]", report)


def _check_repeat(repeat: Any, params: dict[str, dict[str, Any]], path: str, report: Report) -> None:
    if repeat == REPEAT_UNTIL_GAME_OVER:
        return
    if isinstance(repeat, str) and repeat in params:
        if params[repeat].get("type") != "integer":
            report.add("spec.bad_repeat", f"repeat names parameter {repeat!r}, which is not "
                       "an integer", path)
        return
    report.add("spec.bad_repeat", f"repeat must be {REPEAT_UNTIL_GAME_OVER!r} or the name of a "
               f"declared integer parameter, got {repeat!r}", path)


def _check_step(step: Any, messages: dict[str, dict[str, Any]], path: str, report: Report) -> None:
    if not isinstance(step, dict):
        report.add("spec.bad_phase", "an exchange step must be an object", path)
        return
    name = step.get("message")
    if not isinstance(name, str):
        report.add("spec.bad_phase", "an exchange step needs a message name", f"{path}.message")
        return
    message = messages.get(name)
    if message is None:
        report.add("spec.unknown_message", f"exchange names undeclared message {name!r}",
                   f"{path}.message")
        return
    if "direction" not in step:
        return
    direction = step["direction"]
    if direction not in SCHEMA_DIRECTIONS + GROUP_DIRECTIONS:
        report.add("spec.bad_direction", f"direction must be one of "
                   f"{', '.join(SCHEMA_DIRECTIONS)}, got {direction!r}", f"{path}.direction")
    elif message.get("direction") in DIRECTIONS and direction != message["direction"]:
        report.add("spec.direction_mismatch", f"message {name!r} is {message['direction']}, "
                   f"but this exchange sends it {direction}", f"{path}.direction")


def _check_choices(doc: dict[str, Any], report: Report) -> None:
    if "choices" not in doc:
        return
    choices = doc["choices"]
    if not isinstance(choices, list) or not choices:
        report.add("spec.bad_choices", "choices must be a non-empty array of strings", "choices")
        return
    seen: set[str] = set()
    for index, item in enumerate(choices):
        if not isinstance(item, str) or not item:
            report.add("spec.bad_choices", f"choices must be non-empty strings, got {item!r}",
                       f"choices[{index}]")
        elif item in seen:
            report.add("spec.bad_choices", f"choice {item!r} is repeated", f"choices[{index}]")
        else:
            seen.add(item)


def _check_commit_reveal(doc: dict[str, Any], report: Report) -> None:
    if "commit_reveal" in doc:
        for path, message in block_problems(doc["commit_reveal"]):
            report.add("spec.bad_commit_reveal", message, path)


def _is_text_tree(value: Any) -> bool:
    if isinstance(value, str):
        return True
    if isinstance(value, list):
        return all(_is_text_tree(v) for v in value)
    if isinstance(value, dict):
        return all(_is_text_tree(v) for v in value.values())
    return False


def _check_rules(doc: dict[str, Any], report: Report) -> None:
    if "rules" not in doc:
        return
    rules = doc["rules"]
    if not isinstance(rules, dict):
        report.add("spec.bad_rules", f"rules must be an object, got {json_kind(rules)}", "rules")
        return
    for key, value in rules.items():
        try:
            text = _is_text_tree(value)
        except RecursionError:
            text = False
        if not text:
            report.add("spec.bad_rules", "a rule must be text (or a list/object of text)",
                       f"rules.{key}")


def _check_decision(doc: dict[str, Any], report: Report) -> None:
    if "decision" not in doc:
        return
    decision = doc["decision"]
    if not isinstance(decision, dict):
        report.add("spec.bad_decision", "decision must be an object", "decision")
        return
    if "mode" in decision and decision["mode"] not in DECISION_MODES:
        report.add("spec.bad_decision", f"decision.mode must be auto or manual, got "
                   f"{decision['mode']!r}", "decision.mode")
    if "timeout_seconds" in decision:
        t = decision["timeout_seconds"]
        if type(t) not in (int, float) or not t > 0 or t != t or t == float("inf"):
            report.add("spec.bad_decision", f"decision.timeout_seconds must be a number above 0, "
                       f"got {t!r}", "decision.timeout_seconds")
    if "timeout_action" in decision and decision["timeout_action"] not in TIMEOUT_ACTIONS:
        report.add("spec.bad_decision", f"decision.timeout_action must be one of "
                   f"{', '.join(TIMEOUT_ACTIONS)}, got {decision['timeout_action']!r}",
                   "decision.timeout_action")


def _best_practices(doc: dict[str, Any], messages: dict[str, dict[str, Any]], report: Report) -> None:
    listed = doc.get("messages")
    for index, message in enumerate(listed if isinstance(listed, list) else []):
        if not isinstance(message, dict) or not isinstance(message.get("name"), str) or (
                messages.get(message["name"]) is not message):
            continue
        name = message["name"]
        action = message["fields"].get("action")
        if not (isinstance(action, dict) and action.get("type") == "enum"
                and action.get("values") == [name]):
            report.warn("spec.action_mismatch", f"message {name!r} should have an action enum "
                        f"with the single value {name!r}", f"messages[{index}].fields.action")
    if not messages:
        return
    if doc.get("type") == "game":
        has_game_over = any(
            isinstance(m["fields"].get("game_over"), dict)
            and m["fields"]["game_over"].get("type") == "boolean"
            for m in messages.values())
        if not has_game_over:
            report.warn("spec.no_game_over", "a game should carry a boolean game_over field "
                        "rather than imply the end by message type", "messages")
    if "error" not in messages:
        report.warn("spec.no_error_message", "no 'error' message: the peers cannot report "
                    "commit mismatches or illegal moves", "messages")
