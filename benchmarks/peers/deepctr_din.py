"""Deep Interest Network side by side: ``zoo_din`` (plugins/din) vs ``deepctr_torch.models.DIN`` (deepctr-torch).

Both sides train on the SAME arrays: the orchestrator's ``prep`` side exports ``tabular_ctr``'s ``mode="ctr",
dataset="movielens"`` split (MovieLens-100k impressions, each user's last 10 ratings test, histories of the last 20
movies, dense age and gender) to ``data.npz``; each side reads it back. Round r trains both sides at seed r:

* ours: ``zoo_din.din(preset="cpu")`` (item embedding 16, attention unit [36] with Dice, MLP 200-80 with Dice, the
  mini-batch aware L2 of 0.01) under the task's own loop ``train_ctr`` (Adam 1e-3, batches of 256, mean BCE);
* peer: ``DIN`` on a ``SparseFeat("item_id", 16)``, the history ``VarLenSparseFeat`` sharing its embedding
  (``embedding_name="item_id"``, ``length_name`` = the history length) and two ``DenseFeat`` (age, gender), with
  ``att_hidden_size=(36,)``, ``att_activation="Dice"``, unnormalised weights, ``dnn_hidden_units=(200, 80)``,
  ``init_std=0.01`` (our embedding init), trained by the package's own ``compile("adam", "binary_crossentropy")`` +
  ``fit(batch_size=256, shuffle=True)`` (Adam at its default 1e-3).

The test logits of both sides are scored by the same code (the task's ``auc``, ``logloss`` and ``gauc``); training
seconds per epoch are timed around each side's training loop alone. Differences the APIs leave (stated in the
section): see ``DIFFERENCES``.

    .venv/bin/python benchmarks/peers/deepctr_din.py            # 3 rounds (seeds 0-2), 2 epochs (the task's)
    .venv/bin/python benchmarks/peers/deepctr_din.py --quick    # smoke run: 1 round, 1 epoch, 20,000 train rows
"""
from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.deepctr_din")
PEER = "deepctr-torch"
PEER_REQ = ["deepctr-torch==0.3.0", "scikit-learn", "tqdm", "numpy", "requests"]  # requests: imported, not declared
SETTINGS = {"dataset": "movielens", "dim": 16, "att_hidden": 36, "hidden": [200, 80], "epochs": 2, "batch": 256,
            "lr": 1e-3, "train_rows": None}
QUICK = {"epochs": 1, "train_rows": 20000}
DIFFERENCES = [
    "the peer's DNN cannot build Dice (its `DNN` defaults to `dice_dim=3` and asserts on the 2-D MLP input), so after "
    "construction its two MLP activations are replaced by the package's own `Dice(units, dim=2)` (before `compile`, so "
    "Adam sees them)",
    "the package's Dice normalises with an affine BatchNorm (learned scale and shift: the whole parameter difference), "
    "ours without; in the attention "
    "unit its Dice statistics include the padded history positions, ours only the valid ones",
    "regularisation: ours the paper's mini-batch aware L2 (0.01, Eqs. 4-6) on the item embedding; the peer its default "
    "`l2_reg_embedding=1e-6`, a plain L2 on the whole table added to a summed (not averaged) batch BCE",
    "initialisation: both embeddings N(0, 0.01); the peer's MLP and attention weights N(0, 1e-4) (its `DNN` default), "
    "ours PyTorch's default uniform; the peer's output layer has no bias before a separate learned bias",
    "batch order: each side shuffles with its own generator at the round's seed",
]


def side_prep(inp: dict, _args) -> dict:
    import numpy as np

    from zoo_task_tabular_ctr.ctr_data import ctr_data

    d = ctr_data(inp["settings"]["dataset"])
    arrays = {}
    for part in ("train", "test"):
        imp = getattr(d, part)
        for k in ("hist_ids", "hist_mask", "ad_id", "dense", "y", "user", "time"):
            arrays[f"{part}_{k}"] = getattr(imp, k).numpy()
    rows = inp["settings"]["train_rows"]
    if rows:
        arrays.update({k: v[:rows] for k, v in arrays.items() if k.startswith("train_")})
    np.savez(Path(inp["dir"]) / "data.npz", **arrays, n_items=d.n_items, n_dense=d.n_dense)
    return {"n_train": int(len(arrays["train_y"])), "n_test": int(len(arrays["test_y"])), "n_items": int(d.n_items)}


def side_ours(inp: dict, _args) -> dict:
    import numpy as np
    import torch

    from zoo_din.model import din
    from zoo_task_tabular_ctr.ctr_data import CTRData, Impressions
    from zoo_task_tabular_ctr.ctr_mode import predict_ctr, train_ctr

    t_start = time.perf_counter()
    torch.set_num_threads(1)
    s, seed, folder = inp["settings"], inp["seed"], Path(inp["dir"])
    data = np.load(folder / "data.npz")
    keys = ("hist_ids", "hist_mask", "ad_id", "dense", "y", "user", "time")
    parts = {p: Impressions(*(torch.as_tensor(data[f"{p}_{k}"]) for k in keys)) for p in ("train", "test")}
    d = CTRData(s["dataset"], parts["train"], parts["test"], int(data["n_items"]), int(data["n_dense"]))
    torch.manual_seed(seed)
    net = din(preset="cpu", n_items=d.n_items, n_dense=d.n_dense, dim=s["dim"], att_hidden=s["att_hidden"],
              hidden=tuple(s["hidden"]))
    fit = train_ctr(net, d, seed=seed, epochs=s["epochs"], batch=s["batch"], lr=s["lr"])
    z = predict_ctr(net, d.test).double().numpy()
    np.save(folder / f"logit-ours-{seed}.npy", z)
    params = sum(p.numel() for p in net.parameters())
    return {"seconds": time.perf_counter() - t_start, "train_s": fit["train_seconds"], "params": params}


def side_peer(inp: dict, _args) -> dict:
    import os

    # importing deepctr_torch starts a thread asking PyPI for a newer version: point it at a closed local port
    os.environ.update(HTTPS_PROXY="http://127.0.0.1:9", HTTP_PROXY="http://127.0.0.1:9")
    os.environ.pop("NO_PROXY", None)
    os.environ.pop("no_proxy", None)
    import numpy as np
    import torch
    from deepctr_torch.inputs import DenseFeat, SparseFeat, VarLenSparseFeat
    from deepctr_torch.layers.activation import Dice
    from deepctr_torch.models import DIN

    t_start = time.perf_counter()
    torch.set_num_threads(1)
    s, seed, folder = inp["settings"], inp["seed"], Path(inp["dir"])
    data = np.load(folder / "data.npz")
    n_items, dim, length = int(data["n_items"]), s["dim"], data["train_hist_ids"].shape[1]
    columns = [SparseFeat("item_id", vocabulary_size=n_items, embedding_dim=dim),
               DenseFeat("age", 1), DenseFeat("gender", 1),
               VarLenSparseFeat(SparseFeat("hist_item_id", vocabulary_size=n_items, embedding_dim=dim,
                                           embedding_name="item_id"), maxlen=length, length_name="seq_length")]

    def inputs(part: str) -> dict:
        dense = data[f"{part}_dense"]
        return {"item_id": data[f"{part}_ad_id"], "hist_item_id": data[f"{part}_hist_ids"],
                "seq_length": data[f"{part}_hist_mask"].sum(1), "age": dense[:, 0], "gender": dense[:, 1]}

    torch.manual_seed(seed)
    model = DIN(columns, ["item_id"], dnn_hidden_units=tuple(s["hidden"]), dnn_activation="prelu",
                att_hidden_size=(s["att_hidden"],), att_activation="Dice", att_weight_normalization=False,
                init_std=0.01, seed=seed, device="cpu")
    # the package's DNN builds Dice with dice_dim=3, which asserts on the MLP's 2-D input: its own 2-D Dice instead
    model.dnn.activation_layers = torch.nn.ModuleList(Dice(h, dim=2) for h in s["hidden"])
    model.compile(torch.optim.Adam(model.parameters(), lr=s["lr"]), "binary_crossentropy")
    t0 = time.perf_counter()
    model.fit(inputs("train"), data["train_y"].astype(np.float32), batch_size=s["batch"], epochs=s["epochs"],
              verbose=0, shuffle=True)
    train_s = time.perf_counter() - t0
    p = np.asarray(model.predict(inputs("test"), batch_size=4096), dtype=np.float64).reshape(-1)
    p = np.clip(p, 1e-12, 1 - 1e-12)
    np.save(folder / f"logit-peer-{seed}.npy", np.log(p) - np.log1p(-p))
    params = sum(q.numel() for q in model.parameters())
    return {"seconds": time.perf_counter() - t_start, "train_s": train_s, "params": params}


def side_score(inp: dict, _args) -> dict:
    import numpy as np

    from zoo_task_tabular_ctr import metrics as M
    from zoo_task_tabular_ctr.ctr_mode import gauc

    folder = Path(inp["dir"])
    data = np.load(folder / "data.npz")
    y, user = data["test_y"].astype(np.float64), data["test_user"]
    out = {}
    for side in ("ours", "peer"):
        for seed in inp["seeds"]:
            z = np.load(folder / f"logit-{side}-{seed}.npy")
            out[f"{side}-{seed}"] = {"auc": M.auc(y, z), "logloss": M.logloss(y, z), "gauc": gauc(y, z, user)}
    return out


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env("deepctr_torch", PEER_REQ)
    rounds = 1 if a.quick else a.rounds
    s = dict(SETTINGS, **(QUICK if a.quick else {}))
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo-peer-din-") as tmp:
        prep, runs, scores = peerlib.prep_rounds_score(__file__, peer_py, {"dir": tmp, "settings": s}, Path(tmp), rounds)
    log.info("measured in %.0f s", time.perf_counter() - t_start)
    o, p = runs["ours"], runs["peer"]
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["zoo-din", "zoo-task-tabular-ctr", "torch"])
    ver_peer = peerlib.versions(peer_py, [PEER, "torch"])
    sp, seeds = peerlib.spread, list(range(rounds))

    def metric(side: str, k: str) -> list[float]:
        return [scores[f"{side}-{r}"][k] for r in seeds]

    def row(label: str, xo: list[float], xp: list[float], spec: str) -> str:
        return f"| {label} | {sp(xo, spec)} | {sp(xp, spec)} | {peerlib.paired(xo, xp):.3f} |"

    per_epoch = {side: [r["train_s"] / s["epochs"] for r in runs[side]] for side in ("ours", "peer")}
    lines = [f"### DIN: din vs deepctr-torch {ver_peer[PEER]}", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"tabular_ctr `mode=\"ctr\", dataset=\"{s['dataset']}\"`, the same exported arrays on both sides "
             f"({prep['n_train']:,} training and {prep['n_test']:,} test impressions, {prep['n_items']:,} item ids); "
             f"embedding {s['dim']}, attention unit [{s['att_hidden']}] Dice, MLP {'-'.join(map(str, s['hidden']))} "
             f"Dice, Adam {s['lr']:g}, batches of {s['batch']}, {s['epochs']} epoch(s), seeds {seeds} (one per round, "
             f"sides interleaved); parameters: ours {o[0]['params']:,}, peer {p[0]['params']:,}. Test metrics from the "
             "same scoring code on each side's logits; median (min–max) over seeds; ours / peer = the median over seeds of "
             "the per-seed ratio.", "",
             "| | din (ours) | deepctr-torch DIN | ours / peer (paired) |", "|---|---|---|---|",
             row("test AUC", metric("ours", "auc"), metric("peer", "auc"), ".4f"),
             row("test GAUC", metric("ours", "gauc"), metric("peer", "gauc"), ".4f"),
             row("test logloss", metric("ours", "logloss"), metric("peer", "logloss"), ".4f"),
             row("training s / epoch", per_epoch["ours"], per_epoch["peer"], ".1f"),
             row("peak RSS MB", [r["_process"]["peak_rss_mb"] for r in o], [r["_process"]["peak_rss_mb"] for r in p],
                 ".0f"),
             "", "Differences the APIs leave: " + "; ".join(DIFFERENCES) + "."]
    md = "\n".join(lines)
    peerlib.write_section("deepctr_din", md)
    print(md)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds 0..rounds-1)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, 1 epoch, 20,000 training impressions")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer, "score": side_score}, orchestrate,
                      add_args)
