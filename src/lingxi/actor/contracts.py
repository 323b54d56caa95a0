"""The four play-loop JSON Schemas, loaded from the package and enforced.

ActorView/4 (the published seed) refers to three schemas by relative ``$ref``
(``actor-selection-v2``, ``playtest-evidence`` and ``game-event``) against the
base ``https://wanxiang.ai/contracts/play-loop/``. Lingxi ships all four in
``lingxi/actor/schemas/`` and resolves the refs through a ``referencing``
registry built from those files, so validation never touches the network.

Each ``validate_*`` returns nothing on success and raises
:class:`ContractViolation` (a :class:`lingxi.errors.CheckFailed`) naming the
JSON path of the first problem otherwise.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from lingxi.errors import CheckFailed

BASE_URI = "https://wanxiang.ai/contracts/play-loop/"
VIEW_SCHEMA = "actor-view-v4.schema.json"
SELECTION_SCHEMA = "actor-selection-v2.schema.json"
EVIDENCE_SCHEMA = "playtest-evidence.schema.json"
GAME_EVENT_SCHEMA = "game-event.schema.json"
SCHEMA_FILES = (VIEW_SCHEMA, SELECTION_SCHEMA, EVIDENCE_SCHEMA, GAME_EVENT_SCHEMA)


class ContractViolation(CheckFailed):
    """A document does not match its play-loop schema (exit 1).

    ``code`` is ``<kind>.invalid`` (``view.invalid``, ``selection.invalid``…),
    ``path`` the JSON path of the offending value (``$.history[0].selection``).
    """


def load_schema(name: str) -> dict[str, Any]:
    """The parsed schema file ``name`` shipped in ``lingxi.actor.schemas``."""
    return json.loads(_schema_text(name))


@cache
def _schema_text(name: str) -> str:
    if name not in SCHEMA_FILES:
        raise KeyError(name)
    return (resources.files("lingxi.actor") / "schemas" / name).read_text(encoding="utf-8")


@cache
def registry() -> Registry:
    """A registry holding the four schemas under their ``$id`` URIs."""
    resources_ = []
    for name in SCHEMA_FILES:
        schema = load_schema(name)
        uri = schema.get("$id", BASE_URI + name)
        resources_.append((uri, Resource.from_contents(schema, default_specification=DRAFT202012)))
    return Registry().with_resources(resources_).crawl()


@cache
def validator(name: str) -> Draft202012Validator:
    """A compiled 2020-12 validator for the schema file ``name``."""
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=registry())


def _pinpoint(error: ValidationError) -> ValidationError:
    """Descend into a oneOf/anyOf to the branch whose ``type``/``kind`` discriminator matched."""
    while error.validator in ("oneOf", "anyOf") and error.context:
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        matched = [subs for subs in branches.values()
                   if not any(sub.validator == "const" and list(sub.relative_path) in
                              (["type"], ["kind"]) for sub in subs)]
        if len(matched) != 1:
            break
        error = best_match(matched[0])
    return error


@cache
def fast_validator(name: str) -> Any:
    """A compiled (Rust) validator for ``name`` when ``jsonschema_rs`` is installed (the
    ``play`` extra), else None. Only its yes is used: any no is re-checked by jsonschema,
    which gives the error, so verdicts and messages are jsonschema's (issue 22.5: a view
    costs 0.07 ms instead of 27 ms; tests/playtest/test_contracts.py compares the two)."""
    try:
        import jsonschema_rs
    except ImportError:
        return None
    schemas = [load_schema(n) for n in SCHEMA_FILES]
    shipped = jsonschema_rs.Registry([(s.get("$id", BASE_URI + n), s)
                                      for n, s in zip(SCHEMA_FILES, schemas, strict=True)])
    return jsonschema_rs.validator_for(load_schema(name), registry=shipped)


def _check(name: str, kind: str, document: Any) -> None:
    fast = fast_validator(name)
    if fast is not None and fast.is_valid(document):
        return
    error = best_match(validator(name).iter_errors(document))
    if error is None:
        return
    error = _pinpoint(error)
    path = error.json_path
    raise ContractViolation(f"{kind}.invalid", f"{kind} does not match {name}: {error.message}",
                            path=path, details={"schema": name, "validator": error.validator})


def errors_of(name: str, document: Any) -> list[tuple[str, str]]:
    """Every ``(json_path, message)`` problem of ``document`` against schema ``name``."""
    return [(e.json_path, e.message) for e in validator(name).iter_errors(document)]


def validate_view(view: Any) -> None:
    """Raise ContractViolation(``view.invalid``) unless ``view`` is a valid ActorView/4."""
    _check(VIEW_SCHEMA, "view", view)


@cache
def _history_entry_validator() -> Draft202012Validator:
    ref = load_schema(VIEW_SCHEMA)["$id"] + "#/$defs/historyEntry"
    return Draft202012Validator({"$ref": ref}, registry=registry())


def validate_history_entry(entry: Any) -> None:
    """Raise ContractViolation(``view.invalid``) unless ``entry`` is a valid ActorView/4
    history entry (``#/$defs/historyEntry``). Lets a harness check each entry once
    instead of re-checking all 64 with every view."""
    error = best_match(_history_entry_validator().iter_errors(entry))
    if error is not None:
        error = _pinpoint(error)
        raise ContractViolation("view.invalid", f"history entry does not match: {error.message}",
                                path=error.json_path, details={"schema": VIEW_SCHEMA})


def validate_selection(selection: Any) -> None:
    """Raise ContractViolation(``selection.invalid``) unless it is a valid selection v2."""
    _check(SELECTION_SCHEMA, "selection", selection)


def validate_evidence(document: Any) -> None:
    """Raise ContractViolation(``evidence.invalid``) unless it is valid playtest evidence."""
    _check(EVIDENCE_SCHEMA, "evidence", document)


def validate_game_event(event: Any) -> None:
    """Raise ContractViolation(``game_event.invalid``) unless it is a valid game event."""
    _check(GAME_EVENT_SCHEMA, "game_event", event)
