"""Skeleton ``hooks.py`` for a spec that arrived without hooks, and its detection.

A skeleton is a starting point, never an implementation: it carries the
module sentinel ``LINGXI_SKELETON = True`` and every method body raises
``NotImplementedError("LINGXI_SKELETON_NOT_IMPLEMENTED: <name>")``. Detection
reads the source with :mod:`ast` and never executes it, so a skeleton is
refused before any of its code runs.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lingxi import __version__
from lingxi.canonical import canonical_bytes, sha256_hex
from lingxi.hooks.errors import HooksError
from lingxi.hooks.methods import HookMethod

SENTINEL = "LINGXI_SKELETON"
PLACEHOLDER = "LINGXI_SKELETON_NOT_IMPLEMENTED"
SIDECAR = ".lingxi-hooks.json"
HOOKS_FILE = "hooks.py"


def _raw(spec: Any) -> dict[str, Any]:
    return spec if isinstance(spec, dict) else dict(getattr(spec, "raw", {}) or {})


def _mode(raw: dict[str, Any]) -> str:
    return (raw.get("flow") or {}).get("mode") or "session_loop"


def constraint_lines(raw: dict[str, Any]) -> list[str]:
    """The spec's constraints a hooks author must respect, one line each."""
    lines: list[str] = []
    flow = raw.get("flow") or {}
    lines.append(f"flow.mode: {_mode(raw)}")
    for phase in flow.get("phases") or []:
        steps = ", ".join(f"{s.get('message')}({s.get('direction', 'declared')})"
                          for s in phase.get("exchange") or [])
        repeat = f" repeat={phase['repeat']}" if phase.get("repeat") else ""
        lines.append(f"phase {phase.get('phase', '?')}{repeat}: {steps}")
    if flow.get("end_when"):
        lines.append(f"termination.condition: end_when={flow['end_when']}")
    if flow.get("round"):
        lines.append(f"round: value_field={flow['round'].get('value_field')} "
                     f"value_type_ref={flow['round'].get('value_type_ref')}")
    if raw.get("choices"):
        lines.append(f"decision.allowed_values (choices): {json.dumps(raw['choices'], ensure_ascii=False)}")
    for message in raw.get("messages") or []:
        fields = []
        for name, schema in (message.get("fields") or {}).items():
            kind = schema.get("type", "?")
            if kind == "enum":
                kind = "enum" + json.dumps(schema.get("values", []), ensure_ascii=False)
            fields.append(f"{name}:{kind}{'*' if schema.get('required') else ''}")
        lines.append(f"message {message.get('name')} [{message.get('direction')}]: {', '.join(fields)}")
    for key, text in (raw.get("rules") or {}).items():
        lines.append(f"rules.{key}: {json.dumps(text, ensure_ascii=False)}")
    for key, param in (raw.get("parameters") or {}).items():
        lines.append(f"parameter {key}: {json.dumps(param, ensure_ascii=False, sort_keys=True)}")
    decision = raw.get("decision") or {}
    lines.append("decision: mode={} timeout_seconds={} timeout_action={}".format(
        decision.get("mode", "auto"), decision.get("timeout_seconds"),
        decision.get("timeout_action", "fallback")))
    if raw.get("shadow_judge"):
        lines.append("shadow_judge: true (implement proto_round_judge_pure without side effects)")
    lines.append("* = required field. Send only declared messages; the engine rejects anything else.")
    return lines


def render_skeleton(spec: Any, methods: list[HookMethod]) -> str:
    """The text of a skeleton ``hooks.py`` for ``spec`` (a Spec or a spec dict).

    ``methods`` are the ones to write, from the flow mode's descriptor.
    """
    raw = _raw(spec)
    mode = _mode(raw)
    doc = "\n".join("    " + line for line in constraint_lines(raw))
    out = [
        f'r"""Hooks skeleton for {raw.get("name", "a protocol")!s} (generated; not an implementation).',
        "",
        "Write every method below, then delete the LINGXI_SKELETON line. host, guest",
        "and `protocol test` refuse this file until then.",
        "",
        "Constraints from spec.json:",
        doc,
        '"""',
        "",
        "from lingxi.hooks import DecisionPoint, HookResult, Hooks  # noqa: F401",
        "",
        f"{SENTINEL} = True",
        "",
        "",
        "class ProtocolHooks(Hooks):",
        f'    """{mode} hooks; self.ctx.role is "host" or "guest"."""',
    ]
    for method in methods:
        params = f"self, {method.signature}" if method.signature else "self"
        out += [
            "",
            f"    def {method.name}({params}):",
            f'        """{method.doc} Returns {method.returns}."""',
            f'        raise NotImplementedError("{PLACEHOLDER}: {method.name}")',
        ]
    return "\n".join(out) + "\n"


def write_skeleton(spec: Any, folder: str | Path, methods: list[HookMethod], *,
                   protocol_id: str | None = None, force: bool = False) -> Path:
    """Write ``hooks.py`` and the sidecar ``.lingxi-hooks.json`` into ``folder``."""
    folder = Path(folder)
    target = folder / HOOKS_FILE
    if target.exists() and not force:
        raise HooksError("hooks.exists", f"{target} exists; not overwriting it")
    raw = _raw(spec)
    text = render_skeleton(raw, methods)
    folder.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    sidecar = {
        "skeleton_hash": sha256_hex(text.encode("utf-8")),
        "spec_hash": sha256_hex(canonical_bytes(raw)),
        "protocol_id": protocol_id or getattr(spec, "protocol_id", None),
        "flow_mode": _mode(raw),
        "generator": f"lingxi {__version__}",
    }
    (folder / SIDECAR).write_text(json.dumps(sidecar, indent=2, sort_keys=True) + "\n",
                                  encoding="utf-8")
    return target


@dataclass
class SkeletonStatus:
    """Whether a hooks file is still a skeleton, and what is left to write."""

    sentinel: bool = False
    pending: list[str] = field(default_factory=list)
    unchanged: bool = False  # byte-identical to the generated skeleton

    @property
    def is_skeleton(self) -> bool:
        return self.sentinel or bool(self.pending) or self.unchanged


def _raises_placeholder(node: ast.AST) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) \
                and sub.value.startswith(PLACEHOLDER):
            return True
    return False


def skeleton_status(hooks_path: str | Path) -> SkeletonStatus:
    """Inspect ``hooks.py`` without running it."""
    path = Path(hooks_path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise HooksError("hooks.not_utf8", f"{path} is not UTF-8 Python source "
                         f"(byte {error.start})") from None
    status = SkeletonStatus()
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as error:
        raise HooksError("hooks.syntax_error", f"{path}:{error.lineno}: {error.msg}") from error
    except (ValueError, RecursionError, MemoryError) as error:  # null bytes, absurd nesting
        raise HooksError("hooks.syntax_error", f"{path}: {error}") from None
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            value = node.value
            if SENTINEL in names and isinstance(value, ast.Constant) and value.value:
                status.sentinel = True
    for walked in ast.walk(tree):
        if isinstance(walked, ast.FunctionDef | ast.AsyncFunctionDef) and any(
                isinstance(stmt, ast.Raise) and _raises_placeholder(stmt) for stmt in walked.body):
            if walked.name not in status.pending:
                status.pending.append(walked.name)
    sidecar = path.parent / SIDECAR
    if sidecar.is_file():
        try:
            recorded = json.loads(sidecar.read_text(encoding="utf-8")).get("skeleton_hash")
        except (ValueError, AttributeError):
            recorded = None
        status.unchanged = recorded == sha256_hex(text.encode("utf-8"))
    return status
