"""The published implementation, ``aigenora`` 0.1.4 from PyPI, as a baseline.

It is installed by the benchmarks into a virtual environment of its own
(``/tmp/lingxi-bench-aigenora``, or ``$LINGXI_REFERENCE_VENV``) and only ever
run there, in a child process: it is never a Lingxi dependency and never
imported into a Lingxi process. When it cannot be installed, every benchmark
that needs it stops with a non-zero exit instead of printing a figure
without its baseline.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PACKAGE = "aigenora"
VERSION = "0.1.4"
VENV = Path(os.environ.get("LINGXI_REFERENCE_VENV", "/tmp/lingxi-bench-aigenora"))


def _installed(python: Path) -> str | None:
    if not python.exists():
        return None
    probe = subprocess.run([str(python), "-c", "from importlib import metadata; "
                            f"print(metadata.version({PACKAGE!r}))"],
                           capture_output=True, text=True)
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure() -> Path:
    """The reference venv's python, installing it first when needed (exit 1 if impossible)."""
    python = VENV / "bin" / "python"
    if _installed(python) == VERSION:
        return python
    try:
        if not python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q",
                        f"{PACKAGE}=={VERSION}"], check=True)
    except (OSError, subprocess.CalledProcessError) as error:
        raise SystemExit(f"baseline missing: cannot install {PACKAGE}=={VERSION} into "
                         f"{VENV}: {error}") from error
    if _installed(python) != VERSION:
        raise SystemExit(f"baseline missing: {PACKAGE}=={VERSION} is not importable in {VENV}")
    return python


def child_env(**extra: str) -> dict[str, str]:
    """The environment for timed child processes: cached bytecode for both sides.

    With PYTHONDONTWRITEBYTECODE set (as on the project's machines) an editable
    install recompiles every module on every start while a pip-installed
    package has its .pyc files; one shared cache folder, warmed by a first
    untimed run, makes the comparison even.
    """
    env = dict(os.environ, PYTHONPYCACHEPREFIX=str(VENV.parent / "lingxi-bench-pycache"),
               **extra)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def executable(name: str = "aigenora") -> Path:
    """A console script of the reference venv (installing it first when needed)."""
    return ensure().parent / name
