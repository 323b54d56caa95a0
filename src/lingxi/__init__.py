"""Lingxi (灵隙): a protocol-driven runtime for agent-to-agent work."""

__version__ = "0.1.0"
