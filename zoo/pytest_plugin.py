"""zoo's pytest plugin: a hermetic local hub and a socket guard for a plugin's conformance tests.

Installed with ``pip install zoo-core[test]`` (entry point ``pytest11: zoo``), so that a plugin's test
can be as short as::

    from zoo.testing import check_plugin

    def test_conformance():
        check_plugin("my-plugin")        # build, save, reload, push, pull, ... every model

*Hermetic mode* is what ``check_plugin`` needs: before anything imports huggingface_hub (it reads its
settings once, at import), the Hub settings point at a temporary folder and at a local hub started from
``zoo.hubserver`` on a free loopback port (``HF_ENDPOINT``, ``HF_TOKEN``, ``HF_HOME``, ``HF_HUB_CACHE``,
``HF_HUB_DISABLE_XET``/``_TELEMETRY``/``_PROGRESS_BARS``, zoo's own ``ZOO_CACHE_DIR``; ``HF_HUB_OFFLINE``
and the ``ZOO_*PLUGINS`` filters are cleared). Child processes inherit it. Everything goes when the session
ends. It is on:

* by default when the project under test declares ``zoo`` entry points (a zoo plugin: ``pytest`` run in
  its folder) ; ``--zoo-hub`` / ini ``zoo_hub = true`` turns it on elsewhere, ``--no-zoo-hub`` /
  ``zoo_hub = false`` off;
* on first use of the ``hub`` fixture otherwise, if huggingface_hub has not been imported yet;
* when a ``conftest.py`` calls ``activate()`` at its import (this repository's does).

The *socket guard* makes any connection off loopback fail (``OSError: network access blocked in tests``).
It follows hermetic mode unless ``--zoo-socket-guard`` / ``--no-zoo-socket-guard`` (ini ``zoo_socket_guard``)
says otherwise.

Fixtures: ``hub`` (the session's ``LocalHub``), ``repo_id`` (a fresh repo id per test), ``check_plugin``
(``zoo.testing.check_plugin`` bound to the session's hub).
"""
from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import uuid

import pytest

TYPE_CHECKING = False  # this module is imported by every pytest run where zoo-core[test] is installed
if TYPE_CHECKING:
    from pathlib import Path

    from .hubserver.server import LocalHub

__all__ = ["HUB_TOKEN", "Hermetic", "activate", "deactivate", "active", "guard_sockets", "unguard_sockets"]

HUB_TOKEN = "zoo-test-token"  # the local hub's write token (HF_TOKEN holds it)
_CLEARED = ("HF_HUB_OFFLINE", "ZOO_PLUGINS", "ZOO_DISABLE_PLUGINS", "ZOO_STRICT_PLUGINS")


class Hermetic:
    """The hermetic session: its temporary folder, its running hub, and the environment it replaced."""

    def __init__(self, tmp: Path, hub: LocalHub, saved_env: dict[str, str | None]) -> None:
        self.tmp = tmp
        self.hub = hub
        self.saved_env = saved_env


_state: Hermetic | None = None


def active() -> Hermetic | None:
    """The hermetic session of this process, or None."""
    return _state


def activate() -> Hermetic:
    """Point the Hub settings at a temporary folder and a freshly started local hub (once per process).

    Raises:
        RuntimeError: huggingface_hub is imported already, so it would keep its old settings.
    """
    global _state
    if _state is not None:
        return _state
    if "huggingface_hub" in sys.modules:
        raise RuntimeError(
            "huggingface_hub was imported before zoo's pytest plugin could point it at a local hub (it reads "
            "HF_ENDPOINT and the cache paths once, at import): turn the hub on for the whole session with "
            "`pytest --zoo-hub` or `zoo_hub = true` in the pytest ini options")
    from pathlib import Path

    from .hubserver.server import LocalHub

    tmp = Path(tempfile.mkdtemp(prefix="zoo-pytest-"))
    settings = {
        "HF_HOME": str(tmp / "hf-home"),
        "HF_HUB_CACHE": str(tmp / "hf-cache"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_XET": "1",  # the local hub serves plain LFS, not Xet
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "HF_TOKEN": HUB_TOKEN,
        "ZOO_CACHE_DIR": str(tmp / "zoo-cache"),
    }
    saved = {k: os.environ.get(k) for k in (*settings, "HF_ENDPOINT", *_CLEARED)}
    hub = LocalHub(root=tmp / "hub-root", port=0, tokens=[HUB_TOKEN])
    hub.start()
    os.environ.update(settings, HF_ENDPOINT=hub.url)
    for key in _CLEARED:
        os.environ.pop(key, None)
    _state = Hermetic(tmp, hub, saved)
    return _state


def deactivate() -> None:
    """Stop the hub, restore the environment and remove the temporary folder."""
    global _state
    state, _state = _state, None
    if state is None:
        return
    state.hub.stop()
    for key, value in state.saved_env.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(state.tmp, ignore_errors=True)


# --- socket guard -----------------------------------------------------------------------------------------

_real = {"connect": socket.socket.connect, "connect_ex": socket.socket.connect_ex}


def _is_loopback(address) -> bool:
    host = address[0]
    if isinstance(host, bytes):
        host = host.decode()
    if host == "localhost":
        return True
    import ipaddress

    try:
        ip = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False  # a host name other than localhost would be resolved: off loopback, as far as we know
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def _guarded(name: str):
    real = _real[name]

    def guarded(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise OSError(f"network access blocked in tests: {name} to {address!r} (zoo's socket guard; "
                          "--no-zoo-socket-guard turns it off)")
        return real(self, address)

    guarded.__name__ = name
    return guarded


def guard_sockets() -> None:
    """Make every ``socket.connect``/``connect_ex`` off loopback raise ``OSError``."""
    socket.socket.connect = _guarded("connect")
    socket.socket.connect_ex = _guarded("connect_ex")


def unguard_sockets() -> None:
    """Undo ``guard_sockets()``."""
    socket.socket.connect = _real["connect"]
    socket.socket.connect_ex = _real["connect_ex"]


# --- pytest hooks and fixtures -----------------------------------------------------------------------------

def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("zoo", "zoo: a hermetic local hub and a socket guard for conformance checks")
    group.addoption("--zoo-hub", dest="zoo_hub", action="store_true", default=None,
                    help="start a local hub and point the Hub settings at it before anything imports huggingface_hub")
    group.addoption("--no-zoo-hub", dest="zoo_hub", action="store_false", help="leave the Hub settings alone")
    group.addoption("--zoo-socket-guard", dest="zoo_socket_guard", action="store_true", default=None,
                    help="fail any network connection off loopback")
    group.addoption("--no-zoo-socket-guard", dest="zoo_socket_guard", action="store_false",
                    help="allow connections off loopback even in hermetic mode")
    group.addoption("--zoo-device", dest="zoo_device", default=None, metavar="DEVICE",
                    help="also run the conformance kit on DEVICE (cuda, cuda:N, mps): sets ZOO_TEST_DEVICE")
    parser.addini("zoo_hub", "auto (on for projects that declare zoo entry points), true or false", default="auto")
    parser.addini("zoo_socket_guard", "auto (on with the hub), true or false", default="auto")


def _choice(config: pytest.Config, name: str) -> bool | None:
    """The command line's choice, else the ini's; None for auto."""
    value = getattr(config.known_args_namespace, name, None)
    if value is not None:
        return value
    ini = str(config.getini(name)).strip().lower()
    if ini in ("1", "true", "yes", "on"):
        return True
    if ini in ("0", "false", "no", "off"):
        return False
    return None


def _declares_zoo_plugins(root: Path) -> bool:
    """True when the project at ``root`` declares entry points of group ``zoo`` (it is a zoo plugin)."""
    try:
        text = (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False
    try:
        import tomllib
    except ImportError:  # Python 3.10
        return "entry-points.zoo]" in text or 'entry-points."zoo"]' in text
    try:
        return "zoo" in tomllib.loads(text).get("project", {}).get("entry-points", {})
    except tomllib.TOMLDecodeError:
        return False


_GUARD_CHOSEN = pytest.StashKey[object]()  # the guard's setting at start-up (None: auto)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    # before conftest.py files and test modules import anything
    hub = _choice(early_config, "zoo_hub")
    if hub is None:
        hub = _declares_zoo_plugins(early_config.rootpath)
    if hub:
        try:
            activate()
        except RuntimeError as exc:
            raise pytest.UsageError(str(exc)) from exc
    guard = _choice(early_config, "zoo_socket_guard")
    if guard or (guard is None and hub):
        guard_sockets()
    early_config.stash[_GUARD_CHOSEN] = guard
    device = getattr(early_config.known_args_namespace, "zoo_device", None)
    if device:
        os.environ["ZOO_TEST_DEVICE"] = device  # read by zoo.testing.check_model


def pytest_configure(config: pytest.Config) -> None:
    # huggingface_hub's uploads pass bytes as data= to its HTTP client, which warns; not the plugin author's concern
    config.addinivalue_line("filterwarnings", "ignore:Use 'content=:DeprecationWarning")
    # plugins mark their quick reproductions `slow` (seconds, not milliseconds); they stay in the suite, and
    # `-m "not slow"` leaves them out for a fast edit-test loop
    config.addinivalue_line("markers", "slow: a longer test such as a quick reproduction; deselect with -m 'not slow'")
    # a conftest that called activate() at import gets the guard too, unless the command line said no
    if active() is not None and config.stash.get(_GUARD_CHOSEN, None) is None:
        guard_sockets()


def pytest_unconfigure(config: pytest.Config) -> None:
    unguard_sockets()
    deactivate()


@pytest.fixture(scope="session")
def hub() -> LocalHub:
    """The session's local hub: ``HF_ENDPOINT`` points at it and ``HF_TOKEN`` holds its write token."""
    state = active()
    if state is None:
        try:
            state = activate()
        except RuntimeError as exc:
            pytest.fail(str(exc), pytrace=False)
    return state.hub


@pytest.fixture
def repo_id() -> str:
    """A fresh repo id per test, so that tests never see each other's commits."""
    return f"zoo-test/r-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def check_plugin(hub):
    """``zoo.testing.check_plugin`` with the push/pull round trip through the session's hub."""
    import functools

    from .testing import check_plugin

    return functools.partial(check_plugin, hub=True)
