"""Helpers for the core tests: run Python in a fresh process with the test environment."""
from __future__ import annotations

import os
import subprocess
import sys


def run_py(code: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter; ``env`` entries override (None removes a variable)."""
    full = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full.pop(key, None)
        else:
            full[key] = value
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=full)


def run_zoo(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return run_py(f"import sys; from zoo.cli import main; sys.exit(main({list(args)!r}))", env=env, timeout=timeout)
