"""What every side-by-side script in ``benchmarks/peers/`` shares: the peer's own virtual environment,
running one side in a child process, interleaved repetitions, and the peers block of ``RESULTS.md``.

A pair script (``siren.py``, ``pykan.py``, ...) is one file with two roles:

* **orchestrator** (``.venv/bin/python benchmarks/peers/<pair>.py``): builds the peer's environment
  if missing (``ensure_env``), writes the shared inputs, runs both sides in child processes round by
  round (``interleave``) and writes its section of ``benchmarks/RESULTS.md`` (``write_section``);
* **side** (``<python> benchmarks/peers/<pair>.py --side ours|peer --inputs F --out F``): run by the
  zoo venv's python for ``ours`` and by the peer environment's python for ``peer``. The side code
  imports only what its environment has (zoo never in the peer's), so it lives in functions.

Standard library only (the orchestrator imports neither torch nor zoo).
"""
from __future__ import annotations

import argparse
import fcntl
import json
import logging
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

PEERS = Path(__file__).resolve().parent
BENCH = PEERS.parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
from common import ProcResult, paired, run_process, summary  # noqa: E402  (benchmarks/common.py)

log = logging.getLogger("zoo.bench.peers")
ENVS = PEERS / ".envs"  # one virtual environment per peer (git-ignored)
RESULTS = BENCH / "RESULTS.md"
START, END = "<!-- peers:start -->", "<!-- peers:end -->"
TORCH_PIN = "torch==2.14.1"  # the version this machine installs from disk; a peer may pin its own instead
OURS_PYTHON = str(Path(sys.executable))  # the orchestrator runs with the zoo venv's python

__all__ = ["ProcResult", "paired", "summary", "ensure_env", "versions", "run_side", "interleave", "write_section",
           "side_main", "peer_env_vars", "prep_and_rounds", "OURS_PYTHON", "ROOT", "load_now", "quartiles", "spread",
           "machine"]


def load_now() -> str:
    """The 1/5/15-minute load average, for the report."""
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def ensure_env(name: str, requirements: list[str], *, torch: str | None = TORCH_PIN) -> str:
    """The python of ``benchmarks/peers/.envs/<name>``, created and filled from PyPI if missing.

    ``torch`` is installed first (from this machine's disk when it is the pinned version) so that the
    peer's own requirements do not pull another one; ``None`` lets the peer's requirements choose. The
    environment is rebuilt when the requirement list changes; a failed build leaves nothing behind.
    """
    env = ENVS / name
    python = env / "bin" / "python"
    marker = env / "zoo-peer-requirements.json"
    wanted = {"torch": torch, "requirements": list(requirements)}
    if marker.exists() and json.loads(marker.read_text()) == wanted:
        return str(python)
    t0 = time.perf_counter()
    # the marker is written last: an environment without it is a failed or interrupted build, rebuilt here
    shutil.rmtree(env, ignore_errors=True)
    env.parent.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        if torch:
            subprocess.run([*pip, torch], check=True)
        subprocess.run([*pip, *requirements], check=True)
        marker.write_text(json.dumps(wanted))
    except BaseException:
        shutil.rmtree(env, ignore_errors=True)
        raise
    log.info("built the %s environment in %.0f s", name, time.perf_counter() - t0)
    return str(python)


def versions(python: str, packages: list[str]) -> dict[str, str]:
    """Installed versions of ``packages`` in the environment of ``python`` ("-" when absent)."""
    code = ("import json,sys,importlib.metadata as m\nout={}\nfor p in sys.argv[1:]:\n"
            "    try: out[p]=m.version(p)\n    except m.PackageNotFoundError: out[p]='-'\nprint(json.dumps(out))")
    res = subprocess.run([python, "-c", code, *packages], capture_output=True, text=True, check=True)
    return json.loads(res.stdout)


def peer_env_vars() -> dict[str, str]:
    """The environment of a side: one torch thread (the machine is shared), offline, no user site."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "ZOO_")) and k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONNOUSERSITE="1", TOKENIZERS_PARALLELISM="false")
    return env


def run_side(python: str, script: str | Path, side: str, inputs: Path, args: list[str] = (),
             timeout: float = 900) -> dict:
    """Run ``script --side SIDE --inputs INPUTS --out F`` with ``python``; its JSON plus process figures.

    The returned dict holds what the side wrote and ``_process``: wall seconds from spawn to exit, CPU
    seconds and peak RSS (MB) of the child (``os.wait4``).
    """
    out = inputs.parent / f"{Path(script).stem}-{side}-{time.monotonic_ns()}.json"
    cmd = [python, str(script), "--side", side, "--inputs", str(inputs), "--out", str(out), *args]
    res = run_process(cmd, peer_env_vars(), timeout=timeout)
    if res.returncode != 0:
        raise RuntimeError(f"{side} side failed (exit {res.returncode}): {' '.join(cmd)}\n{res.stderr[-4000:]}")
    data = json.loads(out.read_text())
    out.unlink()
    data["_process"] = {"seconds": res.seconds, "cpu_s": res.cpu_s, "peak_rss_mb": res.peak_rss_mb}
    return data


def interleave(sides: dict[str, Callable[[int], dict]], rounds: int) -> dict[str, list[dict]]:
    """Call every side once per round, the order rotating each round so load hits each side alike.

    ``sides[name](round_index)`` returns one measurement dict; the result lists them per side.
    """
    names = list(sides)
    out: dict[str, list[dict]] = {n: [] for n in names}
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            out[n].append(sides[n](r))
    return out


def prep_and_rounds(script: str | Path, peer_python: str, folder: Path, settings: dict, rounds: int
                    ) -> dict[str, list[dict]]:
    """Side ``prep`` (ours) on ``{"dir", "settings", "seeds"}``, then ``rounds`` interleaved rounds of sides ``ours``
    and ``peer`` on ``{"dir", "settings", "seed"}`` (seed = round), inputs through JSON files in ``folder``."""
    f = folder / "prep.json"
    f.write_text(json.dumps({"dir": str(folder), "settings": settings, "seeds": list(range(rounds))}))
    run_side(OURS_PYTHON, script, "prep", f)

    def side(python: str, name: str) -> Callable[[int], dict]:
        def run(r: int) -> dict:
            g = folder / f"in-{name}-{r}.json"
            g.write_text(json.dumps({"dir": str(folder), "settings": settings, "seed": r}))
            return run_side(python, script, name, g)
        return run

    return interleave({"ours": side(OURS_PYTHON, "ours"), "peer": side(peer_python, "peer")}, rounds)


def prep_rounds_score(script: str | Path, peer_python: str, base: dict, folder: Path, rounds: int
                      ) -> tuple[dict, dict[str, list[dict]], dict]:
    """The usual three phases of a pair: side ``prep`` (ours) on ``base``; ``rounds`` interleaved rounds of sides
    ``ours`` and ``peer`` (``base`` plus ``seed`` = round, each in its own environment); side ``score`` (ours) on
    ``base`` plus ``seeds``. Inputs go through JSON files in ``folder``. Returns (prep, runs by side, scores)."""
    f = folder / "prep.json"
    f.write_text(json.dumps(base))
    prep = run_side(OURS_PYTHON, script, "prep", f)

    def side(python: str, name: str) -> Callable[[int], dict]:
        def run(r: int) -> dict:
            f = folder / f"in-{name}-{r}.json"
            f.write_text(json.dumps({**base, "seed": r}))
            out = run_side(python, script, name, f)
            log.info("round %d %s: %.2f s (training %.2f s)", r, name, out["seconds"], out["train_s"])
            return out
        return run

    runs = interleave({"ours": side(OURS_PYTHON, "ours"), "peer": side(peer_python, "peer")}, rounds)
    f = folder / "score.json"
    f.write_text(json.dumps({**base, "seeds": list(range(rounds))}))
    return prep, runs, run_side(OURS_PYTHON, script, "score", f)


def write_section(key: str, markdown: str) -> None:
    """Put ``markdown`` as the section ``key`` of the peers block of RESULTS.md (replacing an older one).

    The block sits between ``<!-- peers:start -->`` and ``<!-- peers:end -->``; ``benchmarks/run.py``
    keeps it when it rewrites the rest of the file. Sections are kept sorted by key. Locked and atomic.
    """
    lock = RESULTS.with_suffix(".md.lock")
    with open(lock, "w") as lf:
        fcntl.flock(lf, fcntl.LOCK_EX)
        text = RESULTS.read_text() if RESULTS.exists() else "# zoo benchmark results\n"
        head, block = text, ""
        if START in text and END in text:
            head = text[:text.index(START)]
            block = text[text.index(START) + len(START):text.index(END)]
            tail = text[text.index(END) + len(END):]
            head = head + tail.lstrip("\n") if tail.strip() else head
        sections = _split(block)
        sections[key] = section(key, markdown)
        body = "\n".join(sections[k] for k in sorted(sections))
        intro = ("## Side by side with the public implementations\n\nEach section is written by its own script in "
                 "`benchmarks/peers/` (see its README), which builds the peer's virtual environment from PyPI, runs "
                 "both sides on identical inputs in child processes, interleaved round by round, and records the "
                 "exact command and package versions.\n")
        new = head.rstrip("\n") + "\n\n" + START + "\n" + intro + "\n" + body + END + "\n"
        tmp = RESULTS.with_suffix(".md.tmp")
        tmp.write_text(new)
        os.replace(tmp, RESULTS)


def _split(block: str) -> dict[str, str]:
    out: dict[str, str] = {}
    parts = block.split("<!-- peer:")
    for p in parts[1:]:
        key = p[:p.index(" -->")]
        out[key] = "<!-- peer:" + p.rstrip("\n") + "\n"
    return out


def section(key: str, markdown: str) -> str:
    """``markdown`` tagged as the peers-block section ``key`` (what ``write_section`` stores)."""
    return f"<!-- peer:{key} -->\n{markdown.strip()}\n"


def side_main(sides: dict[str, Callable[[dict, argparse.Namespace], dict]], orchestrate: Callable[[argparse.Namespace], None],
              add_args: Callable[[argparse.ArgumentParser], None] | None = None) -> None:
    """The command line of a pair script: ``--side NAME --inputs F --out F`` runs one side, else orchestrate.

    A side gets the JSON inputs the orchestrator wrote and returns a JSON-able dict.
    """
    p = argparse.ArgumentParser(description=(sys.modules["__main__"].__doc__ or "").split("\n")[0])
    p.add_argument("--side", choices=sorted(sides), help=argparse.SUPPRESS)
    p.add_argument("--inputs", type=Path, help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    if add_args:
        add_args(p)
    a = p.parse_args()
    a.command = shlex.join([".venv/bin/python", f"benchmarks/peers/{Path(sys.argv[0]).name}", *sys.argv[1:]])
    if a.side:
        data = sides[a.side](json.loads(a.inputs.read_text()), a)
        tmp = a.out.with_suffix(".tmp")
        tmp.write_text(json.dumps(data))
        os.replace(tmp, a.out)
        return
    orchestrate(a)


def quartiles(xs: list[float], spec: str = ".3f") -> str:
    """``median (p25–p75)`` of ``xs`` (just the value for one sample)."""
    s = summary(xs)
    return f"{s['median']:{spec}} ({s['p25']:{spec}}–{s['p75']:{spec}})" if len(xs) > 1 else f"{s['median']:{spec}}"


def spread(xs: list[float], spec: str = ".3f") -> str:
    """``median (min–max)`` of ``xs`` (just the value for one sample): for a few seeds."""
    med = statistics.median(xs)
    return f"{med:{spec}} ({min(xs):{spec}}–{max(xs):{spec}})" if len(xs) > 1 else f"{med:{spec}}"


def machine() -> str:
    """One line on where the figures come from."""
    return (f"{os.cpu_count()} CPUs, one torch thread per side, load average {load_now()} (1/5/15 min) when the "
            f"section was written, Python {platform.python_version()}")
