"""HTTP/1.1 plumbing for the local hub: request bodies (sized or chunked), responses, keep-alive hygiene,
and the resource limits that keep one client from starving the others (enforced by
``zoo.hubserver.connections``, which holds connections and runs the worker pool).

Keep-alive connections are reused by httpx, so every request body is read to its end (or the connection
is closed), every reply carries ``Content-Length``, and errors never leave a half-read request behind.

Limits (``Limits``; all configurable): a doorman thread holds every connection that has no complete
request head yet (new ones, and kept-alive ones between requests), so silent and slow-header clients
cost a descriptor, never a worker; the head must be complete within ``header_timeout`` (else 408) and
an idle keep-alive connection is closed after ``idle_timeout``. A fixed pool of ``workers`` threads
serves complete heads from a bounded queue (past it, 503 with ``Retry-After``). A body must keep an
average rate of ``body_min_rate`` after ``body_grace`` (else 408) and may not stall for ``body_stall``
(else 400: a ``Content-Length`` larger than the body ends here); a download reader is held to the same
rate. ``accept`` failing for lack of file descriptors is logged and retried after a pause, not spun on.
"""

from __future__ import annotations

import contextlib
import errno
import io
import json
import logging
import select
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs

from .checks import HubError, bad_request

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .connections import HubHTTPServer

logger = logging.getLogger(__name__)

MAX_JSON_BODY = 16 * 1024 * 1024
MAX_DRAIN = 8 * 1024 * 1024  # past this, closing the connection is cheaper than reading the rest
CHUNK = 1024 * 1024
LINGER = 2.0  # seconds a refused upload is still read (and dropped) so that the client gets the answer


@dataclass(frozen=True)
class Limits:
    """How much of the server one client may hold, and for how long (seconds, bytes)."""

    workers: int = 32  # threads serving connections; the most requests handled at once
    queue: int = 256  # connections with a request ready, waiting for a worker; past this: 503 at once
    connections: int = 1024  # open connections that have sent nothing yet (they hold no worker); past this: 503
    backlog: int = 128  # the kernel's listen backlog (at least 128)
    header_timeout: float = 10.0  # request line + headers, from their first byte (first request: from accept)
    idle_timeout: float = 15.0  # a keep-alive connection with no new request (httpx gives up after 5 s)
    body_grace: float = 10.0  # a body may take this long before the rate rule applies
    body_min_rate: float = 64 * 1024  # then at least this many bytes per second on average, else 408
    body_stall: float = 10.0  # no byte at all for this long inside a body: 400 (shorter than announced)
    send_timeout: float = 60.0  # one write to a client that does not read
    accept_backoff: float = 0.2  # pause after accept fails with EMFILE/ENFILE


class _Expired(TimeoutError):
    """A read ran past its deadline; ``kind`` says which (header, body-rate, body-stall)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class _DeadlineReader(io.RawIOBase):
    """The socket as a raw stream whose reads obey the current phase's deadline (not just a per-read timeout).

    ``prefix`` holds what the doorman already read (the request head, perhaps more): it is served first.
    While ``probing``, a read that would wait returns None instead (``BufferedReader.peek`` then says "empty").
    """

    def __init__(self, sock: socket.socket, limits: Limits, prefix: bytes = b""):
        self.sock, self.limits, self.prefix = sock, limits, prefix
        self.received = 0
        self.expired: str | None = None
        self.probing = False
        self.phase = "header"
        self._start = self._last = time.monotonic()
        self._mark = 0  # ``received`` at the start of the phase

    def readable(self) -> bool:
        return True

    def begin_request(self) -> None:
        """A request head is here (or buffered): it must be complete within ``header_timeout``."""
        self.phase, self._start, self.expired = "header", time.monotonic(), None

    def begin_body(self) -> None:
        self.phase, self._start, self._mark = "body", time.monotonic(), self.received
        self._last = self._start  # when the last byte came

    def _timeout(self, now: float) -> tuple[float, str]:
        lim = self.limits
        if self.phase == "header":
            return self._start + lim.header_timeout - now, "header"
        got = self.received - self._mark
        rate_left = self._start + lim.body_grace + got / lim.body_min_rate - now
        stall_left = self._last + lim.body_stall - now
        if stall_left <= rate_left:
            return stall_left, "body-stall"
        # Past the rate deadline a silent client is still a stalled one (400), a trickling one is slow (408).
        silent = now + max(rate_left, 0) - self._last >= min(lim.body_stall, lim.body_grace)
        return rate_left, "body-stall" if silent else "body-rate"

    def readinto(self, b) -> int | None:
        if self.prefix:
            n = min(len(b), len(self.prefix))
            b[:n], self.prefix = self.prefix[:n], self.prefix[n:]
            self.received += n
            return n
        if self.probing:
            return None if not _readable(self.sock, 0) else self._recv(b, 1.0, "header")
        left, kind = self._timeout(time.monotonic())
        if left <= 0:
            self.expired = kind
            raise _Expired(kind, f"{kind} deadline passed")
        return self._recv(b, left, kind)

    def _recv(self, b, timeout: float, kind: str) -> int:
        self.sock.settimeout(max(timeout, 0.001))
        try:
            n = self.sock.recv_into(b)
        except TimeoutError:
            self.expired = kind
            raise _Expired(kind, f"{kind} deadline passed") from None
        self.received += n
        self._last = time.monotonic()
        return n


def _readable(sock: socket.socket, timeout: float) -> bool:
    if hasattr(select, "poll"):  # select() fails on descriptors past FD_SETSIZE, which a busy server reaches
        poller = select.poll()
        poller.register(sock, select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR)
        return bool(poller.poll(timeout * 1000))
    return bool(select.select([sock], [], [], timeout)[0])


class Body:
    """The request body as a stream: ``Content-Length`` or ``Transfer-Encoding: chunked``."""

    def __init__(self, rfile, headers):
        self._rfile = rfile
        for name in ("Content-Length", "Transfer-Encoding"):
            if len(headers.get_all(name) or ()) > 1:  # RFC 9112 §6.3: a framing ambiguity, never guess
                raise bad_request(f"several {name} headers: send exactly one")
        te = headers.get("Transfer-Encoding", "").strip().lower()
        length = headers.get("Content-Length")
        self.chunked = bool(te)
        self.done = False
        if te:
            if te != "chunked" or length is not None:  # both at once is a request-smuggling shape
                raise bad_request(f"unsupported Transfer-Encoding {te!r} (with Content-Length {length!r})")
            self._left = 0  # bytes left in the current chunk
        else:
            try:
                self._left = int(length or 0)
            except ValueError:
                raise bad_request(f"invalid Content-Length {length!r}") from None
            if self._left < 0 or not (length or "0").strip().isdigit():
                raise bad_request(f"invalid Content-Length {length!r}")
            self.done = self._left == 0
        self.length = None if self.chunked else self._left

    def _next_chunk_size(self) -> int:
        line = self._rfile.readline(1024)
        try:
            size = int(line.split(b";", 1)[0].strip(), 16)
        except ValueError:
            raise bad_request(f"malformed chunk size line {line[:40]!r}") from None
        if size < 0:
            raise bad_request("malformed chunk size")
        if size == 0:  # last chunk: skip trailers up to the empty line
            while self._rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                pass
        return size

    def read(self, n: int = CHUNK) -> bytes:
        """Up to ``n`` bytes; ``b""`` at the end. A connection cut short raises a 400."""
        if self.done:
            return b""
        if self.chunked and self._left == 0:
            self._left = self._next_chunk_size()
            if self._left == 0:
                self.done = True
                return b""
        data = self._rfile.read(min(n, self._left))
        if not data:
            self.done = True
            raise bad_request("request body ended early")
        self._left -= len(data)
        if self._left == 0 and not self.chunked:
            self.done = True
        elif self._left == 0 and self._rfile.readline(8) not in (b"\r\n", b"\n"):
            raise bad_request("malformed chunked body: chunk data not followed by CRLF")
        return data

    def __iter__(self) -> Iterator[bytes]:
        while chunk := self.read():
            yield chunk

    def lines(self, max_line: int) -> Iterator[bytes]:
        """The body split on ``\\n`` (newline kept off); a line longer than ``max_line`` bytes is a 413."""
        parts: list[bytes] = []
        size = 0
        for chunk in self:
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                size += end - start
                if size > max_line:
                    break
                parts.append(chunk[start:end])
                yield b"".join(parts)
                parts, size, start = [], 0, end + 1
            else:
                parts.append(chunk[start:])
                size += len(chunk) - start
            if size > max_line:
                raise HubError(413, f"a request body line is longer than {max_line} bytes")
        if parts:
            yield b"".join(parts)

    def read_all(self, limit: int = MAX_JSON_BODY) -> bytes:
        if self.length is not None and self.length > limit:
            raise HubError(413, f"request body of {self.length} bytes is over the {limit}-byte limit")
        parts, total = [], 0
        for chunk in self:
            total += len(chunk)
            if total > limit:
                raise HubError(413, f"request body is over the {limit}-byte limit")
            parts.append(chunk)
        return b"".join(parts)

    def drain(self, limit: int = MAX_DRAIN) -> bool:
        """Read and drop the rest; False if more than ``limit`` bytes remain (then close the connection)."""
        if self.length is not None and self._left > limit:
            return False
        total = 0
        try:
            for chunk in self:
                total += len(chunk)
                if total > limit:
                    return False
        except (HubError, OSError):
            return False
        return True


def loads_json(raw: bytes | str, what: str) -> object:
    """``json.loads``, with malformed or absurdly nested input (RecursionError) a 400."""
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise bad_request(f"{what} is not valid JSON") from None
    except RecursionError:
        raise bad_request(f"{what} is nested too deeply") from None


@dataclass
class Request:
    method: str
    path: str  # raw (still percent-encoded) path, without the query
    query: dict[str, list[str]]
    headers: object  # email.message.Message
    body: Body

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def flag(self, name: str) -> bool:
        return (self.param(name) or "").lower() in ("1", "true", "yes")

    def json(self, limit: int = MAX_JSON_BODY) -> dict:
        raw = self.body.read_all(limit)
        if not raw.strip():
            return {}
        data = loads_json(raw, "request body")
        if not isinstance(data, dict):
            raise bad_request("request body must be a JSON object")
        return data

    def form(self, limit: int = MAX_JSON_BODY) -> dict[str, list[str]]:
        """A form-encoded body (or a JSON one, values wrapped in lists)."""
        ctype = (self.headers.get("Content-Type") or "").lower()
        if ctype.startswith("application/json"):
            data = self.json(limit)
            return {k: v if isinstance(v, list) else [v] for k, v in data.items()}
        raw = self.body.read_all(limit)
        try:
            return parse_qs(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False, errors="strict")
        except (UnicodeDecodeError, ValueError):
            raise bad_request("request body is not valid form data") from None


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    file: Path | None = None  # stream this file instead of ``body``
    offset: int = 0
    length: int = 0  # bytes of ``file`` to send from ``offset``


def json_response(obj: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})})


def error_response(err: HubError) -> Response:
    headers = {"X-Error-Message": _header_safe(err.message)}
    if err.code:
        headers["X-Error-Code"] = err.code
    if err.commit:
        headers["X-Repo-Commit"] = err.commit
    return json_response({"error": err.message}, err.status, headers)


def _header_safe(text: str) -> str:
    return "".join(c if 0x20 <= ord(c) < 0x7F else "?" for c in text)[:1000]


class HubRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "zoo-hub/1"
    server: HubHTTPServer
    keep = False  # hand the connection back to the doorman when done

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the plain socket reader: replaced by one that keeps deadlines
        self._reader = _DeadlineReader(self.connection, self.server.limits, self.server._heads.pop(self.connection, b""))
        self.rfile = io.BufferedReader(self._reader, 64 * 1024)

    def handle(self) -> None:
        """Serve the requests already here; then give the connection back to the doorman (or close it)."""
        while True:
            self.close_connection = True
            self._responded = self._unread = False
            self.request_version, self.requestline, self.command, self.path = "HTTP/1.1", "", "", ""
            self._reader.begin_request()
            self.handle_one_request()
            expired = self._reader.expired
            if expired == "header" and not self._responded:
                self._send(error_response(HubError(408, "request line and headers took too long; send them at once")))
            if self._unread:
                self._linger()
            if expired or self.close_connection:
                return
            self._reader.probing = True  # a pipelined request already read? then serve it here
            try:
                ready = bool(self.rfile.peek(1))
            except OSError:
                return
            finally:
                self._reader.probing = False
            if not ready:
                self.keep = True
                return

    def _linger(self) -> None:
        """Refused with a body still coming: read and drop it for a moment before closing, so the client
        sees the answer (a close with unread data sends a reset that can destroy it)."""
        end = time.monotonic() + LINGER
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            while (left := end - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(CHUNK):
                    break

    def do_GET(self):
        self._dispatch()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def _dispatch(self) -> None:
        body = None
        self._reader.begin_body()
        try:
            raw_path, _, query = self.path.partition("?")
            if not raw_path.startswith("/"):
                raise bad_request(f"invalid request target {self.path[:100]!r}")
            body = Body(self.rfile, self.headers)
            try:
                query_dict = parse_qs(query, keep_blank_values=True, errors="strict")
            except (UnicodeDecodeError, ValueError):
                raise bad_request("invalid query string") from None
            request = Request(self.command, raw_path, query_dict, self.headers, body)
            response = self.server.app(request)
        except HubError as e:
            response = error_response(e)
        except _Expired as e:
            response = error_response(self._body_timeout(e, body))
            self.close_connection = True
            body = None
        except Exception as e:  # a bug or a disk fault: answer 5xx, keep serving
            logger.exception("error handling %s %s", self.command, self.path)
            if isinstance(e, OSError) and e.errno == errno.ENOSPC:  # 507: clients give up at once, no retries
                response = error_response(HubError(507, "the hub's disk is full; free space on the server"))
            else:
                response = error_response(HubError(500, f"internal error: {type(e).__name__}: {e}"))
        if body is None or not body.drain():
            self.close_connection = True
            self._unread = body is not None and not body.done
        self._send(response)

    def _body_timeout(self, e: _Expired, body: Body | None) -> HubError:
        limits = self.server.limits
        length = body.length if body is not None else None
        logger.info("%s %s from %s: %s", self.command, self.path[:200], self.client_address[0], e)
        if e.kind == "body-stall":
            announced = f"Content-Length says {length} bytes" if length is not None else "the chunked body did not end"
            return bad_request(
                f"request body stopped: no byte for {limits.body_stall:g} s and {announced}; "
                "send the whole body, with a Content-Length equal to its size"
            )
        return HubError(408, f"request body too slow: under {limits.body_min_rate:g} bytes/s after {limits.body_grace:g} s")

    def _send(self, r: Response) -> None:
        length = r.length if r.file is not None else len(r.body)
        self._responded = True
        try:
            self.connection.settimeout(self.server.limits.send_timeout)
            self.send_response(r.status)
            for name, value in r.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(length))
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command == "HEAD":
                return
            if r.file is None:
                self.wfile.write(r.body)
                return
            limits, start = self.server.limits, time.monotonic()
            with open(r.file, "rb") as f:
                f.seek(r.offset)
                left = r.length
                while left > 0:
                    chunk = f.read(min(CHUNK, left))
                    if not chunk:  # the blob shrank under us: cut the connection, never pad
                        logger.error("blob %s is shorter than expected", r.file)
                        self.close_connection = True
                        return
                    # A client that reads too slowly gives its worker up, like one that sends too slowly.
                    sent = r.length - left
                    allowed = start + limits.body_grace + sent / limits.body_min_rate - time.monotonic()
                    if allowed <= 0:
                        raise TimeoutError(f"client reads under {limits.body_min_rate:g} bytes/s")
                    self.connection.settimeout(min(limits.send_timeout, allowed))
                    self.wfile.write(chunk)
                    left -= len(chunk)
        except OSError as e:  # the client went away, or the blob could not be read
            logger.debug("reply to %s %s cut short: %s", self.command, self.path, e)
            self.close_connection = True

    def log_message(self, format: str, *args) -> None:
        logger.debug("%s %s", self.address_string(), format % args)
