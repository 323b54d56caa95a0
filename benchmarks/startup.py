"""How long `lingxi --help` takes to start, against `python -c pass` and the reference.

Each command is run --runs times, interleaved, and timed as the OS sees it:
wall time and the child's CPU time (user + system, from its resource usage).
Baselines in the same run: a bare `python -c pass` and the published
implementation's `aigenora --help` (its own venv, see reference.py; the
script exits non-zero when it cannot be installed).

Goal (issue 22.7): `lingxi --help` under 0.3 s wall on a loaded machine.
Run: .venv/bin/python benchmarks/startup.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import reference

LINGXI = Path(sys.executable).with_name("lingxi")


def run_once(argv: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                   env=reference.child_env())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    cases = {
        "python -c pass (baseline)": [sys.executable, "-c", "pass"],
        "aigenora --help (reference)": [str(reference.executable()), "--help"],
        "lingxi --help": [str(LINGXI), "--help"],
        "lingxi protocol --help": [str(LINGXI), "protocol", "--help"],
        # a command on the session runtime: `import lingxi.session.<anything>` loads the
        # package surface (plain imports, issue 19.2), so the runtime's whole import cost
        "lingxi session --help": [str(LINGXI), "session", "--help"],
    }
    for argv in cases.values():  # fill the shared bytecode cache (reference.child_env)
        run_once(argv)
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(args.runs):
        for name, argv in cases.items():
            wall, cpu = run_once(argv)
            walls[name].append(wall)
            cpus[name].append(cpu)
    load = os.getloadavg()
    print(f"median of {args.runs} interleaved runs; load average {load[0]:.1f} {load[1]:.1f} "
          f"{load[2]:.1f} on {os.cpu_count()} cores")
    base_wall = statistics.median(walls["python -c pass (baseline)"])
    base_cpu = statistics.median(cpus["python -c pass (baseline)"])
    for name in cases:
        wall, cpu = statistics.median(walls[name]), statistics.median(cpus[name])
        print(f"  {name:<28} {wall * 1000:7.1f} ms wall ({wall / base_wall:4.2f}x)  "
              f"{cpu * 1000:6.1f} ms cpu ({cpu / base_cpu:4.2f}x)   worst {max(walls[name]) * 1000:6.1f} ms wall")
    help_wall = statistics.median(walls["lingxi --help"])
    print(f"lingxi --help: {help_wall * 1000:.0f} ms wall (goal < 300 ms); "
          f"{statistics.median(cpus['aigenora --help (reference)']) / statistics.median(cpus['lingxi --help']):.1f}x "
          "less CPU than the reference's --help")
    return 0


if __name__ == "__main__":
    sys.exit(main())
