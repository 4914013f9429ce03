"""Test environment of this repository.

zoo's own pytest plugin (``zoo/pytest_plugin.py``, entry point ``pytest11: zoo``) does what every zoo
plugin's tests need: Hub settings pointed at a temporary folder and a local hub before anything imports
huggingface_hub, the socket guard, and the ``hub`` and ``repo_id`` fixtures. The repository root declares
no zoo plugin itself, so this file turns that mode on, first thing, and adds what only this repository
needs: more caches kept out of the home folder, one torch thread per test process, and a test-only plugin
distribution (tests/fixtures/site).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

from zoo.pytest_plugin import activate

_HERMETIC = activate()  # before anything imports huggingface_hub (the plugin's socket guard follows it)
_TMP = _HERMETIC.tmp

os.environ.update(
    SCIKIT_LEARN_DATA=str(_TMP / "sklearn"),
    XDG_CACHE_HOME=str(_TMP / "xdg"),
    # tiny models on a 2-core, possibly shared machine: one thread each avoids oversubscription
    # (measured here under load: SIREN 0.84 s/step with 2 threads, 0.044 s/step with 1)
    OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
)
# A test-only plugin distribution (tests/fixtures/site), visible to this process and its children.
_FIXTURE_SITE = str(Path(__file__).parent / "tests" / "fixtures" / "site")
sys.path.insert(0, _FIXTURE_SITE)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_FIXTURE_SITE, os.environ.get("PYTHONPATH")]))


def pytest_configure(config):
    # the same settings for subprocesses the tests start
    os.environ["ZOO_TEST_TMP"] = str(_TMP)
