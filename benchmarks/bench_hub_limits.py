"""The local hub's resource limits, old and new side by side (issue 12).

    .venv/bin/python benchmarks/bench_hub_limits.py [--old-rev 987044d] [--files 16000] [--paths 20000] [--json OUT]

"new" is ``zoo.hubserver`` as installed; "old" is ``zoo/hubserver`` at ``--old-rev`` (``git show``, copied
into a temp package). Each side is a server in its own child process on 127.0.0.1; this process is the
client. Measured, per side:

- slow clients: 200 connections that send a header byte every second; after 15 s, how many the server
  still holds open, its thread count, and the latency of one normal request made meanwhile;
- a burst of 300 simultaneous connections: how many fail (listen backlog);
- listing a repo of ``--files`` files, 4 per folder: ``tree``, recursive ``tree``, ``paths-info`` of ``--paths``
  (60 % files, 20 % folders, 20 % missing);
- a 240 MB regular-file (non-LFS) commit request (one 180 MB file, base64-encoded): answer, seconds, the
  server's peak RSS (VmHWM); and the same 180 MB as 24 regular files of 7.5 MB (under the new per-file limit).

Standard library only; Linux (reads /proc).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import http.client
import json
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

ROOT = Path(__file__).resolve().parent.parent
FILES = ("__init__", "api", "checks", "server", "store", "transfer", "wire")
SERVER = r"""
import sys, time, logging
sys.path.insert(0, sys.argv[1])
logging.basicConfig(level=logging.ERROR)
from {pkg}.server import LocalHub
hub = LocalHub(sys.argv[2], tokens=["t"]).start()
print(hub.url, flush=True)
time.sleep(1e6)
"""


def old_package(rev: str, into: Path) -> Path:
    pkg = into / "zoo_hub_old"
    pkg.mkdir(parents=True)
    for name in FILES:
        src = subprocess.run(["git", "show", f"{rev}:zoo/hubserver/{name}.py"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        (pkg / f"{name}.py").write_text(src.replace("from ..", "from zoo."))
    return into


class Server:
    def __init__(self, pkg: str, path: Path, root: Path):
        self.proc = subprocess.Popen([sys.executable, "-c", SERVER.format(pkg=pkg), str(path), str(root)],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        url = urlsplit(self.proc.stdout.readline().strip())
        self.addr = (url.hostname, url.port)

    def status(self, field: str) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        return -1

    def request(self, method: str, path: str, body: bytes = b"", headers: dict | None = None, timeout: float = 600):
        conn = http.client.HTTPConnection(*self.addr, timeout=timeout)
        try:
            conn.request(method, path, body=body, headers={"Authorization": "Bearer t", **(headers or {})})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _create(srv: Server, repo: str) -> None:
    org, name = repo.split("/")
    body = json.dumps({"name": name, "organization": org}).encode()
    assert srv.request("POST", "/api/repos/create", body, {"Content-Type": "application/json"})[0] == 200


def slow_clients(srv: Server, n: int = 200, seconds: float = 15.0) -> dict:
    socks = []
    for _ in range(n):
        s = socket.create_connection(srv.addr, timeout=5)
        s.sendall(b"GET /api/whoami-v2 HTTP/1.1\r\nHost: x\r\n")
        socks.append(s)
    start, latency = time.monotonic(), None
    while time.monotonic() - start < seconds:
        for s in socks:
            try:
                s.send(b"X")
            except OSError:
                pass
        if latency is None and time.monotonic() - start > 2:
            t = time.monotonic()
            try:
                srv.request("GET", "/api/whoami-v2", timeout=30)
                latency = time.monotonic() - t
            except OSError:
                latency = float("inf")
        time.sleep(1.0)
    threads = srv.status("Threads")
    held = 0
    for s in socks:
        s.setblocking(False)
        try:
            s.recv(65536)  # an answer (408) or EOF: the server let it go
        except BlockingIOError:
            held += 1  # nothing came back: the server still holds it
        except OSError:
            pass
        s.close()
    return {"slow_connections": n, "held_after_s": seconds, "still_held": held, "server_threads": threads,
            "normal_request_s": round(latency, 3) if latency is not None else None}


def burst(srv: Server, n: int = 300) -> dict:
    failures = []
    gate = threading.Barrier(n)

    def one():
        gate.wait()
        try:
            srv.request("GET", "/api/whoami-v2", timeout=60)
        except OSError as e:
            failures.append(type(e).__name__)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"burst": n, "failed": len(failures), "errors": sorted(set(failures))}


def listings(srv: Server, root: Path, files: int, paths: int) -> dict:
    blob = b"x" * 20
    sha = hashlib.sha256(blob).hexdigest()
    target = root / "objects" / "sha256" / sha[:2] / sha
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(blob)
    _create(srv, "org/many")
    lines = [{"key": "header", "value": {"summary": "many", "description": ""}}]
    lines += [{"key": "lfsFile", "value": {"path": f"d{i // 4}/f{i}.bin", "algo": "sha256", "oid": sha, "size": 20}}
              for i in range(files)]
    body = b"".join(json.dumps(x).encode() + b"\n" for x in lines)
    assert srv.request("POST", "/api/models/org/many/commit/main", body)[0] == 200
    out = {"files": files}
    for name, path in (("tree_s", "/api/models/org/many/tree/main"),
                       ("tree_recursive_s", "/api/models/org/many/tree/main?recursive=1")):
        t = time.monotonic()
        status, _ = srv.request("GET", path)
        out[name] = round(time.monotonic() - t, 3) if status == 200 else f"HTTP {status}"
    # 60 % files, 20 % folders, 20 % missing paths
    wanted = [f"d{i // 4}/f{i}.bin" if i % 5 < 3 else f"d{i // 4}" if i % 5 == 3 else f"nope/{i}" for i in range(paths)]
    form = urlencode({"paths": wanted}, doseq=True).encode()
    t = time.monotonic()
    status, _ = srv.request("POST", "/api/models/org/many/paths-info/main", form,
                            {"Content-Type": "application/x-www-form-urlencoded"})
    out[f"paths_info_{paths}_s"] = round(time.monotonic() - t, 3) if status == 200 else f"HTTP {status}"
    return out


def regular_commit(srv: Server, parts: int, total: int = 180 * 1000 * 1000) -> dict:
    repo = f"org/big{parts}"
    _create(srv, repo)
    size = total // parts
    lines = [json.dumps({"key": "header", "value": {"summary": "big", "description": ""}}).encode()]
    for i in range(parts):
        content = base64.b64encode(bytes([97 + i % 26]) * size).decode()
        value = {"path": f"big{i}.txt", "content": content, "encoding": "base64"}
        lines.append(json.dumps({"key": "file", "value": value}).encode())
    body = b"\n".join(lines) + b"\n"
    del lines
    rss0 = srv.status("VmHWM")
    t = time.monotonic()
    try:
        status, _ = srv.request("POST", f"/api/models/{repo}/commit/main", body)
    except OSError as e:
        status = type(e).__name__
    return {"files": parts, "bytes": total, "answer": status, "seconds": round(time.monotonic() - t, 2),
            "peak_rss_mb_before": round(rss0 / 1024), "peak_rss_mb": round(srv.status("VmHWM") / 1024)}


def side(name: str, pkg: str, path: Path, work: Path, args) -> dict:
    res: dict = {}
    for label, fn in (
        ("slow_clients", lambda s, r: slow_clients(s)),
        ("burst", lambda s, r: burst(s)),
        ("listing", lambda s, r: listings(s, r, args.files, args.paths)),
        ("regular_commit_1x180MB", lambda s, r: regular_commit(s, 1)),
        ("regular_commit_24x7.5MB", lambda s, r: regular_commit(s, 24)),
    ):
        if label not in args.only:
            continue
        root = work / f"{name}-{label}"
        srv = Server(pkg, path, root)
        try:
            res[label] = fn(srv, root)
        finally:
            srv.close()
        print(name, label, json.dumps(res[label]), flush=True)
    return res


OLD_REV = "987044d"  # the hub before the issue-12 limits (its server class already in server.py; same logic as 6c81dfe)


def run(work: Path, old_rev: str = OLD_REV, files: int = 16000, paths: int = 20000, only: str | None = None) -> dict:
    """Both sides, for ``benchmarks/run.py`` (section ``hub_limits``)."""
    import zoo.hubserver

    args = argparse.Namespace(files=files, paths=paths, only=set((only or ",".join(LABELS)).split(",")))
    new_path = Path(zoo.hubserver.__file__).parent.parent
    return {"old_rev": old_rev, "files": files, "paths": paths,
            "old": side("old", "zoo_hub_old", old_package(old_rev, work / "old-pkg"), work, args),
            "new": side("new", "zoo.hubserver", new_path, work, args)}


LABELS = ("slow_clients", "burst", "listing", "regular_commit_1x180MB", "regular_commit_24x7.5MB")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--old-rev", default=OLD_REV, help=f"git revision of the old hub (default {OLD_REV})")
    p.add_argument("--files", type=int, default=16000)
    p.add_argument("--paths", type=int, default=20000)
    p.add_argument("--only", default="slow_clients,burst,listing,regular_commit_1x180MB,regular_commit_24x7.5MB")
    p.add_argument("--json", type=Path, help="write the results here")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-hub-limits-") as tmp:
        results = run(Path(tmp), args.old_rev, args.files, args.paths, args.only)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
