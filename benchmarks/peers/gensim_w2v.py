"""word2vec side by side: the zoo ``word2vec`` plugin (``zoo_nn.skipgram``, numba) vs gensim ``Word2Vec``.

The same token stream on both sides: the 10,033 Wikipedia leads of the ``embedding_quality`` task, tokenised by
the task (792k tokens), written once by the zoo side. Both sides get the same settings: skip-gram (gensim
``sg=1``), d = 100, window 5, 5 negatives, ``sample=1e-3``, 5 epochs, ``min_count=5``, learning rate 0.025, one
thread (gensim ``workers=1``), seed = round. Each side builds its own vocabulary and trains, timed (wall and
CPU, vocabulary building and training apart); its vectors are saved and all are scored the same way in the zoo
environment by the task's ``word_scores`` (WS353, SimLex, 2,000 in-vocabulary Google analogies drawn with the
round's seed). Words per second = corpus tokens x epochs / training seconds, the same numerator on both sides.

    .venv/bin/python benchmarks/peers/gensim_w2v.py            # 3 interleaved rounds, ~4 min (loaded 2 cores)
    .venv/bin/python benchmarks/peers/gensim_w2v.py --quick    # smoke run: Lee corpus, 1 round
"""
from __future__ import annotations

import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import peerlib

log = logging.getLogger("zoo.bench.peers.gensim_w2v")
PEER = "gensim"
PEER_REQ = ["gensim==4.4.0"]
SETTINGS = {"dim": 100, "window": 5, "negative": 5, "sample": 1e-3, "epochs": 5, "min_count": 5, "lr": 0.025}


def side_prep(inp: dict, _args) -> dict:
    """The task's tokenised corpus as one JSON list of sentences (both sides read it)."""
    from zoo_task_embedding_quality.data import load_corpus

    corpus = load_corpus(inp["corpus"], "all")
    Path(inp["tokens"]).write_text(json.dumps(corpus.sentences))
    return {"sentences": len(corpus.sentences), "tokens": corpus.num_tokens}


def _save(folder: str, side: str, seed: int, words: list[str], vectors) -> None:
    import numpy as np

    np.save(Path(folder) / f"vec-{side}-{seed}.npy", np.asarray(vectors, dtype=np.float32))
    (Path(folder) / f"words-{side}-{seed}.json").write_text(json.dumps(list(words)))


def side_ours(inp: dict, _args) -> dict:
    import torch

    from zoo_nn import skipgram
    from zoo_word2vec.model import word2vec_sgns

    torch.set_num_threads(1)
    sents, seed, s = json.loads(Path(inp["tokens"]).read_text()), inp["seed"], inp["settings"]
    skipgram.train([[0, 1, 0]], 2, dim=4, epochs=1)  # numba's compile (cached on disk after the first run)
    model = word2vec_sgns(dim=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
                          epochs=s["epochs"], min_count=s["min_count"], lr=s["lr"])
    c0, t0 = time.process_time(), time.perf_counter()
    fig = model.fit(sents, seed=seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    _save(inp["dir"], "ours", seed, model.vocab, model.emb.weight.detach().numpy())
    return {"seconds": wall, "cpu_s": cpu, "train_s": fig["train_seconds"], "vocab_s": wall - fig["train_seconds"],
            "vocabulary": len(model.vocab), "final_loss": fig["final_train_loss"]}


def side_peer(inp: dict, _args) -> dict:
    if os.environ.get("PYTHONHASHSEED") != "0":  # gensim seeds each vector with hash(word): fix it
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    from gensim.models import Word2Vec

    sents, seed, s = json.loads(Path(inp["tokens"]).read_text()), inp["seed"], inp["settings"]
    c0, t0 = time.process_time(), time.perf_counter()
    model = Word2Vec(vector_size=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
                     epochs=s["epochs"], min_count=s["min_count"], alpha=s["lr"], sg=1, hs=0, workers=1, seed=seed)
    model.build_vocab(sents)
    t1 = time.perf_counter()
    model.train(sents, total_examples=model.corpus_count, epochs=model.epochs)
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    words = list(model.wv.index_to_key)
    _save(inp["dir"], "peer", seed, words, model.wv.vectors)
    return {"seconds": t2 - t0, "cpu_s": cpu, "train_s": t2 - t1, "vocab_s": t1 - t0, "vocabulary": len(words)}


class _Vectors:
    """Saved word vectors with the task's text contract (a word's row, zeros when unknown)."""

    def __init__(self, words: list[str], vectors) -> None:
        import numpy as np

        self.index, self.vectors = {w: i for i, w in enumerate(words)}, vectors
        self.zero = np.zeros(vectors.shape[1], dtype=np.float32)

    def embed(self, texts: list[str]):
        import numpy as np

        return np.stack([self.vectors[self.index[t]] if t in self.index else self.zero for t in texts])


def side_score(inp: dict, _args) -> dict:
    import numpy as np

    from zoo_task_embedding_quality import task
    from zoo_task_embedding_quality.data import load_corpus

    vocab = load_corpus(inp["corpus"], "all").vocabulary(inp["settings"]["min_count"])
    out = {}
    for side in ("ours", "peer"):
        for seed in inp["seeds"]:
            words = json.loads((Path(inp["dir"]) / f"words-{side}-{seed}.json").read_text())
            vec = np.load(Path(inp["dir"]) / f"vec-{side}-{seed}.npy")
            sc = task.word_scores(_Vectors(words, vec), vocab, seed=seed)
            out[f"{side}-{seed}"] = {k: float(sc[k]) for k in ("ws353", "simlex", "analogy", "analogy_coverage")}
    return out


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env(PEER, PEER_REQ, torch=None)
    rounds = 1 if a.quick else a.rounds
    corpus = "lee" if a.quick else "wiki"
    settings = dict(SETTINGS, **({"min_count": 2, "epochs": 2} if a.quick else {}))
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo-peer-w2v-") as tmp:
        tmpd = Path(tmp)
        base = {"dir": tmp, "tokens": str(tmpd / "tokens.json"), "corpus": corpus, "settings": settings}
        prep, runs, scores = peerlib.prep_rounds_score(__file__, peer_py, base, tmpd, rounds)
    log.info("measured in %.0f s", time.perf_counter() - t_start)
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["numba", "numpy", "zoo-nn", "zoo-word2vec"])
    ver_peer = peerlib.versions(peer_py, [PEER, "numpy", "scipy"])
    md = _section(a, runs, scores, prep, settings, corpus, ver_ours, ver_peer)
    peerlib.write_section("gensim_w2v", md)
    print(md)


def _section(a, runs: dict, scores: dict, prep: dict, s: dict, corpus: str, ver_ours: dict, ver_peer: dict) -> str:
    o, p = runs["ours"], runs["peer"]
    seeds = range(len(o))
    q = peerlib.quartiles
    e = lambda side, k: [x[k] for x in side]  # noqa: E731
    words = prep["tokens"] * s["epochs"]
    wps = lambda side: [words / x["train_s"] for x in side]  # noqa: E731
    sc = lambda side, k: [scores[f"{side}-{r}"][k] for r in seeds]  # noqa: E731
    lines = [f"### word2vec: `word2vec` plugin (zoo_nn.skipgram) vs gensim {ver_peer[PEER]} Word2Vec", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"Corpus: embedding_quality `{corpus}` tokenised by the task ({prep['sentences']:,} sentences, "
             f"{prep['tokens']:,} tokens). Both: skip-gram with negative sampling, d = {s['dim']}, window {s['window']}, "
             f"{s['negative']} negatives, sample {s['sample']:g}, {s['epochs']} epochs, min_count {s['min_count']}, "
             f"lr {s['lr']} (gensim's floor `min_alpha=0.0001`, ours word2vec.c's lr x 1e-4), one thread. "
             f"{len(o)} interleaved rounds (seed = round); figures as median (p25–p75) over rounds, ratio = median over "
             "rounds of ours / gensim in the same round. Every vector table scored by the task's `word_scores` in the "
             "zoo environment.", "",
             "| | ours | gensim | ours / gensim |", "|---|---|---|---|"]
    for k, label in (("train_s", "training wall s"), ("vocab_s", "vocabulary wall s"), ("seconds", "total wall s"),
                     ("cpu_s", "total CPU s")):
        lines.append(f"| {label} | {q(e(o, k), '.2f')} | {q(e(p, k), '.2f')} | {peerlib.paired(e(o, k), e(p, k)):.3f} |")
    lines.append(f"| training words / s (corpus tokens x epochs) | {q(wps(o), ',.0f')} | {q(wps(p), ',.0f')} | "
                 f"{peerlib.paired(wps(o), wps(p)):.3f} |")
    for k, label in (("ws353", "WS353 Spearman"), ("simlex", "SimLex-999 Spearman"),
                     ("analogy", "Google analogy accuracy (3CosAdd)")):
        diff = peerlib.paired(sc("ours", k), sc("peer", k), lambda x, y: x - y)
        lines.append(f"| {label} | {q(sc('ours', k))} | {q(sc('peer', k))} | {diff:+.3f} (difference) |")
    lines.append(f"| vocabulary | {o[0]['vocabulary']:,} | {p[0]['vocabulary']:,} | |")
    speed = peerlib.paired(wps(o), wps(p))
    d = {k: peerlib.paired(sc("ours", k), sc("peer", k), lambda x, y: x - y) for k in ("ws353", "analogy")}
    lines += ["", f"Ours trains at {speed:.2f}x gensim's words per second; quality differences (paired medians) "
              f"WS353 {d['ws353']:+.3f}, analogy {d['analogy']:+.3f} (the seeds' spread: WS353 "
              f"{statistics.pstdev(sc('ours', 'ws353')):.3f} / {statistics.pstdev(sc('peer', 'ws353')):.3f} std ours / "
              "gensim)."]
    return "\n".join(lines)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: Lee corpus, 2 epochs, one round")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer, "score": side_score}, orchestrate,
                      add_args)
