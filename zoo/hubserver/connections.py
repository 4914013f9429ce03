"""The local hub's connections: the doorman that holds connections until their request head is complete, the
bounded worker pool that serves them, and an ``accept`` loop that backs off when file descriptors run out.

The limits are ``zoo.hubserver.wire.Limits``; requests and responses are ``zoo.hubserver.wire``'s.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import queue
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import HTTPServer

from .wire import HubRequestHandler, Limits, Request, Response, _header_safe

logger = logging.getLogger("zoo.hubserver.wire")


_HEAD_END = re.compile(rb"\r?\n\r?\n")
MAX_HEAD = 64 * 1024  # request line + headers, as the doorman collects them


@dataclass
class _Door:
    """A connection with the doorman: waiting for (the rest of) its next request head."""

    address: object
    deadline: float
    head: bytearray = field(default_factory=bytearray)
    idle: bool = False  # a kept-alive connection that has not started its next request


def _canned(status: int, reason: str, message: str) -> bytes:
    body = json.dumps({"error": message}).encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nX-Error-Message: {_header_safe(message)}\r\n"
        f"Retry-After: 1\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


class HubHTTPServer(HTTPServer):
    """An HTTP server with a fixed pool of worker threads, fed by a doorman thread.

    The doorman holds every connection that has no complete request head yet (new ones, and kept-alive
    ones between requests) in one selector, so silent or slow-header clients cost a descriptor and a few
    bytes, never a worker; a connection goes to the (bounded) worker queue once its head is complete.
    """

    allow_reuse_address = True

    def __init__(self, address, app: Callable[[Request], Response], limits: Limits | None = None):
        self.app = app
        self.limits = limits or Limits()
        self.request_queue_size = max(128, self.limits.backlog)  # read by server_activate (listen)
        self.connections: set[socket.socket] = set()
        self._pending: queue.Queue = queue.Queue(max(1, self.limits.queue))
        self._heads: dict[socket.socket, bytes] = {}
        self._accept_failures = 0
        self._last_accept_log = 0.0
        self._arrivals: queue.SimpleQueue = queue.SimpleQueue()
        self._door_count = 0  # connections with the doorman
        self._door_lock = threading.Lock()
        self._closing = False
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_w.setblocking(False)
        super().__init__(address, HubRequestHandler)
        threading.Thread(target=self._doorman, name="zoo-hub doorman", daemon=True).start()
        count = max(1, self.limits.workers)
        self._workers = [threading.Thread(target=self._work, name=f"zoo-hub worker {i}", daemon=True) for i in range(count)]
        for t in self._workers:
            t.start()

    def get_request(self):
        try:
            conn = super().get_request()
        except OSError as e:
            if e.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                # The listening socket stays readable: without a pause, serve_forever would spin on accept.
                self._accept_failures += 1
                now = time.monotonic()
                if now - self._last_accept_log > 10:
                    logger.error(
                        "cannot accept connections: %s (%d failures so far); raise the file limit (ulimit -n) or "
                        "lower Limits.connections; retrying every %.1f s",
                        e.strerror, self._accept_failures, self.limits.accept_backoff,
                    )
                    self._last_accept_log = now
                time.sleep(self.limits.accept_backoff)
            raise
        return conn

    def process_request(self, request, client_address):
        """Hand a new connection to the doorman (no worker until its request head is complete)."""
        self.connections.add(request)
        if self._door_count >= self.limits.connections:
            self._refuse(request, 503, "Service Unavailable", "the local hub has too many open connections; retry shortly")
            return
        self._to_door(request, client_address, idle=False)

    def _to_door(self, sock: socket.socket, address, idle: bool) -> None:
        with self._door_lock:
            self._door_count += 1
        self._arrivals.put((sock, address, idle))
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")

    def _refuse(self, sock: socket.socket, status: int, reason: str, message: str) -> None:
        """Answer without a worker (one non-blocking send: never wait on this client) and close."""
        with contextlib.suppress(OSError):
            sock.setblocking(False)
            sock.send(_canned(status, reason, message))
        if status == 503:
            logger.warning("refused a connection: %s", message)
        self.shutdown_request(sock)

    def _doorman(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ)
        doors: dict[socket.socket, _Door] = {}

        def leave(sock: socket.socket) -> None:
            del doors[sock]
            sel.unregister(sock)
            with self._door_lock:
                self._door_count -= 1

        while not self._closing:
            for key, _ in sel.select(timeout=0.1):
                sock = key.fileobj
                if sock is self._wake_r:
                    with contextlib.suppress(OSError):
                        self._wake_r.recv(4096)
                    continue
                door = doors[sock]
                try:
                    data = sock.recv(MAX_HEAD)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if not data:  # the client closed
                    leave(sock)
                    self.shutdown_request(sock)
                    continue
                if door.idle:  # the next request has started: its head has header_timeout to arrive
                    door.idle, door.deadline = False, time.monotonic() + self.limits.header_timeout
                door.head += data
                if _HEAD_END.search(door.head):
                    leave(sock)
                    self._heads[sock] = bytes(door.head)
                    try:
                        self._pending.put_nowait((sock, door.address))
                    except queue.Full:
                        self._heads.pop(sock, None)
                        self._refuse(sock, 503, "Service Unavailable", "the local hub is busy; retry shortly")
                elif len(door.head) > MAX_HEAD:
                    leave(sock)
                    self._refuse(sock, 431, "Request Header Fields Too Large", f"request head over {MAX_HEAD} bytes")
            while True:
                try:
                    sock, address, idle = self._arrivals.get_nowait()
                except queue.Empty:
                    break
                try:
                    sock.setblocking(False)
                    sel.register(sock, selectors.EVENT_READ)
                except (ValueError, OSError):  # closed meanwhile (shutdown)
                    with self._door_lock:
                        self._door_count -= 1
                    continue
                wait = self.limits.idle_timeout if idle else self.limits.header_timeout
                doors[sock] = _Door(address, time.monotonic() + wait, idle=idle)
            now = time.monotonic()
            for sock, door in [(s, d) for s, d in doors.items() if d.deadline <= now]:
                leave(sock)
                if door.head:  # started a request and did not finish its head in time
                    self._refuse(sock, 408, "Request Timeout", "request line and headers took too long; send them at once")
                else:  # connected (or kept alive) and never spoke: nothing to answer
                    self.shutdown_request(sock)
        for sock in doors:
            self.shutdown_request(sock)
        sel.close()
        self._wake_r.close()
        self._wake_w.close()

    def _work(self) -> None:
        while True:
            item = self._pending.get()
            if item is None:
                return
            request, client_address = item
            keep = False
            try:
                keep = self.finish_request(request, client_address)
            except Exception:
                self.handle_error(request, client_address)
            finally:
                if keep and not self._closing:
                    self._to_door(request, client_address, idle=True)  # wait for its next request without a worker
                else:
                    self.shutdown_request(request)

    def finish_request(self, request, client_address) -> bool:
        """Serve the connection's ready requests; True if it stays open for more."""
        return self.RequestHandlerClass(request, client_address, self).keep

    def shutdown_request(self, request):
        self.connections.discard(request)
        self._heads.pop(request, None)
        super().shutdown_request(request)

    def close_all(self) -> None:
        """End open connections (idle keep-alive ones too), so that a stopped hub answers nothing more."""
        for conn in list(self.connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def server_close(self) -> None:
        super().server_close()
        self._closing = True
        with contextlib.suppress(OSError):
            self._wake_w.send(b"\0")
        while True:  # connections still waiting for a worker get nothing more
            try:
                item = self._pending.get_nowait()
            except queue.Empty:
                break
            if item is not None:
                self.shutdown_request(item[0])
        for _ in self._workers:
            with contextlib.suppress(queue.Full):
                self._pending.put(None, timeout=1)

    def handle_error(self, request, client_address) -> None:
        """Log (the default prints a traceback to stderr) and go on serving."""
        logger.warning("connection from %s failed", client_address, exc_info=True)
