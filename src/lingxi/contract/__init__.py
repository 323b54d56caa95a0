"""The protocol contract layer: load spec.json, compute protocol_id, validate
messages and options against it.

Imports only the stdlib, jsonschema, ``lingxi.errors`` and ``lingxi.canonical``.
"""

from lingxi.contract.errors import MessageError, OptionsError, SpecError
from lingxi.contract.model import (
    BOTH,
    DIRECTIONS,
    GUEST_TO_HOST,
    HOST_TO_GUEST,
    SUPPORTED_MODES,
    Decision,
    Exchange,
    Flow,
    MessageSchema,
    Options,
    Phase,
    RoundSpec,
)
from lingxi.contract.protocol_id import canonical_subset, protocol_id
from lingxi.contract.seats import GROUP_MODE, Seats
from lingxi.contract.spec import Spec, inspect_spec, load_spec

__all__ = [
    "BOTH", "DIRECTIONS", "GROUP_MODE", "Seats", "GUEST_TO_HOST", "HOST_TO_GUEST", "SUPPORTED_MODES",
    "Decision", "Exchange", "Flow", "MessageError", "MessageSchema", "Options",
    "OptionsError", "Phase", "RoundSpec", "Spec", "SpecError", "canonical_subset",
    "inspect_spec", "load_spec", "protocol_id",
]
