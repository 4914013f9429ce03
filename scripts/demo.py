"""The main job, end to end, offline: `./dev demo`.

1. start a local Hugging Face-compatible hub (`zoo hub serve`) on a free port;
2. list plugins and models;
3. train the pretrained tags with their recipes and push them to the hub (`zoo train NAME.TAG --push`),
   then create them once through the hub (`zoo create NAME.TAG`: pinned, verified, cached);
4. stop the hub; in a fresh process with HF_HUB_OFFLINE=1 and the endpoint on a dead port, create them again with
   pretrained=True from the cache alone, evaluate them on their task next to the task's baselines,
   and print one table.

Everything lives under demo-out/ (hub data, Hub cache); nothing touches the network.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo-out"
TAGS = ["mrl_digits_cnn.digits", "derf_vit.digits"]
TOKEN = "zoo-demo-token"

EVAL = r'''
import json, sys, time, torch, zoo
rows = {}
for name in sys.argv[1:]:
    t = time.perf_counter()
    model = zoo.create(name, pretrained=True)
    load_s = time.perf_counter() - t
    result = zoo.evaluate(model)
    rows[name] = {"accuracy": result.metrics["accuracy"], "commit": model.zoo.commit[:12],
                  "sha256": model.zoo.sha256[:12], "load_s": round(load_s, 3)}
    for base, m in result.baselines.items():
        rows[f"  baseline {base} (same steps)"] = {"accuracy": m["accuracy"]}
print(json.dumps(rows))
'''


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def zoo_cmd(*args: str, env: dict) -> str:
    print(f"\n$ zoo {' '.join(args)}", flush=True)
    proc = subprocess.run([sys.executable, "-m", "zoo.cli", *args], env=env, text=True, capture_output=True)
    print(proc.stdout, end="")
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        raise SystemExit(f"zoo {' '.join(args)} failed ({proc.returncode})")
    return proc.stdout


def main() -> int:
    t0 = time.perf_counter()
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir()
    port = free_port()
    env = dict(os.environ, HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_TOKEN=TOKEN, HF_HOME=str(OUT / "hf-home"),
               HF_HUB_CACHE=str(OUT / "hf-cache"), HF_HUB_DISABLE_XET="1", HF_HUB_DISABLE_TELEMETRY="1",
               ZOO_CACHE_DIR=str(OUT / "zoo-cache"), PYTHONUNBUFFERED="1")
    env.pop("HF_HUB_OFFLINE", None)
    print(f"$ zoo hub serve --root {OUT / 'hub'} --port {port}")
    hub = subprocess.Popen([sys.executable, "-m", "zoo.cli", "hub", "serve", "--root", str(OUT / "hub"),
                            "--port", str(port), "--token", TOKEN], env=env, stdout=subprocess.PIPE, text=True)
    try:
        print(hub.stdout.readline(), end="")  # waits until the server is listening
        zoo_cmd("plugins", env=env)
        zoo_cmd("list", "--pretrained", env=env)
        for tag in TAGS:
            zoo_cmd("train", tag, "--push", env=env)
        for tag in TAGS:  # pull once through the hub: resolves main to the pushed commit and fills the cache
            zoo_cmd("create", tag, env=env)
    finally:
        hub.terminate()
        hub.wait(10)
    offline = dict(env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    print("\n# hub stopped; a fresh process with HF_HUB_OFFLINE=1 and HF_ENDPOINT on a dead port:")
    proc = subprocess.run([sys.executable, "-c", EVAL, *TAGS], env=offline, text=True, capture_output=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 1
    import json

    from zoo.task import format_table

    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    print(format_table(rows))
    print(f"\ndemo finished in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
