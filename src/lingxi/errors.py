"""Errors are values with codes.

Every failure a user can cause is a :class:`LingxiError` (or a subclass) with a
stable dotted ``code`` (``spec.unknown_version``, ``envelope.bad_signature``…),
one line of text, an optional JSON path, and the CLI exit status it maps to.
Layers subclass it; the CLI turns any of them into one line and an exit code,
so no traceback reaches a user for bad input.

This module is stdlib-only and sits below every layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1  # the checked thing failed (invalid message, rejected envelope, …)
EXIT_USAGE = 2  # usage or input error (bad JSON, missing file, unknown option)


@dataclass(frozen=True)
class Finding:
    """One problem found in an input: code, JSON path, one line of text."""

    code: str
    message: str
    path: str = "$"
    severity: str = "error"  # "error" | "warning"

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "path": self.path, "message": self.message,
                "severity": self.severity}

    def __str__(self) -> str:
        return f"{self.severity}: {self.path}: {self.message} [{self.code}]"


class LingxiError(Exception):
    """A user-causable failure with a stable code and a one-line message."""

    exit_code: int = EXIT_USAGE

    def __init__(self, code: str, message: str, *, path: str | None = None,
                 findings: list[Finding] | None = None,
                 details: dict[str, Any] | None = None,
                 exit_code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.path = path
        self.findings = list(findings or [])
        self.details = dict(details or {})
        if exit_code is not None:
            self.exit_code = exit_code

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.path:
            out["path"] = self.path
        if self.findings:
            out["findings"] = [f.to_dict() for f in self.findings]
        if self.details:
            out["details"] = self.details
        return out

    def __str__(self) -> str:
        where = f" at {self.path}" if self.path else ""
        return f"{self.code}: {self.message}{where}"


class InputError(LingxiError):
    """Unreadable input: a missing file, bad JSON, a wrong argument (exit 2)."""

    exit_code = EXIT_USAGE


class CheckFailed(LingxiError):
    """The thing being checked was read fine but is not valid (exit 1)."""

    exit_code = EXIT_FAILED


class WriteFailed(LingxiError):
    """Local state could not be written (disk full, read-only, no permission): exit 2.

    Code ``io.write_failed``. Nothing half-written is left behind: writers go
    through :mod:`lingxi.files`, which writes a temporary file and renames it.
    """

    exit_code = EXIT_USAGE

    def __init__(self, message: str, **kwargs: Any) -> None:
        super().__init__("io.write_failed", message, **kwargs)


@dataclass
class Report:
    """Findings gathered while checking one input."""

    findings: list[Finding] = field(default_factory=list)

    def add(self, code: str, message: str, path: str = "$", severity: str = "error") -> None:
        self.findings.append(Finding(code, message, path, severity))

    def warn(self, code: str, message: str, path: str = "$") -> None:
        self.add(code, message, path, "warning")

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.is_error]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.is_error]

    @property
    def ok(self) -> bool:
        return not self.errors
