"""fastText side by side: the zoo ``fasttext-subword`` plugin (``zoo_nn.fasttext``, numba) vs gensim ``FastText``.

The same token stream on both sides: the 10,033 Wikipedia leads of the ``embedding_quality`` task, tokenised by
the task (792k tokens), written once by the zoo side. Both sides get the same settings: subword skip-gram (gensim
``sg=1``), d = 100, character n-grams 3-6 hashed into 200,000 buckets, window 5, 5 negatives, ``sample=1e-3``,
5 epochs, ``min_count=5``, learning rate 0.05, one thread (gensim ``workers=1``), seed = round. Each side builds
its own vocabulary and trains, timed (wall and CPU, vocabulary building and training apart), then writes its
vector of every word the scorer needs (the task's vocabulary and every WS353 / SimLex word, those outside its
vocabulary from their n-grams, as each library computes them). All are scored the same way in the zoo
environment: the task's ``word_scores`` (in-vocabulary WS353, SimLex, 2,000 Google analogies drawn with the
round's seed) and the plugin's ``all_pair_scores`` (WS353 / SimLex over all pairs). Words per second = corpus
tokens x epochs / training seconds, the same numerator on both sides.

    .venv/bin/python benchmarks/peers/gensim_fasttext.py            # 3 interleaved rounds (loaded 2 cores: ~10 min)
    .venv/bin/python benchmarks/peers/gensim_fasttext.py --quick    # smoke run: Lee corpus, 2 epochs, 1 round
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

log = logging.getLogger("zoo.bench.peers.gensim_fasttext")
PEER = "gensim"
PEER_REQ = ["gensim==4.4.0"]  # the same environment as gensim_w2v.py
SETTINGS = {"dim": 100, "window": 5, "negative": 5, "sample": 1e-3, "epochs": 5, "min_count": 5, "lr": 0.05,
            "minn": 3, "maxn": 6, "bucket": 200_000}
QUALITY = (("ws353", "WS353 Spearman (in-vocabulary pairs)"), ("ws353_all", "WS353 Spearman (all 353 pairs)"),
           ("simlex", "SimLex-999 Spearman (in-vocabulary pairs)"), ("simlex_all", "SimLex-999 Spearman (all pairs)"),
           ("analogy", "Google analogy accuracy (3CosAdd)"))


def side_prep(inp: dict, _args) -> dict:
    """The task's tokenised corpus as one JSON list of sentences, and the words to embed (both sides read them)."""
    from zoo_task_embedding_quality.data import load_corpus, load_word_pairs

    corpus = load_corpus(inp["corpus"], "all")
    Path(inp["tokens"]).write_text(json.dumps(corpus.sentences))
    pair_words = {w for name in ("ws353", "simlex") for a, b, _ in load_word_pairs(name) for w in (a, b)}
    words = sorted(set(corpus.vocabulary(inp["settings"]["min_count"])) | pair_words)
    Path(inp["words"]).write_text(json.dumps(words))
    return {"sentences": len(corpus.sentences), "tokens": corpus.num_tokens, "words": len(words)}


def _save(folder: str, side: str, seed: int, vectors) -> None:
    import numpy as np

    np.save(Path(folder) / f"vec-{side}-{seed}.npy", np.asarray(vectors, dtype=np.float32))


def side_ours(inp: dict, _args) -> dict:
    import torch

    from zoo_fasttext_subword.model import fasttext_subword
    from zoo_nn import fasttext

    torch.set_num_threads(1)
    sents, seed, s = json.loads(Path(inp["tokens"]).read_text()), inp["seed"], inp["settings"]
    fasttext.train([[0, 1, 0]], fasttext.subword_table(["a", "b"], 4), 2, 4, dim=4, epochs=1)  # numba's compile
    model = fasttext_subword(dim=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
                             epochs=s["epochs"], min_count=s["min_count"], lr=s["lr"], minn=s["minn"],
                             maxn=s["maxn"], bucket=s["bucket"])
    c0, t0 = time.process_time(), time.perf_counter()
    fig = model.fit(sents, seed=seed)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    _save(inp["dir"], "ours", seed, model.word_vectors(json.loads(Path(inp["words"]).read_text())).numpy())
    return {"seconds": wall, "cpu_s": cpu, "train_s": fig["train_seconds"], "vocab_s": wall - fig["train_seconds"],
            "vocabulary": len(model.vocab), "final_loss": fig["final_train_loss"]}


def side_peer(inp: dict, _args) -> dict:
    if os.environ.get("PYTHONHASHSEED") != "0":  # gensim seeds vectors with hash(word): fix it
        os.environ["PYTHONHASHSEED"] = "0"
        os.execv(sys.executable, [sys.executable, *sys.argv])
    import numpy as np
    from gensim.models import FastText

    sents, seed, s = json.loads(Path(inp["tokens"]).read_text()), inp["seed"], inp["settings"]
    c0, t0 = time.process_time(), time.perf_counter()
    model = FastText(vector_size=s["dim"], window=s["window"], negative=s["negative"], sample=s["sample"],
                     epochs=s["epochs"], min_count=s["min_count"], alpha=s["lr"], min_n=s["minn"], max_n=s["maxn"],
                     bucket=s["bucket"], sg=1, hs=0, workers=1, seed=seed)
    model.build_vocab(sents)
    t1 = time.perf_counter()
    model.train(sents, total_examples=model.corpus_count, epochs=model.epochs)
    t2 = time.perf_counter()
    cpu = time.process_time() - c0
    words = json.loads(Path(inp["words"]).read_text())
    _save(inp["dir"], "peer", seed, np.stack([model.wv[w] for w in words]))  # unseen words: their n-grams
    return {"seconds": t2 - t0, "cpu_s": cpu, "train_s": t2 - t1, "vocab_s": t1 - t0, "vocabulary": len(model.wv)}


class _Vectors:
    """Saved word vectors with the task's text contract (a word's row, zeros when absent)."""

    def __init__(self, words: list[str], vectors) -> None:
        import numpy as np

        self.index, self.vectors = {w: i for i, w in enumerate(words)}, vectors
        self.zero = np.zeros(vectors.shape[1], dtype=np.float32)

    def embed(self, texts: list[str]):
        import numpy as np

        return np.stack([self.vectors[self.index[t]] if t in self.index else self.zero for t in texts])


def side_score(inp: dict, _args) -> dict:
    import numpy as np

    from zoo_fasttext_subword.reproduce import all_pair_scores
    from zoo_task_embedding_quality import task
    from zoo_task_embedding_quality.data import load_corpus

    vocab = load_corpus(inp["corpus"], "all").vocabulary(inp["settings"]["min_count"])
    words = json.loads(Path(inp["words"]).read_text())
    out = {}
    for side in ("ours", "peer"):
        for seed in inp["seeds"]:
            vec = _Vectors(words, np.load(Path(inp["dir"]) / f"vec-{side}-{seed}.npy"))
            sc = {**task.word_scores(vec, vocab, seed=seed), **all_pair_scores(vec)}
            out[f"{side}-{seed}"] = {k: float(sc[k]) for k, _ in QUALITY}
    return out


def orchestrate(a) -> None:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    peer_py = peerlib.ensure_env(PEER, PEER_REQ, torch=None)
    rounds = 1 if a.quick else a.rounds
    corpus = "lee" if a.quick else "wiki"
    settings = dict(SETTINGS, **({"min_count": 2, "epochs": 2} if a.quick else {}))
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo-peer-ft-") as tmp:
        tmpd = Path(tmp)
        base = {"dir": tmp, "tokens": str(tmpd / "tokens.json"), "words": str(tmpd / "words.json"), "corpus": corpus,
                "settings": settings}
        prep, runs, scores = peerlib.prep_rounds_score(__file__, peer_py, base, tmpd, rounds)
    log.info("measured in %.0f s", time.perf_counter() - t_start)
    ver_ours = peerlib.versions(peerlib.OURS_PYTHON, ["numba", "numpy", "zoo-nn", "zoo-fasttext-subword"])
    ver_peer = peerlib.versions(peer_py, [PEER, "numpy", "scipy"])
    md = _section(a, runs, scores, prep, settings, corpus, ver_ours, ver_peer)
    peerlib.write_section("gensim_fasttext", md)
    print(md)


def _section(a, runs: dict, scores: dict, prep: dict, s: dict, corpus: str, ver_ours: dict, ver_peer: dict) -> str:
    o, p = runs["ours"], runs["peer"]
    seeds = range(len(o))
    q = peerlib.quartiles
    e = lambda side, k: [x[k] for x in side]  # noqa: E731
    words = prep["tokens"] * s["epochs"]
    wps = lambda side: [words / x["train_s"] for x in side]  # noqa: E731
    sc = lambda side, k: [scores[f"{side}-{r}"][k] for r in seeds]  # noqa: E731
    lines = [f"### fastText: `fasttext-subword` plugin (zoo_nn.fasttext) vs gensim {ver_peer[PEER]} FastText", "",
             f"`{a.command}`" + (" (**--quick**: smoke run, not a measurement)" if a.quick else ""), "",
             "Ours: " + ", ".join(f"{k} {v}" for k, v in ver_ours.items()) + ". Peer: "
             + ", ".join(f"{k} {v}" for k, v in ver_peer.items()) + ". " + peerlib.machine() + ".", "",
             f"Corpus: embedding_quality `{corpus}` tokenised by the task ({prep['sentences']:,} sentences, "
             f"{prep['tokens']:,} tokens). Both: subword skip-gram with negative sampling, d = {s['dim']}, n-grams "
             f"{s['minn']}-{s['maxn']} in {s['bucket']:,} buckets, window {s['window']}, {s['negative']} negatives, "
             f"sample {s['sample']:g}, {s['epochs']} epochs, min_count {s['min_count']}, lr {s['lr']}, one thread. "
             f"{len(o)} interleaved rounds (seed = round); figures as median (p25–p75) over rounds, ratio = median over "
             "rounds of ours / gensim in the same round. Each side embeds the task's vocabulary and every WS353 / "
             "SimLex word with its own model (unseen words from their n-grams); all scored in the zoo environment.", "",
             "| | ours | gensim | ours / gensim |", "|---|---|---|---|"]
    for k, label in (("train_s", "training wall s"), ("vocab_s", "vocabulary wall s"), ("seconds", "total wall s"),
                     ("cpu_s", "total CPU s")):
        lines.append(f"| {label} | {q(e(o, k), '.2f')} | {q(e(p, k), '.2f')} | {peerlib.paired(e(o, k), e(p, k)):.3f} |")
    lines.append(f"| training words / s (corpus tokens x epochs) | {q(wps(o), ',.0f')} | {q(wps(p), ',.0f')} | "
                 f"{peerlib.paired(wps(o), wps(p)):.3f} |")
    for k, label in QUALITY:
        diff = peerlib.paired(sc("ours", k), sc("peer", k), lambda x, y: x - y)
        lines.append(f"| {label} | {q(sc('ours', k))} | {q(sc('peer', k))} | {diff:+.3f} (difference) |")
    lines.append(f"| vocabulary | {o[0]['vocabulary']:,} | {p[0]['vocabulary']:,} | |")
    speed = peerlib.paired(wps(o), wps(p))
    d = {k: peerlib.paired(sc("ours", k), sc("peer", k), lambda x, y: x - y) for k in ("ws353", "ws353_all", "analogy")}
    lines += ["", f"Ours trains at {speed:.2f}x gensim's words per second; quality differences (paired medians) "
              f"WS353 {d['ws353']:+.3f} (all pairs {d['ws353_all']:+.3f}), analogy {d['analogy']:+.3f} (the seeds' "
              f"spread: WS353 {statistics.pstdev(sc('ours', 'ws353')):.3f} / {statistics.pstdev(sc('peer', 'ws353')):.3f} "
              "std ours / gensim)."]
    return "\n".join(lines)


def add_args(p) -> None:
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (seeds)")
    p.add_argument("--quick", action="store_true", help="smoke run: Lee corpus, 2 epochs, one round")


if __name__ == "__main__":
    peerlib.side_main({"prep": side_prep, "ours": side_ours, "peer": side_peer, "score": side_score}, orchestrate,
                      add_args)
