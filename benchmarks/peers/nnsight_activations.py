"""Activation hooks side by side: ``zoo.activations`` vs nnsight's ``NNsight(model).trace`` on the same model.

The model is zoo's reference GPT (``zoo_nn.gpt.GPT``, the char_lm backbone: 4 pre-norm blocks, width 128, 4 heads,
vocabulary 97, GPT-2 initialisation, seed r), built once by the zoo side and saved as safetensors; the peer side
imports the same ``zoo_nn/gpt.py`` source (torch only) from this checkout and loads those weights. Inputs: 512 seeded
token sequences of length 64. Layers: every block's output (the residual stream), every block's attention output,
every MLP's hidden activation (``blocks.i.mlp.hidden``), the final norm and the logits (the model's output).
Both sides keep the full (N, T, D) activations, in batches of 64, in eval mode without gradients.

Reported: the largest absolute difference per layer family (the same activations must come back: exactly, as both
read the same forward pass) and the seconds each side takes to collect them (one thread, paired per round).

    .venv/bin/python benchmarks/peers/nnsight_activations.py            # 3 rounds
    .venv/bin/python benchmarks/peers/nnsight_activations.py --quick    # smoke run: 1 round, 64 sequences
"""
from __future__ import annotations

import logging
import sys
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.nnsight_activations")
PEER = "nnsight"
PEER_REQ = ["nnsight==0.8.1"]
ARCH = {"vocab_size": 97, "dim": 128, "depth": 4, "heads": 4, "block_size": 64}
SETTINGS = {"n": 512, "t": 64, "batch": 64}
QUICK = {"n": 64}


def layer_names(depth: int) -> list[str]:
    # in the order the forward pass reaches them (nnsight's trace asks for them in that order)
    return [n for i in range(depth) for n in (f"blocks.{i}.attn", f"blocks.{i}.mlp.hidden", f"blocks.{i}")] + [
        "norm", "output"]


def _gpt(seed: int):
    import torch

    sys.path.insert(0, str(peerlib.ROOT / "nn"))  # zoo_nn/gpt.py imports only torch: both environments can run it
    from zoo_nn.gpt import GPT

    torch.manual_seed(seed)
    return GPT(**ARCH).eval()


def side_prep(inp: dict, _args) -> dict:
    import torch
    from safetensors.torch import save_file

    torch.set_num_threads(1)
    s, folder = inp["settings"], Path(inp["dir"])
    for r in inp["seeds"]:
        model = _gpt(r)
        save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(folder / f"gpt-{r}.safetensors"))
        g = torch.Generator().manual_seed(1000 + r)
        ids = torch.randint(0, ARCH["vocab_size"], (s["n"], s["t"]), generator=g)
        save_file({"ids": ids}, str(folder / f"ids-{r}.safetensors"))
    return {}


def _load(folder: Path, r: int):
    import torch
    from safetensors.torch import load_file

    torch.set_num_threads(1)
    model = _gpt(r)
    model.load_state_dict(load_file(str(folder / f"gpt-{r}.safetensors")), strict=True)
    return model, load_file(str(folder / f"ids-{r}.safetensors"))["ids"]


def _save(folder: Path, side: str, r: int, acts: dict) -> str:
    import numpy as np

    path = folder / f"acts-{side}-{r}.npz"
    np.savez(path, **{k.replace(".", "__"): v for k, v in acts.items()})
    return str(path)


def side_ours(inp: dict, _args) -> dict:
    import zoo

    folder, r, s = Path(inp["dir"]), inp["seed"], inp["settings"]
    model, ids = _load(folder, r)
    names = layer_names(ARCH["depth"])
    zoo.activations(model, ids[:2], layers=names)  # first-call overheads out of the timing
    t0 = time.perf_counter()
    acts = zoo.activations(model, ids, layers=names, batch_size=s["batch"])
    seconds = time.perf_counter() - t0
    return {"path": _save(folder, "ours", r, acts.layers), "seconds": seconds}


def side_peer(inp: dict, _args) -> dict:
    import numpy as np
    import torch
    from nnsight import NNsight

    folder, r, s = Path(inp["dir"]), inp["seed"], inp["settings"]
    model, ids = _load(folder, r)
    net = NNsight(model)
    names = layer_names(ARCH["depth"])

    def module(name: str):
        node = net
        for part in name.split("."):
            node = node[int(part)] if part.isdigit() else getattr(node, part)
        return node

    def collect(x) -> dict:
        saved: dict = {}  # filled inside the trace: nnsight runs the block's code in a frame of its own
        with torch.no_grad(), net.trace(x):
            for n in names:
                saved[n] = (net.output if n == "output" else module(n).output).save()
        return {n: getattr(v, "value", v) for n, v in saved.items()}  # nnsight < 0.5 wraps saved values

    collect(ids[:2])
    t0 = time.perf_counter()
    parts: dict[str, list] = {n: [] for n in names}
    for i in range(0, len(ids), s["batch"]):
        for n, v in collect(ids[i:i + s["batch"]]).items():
            v = v[0] if isinstance(v, tuple) else v
            parts[n].append(v.detach().float().numpy())
    acts = {n: np.concatenate(p) for n, p in parts.items()}
    seconds = time.perf_counter() - t0
    return {"path": _save(folder, "peer", r, acts), "seconds": seconds}


def compare(runs: dict[str, list[dict]]) -> dict:
    import numpy as np

    fam = lambda n: "output" if n == "output" else "norm" if n == "norm" else n.split(".", 2)[-1] if n.count(".") > 1 \
        else "block"  # noqa: E731
    diff: dict[str, float] = {}
    shapes: dict[str, list[int]] = {}
    for o, p in zip(runs["ours"], runs["peer"], strict=True):
        a, b = np.load(o["path"]), np.load(p["path"])
        if sorted(a.files) != sorted(b.files):
            raise RuntimeError(f"the sides kept different layers: {sorted(a.files)} vs {sorted(b.files)}")
        for k in a.files:
            if a[k].shape != b[k].shape:
                raise RuntimeError(f"{k}: ours {a[k].shape}, nnsight {b[k].shape}")
            f = fam(k.replace("__", "."))
            diff[f] = max(diff.get(f, 0.0), float(np.abs(a[k] - b[k]).max()))
            shapes[f] = list(a[k].shape)
    return {"diff": diff, "shapes": shapes}


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env("nnsight", PEER_REQ)
    rounds = 1 if a.quick else a.rounds
    s = dict(SETTINGS, **(QUICK if a.quick else {}))
    with tempfile.TemporaryDirectory(prefix="zoo-peer-nnsight-") as tmp:
        runs = peerlib.prep_and_rounds(__file__, peer_py, Path(tmp), s, rounds)
        cmp = compare(runs)
    so, sp = [r["seconds"] for r in runs["ours"]], [r["seconds"] for r in runs["peer"]]
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["torch", "zoo-core"])
    ver_peer = peerlib.versions(peer_py, [PEER, "torch"])
    lines = [f"### Activation hooks: `zoo.activations` vs nnsight {ver_peer[PEER]}", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"zoo's reference GPT ({ARCH['depth']} blocks, width {ARCH['dim']}, seed r) on {s['n']} sequences of "
             f"{s['t']} tokens, batches of {s['batch']}, {rounds} round(s); {len(layer_names(ARCH['depth']))} layers "
             "kept whole (N, T, D).", "",
             "| layer family | shape | largest \\|ours - nnsight\\| |", "|---|---|---|"]
    for f, d in cmp["diff"].items():
        lines.append(f"| {f} | {tuple(cmp['shapes'][f])} | {d:.1e} |")
    lines += ["", f"Seconds to collect them all: ours {peerlib.quartiles(so)}, nnsight {peerlib.quartiles(sp)} "
              f"(ours / peer paired {peerlib.paired(so, sp):.2f}x)."]
    md = "\n".join(lines)
    peerlib.write_section("nnsight_activations", md)
    print(md)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, 64 sequences")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer}, orchestrate, add_args)
