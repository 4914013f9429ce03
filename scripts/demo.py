"""The main job, end to end, offline: `./dev demo`.

1. start a local Hugging Face-compatible hub (`zoo hub serve`) on a free port;
2. list plugins and pretrained tags; load one from the snapshot its plugin ships (no hub involved);
3. retrain that tag with its recipe and push it (`zoo train NAME.TAG --push`): the recipe is deterministic on
   CPU, so the pushed weights' sha256 must equal the one the plugin pins (checked);
4. publish every shipped snapshot to the hub (`zoo hub publish --org demo`: one commit per repo, Hub cache filled);
5. stop the hub; in a fresh process with HF_HUB_OFFLINE=1 and the endpoint on a dead port, load the published
   repos (`hf-hub:demo/...`) from the Hub cache alone, evaluate them on their task next to the task's baselines,
   and print one table.

Everything lives under demo-out/ (hub data, Hub cache); nothing touches the network.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "demo-out"
TRAIN = "mrl_digits_cnn.digits"  # about 20 s of CPU
EVALUATE = ["demo/mrl-digits-cnn", "demo/derf-vit-digits"]  # published below, evaluated offline
TOKEN = "zoo-demo-token"

EVAL = r'''
import json, sys, time, torch, zoo
rows = {}
for name in sys.argv[1:]:
    t = time.perf_counter()
    model = zoo.create(f"hf-hub:{name}", pretrained=True)
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
    # stderr (progress lines, errors) goes straight to the terminal; stdout is also returned to the caller
    proc = subprocess.run([sys.executable, "-m", "zoo.cli", *args], env=env, text=True, stdout=subprocess.PIPE)
    print(proc.stdout, end="", flush=True)
    if proc.returncode != 0:
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
    hub = subprocess.Popen([sys.executable, "-m", "zoo.cli", "hub", "serve", "--root", str(OUT / "hub"), "--port", str(port),
                            "--token", TOKEN, "--log-level", "WARNING"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        print(hub.stdout.readline(), end="")  # waits until the server is listening
        zoo_cmd("plugins", env=env)
        zoo_cmd("list", "--pretrained", env=env)
        shipped = json.loads(zoo_cmd("create", TRAIN, env=env))
        print(f"# loaded from the plugin's own snapshot: source={shipped['source']}, sha256 {shipped['sha256'][:16]}")
        out = zoo_cmd("train", TRAIN, "--push", env=env)
        trained = json.JSONDecoder().raw_decode(out)[0]["files"]["model.safetensors"]  # the JSON block comes first
        if trained != shipped["sha256"]:
            raise SystemExit(f"the recipe gave sha256 {trained}, the plugin pins {shipped['sha256']}")
        print(f"# the recipe reproduced the pinned weights byte for byte (sha256 {trained[:16]})")
        zoo_cmd("hub", "publish", "--org", "demo", env=env)
    finally:
        hub.terminate()
        hub.wait(10)
    offline = dict(env, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    print("\n# hub stopped; a fresh process with HF_HUB_OFFLINE=1 and HF_ENDPOINT on a dead port:")
    print(f"$ python -c 'zoo.evaluate(zoo.create(\"hf-hub:REPO\", pretrained=True))' for {', '.join(EVALUATE)}")
    proc = subprocess.run([sys.executable, "-c", EVAL, *EVALUATE], env=offline, text=True, capture_output=True)
    if proc.returncode != 0:
        print(proc.stderr, file=sys.stderr)
        return 1
    from zoo.task import format_table

    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    print(format_table(rows))
    zoo_cmd("site", "build", str(OUT / "site"), env=offline)
    print(f"# the catalogue: open file://{OUT / 'site' / 'index.html'} (or `python -m http.server -d {OUT / 'site'}`)")
    print(f"\ndemo finished in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
