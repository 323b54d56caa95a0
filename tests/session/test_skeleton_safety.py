"""A spec never becomes code.

A skeleton ``hooks.py`` holds the spec's text only as escaped comments, so its
syntax tree is the same whatever the spec says; ``protocol fetch`` writes the
skeleton as ``join`` does; the seed's skeleton markers (``AIGENORA_*``) are
refused like Lingxi's, so another implementation's skeleton never runs as hooks.
"""

from __future__ import annotations

import ast
import copy
import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lingxi.canonical import sha256_hex
from lingxi.cli import cli
from lingxi.contract import SpecError, load_spec
from lingxi.hooks import HooksError, load_hooks_class, render_skeleton, skeleton_status
from lingxi.protocols import builtin_dir
from lingxi.protocols.catalogue import ensure_hooks, install_spec
from lingxi.session import flow_mode

GUESS = json.loads((builtin_dir("guess-number") / "spec.json").read_text(encoding="utf-8"))
LOOP = flow_mode("session_loop")


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def poisoned_name(marker: Path) -> str:
    """The issue's example: close the docstring, import at module level, reopen it."""
    return (f'x"""\nimport pathlib; pathlib.Path({str(marker)!r}).write_text("ran")\n'
            '"""')


def module_imports(text: str) -> list[str]:
    tree = ast.parse(text)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append(node.module or "")
    return found


def expected_shape(text: str, methods: list[str]) -> None:
    """Exactly: a docstring, the hooks import, the sentinel, one class of placeholder methods."""
    tree = ast.parse(text)
    assert [type(node).__name__ for node in tree.body] == [
        "Expr", "ImportFrom", "Assign", "ClassDef"]
    doc, imported, sentinel, cls = tree.body
    assert isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str)
    assert imported.module == "lingxi.hooks"
    assert [alias.name for alias in imported.names] == ["DecisionPoint", "HookResult", "Hooks"]
    assert [t.id for t in sentinel.targets] == ["LINGXI_SKELETON"]
    assert sentinel.value.value is True
    assert cls.name == "ProtocolHooks" and not cls.decorator_list
    assert [b.id for b in cls.bases] == ["Hooks"]
    first, *defs = cls.body
    assert isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    assert [d.name for d in defs] == methods
    for node in defs:
        assert isinstance(node, ast.FunctionDef) and not node.decorator_list
        docstring, raised = node.body
        assert isinstance(docstring.value, ast.Constant)
        assert isinstance(raised, ast.Raise)
        assert raised.exc.func.id == "NotImplementedError"
        assert [a.value for a in raised.exc.args] == [
            f"LINGXI_SKELETON_NOT_IMPLEMENTED: {node.name}"]
        for default in node.args.defaults:
            assert isinstance(default, ast.Constant)
    assert module_imports(text) == ["lingxi.hooks"]


# --------------------------------------------------------------- the example of the issue

def test_a_name_that_closes_the_docstring_stays_a_comment(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    folder = tmp_path / "proto"
    spec = {**copy.deepcopy(GUESS), "name": poisoned_name(marker)}
    load_spec(spec)  # it validates: the name is outside every check but "non-empty"
    install_spec(spec, None, folder)
    written = ensure_hooks(folder, LOOP.skeleton_methods(spec))
    assert written is not None
    text = written.read_text(encoding="utf-8")
    expected_shape(text, [m.name for m in LOOP.skeleton_methods(spec)])
    assert "import pathlib" in text  # still readable to the author, as a comment
    # loading the skeleton runs its module code (the bypass is for tooling tests only)
    load_hooks_class(folder, methods=LOOP.hook_methods, allow_skeleton=True)
    assert not marker.exists()


@pytest.mark.parametrize("text", [
    "\r\nimport os\r\n", "a\x0cimport os", "x\u2028import os", "x\u0085import os",
    "a\x00b", "\\\nimport os", "# -*- coding: latin-1 -*-", "\ufeffimport os",
    "\u202eimport os\u202c", "'''\nimport os\n'''",
])
def test_line_breaks_of_every_kind_stay_inside_their_comment(tmp_path: Path, text: str) -> None:
    spec = copy.deepcopy(GUESS)
    spec["name"] = "n" + text
    spec["description"] = text
    spec["rules"]["turn"] = text
    load_spec(spec)
    methods = LOOP.skeleton_methods(spec)
    source = render_skeleton(spec, methods)
    expected_shape(source, [m.name for m in methods])
    assert source.splitlines() == source.split("\n")[:-1]  # no line break but "\n"
    assert "\x00" not in source and "\r" not in source and "\u202e" not in source
    compile(source, "hooks.py", "exec")


# ------------------------------------------------------------------ the property

SNIPPETS = ['"""', "'''", '\\', "\n", "\r", "\r\n", "\x00", "\x0c", "\x0b", "\u2028", "\u2029",
            "\u0085", "\u202e", "\u2066", "\ufeff", "#", "import os", "os.system('x')",
            "# coding: utf-7", "\\N{", "{0}", ")", ":", "    ", "x = 1", "\x1b[2J", "é", "灵"]
HOSTILE = st.lists(st.sampled_from(SNIPPETS) | st.text(max_size=6), min_size=1,
                   max_size=6).map("".join)
IDENTITY = st.text(alphabet="abcdefghij", min_size=1, max_size=4)  # stays apart from HOSTILE


def _name(text: str) -> str:
    return "n" + text  # non-empty and not blank


@st.composite
def hostile_specs(draw) -> dict:
    """A spec that validates, with hostile text in every slot that takes text."""
    mode = draw(st.sampled_from(["session_loop", "free", "request_response",
                                 "simultaneous_round"]))
    names = draw(st.lists(HOSTILE.map(_name), min_size=1, max_size=3, unique=True))
    messages = []
    for name in names:
        fields = {"action": {"type": "enum", "values": [name], "required": True}}
        for field_name in draw(st.lists(HOSTILE.map(_name), max_size=2, unique=True)):
            if field_name == "action":
                continue
            kind = draw(st.sampled_from(["enum", "integer", "text", "boolean"]))
            schema: dict = {"type": kind, "required": draw(st.booleans())}
            if kind == "enum":
                schema["values"] = draw(st.lists(HOSTILE, min_size=1, max_size=3, unique=True))
            messages_field = schema
            fields[field_name] = messages_field
        direction = draw(st.sampled_from(["host_to_guest", "guest_to_host", "both"]))
        messages.append({"name": name, "direction": direction, "fields": fields})
    phases = []
    for phase_name in draw(st.lists(HOSTILE, min_size=1, max_size=2)):
        picked = draw(st.lists(st.sampled_from(messages), min_size=1, max_size=3))
        phases.append({"phase": phase_name, "exchange": [
            {"message": m["name"], "direction": m["direction"]} for m in picked]})
    flow: dict = {"mode": mode, "phases": phases}
    doc: dict = {"name": draw(HOSTILE.map(_name)), "description": draw(HOSTILE),
                 "type": draw(st.sampled_from(["game", "service", "chat"])),
                 "messages": messages, "flow": flow,
                 "rules": draw(st.dictionaries(HOSTILE, HOSTILE, max_size=3)),
                 "parameters": {key: {"type": "integer", "min": 0, "max": 9, "default": 1}
                                for key in draw(st.lists(HOSTILE, max_size=2, unique=True))}}
    if draw(st.booleans()):
        doc["choices"] = draw(st.lists(HOSTILE, min_size=1, max_size=3, unique=True))
    if mode == "simultaneous_round":
        first = messages[0]
        field_name = next(iter(first["fields"]))
        flow["round"] = {"value_field": draw(HOSTILE),
                         "value_type_ref": f"{first['name']}.fields.{field_name}"}
        doc["shadow_judge"] = draw(st.booleans())
    if mode == "free":
        flow["end_when"] = "either_ends"
    return doc


# LINGXI_HYPOTHESIS_EXAMPLES=3000 for a deeper (slower) search than the default run.
@settings(max_examples=int(os.environ.get("LINGXI_HYPOTHESIS_EXAMPLES", "100")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(hostile_specs())
def test_every_skeleton_holds_exactly_the_expected_code(doc: dict) -> None:
    try:
        spec = load_spec(doc)
    except SpecError:
        assume(False)
        raise
    methods = flow_mode(spec.flow.mode).skeleton_methods(spec.raw)
    text = render_skeleton(spec, methods)
    expected_shape(text, [m.name for m in methods])
    plain = render_skeleton({"name": "plain", "messages": []}, methods)
    assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(plain))  # only comments differ
    assert text.splitlines() == text.split("\n")[:-1]
    compile(text, "hooks.py", "exec")


# ------------------------------------------------- protocol fetch writes the skeleton too

def test_fetch_writes_a_skeleton_and_a_poisoned_name_stays_data(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    spec = {**copy.deepcopy(GUESS), "name": poisoned_name(marker) + "\x1b[2J\x1b]0;pwned\x07"}
    source = tmp_path / "draft"
    source.mkdir()
    (source / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    assert run("register", "--nickname", "mallory").exit_code == 0
    registered = run("protocol", "register", str(source), "--allow-new", "--reason", "test",
                     "--json")
    assert registered.exit_code == 0, registered.output
    pid = json.loads(registered.output)["protocol_id"]

    listed = run("protocol", "search", "--name", "x")
    assert pid in listed.output and "\x1b" not in listed.output and "\x07" not in listed.output

    out = tmp_path / "fetched"
    fetched = run("protocol", "fetch", pid, "--out", str(out), "--json")
    assert fetched.exit_code == 0, fetched.output
    data = json.loads(fetched.output)
    assert data["skeleton"] == str(out / "hooks.py")
    assert data["files"] == ["spec.json", "hooks.py", ".lingxi-hooks.json"]
    text = (out / "hooks.py").read_text(encoding="utf-8")
    expected_shape(text, [m.name for m in LOOP.skeleton_methods(spec)])
    sidecar = json.loads((out / ".lingxi-hooks.json").read_text(encoding="utf-8"))
    assert sidecar["protocol_id"] == pid and sidecar["skeleton_hash"] == sha256_hex(
        text.encode("utf-8"))

    refused = run("protocol", "test", str(out))
    assert refused.exit_code != 0 and "hooks.skeleton" in refused.output
    bypass = run("protocol", "test", str(out), "--allow-skeleton-hooks",
                 "--state-dir", str(tmp_path / "state"))
    assert "\x1b" not in bypass.output and "\x07" not in bypass.output
    assert not marker.exists()

    again = run("protocol", "fetch", pid)  # into the cache: the skeleton goes there too
    assert again.exit_code == 0, again.output
    assert "hooks skeleton" in again.output and "\x1b" not in again.output
    (out / "hooks.py").write_text("# mine\n", encoding="utf-8")
    kept = json.loads(run("protocol", "fetch", pid, "--out", str(out), "--json").output)
    assert kept["skeleton"] is None and kept["files"] == ["spec.json"]
    assert (out / "hooks.py").read_text(encoding="utf-8") == "# mine\n"  # never overwritten


def test_protocol_test_prints_a_spec_name_escaped(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    shutil.copytree(builtin_dir("guess-number"), folder)
    spec = json.loads((folder / "spec.json").read_text(encoding="utf-8"))
    spec["name"] = "Guess\x1b[2J\rprotocol ok\u202e"
    (folder / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    result = run("protocol", "test", str(folder), "--state-dir", str(tmp_path / "s"))
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\r" not in result.output
    assert "\u202e" not in result.output and "Guess\\x1b[2J\\rprotocol ok\\u202e" in result.output


# --------------------------------------------------- the seed's markers are Lingxi's too

def _working_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "g"
    shutil.copytree(builtin_dir("guess-number"), folder)
    return folder


@pytest.mark.parametrize("edit", [
    lambda text: text + "\nAIGENORA_SKELETON = True\n",
    lambda text: text + "\nAIGENORA_SKELETON: bool = True\n",
    lambda text: text + "\nif True:\n    AIGENORA_SKELETON = 1\n",
    lambda text: text + "\nLINGXI_SKELETON = True\n",
])
def test_a_sentinel_of_either_implementation_is_refused(tmp_path: Path, monkeypatch,
                                                         edit) -> None:
    for name in ("LINGXI_ALLOW_SKELETON_HOOKS", "AIGENORA_ALLOW_SKELETON_HOOKS"):
        monkeypatch.delenv(name, raising=False)
    folder = _working_copy(tmp_path)
    hooks = folder / "hooks.py"
    hooks.write_text(edit(hooks.read_text(encoding="utf-8")), encoding="utf-8")
    result = run("protocol", "test", str(folder), "--json", "--state-dir", str(tmp_path / "s"))
    assert result.exit_code != 0
    assert json.loads(result.output)["error"]["code"] == "hooks.skeleton"


def test_the_seed_placeholder_sidecar_and_bypass_are_recognised(tmp_path: Path,
                                                                monkeypatch) -> None:
    for name in ("LINGXI_ALLOW_SKELETON_HOOKS", "AIGENORA_ALLOW_SKELETON_HOOKS"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "seed"
    folder.mkdir()
    text = ("from lingxi.hooks import Hooks\n\n\nclass P(Hooks):\n"
            "    def proto_next_message(self, allowed, decision=None):\n"
            "        raise NotImplementedError("
            "'AIGENORA_SKELETON_NOT_IMPLEMENTED: proto_next_message')\n\n"
            "    def proto_on_message(self, message):\n        return None\n")
    (folder / "hooks.py").write_text(text, encoding="utf-8")
    status = skeleton_status(folder / "hooks.py")
    assert status.pending == ["proto_next_message"] and status.is_skeleton
    with pytest.raises(HooksError) as info:
        load_hooks_class(folder, methods=LOOP.hook_methods)
    assert info.value.code == "hooks.skeleton" and "proto_next_message" in str(info.value)

    plain = ("from lingxi.hooks import Hooks\n\n\nclass P(Hooks):\n"
             "    def proto_next_message(self, allowed, decision=None):\n        return None\n\n"
             "    def proto_on_message(self, message):\n        return None\n")
    (folder / "hooks.py").write_text(plain, encoding="utf-8")
    (folder / ".aigenora-hooks.json").write_text(json.dumps(
        {"skeleton_hash": sha256_hex(plain.encode()), "flow_mode": "session_loop"}))
    assert skeleton_status(folder / "hooks.py").unchanged  # untouched since generated
    with pytest.raises(HooksError, match="hooks.skeleton"):
        load_hooks_class(folder, methods=LOOP.hook_methods)

    monkeypatch.setenv("AIGENORA_ALLOW_SKELETON_HOOKS", "1")
    assert load_hooks_class(folder, methods=LOOP.hook_methods).__name__ == "P"
