"""The example plugin (``examples/zoo-example``) built and tested the way its author would, outside this repository.

It is installed into a throw-away virtual environment that sees this environment's packages (torch, zoo-core,
the tasks) through a ``.pth`` file, so nothing is downloaded; its own tests then run with the conformance kit's
pytest plugin from a temporary folder, so that this repository's ``conftest.py`` and ``tests/`` helpers take no
part. The example must never be installed here: the suite would then test it with this repository's set-up.
"""
from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from .helpers import run_zoo

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "zoo-example"
_LITTER = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".pytest_cache")


def _unavailable(reason: str):
    """Skip when venv or pip is missing on this machine; in CI that is a failure, never a skip."""
    if os.environ.get("CI"):
        pytest.fail(f"venv/pip unavailable in CI: {reason}")
    pytest.skip(f"venv/pip unavailable: {reason}")


def _outside_env() -> dict[str, str]:
    """This environment without the test session's Python paths and its hermetic Hub settings.

    The example's own run starts its own local hub; the settings this session's conftest.py exported (and its
    test-only plugin site on PYTHONPATH) must not leak into it.
    """
    drop = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith(("HF_", "ZOO_"))}
    return {**env, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INDEX": "1", "OMP_NUM_THREADS": "1"}


def _run(cmd: list, timeout: float, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                          env=_outside_env(), **kw)


@pytest.fixture(scope="module")
def example_python(tmp_path_factory) -> Path:
    """The interpreter of a fresh venv with zoo-example installed (``--no-deps``) and this venv's packages visible."""
    root = tmp_path_factory.mktemp("example-venv")
    venv = root / "venv"
    # no pip of its own (ensurepip would take longer than the rest): this environment's pip, through the .pth,
    # installs into the venv it runs in
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv], timeout=120)
    if made.returncode != 0:
        _unavailable(f"python -m venv: {made.stderr.strip()[-300:]}")
    python = venv / ("Scripts" if os.name == "nt" else "bin") / ("python.exe" if os.name == "nt" else "python")
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], timeout=60)
    assert purelib.returncode == 0, purelib.stderr
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    # site.addsitedir (not a bare path line) so that .pth files in this environment's site-packages apply too
    lines = [f"import site; site.addsitedir({p!r})" for p in ours]
    Path(purelib.stdout.strip(), "_zoo_main_venv.pth").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if _run([python, "-m", "pip", "--version"], timeout=60).returncode != 0:
        _unavailable("pip is not importable in this environment")

    source = root / "zoo-example"
    shutil.copytree(EXAMPLE, source, ignore=_LITTER)  # build from a copy: nothing is written into the checkout
    # hatchling comes from this environment (--no-build-isolation); the dependencies are already visible (--no-deps)
    installed = _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "--no-compile", source],
                     timeout=300)
    assert installed.returncode == 0, f"pip install failed:\n{installed.stdout[-3000:]}\n{installed.stderr[-3000:]}"
    where = _run([python, "-c", "import zoo_example; print(zoo_example.__file__)"], timeout=60)
    assert where.returncode == 0 and Path(where.stdout.strip()).is_relative_to(venv), where.stdout + where.stderr
    return python


def test_example_tests_pass_outside_the_repository(example_python, tmp_path):
    run = tmp_path / "zoo-example"
    shutil.copytree(EXAMPLE / "tests", run / "tests", ignore=_LITTER)
    # its pyproject.toml too, as in the author's plugin folder: its `zoo` entry points switch the kit's hermetic
    # mode on (local hub, socket guard); the package itself stays out, so the installed copy is what gets tested
    shutil.copy2(EXAMPLE / "pyproject.toml", run / "pyproject.toml")
    r = _run([example_python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], timeout=600, cwd=run)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"the example's tests failed (exit {r.returncode}):\n{out[-6000:]}"
    summary = out.strip().splitlines()[-1]
    passed = re.search(r"(\d+) passed", summary)
    assert passed and int(passed.group(1)) >= 8 and not re.search(r"skipped|xfail|deselected|error", summary), summary


def test_example_is_not_installed_here():
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.distribution("zoo-example")
    listed = run_zoo("list", "--task", "digits_classify")
    assert listed.returncode == 0, listed.stderr
    names = listed.stdout.split()
    assert "derf_vit" in names and "example_mlp" not in names
