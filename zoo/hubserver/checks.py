"""Everything a client sends, checked before it touches the disk: repo ids, file paths, ref names,
LFS oids and sizes, and the ndjson commit payload. A failed check is a ``HubError`` (HTTP 400)."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..ids import is_commit as is_commit_id
from ..ids import is_sha256

REPO_TYPES = {"model": "models", "dataset": "datasets", "space": "spaces"}  # type -> plural in URLs
URL_PREFIXES = {"model": "", "dataset": "datasets/", "space": "spaces/"}  # type -> prefix of web URLs
MAX_SEGMENT = 255
MAX_PATH = 1000
MAX_NAME = 96
_NAME = re.compile(r"[A-Za-z0-9._-]+")
_RESERVED_NAMESPACES = {"api", "datasets", "spaces", "models"}  # would collide with URL routes


class HubError(Exception):
    """An error answered to the client: HTTP status, message, and the Hub's X-Error-Code if any."""

    def __init__(self, status: int, message: str, code: str | None = None, commit: str | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.commit = commit  # sent as X-Repo-Commit (lets the client cache a `.no_exist` entry)


def bad_request(message: str) -> HubError:
    return HubError(400, message)


def repo_not_found(repo_type: str, repo_id: str) -> HubError:
    return HubError(404, f"{repo_type} repository {repo_id!r} not found", "RepoNotFound")


def check_repo_id(repo_id: object) -> str:
    """Return ``repo_id`` if it is ``namespace/name`` with Hub-safe names, else raise a 400."""
    if not isinstance(repo_id, str) or repo_id.count("/") != 1:
        raise bad_request(f"invalid repo id {repo_id!r}: expected 'namespace/name'")
    for part in repo_id.split("/"):
        if (
            not _NAME.fullmatch(part)
            or len(part) > MAX_NAME
            or ".." in part
            or "--" in part
            or part[0] in ".-"
            or part[-1] in ".-"
            or part.endswith(".git")
        ):
            raise bad_request(
                f"invalid repo id {repo_id!r}: each part must be 1-{MAX_NAME} characters of [A-Za-z0-9._-], "
                "not start or end with '.' or '-', hold no '..' or '--', and not end in '.git'"
            )
    if repo_id.split("/")[0].lower() in _RESERVED_NAMESPACES:
        raise bad_request(f"invalid repo id {repo_id!r}: namespace {repo_id.split('/')[0]!r} is reserved")
    return repo_id


def check_path(path: object) -> str:
    """Return ``path`` if it is a safe relative POSIX path inside a repo, else raise a 400."""
    if not isinstance(path, str) or not path:
        raise bad_request(f"invalid path {path!r}: expected a non-empty string")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise bad_request(f"invalid path {path!r}: not valid Unicode") from None
    if size > MAX_PATH:
        raise bad_request(f"invalid path {path[:80]!r}…: longer than {MAX_PATH} bytes")
    if any(ord(c) < 0x20 or c == "\x7f" for c in path) or "\\" in path:
        raise bad_request(f"invalid path {path!r}: control characters and backslashes are not allowed")
    for seg in path.split("/"):
        if seg in ("", ".", ".."):
            raise bad_request(f"invalid path {path!r}: empty, '.' or '..' segments are not allowed")
        if len(seg.encode("utf-8")) > MAX_SEGMENT:
            raise bad_request(f"invalid path {path[:80]!r}…: a segment is longer than {MAX_SEGMENT} bytes")
        if seg.lower() == ".git":
            raise bad_request(f"invalid path {path!r}: '.git' is reserved")
    return path


def check_ref_name(name: object, kind: str = "branch") -> str:
    """Return a branch or tag name if git and the Hub would accept it, else raise a 400."""
    ok = (
        isinstance(name, str)
        and 0 < len(name) <= MAX_SEGMENT
        and not name.startswith("refs/")
        and not is_commit_id(name)  # would be ambiguous with a commit id
        and all(_NAME.fullmatch(seg) and not seg.startswith(".") and not seg.endswith(".lock") for seg in name.split("/"))
        and ".." not in name
    )
    if not ok:
        raise bad_request(
            f"invalid {kind} name {name!r}: use [A-Za-z0-9._-] segments separated by '/', "
            "no '..', no leading '.', not 'refs/…' and not a 40-hex commit id"
        )
    return name  # type: ignore[return-value]


def check_oid(oid: object) -> str:
    if not is_sha256(oid):
        raise bad_request(f"invalid LFS oid {oid!r}: expected 64 lowercase hex digits (sha256)")
    return oid


def check_size(size: object) -> int:
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise bad_request(f"invalid size {size!r}: expected a non-negative integer")
    return size


# A regular (non-LFS) file travels base64-encoded inside the commit request; the Hub refuses those above
# 10 MiB and its preupload answer (``transfer.upload_mode``) sends anything bigger through LFS, so do we.
MAX_REGULAR_FILE = 10 * 1024 * 1024
MAX_COMMIT_LINE = (MAX_REGULAR_FILE + 2) // 3 * 4 + 64 * 1024  # its base64 plus the path and JSON around it


@dataclass
class CommitOp:
    """One parsed line of a commit request."""

    kind: str  # "file" | "lfsFile" | "deletedFile" | "deletedFolder"
    path: str
    data: bytes | None = None  # "file"
    sha256: str | None = None  # "lfsFile"
    size: int | None = None  # "lfsFile" (None: take the stored object's size); "file" once staged
    staged: str | None = None  # "file": its content written to this temp file (``data`` is then None)
    oid: str | None = None  # "file" once staged: the git blob sha1 of its content


def parse_commit_body(body: bytes) -> tuple[dict, list[CommitOp]]:
    """Parse the ndjson commit payload into its header and checked operations (raises 400)."""
    return parse_commit_lines(body.splitlines())


def parse_commit_lines(
    lines: Iterable[bytes], on_file: Callable[[CommitOp], None] | None = None
) -> tuple[dict, list[CommitOp]]:
    """Parse ndjson commit lines as they arrive; ``on_file`` may stage each "file" op (and drop its ``data``)
    so that a commit's memory stays one file, not the whole request. A file over ``MAX_REGULAR_FILE`` is a 413."""
    header, ops = None, []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, UnicodeDecodeError) as e:
            raise bad_request(f"commit payload line {n} is not JSON: {e}") from None
        except RecursionError:
            raise bad_request(f"commit payload line {n} is nested too deeply") from None
        if not isinstance(item, dict) or not isinstance(item.get("value"), dict):
            raise bad_request(f"commit payload line {n}: expected {{'key': ..., 'value': {{...}}}}")
        key, value = item.get("key"), item["value"]
        if key == "header":
            header = value
            continue
        if key not in ("file", "lfsFile", "deletedFile", "deletedFolder"):
            raise bad_request(f"commit payload line {n}: unknown key {key!r}")
        path = value.get("path")
        if key == "deletedFolder" and isinstance(path, str):
            path = path.rstrip("/")
        op = CommitOp(key, check_path(path))
        if key == "file":
            if value.get("encoding", "base64") != "base64" or not isinstance(value.get("content"), str):
                raise bad_request(f"commit payload line {n}: 'file' needs base64 'content'")
            try:
                op.data = base64.b64decode(value["content"], validate=True)
            except ValueError:
                raise bad_request(f"commit payload line {n}: 'content' is not valid base64") from None
            if len(op.data) > MAX_REGULAR_FILE:
                raise too_big_for_regular(op.path, len(op.data))
            if on_file is not None:
                on_file(op)
        elif key == "lfsFile":
            if value.get("algo", "sha256") != "sha256":
                raise bad_request(f"commit payload line {n}: only sha256 LFS objects are supported")
            op.sha256 = check_oid(value.get("oid"))
            op.size = check_size(value["size"]) if value.get("size") is not None else None
        ops.append(op)
    if header is None:
        raise bad_request("commit payload has no 'header' line")
    for field in ("summary", "description"):
        if not isinstance(header.get(field, ""), str):
            raise bad_request(f"commit header {field!r} must be a string")
    parent = header.get("parentCommit")
    if parent is not None and not is_commit_id(parent):
        raise bad_request(f"parentCommit {parent!r} is not a 40-hex commit id")
    return header, ops


def too_big_for_regular(path: str, size: int | None = None) -> HubError:
    got = f" ({size} bytes)" if size is not None else ""
    return HubError(
        413,
        f"regular (non-LFS) file {path!r}{got} is over the {MAX_REGULAR_FILE}-byte limit: upload it with LFS "
        "(huggingface_hub does so for files its preupload call marks 'lfs')",
    )
