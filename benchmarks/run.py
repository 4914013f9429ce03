"""Run every zoo benchmark and write benchmarks/RESULTS.md, benchmarks/scale.png and benchmarks/results.json.

    .venv/bin/python benchmarks/run.py                 # everything (about 6-10 minutes on 2 loaded cores)
    .venv/bin/python benchmarks/run.py --quick         # a smoke run with few repetitions
    .venv/bin/python benchmarks/run.py --sections startup,create

Sections: startup, scale, create, pretrained, hub (see each bench_*.py). Everything runs in a
temporary folder (Hub caches, zoo caches, generated plugins, the local hub's data), removed at the
end unless --keep. This process imports neither torch nor huggingface_hub: every measured side runs
in a child process whose Hub settings are in its environment before anything imports them.
"""
from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import platform
import shutil
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_create  # noqa: E402
import bench_hub  # noqa: E402
import bench_hub_limits  # noqa: E402
import bench_pretrained  # noqa: E402
import bench_scale  # noqa: E402
import bench_startup  # noqa: E402
import bench_weights  # noqa: E402
import report  # noqa: E402
from common import BENCH, CountingHub, load_average  # noqa: E402

log = logging.getLogger("bench")

SECTIONS = ("startup", "scale", "create", "pretrained", "hub", "hub_limits", "weights")
FULL = {"startup": dict(rounds=16, timm_rounds=4),
        "scale": dict(cold_rounds=4, warm_rounds=9, discovery_rounds=2, discovery_reps=8),
        "create": dict(reps=30, warmup=2), "pretrained": dict(reps=10, warmup=1, offline_reps=2),
        "hub": dict(reps=3, push_reps=2, small_seconds=3.0),
        "hub_limits": dict(files=16000, paths=20000),
        "weights": dict(reps=10, swap_loads=300)}
QUICK = {"startup": dict(rounds=3, timm_rounds=1),
         "scale": dict(cold_rounds=1, warm_rounds=1, discovery_rounds=1, discovery_reps=2),
         "create": dict(reps=3, warmup=1), "pretrained": dict(reps=1, warmup=0, offline_reps=1),
         "hub": dict(reps=1, push_reps=1, small_seconds=1.0),
         "hub_limits": dict(files=2000, paths=2000, only="burst,listing"),
         "weights": dict(reps=2, swap_loads=30)}


def _versions() -> dict[str, str]:
    out = {}
    for d in ("zoo-core", "torch", "timm", "huggingface-hub", "safetensors"):
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            out[d] = "-"
    return out


def _strip_nan(obj):
    if isinstance(obj, float) and obj != obj:
        return None
    if isinstance(obj, dict):
        return {str(k): _strip_nan(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_strip_nan(v) for v in obj]
    return obj


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"comma-separated, from {', '.join(SECTIONS)}")
    p.add_argument("--quick", action="store_true", help="few repetitions: a smoke run, not figures to trust")
    p.add_argument("--out-dir", default=str(BENCH), help="where RESULTS.md, scale.png and results.json go")
    p.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    p.add_argument("--merge", action="store_true",
                   help="keep the other sections of the existing results.json (their own dates stay in it)")
    p.add_argument("--clean", action="store_true", help="remove the generated plugin sites kept between runs, then exit")
    a = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s", datefmt="%H:%M:%S")
    logging.getLogger("zoo").setLevel(logging.WARNING)  # the local hub logs every repo and commit at INFO
    sections = [s.strip() for s in a.sections.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        p.error(f"unknown section(s) {unknown}; choose from {', '.join(SECTIONS)}")
    if a.clean:
        bench_scale.clean_generated()
        log.info("removed %s-style folders", bench_scale.generated_root())
        return 0
    params = QUICK if a.quick else FULL
    out_dir = Path(a.out_dir)
    work = Path(tempfile.mkdtemp(prefix="zoo-bench-"))
    results: dict = {"meta": {
        "command": " ".join([".venv/bin/python", "benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"), "cpus": os.cpu_count(),
        "load_start": list(load_average()), "python": platform.python_version(), "versions": _versions(),
        "quick": a.quick, "params": {s: params[s] for s in sections}}}
    t_start = time.perf_counter()
    hub = None
    try:
        if {"pretrained", "hub"} & set(sections):
            hub = CountingHub(work / "hub-root").start()
            log.info("local hub at %s", hub.url)
        for name in sections:
            t0 = time.perf_counter()
            log.info("section %s: start (load average %.1f)", name, load_average()[0])
            if name == "startup":
                results[name] = bench_startup.run(work, **params[name])
            elif name == "scale":
                results[name] = bench_scale.run(work, **params[name])
            elif name == "create":
                results[name] = bench_create.run(work, **params[name])
            elif name == "pretrained":
                results[name] = bench_pretrained.run(work, hub, **params[name])
            elif name == "hub":
                results[name] = bench_hub.run(work, hub, **params[name])
            elif name == "hub_limits":
                results[name] = bench_hub_limits.run(work, **params[name])
            elif name == "weights":
                results[name] = bench_weights.run(work, **params[name])
            results[name]["section_wall_s"] = time.perf_counter() - t0
            results[name]["section_date"] = results["meta"]["date"]
            log.info("section %s: %.0f s", name, results[name]["section_wall_s"])
    finally:
        t0 = time.perf_counter()
        if hub is not None:
            hub.stop()
        if a.keep:
            log.info("work folder kept: %s", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
        log.info("clean-up: %.1f s", time.perf_counter() - t0)
    results["meta"]["wall_s"] = time.perf_counter() - t_start
    results["meta"]["load_end"] = list(load_average())
    results = json.loads(json.dumps(_strip_nan(results)))  # what RESULTS.md is written from is what results.json holds
    out_dir.mkdir(parents=True, exist_ok=True)
    previous = out_dir / "results.json"
    if a.merge and previous.exists():  # sections not run now keep their figures (and say when they were measured)
        kept = {k: v for k, v in json.loads(previous.read_text()).items() if k != "meta" and k not in sections}
        for v in kept.values():
            v.setdefault("section_date", "an earlier run")
        results = {**kept, **results}
        results["meta"]["merged"] = sorted(kept)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1) + "\n")
    plot_name = "scale.png" if report.plot(results, out_dir / "scale.png") else None
    report.write_markdown(results, out_dir / "RESULTS.md", plot_name)
    for row in report.summary_rows(results):
        log.info("%s: %s (target %s) %s", *row)
    log.info("wrote %s (%.1f min)", out_dir / "RESULTS.md", results["meta"]["wall_s"] / 60)
    return 0


if __name__ == "__main__":
    sys.exit(main())
