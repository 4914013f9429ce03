"""Test environment: hermetic Hub settings set before anything imports huggingface_hub, a socket
guard that fails any connection off loopback, and a local hub server per session."""
from __future__ import annotations

import os
import socket
import sys
import tempfile
import uuid
from pathlib import Path

import pytest

_TMP = Path(tempfile.mkdtemp(prefix="zoo-tests-"))
HUB_TOKEN = "zoo-test-token"

# huggingface_hub reads these at import time (shared/notes/HUB.md, 1.2)
assert "huggingface_hub" not in sys.modules, "conftest must run before huggingface_hub is imported"
os.environ.update(
    HF_HOME=str(_TMP / "hf-home"),
    HF_HUB_CACHE=str(_TMP / "hf-cache"),
    HF_HUB_DISABLE_TELEMETRY="1",
    HF_HUB_DISABLE_XET="1",
    HF_HUB_DISABLE_PROGRESS_BARS="1",
    HF_TOKEN=HUB_TOKEN,
    SCIKIT_LEARN_DATA=str(_TMP / "sklearn"),
    XDG_CACHE_HOME=str(_TMP / "xdg"),
    ZOO_CACHE_DIR=str(_TMP / "zoo-cache"),
    # tiny models on a 2-core, possibly shared machine: one thread each avoids oversubscription
    # (measured here under load: SIREN 0.84 s/step with 2 threads, 0.044 s/step with 1)
    OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
)
# A test-only plugin distribution (tests/fixtures/site), visible to this process and its children.
_FIXTURE_SITE = str(Path(__file__).parent / "tests" / "fixtures" / "site")
sys.path.insert(0, _FIXTURE_SITE)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [_FIXTURE_SITE, os.environ.get("PYTHONPATH")]))
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.pop("ZOO_PLUGINS", None)
os.environ.pop("ZOO_DISABLE_PLUGINS", None)
os.environ.pop("ZOO_STRICT_PLUGINS", None)

_real_connect = socket.socket.connect
_real_connect_ex = socket.socket.connect_ex


def _is_loopback(address) -> bool:
    if isinstance(address, (str, bytes)):  # AF_UNIX
        return True
    host = address[0]
    return host in ("localhost", "::1") or str(host).startswith("127.")


def _guarded_connect(self, address):
    if not _is_loopback(address):
        raise OSError(f"network access blocked in tests: connect to {address!r}")
    return _real_connect(self, address)


def _guarded_connect_ex(self, address):
    if not _is_loopback(address):
        raise OSError(f"network access blocked in tests: connect to {address!r}")
    return _real_connect_ex(self, address)


socket.socket.connect = _guarded_connect
socket.socket.connect_ex = _guarded_connect_ex


def pytest_configure(config):
    # the same settings for subprocesses the tests start
    os.environ["ZOO_TEST_TMP"] = str(_TMP)


# One hub for the whole run, started before huggingface_hub is imported so that HF_ENDPOINT is
# read by it at import like in a user's process. The server is stdlib-only.
from zoo.hubserver import LocalHub  # noqa: E402

_HUB = LocalHub(root=_TMP / "hub-root", port=0, tokens=[HUB_TOKEN])
_HUB.start()
os.environ["HF_ENDPOINT"] = _HUB.url


def pytest_unconfigure(config):
    _HUB.stop()


@pytest.fixture(scope="session")
def hub():
    """The session's local hub (HF_ENDPOINT points at it; HF_TOKEN holds its write token)."""
    return _HUB


@pytest.fixture
def repo_id():
    """A fresh repo id per test, so tests never see each other's commits."""
    return f"zoo-test/r-{uuid.uuid4().hex[:12]}"
