"""Option validation against a spec's ``parameters``.

Declared keys are type- and range-checked (a ``table`` is a nested field tree:
every column required, unknown keys rejected, dotted error paths such as
``balance.skill.cd``). Undeclared keys become warnings and are dropped from
:attr:`Options.values`, so rule decisions can never read them.
"""

from __future__ import annotations

import copy
from typing import Any

from lingxi.contract.errors import OptionsError
from lingxi.contract.fields import Checker, compile_field
from lingxi.contract.model import Options
from lingxi.contract.source import json_kind
from lingxi.errors import Finding

PREFIX = "options"


class OptionsChecker:
    """The spec's parameters compiled once into checkers."""

    def __init__(self, parameters: dict[str, dict[str, Any]]) -> None:
        self.checks: dict[str, Checker] = {
            name: compile_field(defn, PREFIX) for name, defn in parameters.items()}
        self.defaults = {name: defn["default"] for name, defn in parameters.items()
                         if "default" in defn}

    def findings(self, options: Any) -> tuple[dict[str, Any], list[Finding]]:
        """``(declared values with defaults, findings)`` without raising."""
        if type(options) is not dict:
            return {}, [Finding("options.not_object",
                                f"options must be a JSON object, got {json_kind(options)}")]
        out: list[Finding] = []
        values: dict[str, Any] = {}
        for key, value in options.items():
            check = self.checks.get(key)
            if check is None:
                out.append(Finding("options.undeclared", f"option {str(key)[:80]!r} is not a "
                                   "declared parameter; ignored by the contract", str(key),
                                   "warning"))
                continue
            check(value, key, out)
            values[key] = value
        for key, default in self.defaults.items():
            values.setdefault(key, copy.deepcopy(default))
        return values, out

    def check(self, options: Any) -> Options:
        values, out = self.findings(options)
        if any(f.is_error for f in out):
            raise OptionsError.from_findings(out)
        return Options(values=copy.deepcopy(values), warnings=out)
