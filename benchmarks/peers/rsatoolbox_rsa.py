"""RDMs and RSA side by side: ``zoo_task_rep_metrics.similarity`` (``rdm``, ``rsa``) vs rsatoolbox.

Inputs, made once by the zoo side and read by both: the activations of two digits MLPs trained with different seeds
(``zoo_task_rep_metrics.sources.digits_models([r, r + 100], "mlp")``, round r) at ``act1``, ``act2``, ``act3`` and
``out`` on the 450 probe images (float64 .npz). Per layer and model both sides compute the correlation RDM (1 -
Pearson r between input patterns) and the Euclidean RDM (ours: the distance; rsatoolbox's ``calc_rdm(...,
"euclidean")`` is the squared distance divided by the number of channels, so ours is converted before comparing),
and per matched layer pair the RSA of the correlation RDMs (Spearman: rsatoolbox's ``compare(..., "spearman")``;
Pearson: its ``"corr"``). Reported: the largest absolute difference of the RDM entries and of the RSA values, and
the seconds of each side's computation (one thread, paired per round).

    .venv/bin/python benchmarks/peers/rsatoolbox_rsa.py            # 3 rounds
    .venv/bin/python benchmarks/peers/rsatoolbox_rsa.py --quick    # smoke run: 1 round, 150 probe images
"""
from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.rsatoolbox_rsa")
PEER = "rsatoolbox"
PEER_REQ = ["rsatoolbox==0.3.2"]
LAYERS = ("act1", "act2", "act3", "out")
SETTINGS = {"n": None, "steps": 400}
QUICK = {"n": 150}


def side_prep(inp: dict, _args) -> dict:
    import numpy as np
    import torch

    from zoo_task_rep_metrics import sources

    torch.set_num_threads(1)
    s, folder = inp["settings"], Path(inp["dir"])
    for r in inp["seeds"]:
        sets = sources.digits_models([r, r + 100], "mlp", s["steps"], n=s["n"])
        for m, seed in (("a", r), ("b", r + 100)):
            np.savez(folder / f"acts-{r}-{m}.npz", **{ly: sets[seed][ly].astype(np.float64) for ly in LAYERS})
    return {}


def _load(folder: Path, r: int) -> dict:
    import numpy as np

    return {m: dict(np.load(folder / f"acts-{r}-{m}.npz")) for m in ("a", "b")}


def side_ours(inp: dict, _args) -> dict:
    from zoo_task_rep_metrics.similarity import rdm, rsa

    acts = _load(Path(inp["dir"]), inp["seed"])
    rsa(acts["a"]["act1"][:10], acts["b"]["act1"][:10])  # first-call overheads out of the timing
    t0 = time.perf_counter()
    rdms = {f"{m}/{ly}/{metric}": rdm(acts[m][ly], metric) for m in acts for ly in LAYERS
            for metric in ("correlation", "euclidean")}
    t_rdm = time.perf_counter() - t0
    t0 = time.perf_counter()
    vals = {f"{ly}/{method}": rsa(rdms[f"a/{ly}/correlation"], rdms[f"b/{ly}/correlation"], method,
                                  metric="precomputed") for ly in LAYERS for method in ("spearman", "pearson")}
    t_rsa = time.perf_counter() - t0
    for k, v in rdms.items():  # rsatoolbox's Euclidean RDM: squared distance / channels
        if k.endswith("euclidean"):
            m, ly, _ = k.split("/")
            rdms[k] = v ** 2 / acts[m][ly].shape[1]
    return {"rdms": {k: v.tolist() for k, v in rdms.items()}, "rsa": vals, "seconds_rdm": t_rdm, "seconds_rsa": t_rsa}


def side_peer(inp: dict, _args) -> dict:
    import numpy as np
    import rsatoolbox

    acts = _load(Path(inp["dir"]), inp["seed"])
    warm = rsatoolbox.rdm.calc_rdm(rsatoolbox.data.Dataset(acts["a"]["act1"][:10]), method="correlation")
    rsatoolbox.rdm.compare(warm, warm, method="spearman")
    t0 = time.perf_counter()
    rdms = {f"{m}/{ly}/{metric}": rsatoolbox.rdm.calc_rdm(rsatoolbox.data.Dataset(acts[m][ly]), method=metric)
            for m in acts for ly in LAYERS for metric in ("correlation", "euclidean")}
    t_rdm = time.perf_counter() - t0
    t0 = time.perf_counter()
    vals = {f"{ly}/{method}": float(np.asarray(rsatoolbox.rdm.compare(
        rdms[f"a/{ly}/correlation"], rdms[f"b/{ly}/correlation"], method=peer_method)).ravel()[0])
        for ly in LAYERS for method, peer_method in (("spearman", "spearman"), ("pearson", "corr"))}
    t_rsa = time.perf_counter() - t0
    return {"rdms": {k: v.get_matrices()[0].tolist() for k, v in rdms.items()}, "rsa": vals, "seconds_rdm": t_rdm,
            "seconds_rsa": t_rsa}


def summarise(runs: dict[str, list[dict]]) -> dict:
    """Largest differences over rounds and the paired time ratios (pure Python)."""
    o, p = runs["ours"], runs["peer"]
    rdm_diff: dict[str, float] = {}
    for metric in ("correlation", "euclidean"):
        d = 0.0
        for ro, rp in zip(o, p, strict=True):
            for k, mo in ro["rdms"].items():
                if k.endswith(metric):
                    d = max(d, max(abs(x - y) for ra, rb in zip(mo, rp["rdms"][k], strict=True)
                                   for x, y in zip(ra, rb, strict=True)))
        rdm_diff[metric] = d
    rsa_rows = {k: {"ours": [r["rsa"][k] for r in o], "peer": [r["rsa"][k] for r in p]} for k in o[0]["rsa"]}
    rsa_diff = max(abs(a - b) for v in rsa_rows.values() for a, b in zip(v["ours"], v["peer"], strict=True))
    return {"rdm_diff": rdm_diff, "rsa": rsa_rows, "rsa_diff": rsa_diff,
            "time_rdm": peerlib.paired([r["seconds_rdm"] for r in o], [r["seconds_rdm"] for r in p]),
            "time_rsa": peerlib.paired([r["seconds_rsa"] for r in o], [r["seconds_rsa"] for r in p]),
            "s_rdm": ([r["seconds_rdm"] for r in o], [r["seconds_rdm"] for r in p]),
            "s_rsa": ([r["seconds_rsa"] for r in o], [r["seconds_rsa"] for r in p])}


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env("rsatoolbox", PEER_REQ, torch=None)
    rounds = 1 if a.quick else a.rounds
    s = dict(SETTINGS, **(QUICK if a.quick else {}))
    with tempfile.TemporaryDirectory(prefix="zoo-peer-rsa-") as tmp:
        runs = peerlib.prep_and_rounds(__file__, peer_py, Path(tmp), s, rounds)
    summ = summarise(runs)
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["numpy", "zoo-task-rep-metrics"])
    ver_peer = peerlib.versions(peer_py, [PEER, "numpy", "scipy"])
    q = lambda xs: peerlib.quartiles([x * 1e3 for x in xs], ".2f")  # noqa: E731  (milliseconds)
    lines = [f"### RDMs and RSA: rep_metrics `rdm` / `rsa` vs rsatoolbox {ver_peer[PEER]}", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"Two digits MLPs per round (seeds r and r + 100, {s['steps']} steps), layers {', '.join(LAYERS)}, "
             f"{s['n'] or 450} probe images, {rounds} round(s). Largest |difference| of the RDM entries: correlation "
             f"{summ['rdm_diff']['correlation']:.2e}, Euclidean (ours squared / channels) "
             f"{summ['rdm_diff']['euclidean']:.2e}; of the RSA values: {summ['rsa_diff']:.2e}.", "",
             "| layer | RSA Spearman ours | rsatoolbox | RSA Pearson ours | rsatoolbox |", "|---|---|---|---|---|"]
    for ly in LAYERS:
        sp, pe = summ["rsa"][f"{ly}/spearman"], summ["rsa"][f"{ly}/pearson"]
        lines.append(f"| {ly} | {peerlib.spread(sp['ours'], '.6f')} | {peerlib.spread(sp['peer'], '.6f')} | "
                     f"{peerlib.spread(pe['ours'], '.6f')} | {peerlib.spread(pe['peer'], '.6f')} |")
    lines += ["", f"Time (ms, median (p25–p75) over rounds) for the 16 RDMs: ours {q(summ['s_rdm'][0])}, rsatoolbox "
              f"{q(summ['s_rdm'][1])} (ours / peer paired {summ['time_rdm']:.2f}x); for the 8 RSA values: ours "
              f"{q(summ['s_rsa'][0])}, rsatoolbox {q(summ['s_rsa'][1])} ({summ['time_rsa']:.2f}x)."]
    md = "\n".join(lines)
    peerlib.write_section("rsatoolbox_rsa", md)
    print(md)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, 150 probe images")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer}, orchestrate, add_args)
