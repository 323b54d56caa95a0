"""A spec's size and counts are bounded, with ``spec.too_large``, before any expensive work.

Every entry is covered: a file, a document given as an object (a registry's
answer, a registration), the id computed from a registry's answer before it is
loaded, and a protocol_id offered by a peer and resolved through the cache.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import json
import os
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from lingxi.cli import cli
from lingxi.contract import SpecError, load_spec, protocol_id
from lingxi.contract import bounds as B
from lingxi.protocols import builtin_dir

BASE = json.loads((builtin_dir("guess-number") / "spec.json").read_text(encoding="utf-8"))


def _base() -> dict:
    return copy.deepcopy(BASE)


def _messages(count: int) -> dict:
    doc = _base()
    doc["messages"] = [{"name": f"m{i}", "direction": "both", "fields": {
        "action": {"type": "enum", "values": [f"m{i}"], "required": True}}}
        for i in range(count)]
    doc["flow"] = {"phases": [{"phase": "p", "exchange": [{"message": "m0"}]}]}
    return doc


def _fields(count: int) -> dict:
    doc = _base()
    doc["messages"][0]["fields"].update({f"f{i}": {"type": "boolean"} for i in range(count)})
    return doc


def _fields_total(per_message: int, messages: int) -> dict:
    doc = _messages(messages)
    for message in doc["messages"]:
        message["fields"].update({f"f{i}": {"type": "boolean"} for i in range(per_message)})
    return doc


def _phases(count: int) -> dict:
    doc = _base()
    doc["flow"]["phases"] = [{"phase": f"p{i}", "exchange": [{"message": "join"}]}
                             for i in range(count)]
    return doc


def _steps(count: int) -> dict:
    doc = _base()
    doc["flow"]["phases"][1]["exchange"] = [{"message": "guess"}] * count
    return doc


def _parameters(count: int) -> dict:
    doc = _base()
    doc["parameters"] = {f"p{i}": {"type": "boolean"} for i in range(count)}
    return doc


def _enum(count: int) -> dict:
    doc = _base()
    doc["messages"][3]["fields"]["result"]["values"] = [f"v{i}" for i in range(count)]
    return doc


def _choices(count: int) -> dict:
    doc = _base()
    doc["choices"] = [f"c{i}" for i in range(count)]
    return doc


def _nesting(levels: int) -> dict:
    doc = _base()
    deep: object = "x"
    for _ in range(levels - 2):  # the document and "rules" are two levels
        deep = [deep]
    doc["rules"] = {"deep": deep}
    return doc


def _values(count: int) -> dict:
    doc = _base()
    doc["rules"] = {"many": ["x"] * count}
    return doc


def _text(chars: int) -> dict:
    doc = _base()
    doc["rules"] = {"long": "x" * chars}
    return doc


def _bytes(count: int) -> dict:
    doc = _base()
    doc["timing"] = {"numbers": [10**70] * count}  # numbers: not text, but bytes
    return doc


# (what, build, count just within, count just over)
CASES = [
    ("messages", _messages, B.MAX_MESSAGES, B.MAX_MESSAGES + 1),
    ("fields in one object", _fields, B.MAX_FIELDS - 1, B.MAX_FIELDS),
    ("field definitions", lambda n: _fields_total(200, n), 20, 21),
    ("phases", _phases, B.MAX_PHASES, B.MAX_PHASES + 1),
    ("exchange steps in one phase", _steps, B.MAX_STEPS, B.MAX_STEPS + 1),
    ("parameters", _parameters, B.MAX_PARAMETERS, B.MAX_PARAMETERS + 1),
    ("enum values", _enum, B.MAX_ENUM_VALUES, B.MAX_ENUM_VALUES + 1),
    ("choices", _choices, B.MAX_ENUM_VALUES, B.MAX_ENUM_VALUES + 1),
    ("levels of nesting", _nesting, B.MAX_NESTING, B.MAX_NESTING + 1),
    ("JSON values", _values, B.MAX_VALUES - 400, B.MAX_VALUES),
    ("characters of text", _text, B.MAX_SPEC_BYTES - 4000, B.MAX_SPEC_BYTES),
    ("bytes (compact JSON)", _bytes, 14_000, 15_000),
]


def _bound(error: SpecError) -> str:
    assert error.code == "spec.too_large", error
    return error.details["bound"]


@pytest.mark.parametrize(("what", "build", "within", "over"), CASES,
                         ids=[case[0] for case in CASES])
def test_each_bound_refuses_one_past_it_at_every_entry(tmp_path: Path, what, build, within,
                                                       over) -> None:
    fits = build(within)
    try:
        load_spec(fits)
    except SpecError as error:  # it may be invalid for other reasons, never too large
        assert error.code != "spec.too_large", error
    big = build(over)
    with pytest.raises(SpecError) as from_dict:
        load_spec(big)
    assert _bound(from_dict.value) == what
    assert from_dict.value.exit_code == 2
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(big), encoding="utf-8")
    with pytest.raises(SpecError) as from_file:
        load_spec(path)
    assert _bound(from_file.value) == what
    with pytest.raises(SpecError) as hashed:
        protocol_id(big)
    assert _bound(hashed.value) == what


def test_the_refusal_comes_before_any_checking_copying_or_hashing(monkeypatch) -> None:
    huge = _messages(5_000)  # the issue declared a million; the refusal does not depend on it

    def expensive(*args, **kwargs):
        raise AssertionError("expensive work on an oversized spec")

    monkeypatch.setattr("lingxi.contract.spec.check_spec_document", expensive)
    monkeypatch.setattr("lingxi.contract.source.copy.deepcopy", expensive)
    monkeypatch.setattr(importlib.import_module("lingxi.contract.protocol_id"),
                        "canonical_bytes", expensive)
    with pytest.raises(SpecError) as caught:
        load_spec(huge)
    assert caught.value.code == "spec.too_large"
    with pytest.raises(SpecError):
        protocol_id(huge)


def test_a_file_over_the_byte_bound_is_refused_without_being_read(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    with path.open("wb") as handle:  # sparse: 8 GiB on paper, nothing on disk
        handle.truncate(8 * 1024**3)
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert _bound(caught.value) == "file bytes"
    assert caught.value.details["found"] == 8 * 1024**3


def test_a_pipe_is_bounded_while_it_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "spec.json"
    os.mkfifo(fifo)
    import threading

    def feed() -> None:
        with fifo.open("wb") as out:
            try:
                out.write(b" " * (B.MAX_FILE_BYTES + 10))
            except BrokenPipeError:
                pass

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        with pytest.raises(SpecError) as caught:
            load_spec(fifo)
    finally:
        writer.join(timeout=10)
    assert _bound(caught.value) == "file bytes"


def test_every_builtin_and_template_fits_with_room_to_spare() -> None:
    from lingxi.contract.catalog import TEMPLATES, template_document
    from lingxi.protocols import builtin_names

    docs = [json.loads((builtin_dir(n) / "spec.json").read_text(encoding="utf-8"))
            for n in builtin_names()] + [template_document(n) for n in TEMPLATES]
    for doc in docs:
        load_spec(doc)
        pretty = json.dumps(doc, indent=2)
        assert len(pretty) * 100 < B.MAX_FILE_BYTES


def test_a_maximal_document_written_indented_still_loads_from_its_file(tmp_path: Path) -> None:
    """What the cache writes (indent=2) is read back: the file bound leaves room for it."""
    doc = _base()
    deep: object = "x"
    for _ in range(B.MAX_NESTING - 3):
        deep = [deep]
    doc["rules"] = {"n": [deep] * ((B.MAX_VALUES - 400) // (B.MAX_NESTING - 2))}
    load_spec(doc)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=True), encoding="utf-8")
    try:
        load_spec(path)
    except SpecError as error:
        assert error.code != "spec.too_large", error
    assert path.stat().st_size <= B.MAX_FILE_BYTES


def test_validate_and_hash_refuse_with_one_line_and_exit_2(tmp_path: Path) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_messages(1000)), encoding="utf-8")
    runner = CliRunner()
    for args in (["protocol", "validate", str(path)], ["protocol", "hash", str(path)]):
        result = runner.invoke(cli, args, catch_exceptions=False)
        assert result.exit_code == 2, result.output
        assert "spec.too_large" in result.output and "messages 1000 (at most 256)" in result.output
        assert "Traceback" not in result.output


def test_a_registry_answer_is_refused_before_it_is_hashed(monkeypatch) -> None:
    from lingxi.registry.client.api import RegistryClient

    huge = _messages(5_000)

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"protocol_id": "a" * 64, "spec": huge})

    def expensive(*args, **kwargs):
        raise AssertionError("hashed an oversized spec")

    monkeypatch.setattr(importlib.import_module("lingxi.contract.protocol_id"),
                        "canonical_bytes", expensive)

    async def fetch() -> None:
        async with RegistryClient("http://registry.test",
                                  transport=httpx.MockTransport(answer)) as client:
            await client.fetch_spec("a" * 64)

    with pytest.raises(SpecError) as caught:
        asyncio.run(fetch())
    assert caught.value.code == "spec.too_large"


def test_an_offered_id_whose_cached_spec_is_oversized_is_refused_cheaply(monkeypatch) -> None:
    from lingxi.protocols.catalogue import cache_dir, folder_for_id

    pid = "b" * 64
    folder = cache_dir(pid)
    folder.mkdir(parents=True)
    (folder / "spec.json").write_text(json.dumps(_messages(5_000)), encoding="utf-8")

    def expensive(*args, **kwargs):
        raise AssertionError("checked an oversized spec")

    monkeypatch.setattr("lingxi.contract.spec.check_spec_document", expensive)
    monkeypatch.setattr("lingxi.protocols.catalogue.builtin_names", lambda: [])
    with pytest.raises(Exception) as caught:
        folder_for_id(pid)
    assert getattr(caught.value, "code", None) == "session.unknown_protocol"
