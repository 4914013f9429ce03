"""VSA side by side: vsa_bench's ``classic_resonator`` and the ``vsa-capacity`` set memories vs torchhd (``torch-hd``)
and pybloom-live.

Three comparisons on the same arrays, made once by the zoo side from the task's data module and read by both sides:

1. **Factorisation.** ``factorization_problems(n, F=3, M, D=1024, seed)`` for M in 16, 32, 64, 128: the task's
   ``ClassicResonator`` (``update="sequential"``, its default, and ``"concurrent"``) against torchhd's resonator
   network (``torchhd.resonator``, one step of MAP bipolar factorisation: every factor is re-estimated from the
   other factors' previous estimates, i.e. a concurrent update; ``sign`` as its non-linearity, so a tie gives 0).
   torchhd leaves the loop to the caller: here it repeats the step until a step leaves every estimate unchanged
   (the task's stopping rule, that step counted) or ``iters`` steps ran, and decodes each estimate to its most
   similar codeword up to sign (``dot_similarity``, the task's decoding). Two starts for torchhd: its documented
   one, the integer multiset of each codebook (``torchhd.multiset``), and the task's start ``sign(sum)`` (ties to
   +1), passed as an array. Accuracy (all three factors right), mean sweeps, seconds per problem (one torch thread,
   the whole batch of ``n`` problems in one call, divided by ``n``).
2. **MAP bundling membership.** ``symbol_sets(n, |S|=32, alphabet 1000, seed)``: the ``vsa_map_i`` model (integer
   sum of +-1 atoms, member iff ``<s, x> >= D/2``) against torchhd's MAP atoms (``torchhd.random(..., "MAP")``),
   ``torchhd.multiset`` and ``torchhd.dot_similarity`` with the same threshold (torchhd has no membership rule of
   its own). Error = (false negatives + false positives) / 2 as the task counts it, at each D; each side with its
   own seeded atoms, and torchhd once more on the zoo side's atoms (decisions must then be identical).
3. **Bloom filter.** The ``vsa_sparse_bloom`` model (sparse binary atoms with ``p`` ones, OR bundling) against
   pybloom-live's ``BloomFilter`` (a partitioned Bloom filter: ``p`` hash functions, one slice of ``b / p`` bits
   each) at the same ``b`` bits and ``p`` hashes: ``p = round(D ln 2 / |S|)`` (the model's own rule), ``b = p
   floor(D / p)``. False-positive rate on the task's non-member probes, and the false negatives (must be 0).

Interleaved rounds, seed = round, each side in its own process and environment (torch 2.14.1 from this machine's
disk in both).

    .venv/bin/python benchmarks/peers/torchhd_vsa.py            # 3 rounds, n = 200 per setting (~10 min, loaded 2 cores)
    .venv/bin/python benchmarks/peers/torchhd_vsa.py --quick    # smoke run: 1 round, n = 40, M 16 and 64
"""
from __future__ import annotations

import json
import logging
import math
import statistics
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.torchhd_vsa")
PEER = "torch-hd"
PEER_REQ = ["torch-hd==5.8.4", "pybloom-live==4.0.0"]
SETTINGS = {"dim": 1024, "factors": 3, "Ms": [16, 32, 64, 128], "iters": 200, "n": 200, "set_size": 32,
            "alphabet": 1000, "probes": 16, "dims": [64, 128, 256, 512, 1024, 2048]}
QUICK = {"Ms": [16, 64], "n": 40, "iters": 100, "dims": [64, 256, 1024]}
# torchhd's runs: key -> label. "tie1": the same torchhd step with its exact zeros (sign(0), a tie) sent to +1 as
# the task's sign0 does, to show that the tie rule is the only difference from the task's concurrent update.
TORCHHD = {"multiset": "torchhd (multiset start)", "matched": "torchhd (task start)",
           "tie1": "torchhd (task start, ties to +1)"}
OURS = {"sequential": "task sequential", "concurrent": "task concurrent"}


# ---------------------------------------------------------------- sides

def side_prep(inp: dict, _args) -> dict:
    """The problems of every seed as .npz files (int8 +-1 arrays), and the Bloom filters' (D, p, bits) table."""
    import numpy as np
    import torch

    from zoo_task_vsa_bench.baselines import sign0
    from zoo_task_vsa_bench.data import factorization_problems, symbol_sets
    from zoo_vsa_capacity.model import vsa_map_i, vsa_sparse_bloom

    s, folder = inp["settings"], Path(inp["dir"])
    i8 = lambda t: t.to(torch.int8).numpy()  # noqa: E731
    for seed in inp["seeds"]:
        for m in s["Ms"]:
            p = factorization_problems(s["n"], s["factors"], m, s["dim"], seed=seed)
            init = torch.stack([sign0(cb.sum(0)) for cb in p.codebooks])
            np.savez(folder / f"fac-{seed}-{m}.npz", codebooks=i8(p.codebooks), composite=i8(p.composite),
                     indices=p.indices.numpy(), init=i8(init))
        sets = symbol_sets(s["n"], s["set_size"], s["alphabet"], seed=seed, probes=s["probes"])
        np.savez(folder / f"sets-{seed}.npz", sets_a=sets.sets_a.numpy(), members=sets.members.numpy(),
                 others=sets.others.numpy())
        mapi = vsa_map_i()
        for d in s["dims"]:
            np.save(folder / f"atoms-{seed}-{d}.npy", i8(mapi.atoms(s["alphabet"], d, seed)))
    bloom = vsa_sparse_bloom(s["set_size"])
    table = [{"D": d, "hashes": bloom.ones(d), "bits": bloom.ones(d) * (d // bloom.ones(d))} for d in s["dims"]]
    return {"bloom": table}


def _bits(x) -> str:
    return "".join("1" if v else "0" for v in x.reshape(-1).tolist())


def side_ours(inp: dict, _args) -> dict:
    import numpy as np
    import torch

    from zoo_task_vsa_bench.baselines import ClassicResonator
    from zoo_vsa_capacity.model import vsa_map_i, vsa_sparse_bloom

    torch.set_num_threads(1)
    s, seed, folder = inp["settings"], inp["seed"], Path(inp["dir"])
    z = np.load(folder / f"fac-{seed}-{s['Ms'][0]}.npz")  # first-call overheads out of the timed runs
    ClassicResonator().factorize(torch.from_numpy(z["composite"]).float(), list(torch.from_numpy(z["codebooks"]).float()), 3)
    res: dict = {}
    for m in s["Ms"]:
        z = np.load(folder / f"fac-{seed}-{m}.npz")
        cb, comp, truth = torch.from_numpy(z["codebooks"]).float(), torch.from_numpy(z["composite"]).float(), z["indices"]
        for update in ("sequential", "concurrent"):
            t0 = time.perf_counter()
            with torch.no_grad():
                idx, used = ClassicResonator(update=update).factorize(comp, list(cb), s["iters"])
            sec = time.perf_counter() - t0
            res[f"{m}/{update}"] = {"solved": (idx.numpy() == truth).all(1).astype(int).tolist(),
                                    "used": used.tolist(), "seconds": sec}
    sets = np.load(folder / f"sets-{seed}.npz")
    sets_a, members, others = (torch.from_numpy(sets[k]) for k in ("sets_a", "members", "others"))
    mapi, member = vsa_map_i(), {}
    for d in s["dims"]:
        with torch.no_grad():
            atoms = mapi.atoms(s["alphabet"], d, seed)
            mem = mapi.bundle(atoms, sets_a)
            hit_m, hit_o = mapi.contains(atoms, mem, members), mapi.contains(atoms, mem, others)
        member[str(d)] = {"fn": int((~hit_m).sum()), "fp": int(hit_o.sum()), "decisions": _bits(hit_m) + _bits(hit_o)}
    bloom = {}
    for row in inp["bloom"]:
        model = vsa_sparse_bloom(s["set_size"])
        model.ones = lambda _dim, h=row["hashes"]: h  # the same p at b bits (b = p floor(D / p) <= D)
        with torch.no_grad():
            atoms = model.atoms(s["alphabet"], row["bits"], seed)
            mem = model.bundle(atoms, sets_a)
            bloom[str(row["D"])] = {"fn": int((~model.contains(atoms, mem, members)).sum()),
                                    "fp": int(model.contains(atoms, mem, others).sum())}
    return {"resonator": res, "membership": member, "bloom": bloom, "probes": int(members.numel())}


def _torchhd_factorize(torchhd, torch, s, cb, start, iters: int, tie_plus: bool = False):
    """torchhd.resonator on one problem at a time (its documented shapes: s (D,), estimates (F, D), domains (F, M, D)),
    repeated from ``start`` (F, D) until a step changes nothing: (idx (B, F), used (B,), fraction of zero entries).
    ``tie_plus``: entries the step leaves at exactly 0 (its ``sign`` of a tie) become +1."""
    idx, used, zeros = [], [], 0.0
    for sb in s:
        est, n = start, iters
        for t in range(1, iters + 1):
            new = torchhd.resonator(sb, est, cb)
            if tie_plus:
                new = torch.where(new == 0, 1.0, new)
            if torch.equal(new, est):
                n = t
                break
            est = new
        sims = torchhd.dot_similarity(est.unsqueeze(-2), cb).squeeze(-2)  # (F, M)
        idx.append(sims.abs().argmax(-1))
        used.append(n)
        zeros += float((est == 0).float().mean()) / len(s)
    return torch.stack(idx), torch.tensor(used), zeros


def _torchhd_batched_step(torchhd, s, cb, start) -> float:
    """Seconds of one torchhd.resonator step on the whole batch at once (s (B, D), estimates (B, F, D), the domains
    broadcast over B): the batched alternative to one problem at a time."""
    t0 = time.perf_counter()
    torchhd.resonator(s, start.expand(s.shape[0], -1, -1), cb)
    return time.perf_counter() - t0


def side_peer(inp: dict, _args) -> dict:
    import numpy as np
    import torch
    import torchhd
    from bitarray import bitarray
    from pybloom_live import BloomFilter
    from torchhd.tensors.map import MAPTensor

    torch.set_num_threads(1)
    s, seed, folder = inp["settings"], inp["seed"], Path(inp["dir"])
    z = np.load(folder / f"fac-{seed}-{s['Ms'][0]}.npz")  # first-call overheads out of the timed runs
    w, c = MAPTensor(torch.from_numpy(z["codebooks"]).float()), MAPTensor(torch.from_numpy(z["composite"]).float())
    _torchhd_factorize(torchhd, torch, c, w, torchhd.multiset(w), 3)
    res: dict = {}
    for m in s["Ms"]:
        z = np.load(folder / f"fac-{seed}-{m}.npz")
        cb = MAPTensor(torch.from_numpy(z["codebooks"]).float())  # (F, M, D): torchhd's "domains"
        comp = MAPTensor(torch.from_numpy(z["composite"]).float())
        for start in TORCHHD:
            t0 = time.perf_counter()
            with torch.no_grad():
                est0 = torchhd.multiset(cb) if start == "multiset" else MAPTensor(torch.from_numpy(z["init"]).float())
                idx, used, zeros = _torchhd_factorize(torchhd, torch, comp, cb, est0, s["iters"], tie_plus=start == "tie1")
            sec = time.perf_counter() - t0
            res[f"{m}/{start}"] = {"solved": (idx.numpy() == z["indices"]).all(1).astype(int).tolist(),
                                   "used": used.tolist(), "seconds": sec, "zero_entries": zeros}
        with torch.no_grad():
            res[f"{m}/batched_step_s"] = _torchhd_batched_step(torchhd, comp, cb, MAPTensor(torch.from_numpy(z["init"]).float()))
    sets = np.load(folder / f"sets-{seed}.npz")
    sets_a, members, others = (torch.from_numpy(sets[k]) for k in ("sets_a", "members", "others"))
    member = {}
    for d in s["dims"]:
        row = {}
        for which in ("own", "shared"):
            if which == "own":
                atoms = torchhd.random(s["alphabet"], d, "MAP", generator=torch.Generator().manual_seed(seed))
            else:
                atoms = MAPTensor(torch.from_numpy(np.load(folder / f"atoms-{seed}-{d}.npy")).float())
            mem = torchhd.multiset(atoms[sets_a])  # (B, D)
            hit_m, hit_o = (torchhd.dot_similarity(mem.unsqueeze(-2), atoms[q]).squeeze(-2) >= d / 2 for q in (members, others))
            row[which] = {"fn": int((~hit_m).sum()), "fp": int(hit_o.sum()), "decisions": _bits(hit_m) + _bits(hit_o)}
        member[str(d)] = row
    bloom = {}
    for row in inp["bloom"]:
        fn = fp = 0
        for a, mm, oo in zip(sets_a.tolist(), members.tolist(), others.tolist(), strict=True):
            f = BloomFilter(capacity=len(a), error_rate=0.5)
            f._setup(0.5, row["hashes"], row["bits"] // row["hashes"], len(a), 0)  # p slices of b / p bits
            f.bitarray = bitarray(f.num_bits, endian="little")  # _setup leaves the old-sized bit array
            f.bitarray.setall(False)
            for x in a:
                f.add(x)
            fn += sum(x not in f for x in mm)
            fp += sum(x in f for x in oo)
        bloom[str(row["D"])] = {"fn": fn, "fp": fp}
    return {"resonator": res, "membership": member, "bloom": bloom, "probes": int(members.numel())}


# ---------------------------------------------------------------- orchestration and report

def two_proportion_z(k1: int, n1: int, k2: int, n2: int) -> float:
    """z of the difference of two binomial proportions (pooled variance); 0 when both are 0 or 1."""
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return 0.0 if se == 0 else (k1 / n1 - k2 / n2) / se


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson interval of a binomial proportion."""
    p, d = k / n, 1 + z * z / n
    c, h = (p + z * z / (2 * n)) / d, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, c - h), min(1.0, c + h)


def summarise(runs: dict[str, list[dict]], s: dict, bloom_table: list[dict]) -> dict:
    """Pool the rounds: per M the accuracy / sweeps / seconds of every variant, the per-problem agreement of
    torchhd (task start) with the task's concurrent update, and the speed ratios paired per round; per D the
    membership and Bloom error counts. Pure Python (the orchestrator imports neither torch nor zoo)."""
    o, p = runs["ours"], runs["peer"]
    out: dict = {"resonator": {}, "membership": {}, "bloom": {}}
    for m in s["Ms"]:
        row = {}
        for side, key, label in [(o, k, v) for k, v in OURS.items()] + [(p, k, v) for k, v in TORCHHD.items()]:
            cells = [r["resonator"][f"{m}/{key}"] for r in side]
            solved = sum(sum(c["solved"]) for c in cells)
            total = sum(len(c["solved"]) for c in cells)
            used = [u for c in cells for u in c["used"]]
            row[label] = {"solved": solved, "n": total, "accuracy": solved / total, "ci": wilson(solved, total),
                          "iterations": statistics.fmean(used),
                          "converged": sum(u < s["iters"] for u in used) / len(used),
                          "s_per_problem": [c["seconds"] / len(c["solved"]) for c in cells],
                          # per problem and update step: the task's batch runs max(used) sweeps on every problem,
                          # torchhd (one problem at a time) runs used[b] steps on problem b
                          "s_per_step": [c["seconds"] / (len(c["used"]) * max(c["used"]) if side is o else sum(c["used"]))
                                         for c in cells],
                          "zero_entries": max((c.get("zero_entries", 0.0) for c in cells), default=0.0)}
        row["batched step"] = [r["resonator"][f"{m}/batched_step_s"] / s["n"] for r in p]
        for key in ("matched", "tie1"):
            same = total = 0
            for ro, rp in zip(o, p, strict=True):
                a, b = ro["resonator"][f"{m}/concurrent"], rp["resonator"][f"{m}/{key}"]
                same += sum(x == y and u == v for x, y, u, v in zip(a["solved"], b["solved"], a["used"], b["used"],
                                                                    strict=True))
                total += len(a["solved"])
            row[f"identical {TORCHHD[key]}"] = same / total
        for peer in TORCHHD.values():
            row[f"z {peer}"] = two_proportion_z(row[peer]["solved"], row[peer]["n"], row["task concurrent"]["solved"],
                                                row["task concurrent"]["n"])
            row[f"speed {peer}"] = peerlib.paired(row[peer]["s_per_problem"], row["task concurrent"]["s_per_problem"])
        out["resonator"][m] = row
    n_probe = sum(r["probes"] for r in o)  # member probes = non-member probes, over the rounds
    for d in s["dims"]:
        k = str(d)
        err = lambda cells: sum(c["fn"] + c["fp"] for c in cells)  # noqa: E731
        ours, own = err([r["membership"][k] for r in o]), err([r["membership"][k]["own"] for r in p])
        shared_same = sum(a["membership"][k]["decisions"] == b["membership"][k]["shared"]["decisions"]
                          for a, b in zip(o, p, strict=True))
        out["membership"][d] = {"ours": ours / (2 * n_probe), "torchhd": own / (2 * n_probe),
                                "z": two_proportion_z(ours, 2 * n_probe, own, 2 * n_probe),
                                "shared_identical": f"{shared_same}/{len(o)}", "decisions": 2 * n_probe}
    for tab in bloom_table:
        k, h, bits = str(tab["D"]), tab["hashes"], tab["bits"]
        fp_o, fp_p = sum(r["bloom"][k]["fp"] for r in o), sum(r["bloom"][k]["fp"] for r in p)
        fn = sum(r["bloom"][k]["fn"] for r in o) + sum(r["bloom"][k]["fn"] for r in p)
        theory = (1 - (1 - h / bits) ** s["set_size"]) ** h
        out["bloom"][tab["D"]] = {"hashes": h, "bits": bits, "ours": fp_o / n_probe, "peer": fp_p / n_probe,
                                  "theory": theory, "z": two_proportion_z(fp_o, n_probe, fp_p, n_probe), "fn": fn,
                                  "probes": n_probe}
    return out


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env("torchhd", PEER_REQ)
    rounds = 1 if a.quick else a.rounds
    s = dict(SETTINGS, **(QUICK if a.quick else {}))
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo-peer-vsa-") as tmp:
        folder = Path(tmp)
        f = folder / "prep.json"
        f.write_text(json.dumps({"dir": tmp, "settings": s, "seeds": list(range(rounds))}))
        prep = peerlib.run_side(peerlib.OURS_PYTHON, __file__, "prep", f)

        def side(python: str, name: str):
            def run(r: int) -> dict:
                g = folder / f"in-{name}-{r}.json"
                g.write_text(json.dumps({"dir": tmp, "settings": s, "seed": r, "bloom": prep["bloom"]}))
                out = peerlib.run_side(python, __file__, name, g)
                log.info("round %d %s: %.1f s", r, name, out["_process"]["seconds"])
                return out
            return run

        runs = peerlib.interleave({"ours": side(peerlib.OURS_PYTHON, "ours"), "peer": side(peer_py, "peer")}, rounds)
    log.info("measured in %.0f s", time.perf_counter() - t_start)
    summ = summarise(runs, s, prep["bloom"])
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["torch", "zoo-task-vsa-bench", "zoo-vsa-capacity"])
    ver_peer = peerlib.versions(peer_py, [PEER, "torch", "pybloom-live"])
    md = _section(a, s, rounds, summ, ver_ours, ver_peer)
    peerlib.write_section("torchhd_vsa", md)
    print(md)


def _section(a, s: dict, rounds: int, summ: dict, ver_ours: dict, ver_peer: dict) -> str:
    q = lambda xs, spec=".2f": peerlib.quartiles([x * 1e3 for x in xs], spec)  # noqa: E731  (milliseconds)
    pct = lambda v: f"{100 * v:.1f}%"  # noqa: E731
    lines = [f"### VSA: vsa_bench `classic_resonator` and `vsa-capacity` vs torchhd {ver_peer[PEER]} "
             f"(and pybloom-live {ver_peer['pybloom-live']})", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"**Resonator networks.** vsa_bench's `factorization_problems`: D = {s['dim']}, F = {s['factors']}, "
             f"n = {s['n']} composites per M and round, {rounds} round(s) (seed = round), at most {s['iters']} sweeps, "
             "the same codebooks and composites on both sides. torchhd's `resonator` is one concurrent step (every "
             "factor from the others' previous estimates, `sign` non-linearity, ties to 0), called here on one problem "
             "at a time with its documented shapes; the loop around it stops at the first step that changes nothing "
             "(the task's rule) and decodes up to sign as the task does. The task's `ClassicResonator` runs the whole "
             "batch in one call. Accuracy = all factors right, pooled over rounds, with its 95% Wilson interval; sweeps "
             "= mean over problems (a non-converged problem counts the cap); ms / problem = the variant's time for "
             "the n problems / n, median (p25–p75) over rounds; z = two-proportion z of the accuracy against the "
             "task's concurrent update; time ratio = median over rounds of torchhd's time / the task's concurrent "
             "time in the same round.", "",
             "| M | variant | accuracy (95% CI) | mean sweeps | converged | ms / problem | z vs task concurrent | "
             "time / task concurrent |", "|---|---|---|---|---|---|---|---|"]
    for m, row in summ["resonator"].items():
        for label in (*OURS.values(), *TORCHHD.values()):
            c = row[label]
            lo, hi = c["ci"]
            peer = label.startswith("torchhd")
            lines.append(f"| {m} | {label} | {c['accuracy']:.3f} ({lo:.3f}–{hi:.3f}) | {c['iterations']:.1f} | "
                         f"{c['converged']:.3f} | {q(c['s_per_problem'])} | "
                         + (f"{row['z ' + label]:+.2f} | {row['speed ' + label]:.2f}x |" if peer else "| |"))
    ident = lambda lab: ", ".join(f"M = {m}: {pct(row['identical ' + lab])}" for m, row in summ["resonator"].items())  # noqa: E731
    zeros = max(row[TORCHHD[k]]["zero_entries"] for row in summ["resonator"].values() for k in ("multiset", "matched"))
    lines += ["", "Problems on which torchhd from the task's start and the task's concurrent update end identically "
              f"(same solved / unsolved and the same number of sweeps): {ident(TORCHHD['matched'])}; with torchhd's "
              f"ties sent to +1 (the task's `sign0`): {ident(TORCHHD['tie1'])}. Largest fraction of exact-zero "
              f"entries left in torchhd's final estimates (its `sign(0) = 0`): {zeros:.2e}.", "",
              "Time per problem and update step (ms, median (p25–p75) over rounds): the task's batch computes every "
              "problem for as many sweeps as its slowest needs; torchhd one problem at a time; torchhd batched = one "
              "`resonator` step on all n problems at once (composites (n, D), estimates (n, F, D), the codebooks "
              "broadcast over n, which its matmul copies per problem) / n.", "",
              "| M | task concurrent (batch) | torchhd (task start), one problem at a time | torchhd, one batched step |",
              "|---|---|---|---|"]
    for m, row in summ["resonator"].items():
        lines.append(f"| {m} | {q(row['task concurrent']['s_per_step'], '.4f')} | "
                     f"{q(row[TORCHHD['matched']]['s_per_step'], '.4f')} | {q(row['batched step'], '.4f')} |")
    lines += ["",
              f"**MAP bundling membership.** vsa_bench's `symbol_sets`: |S| = {s['set_size']}, alphabet "
              f"{s['alphabet']}, n = {s['n']} sets per round, {s['probes']} member and {s['probes']} non-member "
              "probes per set; error = (false negatives + false positives) / 2 pooled over rounds. Each side's own "
              "seeded atoms; 'same atoms' = torchhd's multiset + dot_similarity on the zoo side's atoms, rounds whose "
              "every decision equals the zoo side's. z = two-proportion z of the error counts (probes of one set "
              "share a bundle, so the z is a nominal yardstick, not an exact test).", "",
              "| D | vsa_map_i error | torchhd MAP error | z | same atoms: identical decisions |", "|---|---|---|---|---|"]
    for d, r in summ["membership"].items():
        lines.append(f"| {d} | {r['ours']:.4f} | {r['torchhd']:.4f} | {r['z']:+.2f} | {r['shared_identical']} rounds |")
    lines += ["", "**Bloom filter.** `vsa_sparse_bloom` (p ones per atom, drawn without repetition; OR bundling) vs "
              "pybloom-live `BloomFilter` (p slices of b / p bits, one salted hash per slice) at the same b bits and p "
              "hashes, the task's sets and non-member probes; theory = (1 - (1 - p / b)^|S|)^p.", "",
              "| D | hashes p | bits b | vsa_sparse_bloom FPR | pybloom-live FPR | theory | z | false negatives |",
              "|---|---|---|---|---|---|---|---|"]
    for d, r in summ["bloom"].items():
        lines.append(f"| {d} | {r['hashes']} | {r['bits']} | {r['ours']:.4f} | {r['peer']:.4f} | {r['theory']:.4f} | "
                     f"{r['z']:+.2f} | {r['fn']} |")
    zs = [row[f"z {lab}"] for row in summ["resonator"].values() for lab in TORCHHD.values()]
    speed = [row["speed torchhd (task start)"] for row in summ["resonator"].values()]
    zm = [r["z"] for r in summ["membership"].values()] + [r["z"] for r in summ["bloom"].values()]
    lines += ["", f"Largest |z| of torchhd's accuracy against the task's concurrent update: {max(abs(z) for z in zs):.2f}; "
              f"torchhd (task start) takes {min(speed):.2f}x–{max(speed):.2f}x the task's time per problem over M; "
              f"largest |z| of the membership and Bloom error rates: {max(abs(z) for z in zm):.2f} (|z| < 2: equal "
              "within binomial noise)."]
    return "\n".join(lines)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: 1 round, n = 40, M 16 and 64, D 64 / 256 / 1024")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer}, orchestrate, add_args)
