"""Typed errors of the contract layer.

``SpecError`` is an :class:`~lingxi.errors.InputError`: exit 2 when the spec
cannot be read at all (missing file, bad JSON), exit 1 when it was read but is
not a valid contract. ``MessageError`` and ``OptionsError`` are
:class:`~lingxi.errors.CheckFailed` (exit 1). Each carries every finding; its
``code`` is the code of the first error so callers can branch on it.
"""

from __future__ import annotations

from lingxi.errors import EXIT_FAILED, CheckFailed, Finding, InputError


def _summary(what: str, findings: list[Finding]) -> str:
    errors = [f for f in findings if f.is_error] or findings
    first = errors[0]
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{what}: {first.path}: {first.message}{more}"


class SpecError(InputError):
    """A spec that cannot be read (exit 2) or is not a valid contract (exit 1)."""

    @classmethod
    def invalid(cls, findings: list[Finding], origin: str = "spec") -> SpecError:
        errors = [f for f in findings if f.is_error]
        return cls(errors[0].code, _summary(f"invalid {origin}", findings),
                   findings=findings, exit_code=EXIT_FAILED)

    @property
    def codes(self) -> list[str]:
        return [f.code for f in self.findings if f.is_error]


class MessageError(CheckFailed):
    """A message payload that does not match the spec (exit 1)."""

    @classmethod
    def from_findings(cls, findings: list[Finding]) -> MessageError:
        return cls(findings[0].code, _summary("invalid message", findings), findings=findings)


class OptionsError(CheckFailed):
    """Session options that do not match the spec's parameters (exit 1)."""

    @classmethod
    def from_findings(cls, findings: list[Finding]) -> OptionsError:
        errors = [f for f in findings if f.is_error]
        return cls(errors[0].code, _summary("invalid options", findings), findings=findings)
