"""Numerical-feature embeddings side by side: ``zoo_tabular_num_embed`` (tabular-num-embed) vs
``rtdl_num_embeddings``, the paper authors' package.

1. The same function for the same parameters: the zoo side fits its 32 quantile bins on the training part of
   ``tabular_ctr``'s ``gbdt_friendly`` table and draws an MLP-PLR embedding (16 frequencies, sigma 0.1, d 16); the
   peer builds ``PiecewiseLinearEncoding(bins)`` with those bins and ``PeriodicEmbeddings(8, 16, n_frequencies=16,
   frequency_init_scale=0.1, lite=False)`` with the zoo frequencies and linear weights copied in (the package orders
   the periodic features [cos, sin], ours [sin, cos]: the weight rows are swapped accordingly), and both embed the
   test rows. Reported: the largest |difference|, and that of ``compute_bins(x_train, n_bins=32)`` against our edges.
2. The same accuracy: each round r trains an MLP-PLR on gbdt_friendly with the side's own embedding module (its own
   initialisation at seed r) under one protocol written here in plain torch (the task's: AdamW 1e-3, weight decay
   1e-5, batches of 256, at most 100 epochs, early stopping on the validation MSE with patience 16, best epoch
   restored; backbone Linear-ReLU 128 x 2): test RMSE and training seconds, paired per round.

    .venv/bin/python benchmarks/peers/rtdl_num_embeddings.py            # 3 rounds
    .venv/bin/python benchmarks/peers/rtdl_num_embeddings.py --quick    # smoke run: 1 round, 3 epochs
"""
from __future__ import annotations

import json
import logging
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.rtdl_num_embeddings")
PEER = "rtdl_num_embeddings"
PEER_REQ = ["rtdl_num_embeddings==0.0.12", "numpy"]
SETTINGS = {"dataset": "gbdt_friendly", "n_bins": 32, "k": 16, "sigma": 0.1, "d": 16, "epochs": 100, "patience": 16}
QUICK = {"epochs": 3}


def side_prep(inp: dict, _args) -> dict:
    import numpy as np
    import torch

    from zoo_tabular_num_embed.model import PeriodicEmbeddings, PiecewiseLinearEncoding, quantile_edges
    from zoo_task_tabular_ctr.tables import load_table

    torch.set_num_threads(1)
    s, folder = inp["settings"], Path(inp["dir"])
    t = load_table(s["dataset"])
    arrays = {f"{p}_{k}": getattr(getattr(t, p), k).numpy() for p in ("train", "val", "test") for k in ("x_num", "y")}
    edges = quantile_edges(arrays["train_x_num"].astype(np.float64), s["n_bins"])
    ple = PiecewiseLinearEncoding(t.n_num, s["n_bins"])
    ple.set_edges(edges)
    torch.manual_seed(0)
    plr = PeriodicEmbeddings(t.n_num, s["k"], s["sigma"], s["d"])
    x = torch.as_tensor(arrays["test_x_num"])
    with torch.no_grad():
        active = torch.arange(s["n_bins"])[None, :] < ple.n_active[:, None]
        out_ple, out_plr = ple(x)[:, active].numpy(), plr(x).numpy()
    np.savez(folder / "data.npz", **arrays, y_std=t.y_std, out_ple=out_ple, out_plr=out_plr,
             freq=plr.frequencies.detach().numpy(), weight=plr.weight.detach().numpy(),
             bias=plr.bias.detach().numpy(), **{f"edges_{j}": e for j, e in enumerate(edges)})
    return {"n_num": t.n_num}


def _train(emb, data, s: dict, seed: int) -> dict:
    """The task's table protocol in plain torch, for an embedding module ``emb``: (B, n) -> (B, n, d)."""
    import copy

    import torch
    from torch import nn

    n = data["train_x_num"].shape[1]
    torch.manual_seed(seed)
    net = nn.Sequential(nn.Linear(n * s["d"], 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 1))
    model = nn.ModuleDict({"emb": emb, "mlp": net})
    f = lambda x: model["mlp"](model["emb"](x).flatten(1))[:, 0]  # noqa: E731
    xs = {p: torch.as_tensor(data[f"{p}_x_num"]) for p in ("train", "val", "test")}
    ys = {p: torch.as_tensor(data[f"{p}_y"]) for p in ("train", "val", "test")}
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-5)
    g = torch.Generator().manual_seed(seed)
    best, state, bad, t0 = float("inf"), copy.deepcopy(model.state_dict()), 0, time.perf_counter()
    for _ in range(s["epochs"]):
        model.train()
        perm = torch.randperm(len(ys["train"]), generator=g)
        for i in range(0, len(perm), 256):
            idx = perm[i:i + 256]
            loss = nn.functional.mse_loss(f(xs["train"][idx]), ys["train"][idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = float(nn.functional.mse_loss(f(xs["val"]), ys["val"]))
        if val < best:
            best, state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= s["patience"]:
                break
    train_s = time.perf_counter() - t0
    model.load_state_dict(state)
    with torch.no_grad():
        rmse = float(((f(xs["test"]) - ys["test"]) ** 2).mean().sqrt()) * float(data["y_std"])
    return {"rmse": rmse, "train_s": train_s}


def side_ours(inp: dict, _args) -> dict:
    import numpy as np
    import torch

    from zoo_tabular_num_embed.model import PeriodicEmbeddings

    torch.set_num_threads(1)
    s, data = inp["settings"], dict(np.load(Path(inp["dir"]) / "data.npz"))
    torch.manual_seed(inp["seed"])
    emb = PeriodicEmbeddings(data["train_x_num"].shape[1], s["k"], s["sigma"], s["d"])
    return _train(emb, data, s, inp["seed"])


def side_peer(inp: dict, _args) -> dict:
    import sys

    here = str(Path(__file__).resolve().parent)  # this script has the package's name: keep it off the import path
    sys.path[:] = [p for p in sys.path if p not in ("", here) and Path(p or ".").resolve() != Path(here)]
    import numpy as np
    import torch
    from rtdl_num_embeddings import PeriodicEmbeddings, PiecewiseLinearEncoding, compute_bins

    torch.set_num_threads(1)
    s, data = inp["settings"], dict(np.load(Path(inp["dir"]) / "data.npz"))
    n = data["train_x_num"].shape[1]
    edges = [torch.as_tensor(data[f"edges_{j}"], dtype=torch.float32) for j in range(n)]
    x = torch.as_tensor(data["test_x_num"])
    ple = PiecewiseLinearEncoding(edges)
    plr = PeriodicEmbeddings(n, s["d"], n_frequencies=s["k"], frequency_init_scale=s["sigma"], lite=False)
    k = s["k"]
    w = torch.as_tensor(data["weight"])
    with torch.no_grad():
        plr.periodic.weight.copy_(torch.as_tensor(data["freq"]))
        plr.linear.weight.copy_(torch.cat([w[:, k:], w[:, :k]], dim=1))  # [cos, sin] rows
        plr.linear.bias.copy_(torch.as_tensor(data["bias"]))
        d_ple = float(np.abs(ple(x).numpy() - data["out_ple"]).max())
        d_plr = float(np.abs(plr(x).numpy() - data["out_plr"]).max())
    bins = compute_bins(torch.as_tensor(data["train_x_num"]), n_bins=s["n_bins"])
    d_bins = max(float(np.abs(b.double().numpy() - data[f"edges_{j}"]).max()) if len(b) == len(data[f"edges_{j}"])
                 else float("inf") for j, b in enumerate(bins))
    torch.manual_seed(inp["seed"])
    emb = PeriodicEmbeddings(n, s["d"], n_frequencies=k, frequency_init_scale=s["sigma"], lite=False)
    return {**_train(emb, data, s, inp["seed"]), "diff_ple": d_ple, "diff_plr": d_plr, "diff_bins": d_bins}


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env("rtdl_num_embeddings", PEER_REQ)
    rounds = 1 if a.quick else a.rounds
    s = dict(SETTINGS, **(QUICK if a.quick else {}))
    with tempfile.TemporaryDirectory(prefix="zoo-peer-rtdl-") as tmp:
        folder = Path(tmp)
        f = folder / "prep.json"
        f.write_text(json.dumps({"dir": tmp, "settings": s}))
        peerlib.run_side(peerlib.OURS_PYTHON, __file__, "prep", f)

        def side(python: str, name: str):
            def run(r: int) -> dict:
                g = folder / f"in-{name}-{r}.json"
                g.write_text(json.dumps({"dir": tmp, "settings": s, "seed": r}))
                out = peerlib.run_side(python, __file__, name, g)
                log.info("round %d %s: rmse %.4f, %.1f s training", r, name, out["rmse"], out["train_s"])
                return out
            return run

        runs = peerlib.interleave({"ours": side(peerlib.OURS_PYTHON, "ours"), "peer": side(peer_py, "peer")}, rounds)
    o, p = runs["ours"], runs["peer"]
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["zoo-tabular-num-embed", "torch"])
    ver_peer = peerlib.versions(peer_py, [PEER, "torch"])
    sp = peerlib.spread
    lines = [f"### Numerical embeddings: tabular-num-embed vs rtdl_num_embeddings {ver_peer[PEER]}", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"Same parameters, same function ({s['dataset']} test rows, 8 features): largest |difference| of the "
             f"PLE encodings {max(r['diff_ple'] for r in p):.2e}, of the PLR embeddings {max(r['diff_plr'] for r in p):.2e}; "
             f"`compute_bins(x_train, n_bins={s['n_bins']})` vs our quantile edges {max(r['diff_bins'] for r in p):.2e}.",
             "", f"MLP-PLR (k {s['k']}, sigma {s['sigma']}, d {s['d']}, each side's own initialisation), {rounds} round(s), "
             f"at most {s['epochs']} epochs:", "",
             "| | ours | rtdl_num_embeddings | ours / peer (paired) |", "|---|---|---|---|",
             f"| test RMSE | {sp([r['rmse'] for r in o], '.4f')} | {sp([r['rmse'] for r in p], '.4f')} | "
             f"{peerlib.paired([r['rmse'] for r in o], [r['rmse'] for r in p]):.3f} |",
             f"| training s | {sp([r['train_s'] for r in o], '.1f')} | {sp([r['train_s'] for r in p], '.1f')} | "
             f"{peerlib.paired([r['train_s'] for r in o], [r['train_s'] for r in p]):.3f} |"]
    md = "\n".join(lines)
    peerlib.write_section("rtdl_num_embeddings", md)
    print(md)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, 3 epochs")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer}, orchestrate, add_args)
