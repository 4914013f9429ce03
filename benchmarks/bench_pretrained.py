"""Pretrained load of a ~100 MB model from a warm cache: zoo against raw safetensors and timm's ``hf-hub:``.

Setup (child processes, each with its Hub settings in the environment before huggingface_hub is
imported): ``bench_resnet50`` (benchmarks/site, timm's ResNet-50) is pushed with ``zoo.push_to_hub``
to the local hub, and the same weights with ``timm.models.push_to_hf_hub``; a client pulls both once
(``seed``), which fills its Hub cache. A pinned twin plugin (``bench_resnet50_pinned``, tag pinned
to that commit and its sha256s) is generated, like a released plugin would pin its weights.

Measured in one process (``measure``), interleaved in a rotating order after a warm-up:

* ``zoo_pinned``:   ``zoo.create("bench_resnet50_pinned", pretrained=True)``
* ``zoo_unpinned``: ``zoo.create("bench_resnet50", pretrained=True)`` (resolves ``main``: one HEAD)
* ``raw``:          ``m = timm.create_model("resnet50"); m.load_state_dict(safetensors.torch.load_file(p))``
* ``timm_hub``:     ``timm.create_model("hf-hub:zoo-bench/resnet50-timm", pretrained=True)``
* ``zoo_fetch``, ``zoo_load_into``, ``raw_load_only``: zoo's own steps for a pinned tag (``weights.fetch``:
  resolution, one read of the file into memory and its sha256; ``weights.load_into``: the checked load from
  those same verified bytes) and the raw load, on a model already built, so that zoo's overhead is also seen
  without the build's noise. (In ``create`` the fetch runs beside the model's build.)
* ``zoo_overhead_only``: ``fetch`` + ``load_into`` with the tensor copy into the model stubbed out (a no-op
  ``load_state_dict``): zoo's work alone (read, hash, parse, dtype/finiteness and key checks), in milliseconds.

Requests reaching the hub are counted per call (the hub logs each with its monotonic time, the child
reports each call's bounds), in the clients' default online mode. ``offline`` repeats the zoo and timm
sides with ``HF_HUB_OFFLINE=1`` and ``HF_ENDPOINT`` at a dead port, counting socket connects.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import logging
import socket
import time
from unittest import mock

log = logging.getLogger("bench.pretrained")

REPO = "zoo-bench/bench-resnet50"
TIMM_REPO = "zoo-bench/resnet50-timm"
_connects = {"n": 0}


def _count_connects() -> None:
    real = socket.socket.connect

    def connect(self, address):
        _connects["n"] += 1
        return real(self, address)

    socket.socket.connect = connect


def child_push() -> dict:
    import timm
    import torch

    import zoo

    torch.manual_seed(0)
    model = zoo.create("bench_resnet50")
    t0 = time.perf_counter()
    commit = zoo.push_to_hub(model, REPO)
    t_zoo = time.perf_counter() - t0
    twin = timm.create_model("resnet50")
    twin.load_state_dict(model.state_dict())
    t0 = time.perf_counter()
    timm.models.push_to_hf_hub(twin, TIMM_REPO, safe_serialization=True)
    t_timm = time.perf_counter() - t0
    nbytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
    return {"commit": commit, "zoo_push_s": t_zoo, "timm_push_s": t_timm, "state_bytes": nbytes,
            "params": sum(p.numel() for p in model.parameters())}


def child_seed() -> dict:
    import timm
    import torch
    from huggingface_hub import try_to_load_from_cache

    import zoo

    t0 = time.perf_counter()
    m = zoo.create("bench_resnet50", pretrained=True)
    t_zoo = time.perf_counter() - t0
    t0 = time.perf_counter()
    mt = timm.create_model(f"hf-hub:{TIMM_REPO}", pretrained=True)
    t_timm = time.perf_counter() - t0
    same = all(torch.equal(a, b) for a, b in zip(m.state_dict().values(), mt.state_dict().values(), strict=True))
    commit = m.zoo.commit
    cfg_path = try_to_load_from_cache(REPO, "config.json", revision=commit)
    w_path = try_to_load_from_cache(REPO, "model.safetensors", revision=commit)
    cfg_sha = hashlib.sha256(open(cfg_path, "rb").read()).hexdigest()
    import os

    return {"zoo_cold_pull_s": t_zoo, "timm_cold_pull_s": t_timm, "same_weights": same, "commit": commit,
            "config_sha": cfg_sha, "weights_sha": m.zoo.sha256, "weights_path": w_path,
            "weights_bytes": os.path.getsize(w_path)}


def _sides(weights_path: str, commit: str, files: dict[str, str]) -> dict:
    import safetensors.torch
    import timm

    import zoo
    from zoo import weights

    def raw():
        m = timm.create_model("resnet50")
        m.load_state_dict(safetensors.torch.load_file(weights_path))
        return m

    built = timm.create_model("resnet50")  # for the load-only sides: the build is not timed there
    verified = weights.fetch(REPO, commit, files)  # the bytes load_into takes in create(): read and hashed once

    def raw_load_only():
        built.load_state_dict(safetensors.torch.load_file(weights_path))

    def zoo_overhead_only():
        # zoo's work for a pinned tag: resolution, the one read and its sha256 (fetch), then load_into's parse, dtype,
        # finiteness, key, shape and tied-weight checks; the tensor copy into the model (the raw load's own work)
        # is a no-op here
        with mock.patch.object(built, "load_state_dict", lambda *a, **k: None):
            weights.load_into(built, weights.fetch(REPO, commit, files).data["model.safetensors"])

    return {
        "zoo_pinned": lambda: zoo.create("bench_resnet50_pinned", pretrained=True),
        "zoo_unpinned": lambda: zoo.create("bench_resnet50", pretrained=True),
        "raw": raw,
        "timm_hub": lambda: timm.create_model(f"hf-hub:{TIMM_REPO}", pretrained=True),
        # zoo's own steps in create(pretrained=True) for a pinned tag, on a model already built
        "zoo_fetch": lambda: weights.fetch(REPO, commit, files),
        "zoo_load_into": lambda: weights.load_into(built, verified.data["model.safetensors"]),
        "raw_load_only": raw_load_only,
        "zoo_overhead_only": zoo_overhead_only,
    }


def child_measure(weights_path: str, commit: str, files: dict[str, str], reps: int, warmup: int,
                  only: list[str] | None = None) -> dict:
    import zoo
    from zoo import weights

    _count_connects()
    sides = _sides(weights_path, commit, files)
    if only:
        sides = {k: v for k, v in sides.items() if k in only}
    zoo.list_models()  # discovery once, outside the timings
    first = {}
    t0 = time.perf_counter()
    weights.sha256_file(weights_path)
    first["sha256_s"] = time.perf_counter() - t0
    if "zoo_pinned" in sides:  # a fresh ZOO_CACHE_DIR: the first load hashes the file, later ones do not
        for i in range(2):
            t0 = time.perf_counter()
            sides["zoo_pinned"]()
            first[f"zoo_pinned_call{i + 1}"] = time.perf_counter() - t0
    for fn in sides.values():
        for _ in range(warmup):
            fn()
    names = list(sides)
    times: dict[str, list[float]] = {k: [] for k in names}
    connects: dict[str, int] = {k: 0 for k in names}
    calls = []
    for r in range(reps):
        k = r % len(names)
        for name in names[k:] + names[:k]:
            c0 = _connects["n"]
            t0m, t0 = time.monotonic(), time.perf_counter()
            m = sides[name]()
            dt = time.perf_counter() - t0
            calls.append({"side": name, "t0": t0m, "t1": time.monotonic()})
            times[name].append(dt)
            connects[name] += _connects["n"] - c0
            del m
    return {"times": times, "calls": calls, "connects": connects, "first": first}


def run(work, hub, reps: int = 10, warmup: int = 1, offline_reps: int = 2) -> dict:
    """Push, seed, generate the pinned twin, measure online (counted) and offline."""
    from common import BENCH_SITE, DEAD_ENDPOINT, attribute, hub_env, paired, run_child, summary
    from genplugins import make_pinned_bench

    pinned_site = work / "pinned-site"
    path = [BENCH_SITE, pinned_site]
    env_push = hub_env(work, hub.url, cache="hf-cache-pusher", zoo_cache="zoo-cache-pusher", pythonpath=path)
    pushed = run_child("bench_pretrained.py", ["push"], env_push, "push of bench_resnet50")
    log.info("pushed %s@%s", REPO, pushed["commit"][:12])
    env = hub_env(work, hub.url, cache="hf-cache-client", zoo_cache="zoo-cache-seed", pythonpath=path)
    seeded = run_child("bench_pretrained.py", ["seed"], env, "first pull of bench_resnet50")
    if not seeded["same_weights"]:
        raise RuntimeError("zoo's and timm's copies of the benchmark weights differ")
    make_pinned_bench(pinned_site, REPO, seeded["commit"], seeded["config_sha"], seeded["weights_sha"])
    env_m = hub_env(work, hub.url, cache="hf-cache-client", zoo_cache="zoo-cache-measure", pythonpath=path)
    pin = ["--weights", seeded["weights_path"], "--commit", seeded["commit"], "--files",
           json.dumps({"config.json": seeded["config_sha"], "model.safetensors": seeded["weights_sha"]})]
    measured = run_child("bench_pretrained.py", ["measure", *pin, "--reps", str(reps), "--warmup", str(warmup)], env_m,
                         "pretrained-load benchmark")
    env_off = hub_env(work, DEAD_ENDPOINT, cache="hf-cache-client", zoo_cache="zoo-cache-measure", pythonpath=path,
                      offline=True)
    offline = run_child("bench_pretrained.py", ["measure", *pin, "--reps", str(offline_reps), "--warmup", "0", "--only",
                                                "zoo_pinned,zoo_unpinned,timm_hub,raw"], env_off, "offline pretrained load")
    out = {"push": pushed, "seed": seeded, "reps": reps, "first": measured["first"],
           "sides": {k: summary(v) for k, v in measured["times"].items()},
           "requests": attribute(hub, measured["calls"]), "connects": measured["connects"],
           "offline": {"sides": {k: summary(v) for k, v in offline["times"].items()},
                       "connects": offline["connects"], "requests": attribute(hub, offline["calls"])}}
    med = {k: v["median"] for k, v in out["sides"].items()}
    t = measured["times"]
    steps = [f + li for f, li in zip(t["zoo_fetch"], t["zoo_load_into"], strict=True)]

    out["ratios"] = {
        "zoo_pinned_over_raw": med["zoo_pinned"] / med["raw"],
        "zoo_pinned_over_raw_paired": paired(t["zoo_pinned"], t["raw"]),
        "zoo_unpinned_over_raw": med["zoo_unpinned"] / med["raw"],
        "zoo_unpinned_over_raw_paired": paired(t["zoo_unpinned"], t["raw"]),
        "timm_hub_over_raw": med["timm_hub"] / med["raw"],
        "zoo_pinned_over_timm_hub": med["zoo_pinned"] / med["timm_hub"],
        # zoo's steps on a built model: resolution + verification (fetch) and its checked load, over the raw load
        "zoo_steps_over_raw_load": (med["zoo_fetch"] + med["zoo_load_into"]) / med["raw_load_only"],
        "zoo_steps_over_raw_load_paired": paired(steps, t["raw_load_only"]),
        "zoo_overhead_only_over_raw_paired": paired(t["zoo_overhead_only"], t["raw"]),
        "zoo_steps_overhead_of_raw_e2e": (med["zoo_fetch"] + med["zoo_load_into"] - med["raw_load_only"]) / med["raw"],
        "zoo_overhead_only_over_raw": med["zoo_overhead_only"] / med["raw"],
    }
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["push", "seed", "measure"])
    p.add_argument("--weights")
    p.add_argument("--commit")
    p.add_argument("--files", default="{}", help="JSON: file name -> sha256, for the pinned fetch")
    p.add_argument("--reps", type=int, default=8)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--only", default="")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    if a.mode == "push":
        data = child_push()
    elif a.mode == "seed":
        data = child_seed()
    else:
        data = child_measure(a.weights, a.commit, json.loads(a.files), a.reps, a.warmup,
                             [s for s in a.only.split(",") if s] or None)
    with open(a.out, "w") as f:
        json.dump(data, f)


if __name__ == "__main__":
    main()
