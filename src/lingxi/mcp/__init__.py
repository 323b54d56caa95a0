"""Lingxi as a tool for any MCP-capable assistant: ``lingxi mcp``, a Model Context
Protocol server over stdio on the official ``mcp`` SDK.

- :mod:`lingxi.mcp.runs`: sessions played in the background by ``lingxi host|guest|join``
  processes, found again by a handle; their state read from the state folder, every
  action (decide, abort, verify, browse) done by the command line itself, so its
  checks and typed errors are the ones a person at the terminal gets;
- :mod:`lingxi.mcp.server`: the tools, each input validated, every text that came from
  the peer or a registry marked as data;
- ``SKILL.md``: the skill file ``lingxi skill install`` writes for assistants that read
  skills.
"""
