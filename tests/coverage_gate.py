"""The coverage gate of `make test`: line coverage of each pure layer, measured by the run.

The pure layers (the sans-IO session core, the wire, mental poker, the contract and the
registry's models) carry every check a peer or a registry could try to slip past, so each
one must keep its own floor; one total would let a well-covered package hide a poorly
covered one. Reads the ``.coverage`` data pytest-cov wrote; prints a line per package;
exits 1 when any is below its floor, 2 when there is no data to read.

    python tests/coverage_gate.py            # after `pytest --cov`
    python tests/coverage_gate.py --floor 95
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("session/core", "wire", "cards", "contract", "registry/models")
FLOOR = 95.0


def package_of(path: Path) -> str | None:
    """The gated package a measured file belongs to, or None."""
    try:
        relative = path.resolve().relative_to(ROOT / "src" / "lingxi").as_posix()
    except ValueError:
        return None
    return next((name for name in PACKAGES if relative.startswith(name + "/")), None)


def measure(data_file: Path) -> dict[str, tuple[int, int]]:
    """``{package: (statements, missed)}`` from a coverage data file."""
    import coverage

    cov = coverage.Coverage(data_file=str(data_file), config_file=str(ROOT / "pyproject.toml"))
    cov.load()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name in cov.get_data().measured_files():
        package = package_of(Path(name))
        if package is None:
            continue
        _, statements, _, missing, _ = cov.analysis2(name)
        totals[package][0] += len(statements)
        totals[package][1] += len(missing)
    return {name: (s, m) for name, (s, m) in totals.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", type=float, default=FLOOR, help="percent of lines, per package")
    parser.add_argument("--data-file", type=Path, default=ROOT / ".coverage")
    args = parser.parse_args(argv)
    if not args.data_file.exists():
        print(f"coverage.no_data: {args.data_file} not found (run pytest with --cov first)")
        return 2
    totals = measure(args.data_file)
    failed = False
    for package in PACKAGES:
        statements, missed = totals.get(package, (0, 0))
        percent = 100.0 * (statements - missed) / statements if statements else 0.0
        verdict = "ok" if percent >= args.floor else "BELOW"
        failed |= verdict != "ok"
        print(f"coverage {package:<16} {percent:5.1f} % of {statements} lines  {verdict}")
    if failed:
        print(f"coverage.below_floor: a pure layer is under {args.floor:g} % of its lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
