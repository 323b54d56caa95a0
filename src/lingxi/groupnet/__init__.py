"""The group runtime over TCP: the host sequences, every member is its own process.

An edge around :mod:`lingxi.group` (which stays pure): frames move entries,
refusals and receipts; every process checks every entry itself, so the
transport is trusted with nothing but delivery. See docs/groups.md.
"""
