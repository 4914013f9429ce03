"""A local Hugging Face Hub-compatible server, persisted on disk, standard library only.

The real ``huggingface_hub`` client and timm push to it and pull from it once ``HF_ENDPOINT`` points at
it (run clients with ``HF_HUB_DISABLE_XET=1``: Xet transfers are not served). Endpoints and protocol
facts: ``shared/notes/HUB.md`` §3. Disk layout: ``zoo.hubserver.store``.

Example::

    >>> from zoo.hubserver import LocalHub
    >>> with LocalHub("/tmp/hub", tokens=["secret"]) as hub:   # doctest: +SKIP
    ...     print(hub.url)                                     # export HF_ENDPOINT=<this>, HF_TOKEN=secret
    http://127.0.0.1:40217

Command line: ``python -m zoo.hubserver --root DIR [--port P] [--token T]`` (or ``zoo hub serve``).

Auth: writes need a token from ``tokens`` (or ``ZOO_HUB_TOKENS``, comma-separated). With no tokens at
all the hub is open: anyone who can reach it may write, and private repos are private in name only.
Reads of private repos need a valid token; to anyone else such a repo does not exist (404), like on the
Hub. A read with a wrong token is treated as anonymous.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

from .api import HubAPI
from .store import HubStore
from .wire import HubHTTPServer

__all__ = ["LocalHub", "main"]

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

    Raises:
        RuntimeError: from ``start()``, if another process already serves ``root``.
    """

    def __init__(
        self,
        root: str | os.PathLike,
        host: str = "127.0.0.1",
        port: int = 0,
        tokens: Iterable[str] | None = None,
    ):
        self.root = Path(root)
        self.host = host
        self.port = port
        if tokens is None:
            tokens = os.environ.get("ZOO_HUB_TOKENS", "").split(",")
        elif isinstance(tokens, str):  # one token, not an iterable of characters
            tokens = [tokens]
        self.tokens = frozenset(t.strip() for t in tokens if t and t.strip())
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
            server = HubHTTPServer((self.host, self.port), api)
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

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (the CLI's mode)."""
        server = self._bind()
        try:
            server.serve_forever(poll_interval=0.2)
        finally:
            self._close()

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
        with self._close_lock:  # stop() and a foreground serve_forever() may both get here
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


def main(argv: list[str] | None = None) -> int:
    """``python -m zoo.hubserver --root DIR [--host H] [--port P] [--token T ...]``."""
    parser = argparse.ArgumentParser(prog="python -m zoo.hubserver", description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True, help="directory holding the hub's repos (created if missing)")
    parser.add_argument("--host", default="127.0.0.1", help="interface to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8090, help="TCP port, 0 for any free one (default: 8090)")
    parser.add_argument(
        "--token",
        action="append",
        default=None,
        help="accepted write token (repeatable; default: $ZOO_HUB_TOKENS, else open writes)",
    )
    parser.add_argument("--log-level", default="INFO", help="logging level (default: INFO)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    hub = LocalHub(args.root, host=args.host, port=args.port, tokens=args.token)
    try:
        hub._bind()
    except (OSError, RuntimeError) as e:
        print(f"error: cannot serve {args.root} on {args.host}:{args.port}: {e}", file=sys.stderr)
        return 1
    print(f"serving {Path(args.root).resolve()} on {hub.url}  (export HF_ENDPOINT={hub.url} HF_HUB_DISABLE_XET=1)", flush=True)

    def stop_on_sigterm(signum, frame):  # a service manager's stop: close cleanly, like Ctrl-C
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop_on_sigterm)
    try:
        hub._server.serve_forever()  # type: ignore[union-attr]
    except KeyboardInterrupt:
        logger.info("stopping the local hub at %s", hub.url)
    finally:
        hub._close()
    return 0
