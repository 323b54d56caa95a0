"""The play harness: runs an actor against a browser game through ActorView/4.

``lingxi.playtest`` drives Debian's Chromium under virtual time, turns each
frame into a visual target catalog, shows the actor a validated ActorView/4,
normalizes and executes its selection, and writes an evidence bundle.
Pure pieces (catalog, lattice detection, selections, objectives, view
assembly) take plain data; only ``browser`` and ``server`` do I/O.
"""

from lingxi.playtest.errors import PlayError

__all__ = ["PlayError"]
