"""Helpers for contract tests: a small valid spec to mutate."""

from __future__ import annotations

import copy

import pytest

BASE_SPEC = {
    "name": "Guess",
    "spec_version": "1.0",
    "type": "game",
    "messages": [
        {"name": "join", "direction": "guest_to_host", "fields": {
            "action": {"type": "enum", "values": ["join"], "required": True}}},
        {"name": "guess", "direction": "guest_to_host", "fields": {
            "action": {"type": "enum", "values": ["guess"], "required": True},
            "attempt": {"type": "integer", "min": 1, "required": True},
            "number": {"type": "integer", "min": 0, "max": 100, "required": True}}},
        {"name": "hint", "direction": "host_to_guest", "fields": {
            "action": {"type": "enum", "values": ["hint"], "required": True},
            "result": {"type": "enum", "values": ["higher", "lower", "correct"],
                       "required": True},
            "game_over": {"type": "boolean", "required": True}}},
        {"name": "error", "direction": "both", "fields": {
            "action": {"type": "enum", "values": ["error"], "required": True},
            "reason": {"type": "text", "max_length": 50}}},
    ],
    "flow": {"phases": [
        {"phase": "join", "exchange": [{"message": "join", "direction": "guest_to_host"}]},
        {"phase": "play", "repeat": "until game_over", "exchange": [
            {"message": "guess", "direction": "guest_to_host"},
            {"message": "hint", "direction": "host_to_guest"}]},
    ]},
    "rules": {"game_over": "guessed"},
    "parameters": {"max_attempts": {"type": "integer", "min": 1, "max": 20, "default": 10}},
}


@pytest.fixture
def base_spec() -> dict:
    """A fresh deep copy of a small valid spec (no warnings)."""
    return copy.deepcopy(BASE_SPEC)
