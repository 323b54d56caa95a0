"""How long `lingxi --help` takes to start, against a bare `python -c pass`.

Run: .venv/bin/python benchmarks/startup.py [--runs N]
Prints the median wall time of each and the ratio; the baseline is measured in
the same run because this machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def median_seconds(argv: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    baseline = median_seconds([sys.executable, "-c", "pass"], args.runs)
    cases = {
        "lingxi --help": [sys.executable, "-m", "lingxi", "--help"],
        "lingxi protocol --help": [sys.executable, "-m", "lingxi", "protocol", "--help"],
    }
    print(f"python -c pass (baseline)   {baseline * 1000:7.1f} ms   1.00x")
    for name, argv in cases.items():
        took = median_seconds(argv, args.runs)
        print(f"{name:<27} {took * 1000:7.1f} ms   {took / baseline:.2f}x")


if __name__ == "__main__":
    main()
