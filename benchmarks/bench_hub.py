"""The local hub (``zoo.hubserver.LocalHub``, served from the orchestrator process) under the real client.

* push: ``HfApi().upload_file`` of a 100 MB file of random bytes (new bytes every time, so nothing is
  deduplicated); the client hashes the file (sha256, for the LFS oid) and uploads it in one PUT.
  Also ``zoo.push_to_hub`` of a freshly initialised ``bench_resnet50`` (save_pretrained, hashing,
  create_repo, card check, upload): the whole user-facing push, interleaved with
  ``timm.models.push_to_hf_hub(model, ..., safe_serialization=True)`` of the same kind of model.
* pull: ``hf_hub_download`` of each of those files into an empty cache folder.
* small files: ``hf_hub_download`` of a cached 1 KB file, as the client does by default online (one
  HEAD request per call to check for a newer commit), and with ``local_files_only=True`` (no request).

Throughputs are MB/s with MB = 10^6 bytes.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import time

log = logging.getLogger("bench.hub")

BLOB_REPO = "zoo-bench/blobs"
SIZE = 100_000_000


def child_hub(work: str, reps: int, push_reps: int, small_seconds: float) -> dict:
    import timm
    import torch
    from huggingface_hub import HfApi, hf_hub_download

    import zoo

    api = HfApi()
    api.create_repo(BLOB_REPO, exist_ok=True)
    uploads, downloads, calls = [], [], []
    tag = os.urandom(4).hex()
    for r in range(reps):
        path = os.path.join(work, f"blob-{r}.bin")
        with open(path, "wb") as f:
            f.write(os.urandom(SIZE))
        name = f"blob-{tag}-{r}.bin"
        t0m, t0 = time.monotonic(), time.perf_counter()
        api.upload_file(path_or_fileobj=path, path_in_repo=name, repo_id=BLOB_REPO)
        uploads.append(time.perf_counter() - t0)
        calls.append({"side": "upload_file", "t0": t0m, "t1": time.monotonic()})
        os.unlink(path)
        with tempfile.TemporaryDirectory(dir=work) as cache:
            t0m, t0 = time.monotonic(), time.perf_counter()
            got = hf_hub_download(BLOB_REPO, name, cache_dir=cache)
            downloads.append(time.perf_counter() - t0)
            calls.append({"side": "hf_hub_download", "t0": t0m, "t1": time.monotonic()})
            assert os.path.getsize(got) == SIZE
    pushes: dict[str, list[float]] = {"zoo_push_to_hub": [], "timm_push_to_hf_hub": []}
    push_bytes = 0
    for r in range(push_reps):
        for side in list(pushes)[r % 2:] + list(pushes)[:r % 2]:
            torch.manual_seed(100 + r)
            model = zoo.create("bench_resnet50")
            push_bytes = sum(t.numel() * t.element_size() for t in model.state_dict().values())
            t0m, t0 = time.monotonic(), time.perf_counter()
            if side == "zoo_push_to_hub":
                zoo.push_to_hub(model, f"zoo-bench/push-{tag}-{r}")
            else:
                timm.models.push_to_hf_hub(model, f"zoo-bench/timm-push-{tag}-{r}", safe_serialization=True)
            pushes[side].append(time.perf_counter() - t0)
            calls.append({"side": side, "t0": t0m, "t1": time.monotonic()})
            del model
    # small cached file: default online behaviour, then local_files_only
    api.upload_file(path_or_fileobj=b"{" + b'"x": 1, ' * 120 + b'"y": 2}', path_in_repo="small.json", repo_id=BLOB_REPO)
    hf_hub_download(BLOB_REPO, "small.json")
    small = {}
    for mode, kwargs in (("online_default", {}), ("local_files_only", {"local_files_only": True})):
        for _ in range(5):  # warm-up
            hf_hub_download(BLOB_REPO, "small.json", **kwargs)
        n, t0m, t0 = 0, time.monotonic(), time.perf_counter()
        while time.perf_counter() - t0 < small_seconds:
            hf_hub_download(BLOB_REPO, "small.json", **kwargs)
            n += 1
        dt = time.perf_counter() - t0
        calls.append({"side": f"small_{mode}", "t0": t0m, "t1": time.monotonic()})
        small[mode] = {"calls": n, "seconds": dt}
    return {"uploads": uploads, "downloads": downloads, "pushes": pushes, "push_bytes": push_bytes,
            "small": small, "calls": calls}


def run(work, hub, reps: int = 3, push_reps: int = 2, small_seconds: float = 3.0) -> dict:
    from common import BENCH_SITE, attribute, hub_env, run_child, summary

    env = hub_env(work, hub.url, cache="hf-cache-hubbench", zoo_cache="zoo-cache-hubbench", pythonpath=[BENCH_SITE])
    raw = run_child("bench_hub.py", ["--work", str(work), "--reps", str(reps), "--push-reps", str(push_reps),
                                     "--small-seconds", str(small_seconds)], env, "hub benchmark")
    req = attribute(hub, raw["calls"])
    mb = SIZE / 1e6
    out = {
        "upload_file": {"time": summary(raw["uploads"]), "mb": mb},
        "hf_hub_download": {"time": summary(raw["downloads"]), "mb": mb},
        "zoo_push_to_hub": {"time": summary(raw["pushes"]["zoo_push_to_hub"]), "mb": raw["push_bytes"] / 1e6},
        "timm_push_to_hf_hub": {"time": summary(raw["pushes"]["timm_push_to_hf_hub"]), "mb": raw["push_bytes"] / 1e6},
        "small": {}, "requests": req,
    }
    for k in ("upload_file", "hf_hub_download", "zoo_push_to_hub", "timm_push_to_hf_hub"):
        out[k]["mb_per_s"] = out[k]["mb"] / out[k]["time"]["median"]
    for mode, d in raw["small"].items():
        out["small"][mode] = {**d, "rps": d["calls"] / d["seconds"],
                              "requests_per_call": req[f"small_{mode}"]["requests"] / max(1, d["calls"])}
    out["zoo_push_over_timm_push"] = out["zoo_push_to_hub"]["time"]["median"] / out["timm_push_to_hf_hub"]["time"]["median"]
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--work", required=True)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--push-reps", type=int, default=2)
    p.add_argument("--small-seconds", type=float, default=3.0)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    logging.basicConfig(level=logging.WARNING)
    data = child_hub(a.work, a.reps, a.push_reps, a.small_seconds)
    with open(a.out, "w") as f:
        json.dump(data, f)


if __name__ == "__main__":
    main()
