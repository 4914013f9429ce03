"""HTTP/1.1 plumbing for the local hub: request bodies (sized or chunked), responses, keep-alive hygiene.

Keep-alive connections are reused by httpx, so every request body is read to its end (or the connection
is closed), every reply carries ``Content-Length``, and errors never leave a half-read request behind.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import socket
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from .checks import HubError, bad_request

logger = logging.getLogger(__name__)

MAX_JSON_BODY = 16 * 1024 * 1024
MAX_DRAIN = 8 * 1024 * 1024  # past this, closing the connection is cheaper than reading the rest
CHUNK = 1024 * 1024


class Body:
    """The request body as a stream: ``Content-Length`` or ``Transfer-Encoding: chunked``."""

    def __init__(self, rfile, headers):
        self._rfile = rfile
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
        try:
            data = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise bad_request("request body is not valid JSON") from None
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


class HubHTTPServer(ThreadingHTTPServer):
    """A threading server that remembers its open connections so that ``close_all`` can end them."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address, app: Callable[[Request], Response]):
        self.app = app
        self.connections: set[socket.socket] = set()
        super().__init__(address, HubRequestHandler)

    def process_request(self, request, client_address):
        self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request):
        self.connections.discard(request)
        super().shutdown_request(request)

    def close_all(self) -> None:
        """End idle keep-alive connections, so that a stopped hub answers nothing more."""
        for conn in list(self.connections):
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request, client_address) -> None:
        """Log (the default prints a traceback to stderr) and go on serving."""
        logger.warning("connection from %s failed", client_address, exc_info=True)


class HubRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "zoo-hub/1"
    timeout = 120  # a silent client does not hold a thread forever
    server: HubHTTPServer

    def do_GET(self):
        self._dispatch()

    do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_GET

    def _dispatch(self) -> None:
        body = None
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
        except Exception as e:  # a bug or a disk fault: answer 5xx, keep serving
            logger.exception("error handling %s %s", self.command, self.path)
            if isinstance(e, OSError) and e.errno == errno.ENOSPC:  # 507: clients give up at once, no retries
                response = error_response(HubError(507, "the hub's disk is full; free space on the server"))
            else:
                response = error_response(HubError(500, f"internal error: {type(e).__name__}: {e}"))
        if body is None or not body.drain():
            self.close_connection = True
        self._send(response)

    def _send(self, r: Response) -> None:
        length = r.length if r.file is not None else len(r.body)
        try:
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
            with open(r.file, "rb") as f:
                f.seek(r.offset)
                left = r.length
                while left > 0:
                    chunk = f.read(min(CHUNK, left))
                    if not chunk:  # the blob shrank under us: cut the connection, never pad
                        logger.error("blob %s is shorter than expected", r.file)
                        self.close_connection = True
                        return
                    self.wfile.write(chunk)
                    left -= len(chunk)
        except OSError as e:  # the client went away, or the blob could not be read
            logger.debug("reply to %s %s cut short: %s", self.command, self.path, e)
            self.close_connection = True

    def log_message(self, format: str, *args) -> None:
        logger.debug("%s %s", self.address_string(), format % args)
