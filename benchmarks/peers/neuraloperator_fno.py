"""FNO side by side: ``zoo_nn.operators.FNO1d / FNO2d`` vs the ``neuraloperator`` package's ``FNO`` (PyPI).

The same data on both sides, made once by the zoo side from the ``operator_learn`` task's solvers
(``zoo_task_operator_learn.data``): 1D Burgers (train at s = 64, test at 64 and zero-shot at 128) and 2D Darcy
with the thresholded coefficient (train at 32 x 32, test at 32 and 64). Both sides build the same architecture,
as the FNO paper describes it: appended grid coordinates ``j / s``, a linear lifting to ``width`` channels,
``layers`` Fourier layers ``v <- act(K v + W v)`` (no activation after the last), a two-layer projection with
128 hidden units and GELU. In ``neuraloperator`` terms: ``positional_embedding="grid"``,
``lifting_channel_ratio=0`` (a single linear map), ``use_channel_mlp=False``, ``fno_skip="linear"``, dense
spectral weights, ``projection_channel_ratio = 128 / width``; its ``n_modes`` counts a full axis (positive and
negative frequencies, and ``n // 2 + 1`` on the last one), so ``modes = 16`` of ours is ``n_modes = (30,)`` and
``12 x 12`` (positive and negative rows) is ``(24, 22)``. Each library keeps its own initialisation; a third side,
"ours, normal init", is our FNO with ``spectral_init="normal"`` (neuraloperator's spectral-weight scheme), which
separates the initialisation from the rest of the implementation. The training
loop is one function shared by both sides (only torch and numpy): Adam (lr 1e-3, weight decay 1e-4), cosine
schedule, batch 32, the mean relative L2 loss, batch order from the round's seed; the model's initial weights
from ``torch.manual_seed(seed)``. Figures: test relative L2 at both resolutions and training seconds per epoch.

    .venv/bin/python benchmarks/peers/neuraloperator_fno.py            # 3 interleaved rounds
    .venv/bin/python benchmarks/peers/neuraloperator_fno.py --quick    # smoke run: 2 epochs, 1 round
    .venv/bin/python benchmarks/peers/neuraloperator_fno.py --problems burgers --epochs 60   # its own section
"""
from __future__ import annotations

import logging
import statistics
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.neuraloperator_fno")
PEER = "neuraloperator"
PEER_REQ = ["neuraloperator==2.0.0"]
PROBLEMS = {
    # name: data problem, train resolution, zero-shot resolution, architecture
    # (the Darcy training set is half Burgers' so that three rounds of both sides fit a shared 2-core machine)
    "burgers": {"problem": "burgers", "train_res": 64, "test_res": 128, "modes": 16, "width": 64, "dim": 1,
                "n_train": 512},
    "darcy": {"problem": "darcy", "train_res": 32, "test_res": 64, "modes": 12, "width": 32, "dim": 2,
              "n_train": 256},
}
SETTINGS = {"n_test": 128, "epochs": 20, "batch": 32, "lr": 1e-3, "weight_decay": 1e-4, "layers": 4, "projection": 128}


def side_prep(inp: dict, _args) -> dict:
    """Write each problem's arrays (train at its resolution, test at both) to ``<dir>/<name>.npz``."""
    import numpy as np

    from zoo_task_operator_learn import data

    s = inp["settings"]
    out = {}
    for name, p in PROBLEMS.items():
        tr = data.load(p["problem"], split="train", n=p["n_train"], resolution=p["train_res"])
        te = data.load(p["problem"], split="test", n=s["n_test"], resolution=p["train_res"])
        te2 = data.load(p["problem"], split="test", n=s["n_test"], resolution=p["test_res"])
        np.savez(Path(inp["dir"]) / f"{name}.npz", a=tr.a, u=tr.u, a_test=te.a, u_test=te.u, a_test2=te2.a,
                 u_test2=te2.u)
        out[name] = {"train": list(tr.a.shape), "test2": list(te2.a.shape)}
    return out


def _train_and_score(model, arrays: dict, s: dict, seed: int) -> dict:
    """The loop both sides run: returns test relative L2 at both resolutions, seconds per epoch, parameter count."""
    import numpy as np
    import torch

    a, u = (torch.from_numpy(arrays[k]) for k in ("a", "u"))
    # scalar standardisation from the training set (identical on both sides)
    a_mu, a_sd, u_sd = float(a.mean()), float(a.std()), float(u.std())
    norm_a = lambda x: (x - a_mu) / a_sd  # noqa: E731

    def rel_l2(pred, target):
        diff = (pred - target).flatten(1).norm(dim=1)
        return (diff / target.flatten(1).norm(dim=1)).mean()

    opt = torch.optim.Adam(model.parameters(), lr=s["lr"], weight_decay=s["weight_decay"])
    steps_per_epoch = len(a) // s["batch"]
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=s["epochs"] * steps_per_epoch)
    rng = np.random.default_rng(seed)
    epoch_s = []
    for _ in range(s["epochs"]):
        order = torch.from_numpy(rng.permutation(len(a)))
        t0 = time.perf_counter()
        model.train()
        for i in range(steps_per_epoch):
            idx = order[i * s["batch"]:(i + 1) * s["batch"]]
            loss = rel_l2(model(norm_a(a[idx])) * u_sd, u[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
        epoch_s.append(time.perf_counter() - t0)
    model.eval()
    out = {"seconds_per_epoch": statistics.median(epoch_s), "train_s": sum(epoch_s), "final_loss": float(loss.detach())}
    with torch.no_grad():
        for key, (ka, ku) in {"rel_l2": ("a_test", "u_test"), "rel_l2_2x": ("a_test2", "u_test2")}.items():
            ta, tu = torch.from_numpy(arrays[ka]), torch.from_numpy(arrays[ku])
            out[key] = float(rel_l2(model(norm_a(ta)) * u_sd, tu))
    out["params"] = sum(p.numel() * (2 if p.is_complex() else 1) for p in model.parameters())  # real numbers
    return out


def _run(inp: dict, build) -> dict:
    import numpy as np
    import torch

    torch.set_num_threads(1)
    seed, s = inp["seed"], inp["settings"]
    c0, t0 = time.process_time(), time.perf_counter()
    out = {}
    for name, p in PROBLEMS.items():
        if name not in inp["problems"]:
            continue
        with np.load(Path(inp["dir"]) / f"{name}.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        torch.manual_seed(seed)
        out[name] = _train_and_score(build(p, s), arrays, s, seed)
    out.update(seconds=time.perf_counter() - t0, cpu_s=time.process_time() - c0,
               train_s=sum(out[n]["train_s"] for n in inp["problems"]))
    return out


def side_ours(inp: dict, _args) -> dict:
    from zoo_nn.operators import FNO1d, FNO2d

    def build(p, s):
        cls = FNO1d if p["dim"] == 1 else FNO2d
        return cls(1, 1, modes=p["modes"], width=p["width"], layers=s["layers"], projection=s["projection"],
                   spectral_init=inp.get("spectral_init", "fno"))

    return _run(inp, build)


def side_ours_normal(inp: dict, args) -> dict:
    return side_ours({**inp, "spectral_init": "normal"}, args)


def side_peer(inp: dict, _args) -> dict:
    from neuralop.models import FNO

    def build(p, s):
        # a full axis of modes: ours keeps `modes` (1D) resp. modes positive + modes negative rows x modes columns
        n_modes = (2 * p["modes"] - 2,) if p["dim"] == 1 else (2 * p["modes"], 2 * p["modes"] - 2)
        return FNO(n_modes=n_modes, in_channels=1, out_channels=1, hidden_channels=p["width"], n_layers=s["layers"],
                   lifting_channel_ratio=0, projection_channel_ratio=s["projection"] // p["width"],
                   positional_embedding="grid", use_channel_mlp=False, fno_skip="linear", domain_padding=None)

    return _run(inp, build)


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env(PEER, PEER_REQ)
    rounds = 1 if a.quick else a.rounds
    settings = dict(SETTINGS, **({"epochs": 2} if a.quick else {"epochs": a.epochs} if a.epochs else {}))
    problems = a.problems.split(",") if a.problems else list(PROBLEMS)
    unknown = sorted(set(problems) - set(PROBLEMS))
    if unknown:
        raise SystemExit(f"unknown --problems {', '.join(unknown)}; choose from {', '.join(PROBLEMS)}")
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo-peer-fno-") as tmp:
        tmpd = Path(tmp)
        base = {"dir": tmp, "settings": settings, "problems": problems}
        f = tmpd / "prep.json"
        import json

        f.write_text(json.dumps(base))
        peerlib.run_side(peerlib.OURS_PYTHON, __file__, "prep", f)

        def side(python: str, name: str):
            def run(r: int) -> dict:
                fi = tmpd / f"in-{name}-{r}.json"
                fi.write_text(json.dumps({**base, "seed": r}))
                out = peerlib.run_side(python, __file__, name, fi)
                log.info("round %d %s: %.1f s; %s", r, name, out["seconds"],
                         ", ".join(f"{n} rel L2 {out[n]['rel_l2']:.4f} / {out[n]['rel_l2_2x']:.4f}" for n in problems))
                return out
            return run

        runs = peerlib.interleave({"ours": side(peerlib.OURS_PYTHON, "ours"), "peer": side(peer_py, "peer"),
                                   "ours_normal": side(peerlib.OURS_PYTHON, "ours_normal")}, rounds)
    log.info("measured in %.0f s", time.perf_counter() - t_start)
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["torch", "numpy", "zoo-nn", "zoo-task-operator-learn"])
    ver_peer = peerlib.versions(peer_py, [PEER, "torch", "numpy"])
    md = _section(a, runs, problems, settings, ver_ours, ver_peer)
    default = problems == list(PROBLEMS) and settings["epochs"] == SETTINGS["epochs"]
    peerlib.write_section("neuraloperator_fno" + ("" if default else f"_{'_'.join(problems)}_e{settings['epochs']}"), md)
    print(md)


def _section(a, runs: dict, problems: list[str], s: dict, ver_ours: dict, ver_peer: dict) -> str:
    o, p, on = runs["ours"], runs["peer"], runs["ours_normal"]
    sp = peerlib.spread
    lines = [f"### FNO: `zoo_nn.operators` vs neuraloperator {ver_peer[PEER]} `FNO`"
             + ("" if problems == list(PROBLEMS) else f" ({', '.join(problems)}, {s['epochs']} epochs)"), "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             "Data: `operator_learn`'s solvers, " + " and ".join(f"{PROBLEMS[n]['n_train']} training functions for {n}"
                                                                 for n in problems)
             + f", {s['n_test']} test functions each (the same arrays on every side). "
             "The same architecture (grid coordinates appended, linear lifting, "
             f"{s['layers']} Fourier layers with the pointwise linear skip, projection {s['projection']} hidden with "
             "GELU); \"ours\" keeps the FNO code's spectral initialisation (uniform [0, 1/width^2)), neuraloperator its "
             "own (normal, std sqrt(2/(2 width))), and \"ours, normal init\" is ours with neuraloperator's scheme "
             f"(`spectral_init=\"normal\"`). The same loop: Adam lr {s['lr']}, weight decay "
             f"{s['weight_decay']}, cosine schedule, batch {s['batch']}, {s['epochs']} epochs, relative L2 loss. "
             f"{len(o)} interleaved rounds (seed = round); figures as median (min–max) over rounds, ratios = median "
             "over rounds of ours / neuraloperator in the same round.", "",
             "| problem | figure | ours | ours, normal init | neuraloperator | ours / peer | ours normal / peer |",
             "|---|---|---|---|---|---|---|"]
    for name in problems:
        cfg = PROBLEMS[name]
        ev = lambda side, k, name=name: [x[name][k] for x in side]  # noqa: E731
        res = f"{cfg['train_res']}" + ("" if cfg["dim"] == 1 else f"x{cfg['train_res']}")
        res2 = f"{cfg['test_res']}" + ("" if cfg["dim"] == 1 else f"x{cfg['test_res']}")
        arch = f"modes {cfg['modes']}, width {cfg['width']}"
        lines.append(f"| {name} ({arch}) | parameters (real numbers) | {o[0][name]['params']:,} | "
                     f"{on[0][name]['params']:,} | {p[0][name]['params']:,} | "
                     f"{o[0][name]['params'] / p[0][name]['params']:.3f} | {on[0][name]['params'] / p[0][name]['params']:.3f} |")
        for k, label in (("rel_l2", f"test rel. L2 at {res}"), ("rel_l2_2x", f"test rel. L2 at {res2} (zero-shot)"),
                         ("seconds_per_epoch", "training s / epoch")):
            spec = ".2f" if k == "seconds_per_epoch" else ".4f"
            lines.append(f"| {name} | {label} | {sp(ev(o, k), spec)} | {sp(ev(on, k), spec)} | {sp(ev(p, k), spec)} | "
                         f"{peerlib.paired(ev(o, k), ev(p, k)):.3f} | {peerlib.paired(ev(on, k), ev(p, k)):.3f} |")
    secs = {n: [x["seconds"] for x in side] for n, side in (("o", o), ("on", on), ("p", p))}
    lines.append(f"| all | process wall s | {sp(secs['o'], '.1f')} | {sp(secs['on'], '.1f')} | {sp(secs['p'], '.1f')} | "
                 f"{peerlib.paired(secs['o'], secs['p']):.3f} | {peerlib.paired(secs['on'], secs['p']):.3f} |")
    return "\n".join(lines)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: 2 epochs, one round")
    p.add_argument("--epochs", type=int, default=None, help=f"training epochs (default {SETTINGS['epochs']})")
    p.add_argument("--problems", default=None, help=f"comma-separated subset of {', '.join(PROBLEMS)}")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "ours_normal": side_ours_normal, "peer": side_peer},
                      orchestrate, add_args)
