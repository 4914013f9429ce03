"""Moving file contents: the preupload decision, LFS uploads (batch, signed PUT, verify) and downloads
(resolve, with ranges). The caller (``api.HubAPI``) has already checked who may touch which repo.

The LFS PUT carries no token (the real client sends it to a presigned storage URL), so the batch
endpoint hands out upload URLs signed with a per-process key: only callers who passed the token check
can store blobs, and every blob is still verified against its sha256 before it is kept.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import secrets
from urllib.parse import quote

from .checks import HubError, bad_request, check_oid, check_path, check_size, repo_not_found
from .store import LFS_MIN_SIZE, LFS_SUFFIXES, HubStore, Repo
from .wire import Request, Response, json_response

logger = logging.getLogger(__name__)


def upload_mode(path: str, size: int, sample: bytes) -> str:
    """The Hub's rule: LFS for binary-looking suffixes, big files, or a NUL byte in the first 512 bytes."""
    if size > 0 and (path.lower().endswith(LFS_SUFFIXES) or size > LFS_MIN_SIZE or b"\0" in sample):
        return "lfs"
    return "regular"


class Transfers:
    def __init__(self, store: HubStore):
        self.store = store
        self._key = secrets.token_bytes(32)  # signs upload URLs; a restart invalidates unused ones

    def _sign(self, repo: Repo, oid: str, size: int) -> str:
        return hmac.new(self._key, f"{repo.type}/{repo.id}/{oid}/{size}".encode(), hashlib.sha256).hexdigest()

    def preupload(self, repo: Repo, revision: str, files: object) -> Response:
        """Per file: "lfs" or "regular", and the remote oid so the client can skip unchanged files."""
        if not isinstance(files, list):
            raise bad_request("preupload needs a 'files' list")
        head, _ = repo.resolve(revision)
        tree = repo.commit(head)["tree"]
        out = []
        for f in files:
            if not isinstance(f, dict):
                raise bad_request("each preupload file must be an object")
            path, size = check_path(f.get("path")), check_size(f.get("size"))
            try:
                sample = base64.b64decode(f.get("sample") or "", validate=True)
            except ValueError:
                raise bad_request(f"preupload sample for {path!r} is not valid base64") from None
            mode = upload_mode(path, size, sample)
            entry = tree.get(path)
            # The client compares this with the sha256 (LFS) or git blob sha1 (regular) of its file.
            oid = None if entry is None else entry["sha256"] if mode == "lfs" else entry["oid"]
            out.append({"path": path, "uploadMode": mode, "shouldIgnore": False, "oid": oid})
        return json_response({"files": out, "commitOid": head})

    def lfs_batch(self, repo: Repo, data: dict, base_url: str) -> Response:
        """Upload instructions per object; none for objects already stored (the client skips them)."""
        if data.get("operation") != "upload":
            raise bad_request("the local hub's LFS batch endpoint only serves 'upload' (download via resolve URLs)")
        objects = data.get("objects")
        if not isinstance(objects, list):
            raise bad_request("LFS batch needs an 'objects' list")
        base = f"{base_url}/{repo.url_path}.git/info/lfs"
        out = []
        for obj in objects:
            oid, size = (obj.get("oid"), obj.get("size")) if isinstance(obj, dict) else (None, None)
            try:
                oid, size = check_oid(oid), check_size(size)
            except HubError as e:
                out.append(
                    {"oid": str(oid), "size": size if isinstance(size, int) else 0, "error": {"code": 422, "message": e.message}}
                )
                continue
            item: dict = {"oid": oid, "size": size}
            if self.store.blobs.size(oid) != size:
                item["actions"] = {
                    "upload": {"href": f"{base}/objects/{oid}?size={size}&sig={self._sign(repo, oid, size)}"},
                    "verify": {"href": f"{base}/verify"},
                }
            out.append(item)
        return json_response(
            {"transfer": "basic", "objects": out, "hash_algo": "sha256"}, headers={"Content-Type": "application/vnd.git-lfs+json"}
        )

    def lfs_put(self, req: Request, repo: Repo, oid: str) -> Response:
        """Store an uploaded object if the URL's signature, the size and the sha256 all check out."""
        oid = check_oid(oid)
        size_param = req.param("size") or ""
        if not size_param.isdigit():
            raise bad_request("upload URL needs its 'size' parameter")
        size = int(size_param)
        if not hmac.compare_digest(req.param("sig") or "", self._sign(repo, oid, size)):
            raise HubError(403, "invalid or expired upload signature: ask the LFS batch endpoint again")
        if not repo.exists():
            raise repo_not_found(repo.type, repo.id)
        if req.body.length is not None and req.body.length != size:
            raise bad_request(f"upload of {oid} has Content-Length {req.body.length}, expected {size}")
        if self.store.blobs.size(oid) != size:  # else already stored: the body is simply drained
            self.store.blobs.put_stream(req.body, oid, size)
            logger.info("stored LFS object %s (%d bytes) for %s", oid[:12], size, repo.id)
        return Response(200)

    def lfs_verify(self, data: dict) -> Response:
        oid, size = check_oid(data.get("oid")), check_size(data.get("size"))
        if self.store.blobs.size(oid) != size:
            raise HubError(404, f"LFS object {oid} ({size} bytes) was not uploaded")
        return json_response({})

    def resolve(self, req: Request, repo: Repo, revision: str, path: str) -> Response:
        """A file's bytes (GET) or headers (HEAD), with the headers ``hf_hub_download`` relies on."""
        head, _ = repo.resolve(revision)
        check_path(path)
        entry = repo.commit(head)["tree"].get(path)
        if entry is None:
            raise HubError(404, f"{path!r} not found at {revision}", "EntryNotFound", head)
        size = entry["size"]
        if self.store.blobs.size(entry["sha256"]) != size:
            logger.error("blob %s of %s:%s is missing or has the wrong size", entry["sha256"], repo.id, path)
            raise HubError(500, f"the stored content of {path!r} is missing or damaged on the hub")
        headers = {
            "X-Repo-Commit": head,  # required: without it the client raises FileMetadataError
            "ETag": f'"{entry["sha256"] if entry["lfs"] else entry["oid"]}"',
            "Accept-Ranges": "bytes",
            "Content-Type": "application/octet-stream",
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(path.rsplit('/', 1)[-1])}",
        }
        if entry["lfs"]:
            headers.update({"X-Linked-Etag": f'"{entry["sha256"]}"', "X-Linked-Size": str(size)})
        start, end, status = 0, size - 1, 200
        rng = parse_range(req.headers.get("Range"), size)
        if rng == "unsatisfiable":
            headers["Content-Range"] = f"bytes */{size}"
            return Response(416, b"", headers)
        if isinstance(rng, tuple):
            (start, end), status = rng, 206
            headers["Content-Range"] = f"bytes {start}-{end}/{size}"
        blob = self.store.blobs.path(entry["sha256"])
        return Response(status, headers=headers, file=blob, offset=start, length=max(0, end - start + 1))


def parse_range(value: str | None, size: int) -> tuple[int, int] | str | None:
    """``(start, end)`` for one satisfiable ``bytes=a-b`` / ``a-`` / ``-n`` range, clipped to ``size``;
    ``"unsatisfiable"``; or None to send the whole file (no header, a malformed one, or several ranges,
    which RFC 9110 lets a server ignore)."""
    if not value:
        return None
    unit, _, spec = value.strip().partition("=")
    if unit.strip().lower() != "bytes" or "," in spec:
        return None
    first, _, last = spec.strip().partition("-")
    try:
        if not first:
            n = int(last)
            return (max(0, size - n), size - 1) if n > 0 and size > 0 else "unsatisfiable"
        start = int(first)
        end = int(last) if last else size - 1
    except ValueError:
        return None
    if start >= size:
        return "unsatisfiable"
    if start < 0 or end < start:
        return None
    return (start, min(end, size - 1))
