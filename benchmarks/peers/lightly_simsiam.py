"""SimSiam side by side: zoo's ``simsiam_cnn`` (plugins/simsiam) vs lightly's SimSiam heads and loss.

Same data, encoder, views, initialisation, optimiser, budget and seeds on both sides; only the SimSiam parts differ.
Data: ``ssl_probe``'s ``digits`` mode (1,347 training images 8x8, 450 test). The zoo side (``prep``) draws, per round
r (seed r), the whole stream of view pairs with the task's augmentations (``zoo_task_ssl_probe.augment``: crop /
resize, brightness / contrast, noise; ``steps`` x 2 x ``batch`` images) and the initial weights of the backbone (the
task's BN CNN, width 16, 64 features), and writes them as .npy files. Each side builds its SimSiam on that backbone:
ours is ``zoo.create("simsiam_cnn")`` (3-layer BN projector 256-d, 64-d bottleneck predictor, symmetrised negative
cosine with stop-gradient); the peer is lightly's ``SimSiamProjectionHead(64, 256, 256)``,
``SimSiamPredictionHead(256, 64, 256)`` and ``NegativeCosineSimilarity`` with the same symmetrised, detached loss
(the lightly examples' recipe), the backbone written out in plain torch with the same layers. Both train with AdamW
(lr 1e-3, weight decay 1e-4, cosine decay, predictor at a fixed lr: simsiam_cnn's ``ssl_defaults``) on the same
stream, one torch thread. The zoo side (``score``) then probes both sides' test and training features with the
task's probes (cosine kNN k = 20, linear probe, feature std). Reported: accuracies per round and the training
seconds per epoch (1,347 images), paired per round.

    .venv/bin/python benchmarks/peers/lightly_simsiam.py            # 3 rounds (seeds 0-2), 500 steps
    .venv/bin/python benchmarks/peers/lightly_simsiam.py --quick    # smoke run: 1 round, 20 steps
"""
from __future__ import annotations

import json
import logging
import math
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.lightly_simsiam")
PEER = "lightly"
PEER_REQ = ["lightly==1.6.0"]
SETTINGS = {"steps": 500, "batch": 128, "width": 16, "dim": 256, "pred_dim": 64, "lr": 1e-3, "weight_decay": 1e-4}
QUICK = {"steps": 20}


def side_prep(inp: dict, _args) -> dict:
    """The view stream and initial backbone weights of every round (zoo side)."""
    import numpy as np
    import torch

    from zoo_task_ssl_probe import augment, task
    from zoo_task_ssl_probe.baselines import encoder_for

    torch.set_num_threads(1)
    s, folder = inp["settings"], Path(inp["dir"])
    split = task.load("digits")
    view = augment.view_fn("digits", "image")
    np.save(folder / "x_train.npy", split.x_train.numpy())
    np.save(folder / "x_test.npy", split.x_test.numpy())
    for r in inp["seeds"]:
        g = torch.Generator().manual_seed(r)
        x = split.x_pretrain
        v = np.empty((s["steps"], 2, s["batch"], 1, 8, 8), dtype=np.float32)
        for i in range(s["steps"]):
            xb = x[torch.randint(len(x), (s["batch"],), generator=g)]
            v[i, 0], v[i, 1] = view(xb, g).numpy(), view(xb, g).numpy()
        np.save(folder / f"views-{r}.npy", v)
        torch.manual_seed(r)
        enc = encoder_for("image", s["width"])
        np.savez(folder / f"backbone-{r}.npz", **{k: t.numpy() for k, t in enc.state_dict().items()})
    return {}


def _train(model, backbone, loss_fn, groups, views, s) -> float:
    """The shared loop: AdamW, cosine decay on the groups without ``fixed_lr``; returns training seconds."""
    import torch

    opt = torch.optim.AdamW(groups, lr=s["lr"], weight_decay=s["weight_decay"])
    steps = len(views)
    lam = [(lambda i: 1.0) if g.get("fixed_lr") else (lambda i: 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps)))
           for g in opt.param_groups]
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lam)
    model.train()
    t0 = time.perf_counter()
    for i in range(steps):
        x1, x2 = torch.from_numpy(views[i, 0]), torch.from_numpy(views[i, 1])
        loss = loss_fn(x1, x2)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    return time.perf_counter() - t0


def _features(encode, folder: Path) -> dict:
    import numpy as np
    import torch

    out = {}
    with torch.no_grad():
        for part in ("train", "test"):
            out[part] = encode(torch.from_numpy(np.load(folder / f"x_{part}.npy"))).numpy().tolist()
    return out


def side_ours(inp: dict, _args) -> dict:
    import numpy as np
    import torch

    import zoo

    torch.set_num_threads(1)
    s, folder, r = inp["settings"], Path(inp["dir"]), inp["seed"]
    torch.manual_seed(r)
    m = zoo.create("simsiam_cnn", width=s["width"], dim=s["dim"], pred_dim=s["pred_dim"], optimizer="adamw",
                   adamw_lr=s["lr"], weight_decay=s["weight_decay"], batch=s["batch"])
    w = np.load(folder / f"backbone-{r}.npz")
    m.encoder.load_state_dict({k: torch.from_numpy(w[k]) for k in w.files})
    views = np.load(folder / f"views-{r}.npy")
    secs = _train(m, m.encoder, m.ssl_loss, m.ssl_param_groups(), views, s)
    m.eval()
    return {"train_s": secs, "seconds": secs, **_features(m.encode, folder)}


def side_peer(inp: dict, _args) -> dict:
    import numpy as np
    import torch
    from lightly.loss import NegativeCosineSimilarity
    from lightly.models.modules import SimSiamPredictionHead, SimSiamProjectionHead
    from torch import nn

    torch.set_num_threads(1)
    s, folder, r = inp["settings"], Path(inp["dir"]), inp["seed"]
    torch.manual_seed(r)
    w, c = s["width"], 1
    layers: list[nn.Module] = []
    for ch, st in zip((w, 2 * w, 4 * w, 4 * w), (1, 2, 2, 1), strict=True):  # the task's BN CNN, same layer order
        layers += [nn.Conv2d(c, ch, 3, stride=st, padding=1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(inplace=True)]
        c = ch

    class Backbone(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(*layers)

        def forward(self, x):
            return self.body(x).flatten(2).mean(-1)

    backbone = Backbone()
    wts = np.load(folder / f"backbone-{r}.npz")
    backbone.load_state_dict({k: torch.from_numpy(wts[k]) for k in wts.files})
    projector = SimSiamProjectionHead(4 * w, s["dim"], s["dim"])
    predictor = SimSiamPredictionHead(s["dim"], s["pred_dim"], s["dim"])
    criterion = NegativeCosineSimilarity()
    model = nn.ModuleList([backbone, projector, predictor])

    def loss_fn(x1, x2):
        z1, z2 = projector(backbone(x1)), projector(backbone(x2))
        p1, p2 = predictor(z1), predictor(z2)
        return 0.5 * (criterion(p1, z2.detach()) + criterion(p2, z1.detach()))

    groups = [{"params": list(backbone.parameters()) + list(projector.parameters())},
              {"params": list(predictor.parameters()), "fixed_lr": True}]
    views = np.load(folder / f"views-{r}.npy")
    secs = _train(model, backbone, loss_fn, groups, views, s)
    model.eval()
    return {"train_s": secs, "seconds": secs, **_features(backbone, folder)}


def side_score(inp: dict, _args) -> dict:
    """The task's probes on both sides' features (zoo side)."""
    import torch

    from zoo_task_ssl_probe import probe, task

    split = task.load("digits")
    out = {}
    for name, runs in inp["runs"].items():
        rows = []
        for f in runs:
            tr, te = torch.tensor(f["train"]), torch.tensor(f["test"])
            rows.append({"knn_acc": probe.knn(tr, split.y_train, te, split.y_test),
                         "linear_probe_acc": probe.linear_probe(tr, split.y_train, te, split.y_test),
                         "feature_std": probe.collapse(te)["feature_std"]})
        out[name] = rows
    return out


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env(PEER, PEER_REQ)
    rounds = 1 if a.quick else a.rounds
    s = dict(SETTINGS, **(QUICK if a.quick else {}))
    with tempfile.TemporaryDirectory(prefix="zoo-peer-simsiam-") as tmp:
        folder = Path(tmp)
        f = folder / "prep.json"
        f.write_text(json.dumps({"dir": tmp, "settings": s, "seeds": list(range(rounds))}))
        peerlib.run_side(peerlib.OURS_PYTHON, __file__, "prep", f)

        def side(python: str, name: str):
            def run(r: int) -> dict:
                g = folder / f"in-{name}-{r}.json"
                g.write_text(json.dumps({"dir": tmp, "settings": s, "seed": r}))
                out = peerlib.run_side(python, __file__, name, g)
                log.info("round %d %s: training %.1f s", r, name, out["train_s"])
                return out
            return run

        runs = peerlib.interleave({"ours": side(peerlib.OURS_PYTHON, "ours"), "peer": side(peer_py, "peer")}, rounds)
        g = folder / "score.json"
        g.write_text(json.dumps({"runs": {k: [{"train": r["train"], "test": r["test"]} for r in v]
                                          for k, v in runs.items()}}))
        scores = peerlib.run_side(peerlib.OURS_PYTHON, __file__, "score", g)
    epochs = s["steps"] * s["batch"] / 1347
    sec = {k: [r["train_s"] / epochs for r in v] for k, v in runs.items()}
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["torch", "zoo-simsiam", "zoo-task-ssl-probe"])
    ver_peer = peerlib.versions(peer_py, [PEER, "torch"])
    sp = lambda xs: peerlib.spread(xs, ".4f")  # noqa: E731
    lines = [f"### SimSiam: simsiam_cnn vs lightly {ver_peer[PEER]} (SimSiam heads and loss)", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"ssl_probe digits, the same view stream and initial backbone per round (seeds 0-{rounds - 1}), "
             f"{s['steps']} steps of {s['batch']} pairs ({epochs:.1f} epochs), AdamW lr {s['lr']}, wd "
             f"{s['weight_decay']}, cosine, predictor fixed lr. Median (min–max) over rounds:", "",
             "| | ours | lightly | ours − peer (paired mean) |", "|---|---|---|---|"]
    for k in ("knn_acc", "linear_probe_acc", "feature_std"):
        o, p = [r[k] for r in scores["ours"]], [r[k] for r in scores["peer"]]
        diff = sum(x - y for x, y in zip(o, p, strict=True)) / len(o)
        lines.append(f"| {k} | {sp(o)} | {sp(p)} | {diff:+.4f} |")
    lines.append(f"| training s / epoch | {sp(sec['ours'])} | {sp(sec['peer'])} | ours / peer "
                 f"{peerlib.paired(sec['ours'], sec['peer']):.2f}x |")
    md = "\n".join(lines)
    peerlib.write_section("lightly_simsiam", md)
    print(md)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, 20 steps")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer, "score": side_score}, orchestrate,
                      add_args)
