"""node2vec's two skip-gram trainers on the same walks: link AUC and fit CPU seconds.

For each graph and seed: graph_embed's ``link_split`` (50% of the edges held out, split seed = seed), the
residual graph's walks sampled once (paper settings, p = 1, q = 1 unless given), then the same walks and
the same initial vectors trained by ``trainer="torch"`` and ``trainer="skipgram"``; each embedding scored by
the task's ``link_auc`` (Hadamard + logistic regression). CPU seconds are ``time.process_time`` of
``fit_walks`` alone, on one torch thread. The first skip-gram call of the process pays numba's start-up; a
warm-up fit on a tiny walk set comes first so it is not counted.

With ``--gensim PYTHON`` (an environment with gensim, e.g. ``benchmarks/peers/.envs/gensim/bin/python``, which
``benchmarks/peers/gensim_w2v.py`` builds) the same walks are also trained by gensim ``Word2Vec`` in that
interpreter with the same settings (sg=1, window, negatives, d, one epoch, ``sample=0``, alpha 0.025 -> 0.0001,
one worker, seed = seed); its CPU is ``process_time`` of ``train`` alone (vocabulary building excluded).

    .venv/bin/python plugins/node2vec/benchmarks/trainers.py --graphs les_miserables wiki_cooccurrence --seeds 0 1 2
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from zoo_node2vec.model import Node2Vec
from zoo_task_graph_embed import task

GENSIM = """
import json, sys, time
import numpy as np
from gensim.models import Word2Vec
walks_path, out_path, n, seed, dim, window, negative = sys.argv[1:8]
walks = np.load(walks_path)
sents = [[str(x) for x in row if x >= 0] for row in walks.tolist()]
m = Word2Vec(vector_size=int(dim), window=int(window), negative=int(negative), hs=0, sg=1, min_count=1, sample=0,
             alpha=0.025, min_alpha=0.0001, workers=1, seed=int(seed), epochs=1)
m.build_vocab(sents)
c0 = time.process_time()
m.train(sents, total_examples=len(sents), epochs=1)
cpu = time.process_time() - c0
np.save(out_path, np.stack([m.wv[str(i)] for i in range(int(n))]))
print(json.dumps({"cpu": cpu}))
"""


def gensim_fit(python: str, walks: np.ndarray, n: int, seed: int, model: Node2Vec) -> tuple[np.ndarray, float]:
    """gensim Word2Vec on ``walks`` in the interpreter ``python``: (vectors in node order, training CPU s)."""
    with tempfile.TemporaryDirectory() as tmp:
        w, out = Path(tmp) / "walks.npy", Path(tmp) / "emb.npy"
        np.save(w, walks.astype(np.int32))
        res = subprocess.run([python, "-c", GENSIM, str(w), str(out), str(n), str(seed), str(model.dim),
                              str(model.window), str(model.negatives)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"})
        return np.load(out), json.loads(res.stdout.strip().splitlines()[-1])["cpu"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", nargs="+", default=["les_miserables"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--p", type=float, default=1.0)
    ap.add_argument("--q", type=float, default=1.0)
    ap.add_argument("--gensim", default="", help="python of an environment with gensim: train the walks with it too")
    args = ap.parse_args()
    torch.set_num_threads(1)
    Node2Vec(num_nodes=3, dim=4).fit_walks(np.array([[0, 1, 2, 1]]), trainer="skipgram")  # compile / load cache
    print(f"p={args.p} q={args.q}; d=128, r=10, l=80, k=10, 5 negatives, 1 epoch, sample=0")
    trainers = ("torch", "skipgram", *(("gensim",) if args.gensim else ()))
    print("| graph | seed | " + " | ".join(f"{t} AUC" for t in trainers) + " | "
          + " | ".join(f"{t} fit CPU s" for t in trainers) + " |")
    print("|---" * (2 + 2 * len(trainers)) + "|")
    for name in args.graphs:
        edges, n, names = task.load_graph(name)
        res = {t: ([], []) for t in trainers}
        for seed in args.seeds:
            split = task.link_split(edges, 0.5, seed, num_nodes=n)
            torch.manual_seed(seed)
            base = Node2Vec(num_nodes=n, p=args.p, q=args.q)
            walks = base.sample_walks(task.GraphData(split.train_pos, n, tuple(names)), seed=seed)
            init = base.state_dict()
            row = []
            for trainer in trainers:
                m = Node2Vec(num_nodes=n, p=args.p, q=args.q)
                m.load_state_dict(init)
                if trainer == "gensim":
                    emb, cpu = gensim_fit(args.gensim, walks, n, seed, m)
                else:
                    c0 = time.process_time()
                    m.fit_walks(walks, seed=seed, trainer=trainer)
                    cpu = time.process_time() - c0
                    emb = m.embeddings()
                auc = task.link_auc(emb, split.test_pos, split.test_neg, train_pos=split.train_pos,
                                     train_neg=split.train_neg)
                res[trainer][0].append(auc)
                res[trainer][1].append(cpu)
                row.append((auc, cpu))
            print(f"| {name} | {seed} | " + " | ".join(f"{a:.4f}" for a, _ in row) + " | "
                  + " | ".join(f"{c:.2f}" for _, c in row) + " |", flush=True)
        print(f"| {name} | mean | " + " | ".join(f"{statistics.mean(res[t][0]):.4f}" for t in trainers) + " | "
              + " | ".join(f"{statistics.mean(res[t][1]):.2f}" for t in trainers) + " |", flush=True)


if __name__ == "__main__":
    main()
