"""Actors: what plays a game through the ActorView contract.

An actor sees only the view (a dict valid against actor-view-v4) and the current
frame's PNG bytes, and answers with a selection (actor-selection-v2). Import
the registry from :mod:`lingxi.actor.actors` and pixel analysis from
:mod:`lingxi.actor.vision`; this package module stays light on purpose.
"""
