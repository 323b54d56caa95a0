"""Every cheat class of holdem and group-vote is caught and names the identity that cheated."""

from __future__ import annotations

import pytest

from lingxi.contract import load_spec
from lingxi.contract.catalog import template_document
from lingxi.group.adversarial import adversarial

CLASSES = {
    "group-poker": {"stacked shuffle", "wrong hole share", "wrong board share",
                    "wrong card at showdown", "false forfeit claim", "forking sequencer",
                    "reordering sequencer", "silent seat (timed out while it owed)"},
    "group-vote": {"reveal that does not open its commitment", "forking sequencer",
                   "reordering sequencer", "reveal before every seat committed"},
}


@pytest.mark.parametrize(("template", "seats"), [
    ("group-poker", 2), pytest.param("group-poker", 6, marks=pytest.mark.slow),
    ("group-vote", 5)])
def test_every_cheat_is_caught_and_named(template, seats) -> None:
    cases = adversarial(load_spec(template_document(template)), seats, seed=seats)
    assert CLASSES[template] <= {c.name for c in cases}
    missed = [c.to_dict() for c in cases if not c.caught]
    assert not missed
