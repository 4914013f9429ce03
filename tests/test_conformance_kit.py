"""The conformance kit from outside this repository: plugins written into a temporary folder, pip-installed,
tested with plain ``pytest`` in their own folder (zoo's pytest plugin starts their hub; no conftest, nothing
from this repository's tests), under ``python -O`` too.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PYPROJECT = '''
[build-system]
requires = ["hatchling>=1.18"]
build-backend = "hatchling.build"

[project]
name = "{dist}"
version = "0.1.0"
requires-python = ">=3.10"
dependencies = ["zoo-core[test]"]

[project.entry-points.zoo]
{entry_points}

[tool.hatch.build.targets.wheel]
packages = ["{pkg}"]
'''

MODEL = '''
import torch


class Tiny(torch.nn.Module):
    """Three inputs to ``width`` outputs, times a buffer."""

    def __init__(self, width: int = 4, drift: bool = False):
        super().__init__()
        self.lin = torch.nn.Linear(3, width)
        self.register_buffer("scale", torch.rand(width) + 0.5)
        self.drift = drift

    def forward(self, x):
        return self.lin(x) * self.scale

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        if self.drift:  # the bug under test: loading changes what was saved
            with torch.no_grad():
                self.scale.mul_(2)


def tiny(width: int = 4) -> Tiny:
    return Tiny(width)


def drifting(width: int = 4) -> Tiny:
    return Tiny(width, drift=True)
'''

PLUGIN = '''
from zoo import ModelSpec, hookimpl


@hookimpl
def zoo_models():
    return [ModelSpec(name="{name}", builder="{pkg}.model:{builder}", description="no task: checked all the same")]
'''

GOOD_TEST = '''
from zoo.testing import check_plugin


def test_conformance():
    check_plugin("outside", overrides={"outside_tiny": {"width": 3}})
'''

BROKEN_TEST = '''
from zoo.testing import check_plugin


def test_state_round_trip():
    check_plugin("outside-drift")


def test_torch_free_plugin_module():
    check_plugin("outside-torchy")
'''


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    return root


@pytest.fixture(scope="module")
def outside(tmp_path_factory):
    """Two outside projects pip-installed into a throwaway target: a good plugin and one with two broken ones."""
    tmp = tmp_path_factory.mktemp("outside")
    good = _write(tmp / "good", {
        "pyproject.toml": PYPROJECT.format(dist="zoo-outside", pkg="zoo_outside",
                                           entry_points='outside = "zoo_outside.plugin"'),
        "zoo_outside/__init__.py": "",
        "zoo_outside/plugin.py": PLUGIN.format(name="outside_tiny", pkg="zoo_outside", builder="tiny"),
        "zoo_outside/model.py": MODEL,
        "tests/test_it.py": GOOD_TEST,
    })
    broken = _write(tmp / "broken", {
        "pyproject.toml": PYPROJECT.format(
            dist="zoo-outside-broken", pkg="zoo_outside_broken",
            entry_points='outside-drift = "zoo_outside_broken.plugin"\noutside-torchy = "zoo_outside_broken.torchy"'),
        "zoo_outside_broken/__init__.py": "",
        "zoo_outside_broken/plugin.py": PLUGIN.format(name="outside_drift", pkg="zoo_outside_broken", builder="drifting"),
        "zoo_outside_broken/torchy.py": "import torch  # the bug under test: listing would import torch\n"
                                        + PLUGIN.format(name="outside_torchy", pkg="zoo_outside_broken", builder="tiny"),
        "zoo_outside_broken/model.py": MODEL,
        "tests/test_it.py": BROKEN_TEST,
    })
    target = tmp / "target"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                           "--target", str(target), str(good), str(broken)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"good": good, "broken": broken, "target": target}


def _pytest(project: Path, target: Path, *python_flags: str) -> subprocess.CompletedProcess:
    """Plain pytest in the project's folder, with an environment that knows nothing of this repository's tests."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "ZOO_", "PYTEST_", "PYTHON")) and k not in ("XDG_CACHE_HOME", "SCIKIT_LEARN_DATA")}
    # the kit's messages are under test, not the load deadline: a cold first `import torch` in a fresh CI venv can
    # take longer than ZOO_PLUGIN_TIMEOUT's default 5 s, and the torch-importing plugin would then report a timeout
    env.update(PYTHONPATH=str(target), OMP_NUM_THREADS="1", ZOO_PLUGIN_TIMEOUT="120")
    return subprocess.run([sys.executable, *python_flags, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(project), "tests"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=600)


def test_outside_plugin_passes_the_kit_with_plain_pytest(outside):
    r = _pytest(outside["good"], outside["target"])
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "1 passed" in r.stdout


def test_broken_plugins_fail_with_a_message_naming_the_problem_even_under_python_O(outside):
    # -O strips assert statements (pytest's rewriting is off too): the kit must fail all the same
    r = _pytest(outside["broken"], outside["target"], "-O")
    out = r.stdout
    assert r.returncode == 1, out[-4000:] + r.stderr[-2000:]
    assert "2 failed" in out, out[-4000:]
    assert "ConformanceError: outside_drift: save_pretrained -> local-dir: round trip: scale is not bit-identical" in out
    assert "ConformanceError: zoo_outside_broken.torchy must not import heavy modules" in out and "imports torch" in out


def test_no_local_hub_is_an_error_not_a_skipped_check(monkeypatch):
    from zoo.testing import ConformanceError, check_model

    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    with pytest.raises(ConformanceError, match="needs a local hub, and HF_ENDPOINT is not set"):
        check_model("any_model")
    monkeypatch.setenv("HF_ENDPOINT", "https://huggingface.co")
    with pytest.raises(ConformanceError, match="HF_ENDPOINT is https://huggingface.co, not a local hub"):
        check_model("any_model")
