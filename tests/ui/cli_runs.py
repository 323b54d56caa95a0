"""Run `lingxi host` / `lingxi guest` as the person would (real processes, real TCP), and
read what they print: the endpoint they listen on, the page's URL."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

LINGXI = [sys.executable, "-m", "lingxi"]
HANG_GUARD = 60  # seconds; only stops a broken run from hanging the suite


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LINGXI_")}
    env.update(LINGXI_HOME=str(home), PYTHONUNBUFFERED="1")
    return env


class Run:
    """One lingxi process; its stderr is read as it comes (every line kept)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[str] = []
        self._seen = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, args: list[str], home: Path) -> Run:
        process = await asyncio.create_subprocess_exec(
            *LINGXI, *args, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=env_for(home))
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stderr is not None
        while line := await self.process.stderr.readline():
            self.lines.append(line.decode("utf-8", "replace").rstrip("\n"))
            self._seen.set()

    async def wait_for(self, pattern: str) -> re.Match[str]:
        """The first stderr line matching ``pattern`` (waits for it)."""
        async def find() -> re.Match[str]:
            while True:
                for line in self.lines:
                    found = re.search(pattern, line)
                    if found:
                        return found
                if self._reader.done():
                    raise AssertionError(f"no line matched {pattern!r}: {self.lines}")
                self._seen.clear()
                await self._seen.wait()
        return await asyncio.wait_for(find(), HANG_GUARD)

    async def finish(self) -> tuple[int, str]:
        """Wait for the process to exit: (exit status, stdout)."""
        assert self.process.stdout is not None
        out = await asyncio.wait_for(self.process.stdout.read(), HANG_GUARD)
        code = await asyncio.wait_for(self.process.wait(), HANG_GUARD)
        await self._reader
        return code, out.decode("utf-8", "replace")

    def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()


def events_of(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()
            if line.strip()]
