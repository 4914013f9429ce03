"""``LocalHub``: the server object (bind, serve in a thread, stop). The package docstring has the protocol."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from .api import HubAPI
from .connections import HubHTTPServer
from .store import HubStore
from .wire import Limits

__all__ = ["LocalHub"]

logger = logging.getLogger(__name__)

try:
    import fcntl
except ImportError:  # Windows: no cross-process guard
    fcntl = None  # type: ignore[assignment]


class LocalHub:
    """A Hub-compatible HTTP server over the directory ``root``.

    Args:
        root: where repos and file contents live (created if missing); data survives restarts.
        host: interface to bind; keep the loopback default unless others must reach it.
        port: TCP port, 0 for a free one (read it back from ``url`` after ``start()``).
        tokens: accepted write tokens. None reads ``ZOO_HUB_TOKENS`` (comma-separated); empty means open.
        limits: worker pool size, deadlines and queue bounds (``zoo.hubserver.wire.Limits``); None: the defaults.

    Raises:
        RuntimeError: from ``start()``, if another process already serves ``root``.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        host: str = "127.0.0.1",
        port: int = 0,
        tokens: Iterable[str] | None = None,
        limits: Limits | None = None,
    ):
        self.root = Path(root)
        self.host = host
        self.port = port
        if tokens is None:
            tokens = os.environ.get("ZOO_HUB_TOKENS", "").split(",")
        elif isinstance(tokens, str):  # one token, not an iterable of characters
            tokens = [tokens]
        self.tokens = frozenset(t.strip() for t in tokens if t and t.strip())
        self.limits = limits or Limits()
        self.url = ""
        self._server: HubHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock_file = None
        self._close_lock = threading.Lock()

    def _bind(self) -> HubHTTPServer:
        if self._server is not None:
            raise RuntimeError(f"hub on {self.root} is already started at {self.url}")
        store = HubStore(self.root)
        self._lock_root(store.root)
        store.clear_tmp()
        api = HubAPI(store, self.tokens)
        try:
            server = HubHTTPServer((self.host, self.port), api, self.limits)
        except OSError:
            self._unlock_root()
            raise
        host, port = server.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        self.url = api.base_url = f"http://{host}:{port}"
        self._server = server
        if not self.tokens:
            logger.warning("local hub at %s has no write tokens: anyone who can reach it can write", self.url)
        logger.info("local hub serving %s at %s", store.root, self.url)
        return server

    def _lock_root(self, root: Path) -> None:
        """Refuse a second server process on the same root: the per-repo locks are per process."""
        if fcntl is None:
            return
        f = open(root / ".lock", "a+b")  # noqa: SIM115 (held open while serving)
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise RuntimeError(
                f"{root} is already served by another hub (lock {root / '.lock'} is held); stop it or choose another --root"
            ) from None
        self._lock_file = f

    def _unlock_root(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing releases the flock
            self._lock_file = None

    def start(self) -> LocalHub:
        """Serve in a daemon thread; returns self (``url`` is set)."""
        server = self._bind()
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name=f"zoo-hub {self.url}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, end open connections and release the root. Safe to call twice."""
        server = self._server
        if server is None:
            return
        server.shutdown()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._close()

    def _close(self) -> None:
        with self._close_lock:  # two threads may stop the same hub
            if self._server is not None:
                self._server.close_all()
                self._server.server_close()
                self._server = None
            self._unlock_root()

    def __enter__(self) -> LocalHub:
        return self.start() if self._server is None else self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalHub(root={str(self.root)!r}, url={self.url or None!r})"
