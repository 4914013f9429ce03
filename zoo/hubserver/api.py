"""The Hub HTTP API over a ``HubStore``: routing, auth, and the JSON shapes huggingface_hub expects.

The endpoint list and the response shapes come from ``shared/notes/HUB.md`` §3.1 (checked against the
real huggingface_hub 2.4.0 client). Revisions arrive percent-encoded (``refs%2Fpr%2F1``), so the raw
path is split on ``/`` before each segment is unquoted.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
from collections.abc import Iterator
from urllib.parse import unquote

from .checks import (
    MAX_COMMIT_LINE,
    REPO_TYPES,
    CommitOp,
    HubError,
    bad_request,
    check_path,
    check_ref_name,
    parse_commit_lines,
    repo_not_found,
)
from .store import DEFAULT_BRANCH, USER_NAME, HubStore, Repo, TreeIndex, lfs_info
from .transfer import Transfers
from .wire import Request, Response, json_response

logger = logging.getLogger(__name__)

MAX_COMMIT_BODY = 256 * 1024 * 1024  # read a line at a time: memory holds one file, not this
MAX_PATHS_INFO = 50_000  # paths per paths-info request (the answer is built in memory)
INVALID_CREDENTIALS = "Invalid credentials in Authorization header"  # the client keeps this a plain 401
_TYPE_OF_PLURAL = {plural: t for t, plural in REPO_TYPES.items()}


def _unquote(segment: str) -> str:
    try:
        return unquote(segment, errors="strict")
    except UnicodeDecodeError:
        raise bad_request(f"invalid percent-encoding in {segment[:80]!r}") from None


def _bounded(lines: Iterator[bytes], limit: int) -> Iterator[bytes]:
    total = 0
    for line in lines:
        total += len(line) + 1
        if total > limit:
            raise HubError(413, f"commit request is over the {limit}-byte limit; upload large files with LFS")
        yield line


def _split_revision(segs: list[str]) -> tuple[str, list[str]]:
    """Take the revision off the front of ``segs``; an unencoded ``refs/pr/1`` spans three segments."""
    if not segs or not segs[0]:
        raise bad_request("missing revision in URL")
    if segs[0] == "refs" and len(segs) >= 3 and segs[1] in ("heads", "tags", "pr"):
        return "/".join(_unquote(s) for s in segs[:3]), segs[3:]
    return _unquote(segs[0]), segs[1:]


class HubAPI:
    """A WSGI-like callable: ``Request`` in, ``Response`` out. ``tokens`` empty means open writes."""

    def __init__(self, store: HubStore, tokens: frozenset[str], base_url: str = ""):
        self.store = store
        self.tokens = tokens
        self.base_url = base_url  # used when a request has no usable Host header
        self.transfers = Transfers(store)

    # -- auth ----------------------------------------------------------------------------------------

    def authorized(self, req: Request) -> bool:
        """True if the request carries a valid token, or the hub has no tokens (open mode)."""
        if not self.tokens:
            return True
        auth = req.headers.get("Authorization") or ""
        scheme, _, token = auth.partition(" ")
        if scheme.lower() != "bearer" or not token:
            return False
        token = token.strip()
        return any(hmac.compare_digest(token.encode(), t.encode()) for t in self.tokens)

    def require_write(self, req: Request) -> None:
        if not self.authorized(req):
            raise HubError(401, INVALID_CREDENTIALS)

    def visible_repo(self, req: Request, repo_type: str, repo_id: str) -> Repo:
        """The repo if it exists and the caller may read it; a private repo is a 404 to others, like the Hub."""
        repo = self.store.repo(repo_type, repo_id)
        if not repo.exists() or (repo.meta().get("private") and not self.authorized(req)):
            raise repo_not_found(repo_type, repo_id)
        return repo

    def writable_repo(self, req: Request, repo_type: str, repo_id: str) -> Repo:
        self.require_write(req)
        return self.visible_repo(req, repo_type, repo_id)

    def _base(self, req: Request) -> str:
        host = req.headers.get("Host") or ""
        if host and all(c.isalnum() or c in ".-:[]" for c in host):
            return f"http://{host}"
        return self.base_url

    # -- routing -------------------------------------------------------------------------------------

    def __call__(self, req: Request) -> Response:
        segs = req.path.split("/")[1:]
        if segs and segs[0] == "api":
            return self._route_api(req, segs[1:])
        repo_type = "model"
        if segs and segs[0] in ("datasets", "spaces") and len(segs) > 3:
            repo_type, segs = _TYPE_OF_PLURAL[segs[0]], segs[1:]
        if len(segs) >= 3 and segs[1].endswith(".git"):
            repo_id = f"{_unquote(segs[0])}/{_unquote(segs[1])[:-4]}"
            return self._route_lfs(req, repo_type, repo_id, segs[2:])
        if len(segs) >= 5 and segs[2] in ("resolve", "raw"):
            repo_id = f"{_unquote(segs[0])}/{_unquote(segs[1])}"
            revision, rest = _split_revision(segs[3:])
            if req.method not in ("GET", "HEAD"):
                raise HubError(405, f"{req.method} is not allowed on resolve URLs")
            repo = self.visible_repo(req, repo_type, repo_id)
            return self.transfers.resolve(req, repo, revision, "/".join(_unquote(s) for s in rest))
        raise HubError(404, f"no route for {req.method} {req.path[:200]}")

    def _route_api(self, req: Request, segs: list[str]) -> Response:
        m = req.method
        if segs == ["repos", "create"] and m == "POST":
            return self.create_repo(req)
        if segs == ["repos", "delete"] and m == "DELETE":
            return self.delete_repo(req)
        if segs == ["whoami-v2"] and m in ("GET", "HEAD"):
            return self.whoami(req)
        if segs == ["validate-yaml"] and m == "POST":
            req.json()
            return json_response({"errors": [], "warnings": []})
        if not segs or segs[0] not in _TYPE_OF_PLURAL:
            raise HubError(404, f"no route for {m} {req.path[:200]}")
        repo_type = _TYPE_OF_PLURAL[segs[0]]
        if len(segs) == 1 and m in ("GET", "HEAD"):
            return self.list_repos(req, repo_type)
        if len(segs) < 3:
            raise HubError(404, f"no route for {m} {req.path[:200]}")
        repo_id = f"{_unquote(segs[1])}/{_unquote(segs[2])}"
        action, args = (segs[3], segs[4:]) if len(segs) > 3 else ("", [])
        read = m in ("GET", "HEAD")
        if action == "" and read:
            return self.repo_info(req, repo_type, repo_id, None)
        if action == "revision" and read and args:
            return self.repo_info(req, repo_type, repo_id, _unquote("/".join(args)))
        if action == "tree" and read:
            revision, rest = _split_revision(args or [DEFAULT_BRANCH])
            return self.tree(req, repo_type, repo_id, revision, "/".join(_unquote(s) for s in rest))
        if action == "paths-info" and m == "POST" and args:
            return self.paths_info(req, repo_type, repo_id, _unquote("/".join(args)))
        if action == "refs" and read and not args:
            return self.refs(req, repo_type, repo_id)
        if action == "commits" and read:
            return self.commits(req, repo_type, repo_id, _unquote("/".join(args)) if args else DEFAULT_BRANCH)
        if action == "preupload" and m == "POST" and args:
            return self.preupload(req, repo_type, repo_id, _unquote("/".join(args)))
        if action == "commit" and m == "POST" and args:
            return self.commit(req, repo_type, repo_id, _unquote("/".join(args)))
        if action == "branch" and m in ("POST", "DELETE") and args:
            return self.branch(req, repo_type, repo_id, _unquote("/".join(args)))
        if action == "tag" and m in ("POST", "DELETE") and args:
            return self.tag(req, repo_type, repo_id, _unquote("/".join(args)))
        if action == "settings" and m == "PUT" and not args:
            return self.settings(req, repo_type, repo_id)
        # Not served: Xet token endpoints (clients run with HF_HUB_DISABLE_XET=1), discussions, …
        raise HubError(404, f"no route for {m} {req.path[:200]} (not served by the local hub)")

    # -- account and repos ---------------------------------------------------------------------------

    def whoami(self, req: Request) -> Response:
        if self.tokens and not self.authorized(req):
            raise HubError(401, INVALID_CREDENTIALS)
        return json_response(
            {
                "type": "user",
                "id": USER_NAME,
                "name": USER_NAME,
                "fullname": "zoo local hub user",
                "isPro": False,
                "orgs": [],
                "auth": {"type": "access_token", "accessToken": {"displayName": "local hub token", "role": "write"}},
            }
        )

    def _repo_from_body(self, data: dict) -> Repo:
        repo_type = data.get("type") or "model"
        name, org = data.get("name"), data.get("organization")
        if not isinstance(name, str) or not isinstance(org, str):
            raise bad_request(f"invalid repo id {name!r}: expected 'namespace/name' (give 'organization' and 'name')")
        return self.store.repo(repo_type, f"{org}/{name}")

    def create_repo(self, req: Request) -> Response:
        self.require_write(req)
        data = req.json()
        repo = self._repo_from_body(data)
        private = data.get("visibility") == "private" or data.get("private") is True
        url = f"{self._base(req)}/{repo.url_path}"
        extra = {"sdk": data["sdk"]} if repo.type == "space" and isinstance(data.get("sdk"), str) else None
        try:
            repo = self.store.create_repo(repo, private=private, extra=extra)
            url = f"{self._base(req)}/{repo.url_path}"
        except HubError as e:
            if e.status != 409:
                raise
            # The client reads `url` from the 409 body when exist_ok=True.
            return json_response(
                {"error": "You already created this repo", "url": url}, 409, {"X-Error-Message": "You already created this repo"}
            )
        return json_response({"url": url, "name": repo.id, "id": repo.id})

    def delete_repo(self, req: Request) -> Response:
        self.require_write(req)
        repo = self._repo_from_body(req.json())
        self.visible_repo(req, repo.type, repo.id)
        self.store.delete_repo(repo)
        return json_response({})

    def settings(self, req: Request, repo_type: str, repo_id: str) -> Response:
        repo = self.writable_repo(req, repo_type, repo_id)
        data = req.json()
        if "visibility" in data or "private" in data:
            private = data.get("visibility") == "private" if "visibility" in data else bool(data.get("private"))
            self.store.update_meta(repo, private=private)
        return json_response({})

    def list_repos(self, req: Request, repo_type: str) -> Response:
        author, search = req.param("author"), (req.param("search") or "").lower()
        out = []
        for repo in self.store.list_repos(repo_type):
            meta = repo.meta()
            if meta.get("private") and not self.authorized(req):
                continue
            if (author and repo.id.split("/")[0].lower() != author.lower()) or search not in repo.id.lower():
                continue
            out.append(
                {
                    "id": repo.id,
                    "_id": repo.id,
                    "author": repo.id.split("/")[0],
                    "private": meta.get("private", False),
                    "createdAt": meta.get("createdAt"),
                }
            )
        limit = req.param("limit")
        if limit and limit.isdigit():
            out = out[: int(limit)]
        return json_response(out)

    def repo_info(self, req: Request, repo_type: str, repo_id: str, revision: str | None) -> Response:
        repo = self.visible_repo(req, repo_type, repo_id)
        sha, _ = repo.resolve(revision or DEFAULT_BRANCH)
        commit, meta = repo.commit(sha), repo.meta()
        blobs = req.flag("blobs")
        siblings = []
        for path, entry in sorted(commit["tree"].items()):
            sib: dict = {"rfilename": path}
            if blobs:
                sib.update(size=entry["size"], blobId=entry["oid"])
                if entry["lfs"]:
                    sib["lfs"] = lfs_info(entry, key="sha256")
            siblings.append(sib)
        info = {
            "_id": hashlib.sha1(f"{repo.type}/{repo.id}".encode()).hexdigest()[:24],
            "id": repo.id,
            "author": repo.id.split("/")[0],
            "sha": sha,
            "lastModified": commit["date"],
            "createdAt": meta.get("createdAt"),
            "private": bool(meta.get("private")),
            "disabled": False,
            "gated": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "siblings": siblings,
        }
        if repo.type == "model":
            info["modelId"] = repo.id
        if repo.type == "space":
            info["sdk"] = meta.get("sdk")
        return json_response(info)

    # -- trees ---------------------------------------------------------------------------------------

    def _entries(self, repo: Repo, head: str, index: TreeIndex, paths: list[str], expand: bool) -> list[dict]:
        """Tree-listing objects for ``paths`` (files, or folders present in ``index``)."""
        out = []
        for path in paths:
            entry = index.tree.get(path)
            if entry is not None:
                item = {"type": "file", "oid": entry["oid"], "size": entry["size"], "path": path}
                if entry["lfs"]:
                    item["lfs"] = lfs_info(entry)
            else:
                item = {"type": "directory", "oid": index.dir_oid(path), "size": 0, "path": path}
            out.append(item)
        if expand:
            last = repo.last_commits(head, paths)
            for item in out:
                if item["path"] in last:
                    item["lastCommit"] = last[item["path"]]
        return out

    def tree(self, req: Request, repo_type: str, repo_id: str, revision: str, path: str) -> Response:
        repo = self.visible_repo(req, repo_type, repo_id)
        head, _ = repo.resolve(revision)
        index = self.store.tree_index(repo, head)
        if path:
            check_path(path)
        if not index.is_dir(path):
            raise HubError(404, f"folder {path!r} not found at {revision}", "EntryNotFound", head)
        found = index.listing(path, req.flag("recursive"))
        return json_response(self._entries(repo, head, index, found, req.flag("expand")), headers={"X-Repo-Commit": head})

    def paths_info(self, req: Request, repo_type: str, repo_id: str, revision: str) -> Response:
        repo = self.visible_repo(req, repo_type, repo_id)
        form = req.form()
        paths = form.get("paths", [])
        if len(paths) > MAX_PATHS_INFO:
            raise HubError(413, f"paths-info takes at most {MAX_PATHS_INFO} paths per request, got {len(paths)}: split the list")
        head, _ = repo.resolve(revision)
        index = self.store.tree_index(repo, head)
        wanted = []
        for p in paths:
            p = check_path(p.rstrip("/") if isinstance(p, str) else p)
            if p in index.tree or index.is_dir(p):
                wanted.append(p)
        expand = str((form.get("expand") or ["false"])[-1]).lower() in ("1", "true")
        return json_response(self._entries(repo, head, index, wanted, expand), headers={"X-Repo-Commit": head})

    # -- refs and history ----------------------------------------------------------------------------

    def refs(self, req: Request, repo_type: str, repo_id: str) -> Response:
        repo = self.visible_repo(req, repo_type, repo_id)
        out: dict[str, list] = {"branches": [], "tags": [], "converts": [], "pullRequests": []}
        kinds = {"refs/heads/": "branches", "refs/tags/": "tags", "refs/pr/": "pullRequests"}
        for ref, target in sorted(repo.refs().items()):
            for prefix, kind in kinds.items():
                if ref.startswith(prefix):
                    name = ref if kind == "pullRequests" else ref[len(prefix) :]
                    out[kind].append({"name": name, "ref": ref, "targetCommit": target})
        if not req.flag("include_prs"):
            del out["pullRequests"]
        return json_response(out)

    def commits(self, req: Request, repo_type: str, repo_id: str, revision: str) -> Response:
        repo = self.visible_repo(req, repo_type, repo_id)
        head, _ = repo.resolve(revision)
        formatted = "formatted" in req.query.get("expand[]", [])
        out = []
        for sha, c in repo.history(head):
            item = {
                "id": sha,
                "title": c["title"],
                "message": c["message"],
                "date": c["date"],
                "authors": [{"user": c.get("author", USER_NAME)}],
            }
            if formatted:
                item["formatted"] = {"title": html.escape(c["title"]), "message": html.escape(c["message"])}
            out.append(item)
        return json_response(out)

    def branch(self, req: Request, repo_type: str, repo_id: str, name: str) -> Response:
        repo = self.writable_repo(req, repo_type, repo_id)
        check_ref_name(name, "branch")
        if req.method == "DELETE":
            if name == DEFAULT_BRANCH:
                raise HubError(403, f"cannot delete the default branch {DEFAULT_BRANCH!r}")
            self.store.set_ref(repo, f"refs/heads/{name}", None, must_exist=True)
            return json_response({})
        start = req.json().get("startingPoint") or DEFAULT_BRANCH
        if not isinstance(start, str):
            raise bad_request("startingPoint must be a revision string")
        target, _ = repo.resolve(start)
        self.store.set_ref(repo, f"refs/heads/{name}", target, must_exist=False)
        return json_response({})

    def tag(self, req: Request, repo_type: str, repo_id: str, revision: str) -> Response:
        repo = self.writable_repo(req, repo_type, repo_id)
        if req.method == "DELETE":
            check_ref_name(revision, "tag")
            self.store.set_ref(repo, f"refs/tags/{revision}", None, must_exist=True)
            return json_response({})
        name = check_ref_name(req.json().get("tag"), "tag")
        target, _ = repo.resolve(revision)
        self.store.set_ref(repo, f"refs/tags/{name}", target, must_exist=False)
        return json_response({})

    # -- uploads and downloads (contents move in transfer.py) ---------------------------------------

    def preupload(self, req: Request, repo_type: str, repo_id: str, revision: str) -> Response:
        repo = self.writable_repo(req, repo_type, repo_id)
        return self.transfers.preupload(repo, revision, req.json().get("files"))

    def commit(self, req: Request, repo_type: str, repo_id: str, revision: str) -> Response:
        repo = self.writable_repo(req, repo_type, repo_id)
        if req.body.length is not None and req.body.length > MAX_COMMIT_BODY:
            raise HubError(413, f"commit request of {req.body.length} bytes is over the {MAX_COMMIT_BODY}-byte limit; "
                                "upload large files with LFS")
        staged: list[CommitOp] = []

        def stage(op: CommitOp) -> None:  # each regular file goes to a temp file as soon as it is parsed
            staged.append(op)
            self.store.blobs.stage(op)

        try:
            header, ops = parse_commit_lines(_bounded(req.body.lines(MAX_COMMIT_LINE), MAX_COMMIT_BODY), stage)
            title = header.get("summary") or "Upload files"
            sha, pr = self.store.commit(
                repo,
                revision,
                ops,
                title,
                header.get("description") or "",
                parent_commit=header.get("parentCommit"),
                create_pr=req.flag("create_pr"),
            )
        finally:
            self.store.blobs.discard(staged)  # what the commit did not adopt
        base = f"{self._base(req)}/{repo.url_path}"
        return json_response(
            {
                "success": True,
                "commitOid": sha,
                "commitUrl": f"{base}/commit/{sha}",
                "commitMessage": title,
                "hookOutput": "",
                "pullRequestUrl": f"{base}/discussions/{pr}" if pr is not None else None,
            }
        )

    def _route_lfs(self, req: Request, repo_type: str, repo_id: str, segs: list[str]) -> Response:
        if segs == ["info", "lfs", "objects", "batch"] and req.method == "POST":
            repo = self.writable_repo(req, repo_type, repo_id)
            return self.transfers.lfs_batch(repo, req.json(), self._base(req))
        if segs[:3] == ["info", "lfs", "objects"] and len(segs) == 4 and req.method == "PUT":
            # No token here (see transfer.py): the signed URL is the credential.
            return self.transfers.lfs_put(req, self.store.repo(repo_type, repo_id), _unquote(segs[3]))
        if segs == ["info", "lfs", "verify"] and req.method == "POST":
            self.writable_repo(req, repo_type, repo_id)
            return self.transfers.lfs_verify(req.json())
        raise HubError(404, f"no route for {req.method} {req.path[:200]}")
