"""Resident memory as the OS sees it: a long session against a short one, and a chat flood.

1. ``lingxi protocol test rock-paper-scissors`` with ``best_of`` 10 and N
   (default 10,000) fixed rounds, each its own process; the peak RSS the
   kernel reports for it (``wait4``'s ``ru_maxrss``) is printed with the
   difference. Goal: within 20 MiB.
2. A chat host over loopback TCP that a guest floods with 20,000 lines of
   4,000 bytes, against the same host fed 10 lines; the host and guest run
   in one fresh process per run, so the peak is the host's plus a guest
   that makes its lines lazily (peak RSS: VmHWM in /proc/self/status). The
   byte limit ends the flood.

The first run of each pair is the baseline measured in the same run; a
missing figure fails the benchmark (non-zero exit) instead of printing half.
Run: .venv/bin/python benchmarks/memory.py [--rounds N] [--flood-lines N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MIB = 1024 * 1024

PEAK = '''
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise SystemExit("no VmHWM in /proc/self/status")
'''

FLOOD = PEAK + '''
import asyncio, json, sys
from lingxi.session import load_protocol
from lingxi.session.net import guest_session, host_session
from lingxi.wire.identity import Identity

async def main(lines, size, folder):
    async def flood():
        for i in range(lines):
            yield ("x" * size + str(i))[:size]
        yield "/quit"
        yield None
    ready = asyncio.get_running_loop().create_future()
    host = asyncio.ensure_future(host_session(
        load_protocol("chat"), "tcp://127.0.0.1:0", identity=Identity.generate(),
        state_dir=folder + "/h", on_listening=ready.set_result, receipt_timeout=1.0,
        keep_events=False))
    endpoint = await asyncio.wait_for(ready, 60)
    await guest_session(None, endpoint, identity=Identity.generate(), state_dir=folder + "/g",
                        inputs=flood(), keep_events=False, receipt_timeout=1.0)
    result = await host
    return result.outcome

outcome = asyncio.run(main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]))
print(json.dumps({"code": outcome.code, "messages": outcome.messages, "peak": peak()}))
'''


def protocol_test(rounds: int) -> dict:
    """Peak RSS of one ``lingxi protocol test`` process, from the kernel (wait4's ru_maxrss)."""
    lingxi = Path(sys.executable).with_name("lingxi")
    options = json.dumps({"best_of": rounds, "termination": "fixed_rounds"})
    with tempfile.TemporaryDirectory() as state, tempfile.TemporaryFile() as out:
        process = subprocess.Popen([str(lingxi), "protocol", "test", "rock-paper-scissors",
                                    "--options", options, "--state-dir", state, "--json",
                                    "--no-input"], stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode()
    if process.returncode != 0:
        raise SystemExit(f"protocol test failed ({process.returncode}): {text[-2000:]}")
    return {"rounds": json.loads(text)["host"]["rounds"], "peak": usage.ru_maxrss * 1024}


def child(code: str, *args: str) -> dict:
    with tempfile.TemporaryDirectory() as state:
        out = subprocess.run([sys.executable, "-c", code, *args, state], capture_output=True,
                             text=True, timeout=3600)
    if out.returncode != 0:
        raise SystemExit(f"a measured run failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10_000)
    parser.add_argument("--flood-lines", type=int, default=20_000)
    parser.add_argument("--line-bytes", type=int, default=4_000)
    parser.add_argument("--skip-flood", action="store_true")
    args = parser.parse_args()
    short = protocol_test(10)
    long = protocol_test(args.rounds)
    print(f"protocol test rock-paper-scissors, peak RSS at {short['rounds']:>6} rounds: "
          f"{short['peak'] / MIB:7.2f} MiB")
    print(f"protocol test rock-paper-scissors, peak RSS at {long['rounds']:>6} rounds: "
          f"{long['peak'] / MIB:7.2f} MiB")
    diff = (long["peak"] - short["peak"]) / MIB
    print(f"  difference: {diff:+.2f} MiB (goal: within 20 MiB)")
    if args.skip_flood:
        return
    calm = child(FLOOD, "10", str(args.line_bytes))
    flood = child(FLOOD, str(args.flood_lines), str(args.line_bytes))
    print(f"chat over TCP, 10 lines: peak RSS {calm['peak'] / MIB:7.2f} MiB "
          f"(host ended {calm['code'] or 'completed'})")
    print(f"chat over TCP, flood of {args.flood_lines} x {args.line_bytes} B: peak RSS "
          f"{flood['peak'] / MIB:7.2f} MiB (host ended {flood['code']} after "
          f"{flood['messages']} messages)")
    print(f"  difference: {(flood['peak'] - calm['peak']) / MIB:+.2f} MiB")


if __name__ == "__main__":
    main()
