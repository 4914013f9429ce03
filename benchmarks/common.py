"""Shared helpers for the benchmarks: timing whole processes, medians, environments, a counting hub.

Everything here is standard library (plus ``zoo.hubserver``, which is too), so the orchestrator never
imports torch or huggingface_hub: each measured side runs in a child process whose Hub settings are
in its environment before anything imports huggingface_hub.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent  # the repository
BENCH = ROOT / "benchmarks"
PYTHON = str(Path(sys.executable))  # run.py is started with .venv/bin/python
ZOO_BIN = str(Path(sys.executable).with_name("zoo"))
BENCH_SITE = BENCH / "site"  # the benchmark-only plugin distribution (zoo-bench)
HUB_TOKEN = "zoo-bench-token"
DEAD_ENDPOINT = "http://127.0.0.1:9"  # the discard port: nothing answers there


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def summary(xs: list[float]) -> dict:
    """Median, quartiles and count of a list of samples (kept in measurement order)."""
    xs = list(xs)
    if not xs:
        return {"median": float("nan"), "p25": float("nan"), "p75": float("nan"), "n": 0, "samples": []}
    q = statistics.quantiles(xs, n=4, method="inclusive") if len(xs) > 1 else [xs[0]] * 3
    return {"median": statistics.median(xs), "p25": q[0], "p75": q[2], "n": len(xs), "samples": xs}


def paired(a: list[float], b: list[float], op=lambda x, y: x / y) -> float:
    """Median over rounds of ``op(a[i], b[i])``: sides measured next to each other in time, so that a change
    of load between rounds cancels out."""
    return median([op(x, y) for x, y in zip(a, b, strict=True)])


@dataclass
class ProcResult:
    seconds: float
    peak_rss_mb: float
    returncode: int
    stdout: str
    stderr: str
    cpu_s: float = 0.0  # user + system CPU time of the child: what it would take on an idle core, roughly


def run_process(cmd: list[str], env: dict[str, str], cwd: str | Path = ROOT, timeout: float = 600) -> ProcResult:
    """Run ``cmd`` to completion; wall time from spawn to exit, the child's own peak RSS and CPU time (os.wait4)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, cwd=str(cwd), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # read the pipes in threads so that a chatty child never blocks, then reap it with wait4 for its rusage
    chunks: dict[str, bytes] = {}

    def drain(name: str, stream) -> None:
        chunks[name] = stream.read()

    threads = [threading.Thread(target=drain, args=(n, s)) for n, s in (("out", p.stdout), ("err", p.stderr))]
    for t in threads:
        t.start()
    killer = threading.Timer(timeout, p.kill)
    killer.start()
    _, status, rusage = os.wait4(p.pid, 0)  # blocking: the exit is seen at once, with the child's rusage
    seconds = time.perf_counter() - t0
    killer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    for t in threads:
        t.join()
    return ProcResult(seconds, rusage.ru_maxrss / 1024.0, p.returncode,
                      chunks.get("out", b"").decode(errors="replace"), chunks.get("err", b"").decode(errors="replace"),
                      rusage.ru_utime + rusage.ru_stime)


def check(res: ProcResult, what: str) -> ProcResult:
    if res.returncode != 0:
        raise RuntimeError(f"{what} failed (exit {res.returncode}):\n{res.stderr[-3000:]}")
    return res


def run_child(script: str, args: list[str], env: dict[str, str], what: str, timeout: float = 600) -> dict:
    """Run ``benchmarks/<script>`` with ``args`` plus ``--out FILE`` and return the JSON it wrote."""
    out = Path(env["ZOO_BENCH_WORK"]) / f"{Path(script).stem}-{time.monotonic_ns()}.json"
    res = check(run_process([PYTHON, str(BENCH / script), *args, "--out", str(out)], env, timeout=timeout), what)
    data = json.loads(out.read_text())
    data["_process"] = {"seconds": res.seconds, "peak_rss_mb": res.peak_rss_mb}
    return data


def hub_env(work: Path, endpoint: str, *, cache: str = "hf-cache", zoo_cache: str = "zoo-cache",
            pythonpath: list[Path] = (), offline: bool = False) -> dict[str, str]:
    """A hermetic environment for a child: its own Hub cache, zoo cache and HF_HOME under ``work``."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("HF_", "HUGGINGFACE_", "ZOO_")) and k not in ("PYTHONPATH",)}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_TOKEN=HUB_TOKEN,
        HF_HOME=str(work / "hf-home"),
        HF_HUB_CACHE=str(work / cache),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
        ZOO_CACHE_DIR=str(work / zoo_cache),
        XDG_CACHE_HOME=str(work / "xdg"),
        ZOO_BENCH_WORK=str(work),
        PYTHONDONTWRITEBYTECODE="0",
    )
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    return env


@dataclass
class CountingHub:
    """A ``zoo.hubserver.LocalHub`` in this process whose every request is logged with a monotonic time.

    Children report the ``time.monotonic()`` bounds of each measured call (CLOCK_MONOTONIC is system-wide
    on Linux), so requests are attributed to the call that made them.
    """

    root: Path
    log: list[tuple[float, str, str]] = field(default_factory=list)

    def start(self) -> CountingHub:
        from zoo.hubserver import LocalHub

        self.hub = LocalHub(self.root, port=0, tokens=[HUB_TOKEN]).start()
        server = self.hub._server  # the benchmark wraps the server's app to count what reaches it
        app = server.app
        lock = threading.Lock()

        def counted(request):
            with lock:
                self.log.append((time.monotonic(), request.method, request.path))
            return app(request)

        server.app = counted
        return self

    @property
    def url(self) -> str:
        return self.hub.url

    def requests_between(self, t0: float, t1: float) -> list[tuple[str, str]]:
        return [(m, p) for t, m, p in list(self.log) if t0 <= t <= t1]

    def stop(self) -> None:
        self.hub.stop()


def attribute(hub: CountingHub, calls: list[dict]) -> dict[str, dict]:
    """Per side: requests that reached the hub during its calls, per call and by method."""
    out: dict[str, dict] = {}
    for c in calls:
        reqs = hub.requests_between(c["t0"], c["t1"])
        d = out.setdefault(c["side"], {"calls": 0, "requests": 0, "by_method": {}})
        d["calls"] += 1
        d["requests"] += len(reqs)
        for m, _ in reqs:
            d["by_method"][m] = d["by_method"].get(m, 0) + 1
    for d in out.values():
        d["per_call"] = d["requests"] / d["calls"] if d["calls"] else float("nan")
    return out


def load_average() -> tuple[float, float, float]:
    return os.getloadavg()
