"""A2N groups: one ordered, signed log per group, and the games and votes on it.

Pure (no I/O, no clock; entropy injected); runtimes that move entries live
at the edges (:mod:`lingxi.group.memory`, :mod:`lingxi.group.net`).
See docs/groups.md.
"""

from lingxi.group.errors import CODES, GroupError
from lingxi.group.keys import Signer
from lingxi.group.log import GroupLog, make_entry, replay
from lingxi.group.sequencer import MemberView, Sequencer
from lingxi.group.verify import make_record, verify_records

__all__ = ["CODES", "GroupError", "GroupLog", "MemberView", "Sequencer", "Signer",
           "make_entry", "make_record", "replay", "verify_records"]
