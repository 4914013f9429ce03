"""``zoo reproduce kv-embedding``: KV re-routing vs plain pooling of the same frozen LM, in sentence mode.

Per seed, one word-level GPT (CPU defaults) is trained as a plain next-word model on the 9,033 training Wikipedia
leads of embedding_quality (``load_corpus("wiki", split="train")``; the seed draws its initialisation and batches),
then frozen; its re-routed blocks are picked by TwoNN on 500 training leads. Every LM row embeds texts with that
same frozen LM and differs only in how: ``kv_embedding`` re-routes the last token's key/value as a prefix (mean
pooling), ``mean_pooling`` and ``last_token_pooling`` are the paper's training-free baselines (no re-routing);
the ``hybrid`` rows (mean + last, the paper's pooling) are reported only. Each row is scored by the task's
``sentence_scores`` (topic probe on 3,000 training leads drawn with the seed, description -> lead retrieval over
the 1,000 test leads, Lee document similarity). TF-IDF (idf from the training leads) and the frozen MiniLM
(retrieval and Lee only, to save four minutes of encoding: its topic probe is in the task README) do not depend
on the seed and are computed once per process. ``--quick``: a 5-step LM, retrieval over the first 100 test
articles and Lee.
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_embedding_quality import metrics as M
from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.baselines import MiniLM, build_baseline
from zoo_task_embedding_quality.data import load_corpus, load_lee_similarity, wiki_retrieval_set

from .model import CPU, KVEmbedding
from .plugin import CLAIM

STEPS, QUICK_STEPS = CPU["steps"], 5
QUICK_TEST = 100  # --quick: retrieval over the first 100 test articles
MRR_MARGIN = 0.0
FIT_FIGURES = ("lm_final_loss", "lm_train_seconds", "rerouted_layer0", "rerouted_layer1")


@cache
def fitted_lm(seed: int, quick: bool) -> tuple[KVEmbedding, dict[str, float]]:
    """The frozen LM of ``seed`` (trained once per process and shared by every LM row) and its fit figures."""
    model = zoo.create("kv_embedding")
    fig = model.fit(load_corpus("wiki", split="train"), steps=QUICK_STEPS if quick else STEPS, seed=seed)
    return model, {k: float(fig[k]) for k in FIT_FIGURES if k in fig}


class _Pooled:
    """One pooling of the frozen LM of a seed, re-routed or not, each text encoded once per process."""

    cache: dict[tuple[int, bool, bool], dict[str, dict[str, Any]]] = {}

    def __init__(self, seed: int, quick: bool, reroute: bool, pooling: str) -> None:
        self.lm = fitted_lm(seed, quick)[0]
        self.seen = self.cache.setdefault((seed, quick, reroute), {})
        self.reroute, self.pooling = reroute, pooling

    def embed(self, texts: list[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if new:
            out = self.lm.pooled(new, reroute=self.reroute)
            for i, t in enumerate(new):
                self.seen[t] = {p: v[i].numpy() for p, v in out.items()}
        return np.stack([self.seen[t][self.pooling] for t in texts])


def retrieval_set(quick: bool) -> tuple[list[str], list[str], list[int]]:
    """(queries, leads, target lead of each query): the task's description -> lead retrieval (sentence mode)."""
    return tuple(map(list, wiki_retrieval_set(QUICK_TEST if quick else None)))


def _retrieval_and_lee(model: Any, quick: bool) -> dict[str, float]:
    queries, leads, target = retrieval_set(quick)
    docs, human = load_lee_similarity()
    return {**M.retrieval_scores(model.embed(queries), model.embed(leads), target),
            "lee_spearman": M.matrix_spearman(model.embed(list(docs)), human)}


def lm_row(*, seed: int, quick: bool, reroute: bool, pooling: str) -> dict[str, float]:
    """The seed's frozen LM, ``pooling`` of its last layer, with or without KV re-routing, scored as sentence mode."""
    model = _Pooled(seed, quick, reroute, pooling)
    scores = _retrieval_and_lee(model, quick) if quick else task.sentence_scores(model, seed=seed)
    fig = {k: v for k, v in fitted_lm(seed, quick)[1].items() if reroute or not k.startswith("rerouted")}
    return {**scores, **fig}


@cache
def _tfidf(quick: bool) -> dict[str, float]:
    base = build_baseline("tfidf", data=load_corpus("wiki", split="train"))
    return _retrieval_and_lee(base, True) if quick else task.sentence_scores(base, seed=0)


def tfidf_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's TF-IDF (idf from the training leads): a count-based reference (seed-free: probe on seed 0's draw)."""
    return dict(_tfidf(quick))


@cache
def _minilm(quick: bool) -> dict[str, float]:
    return _retrieval_and_lee(MiniLM(), quick)


def minilm_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The frozen all-MiniLM-L6-v2: retrieval and Lee (reported only: pretrained on far more data)."""
    return dict(_minilm(quick))


KV_ROW, MEAN_ROW, LAST_ROW = "kv_embedding", "mean_pooling", "last_token_pooling"
SETTINGS: dict[str, Any] = {"lm": {k: v for k, v in CPU.items() if k not in ("pooling",)}, "steps": STEPS,
                            "quick_steps": QUICK_STEPS, "quick_test_articles": QUICK_TEST,
                            "lm_corpus": "load_corpus('wiki', split='train'): 9,033 leads",
                            "layer_selection": f"TwoNN on the <eos> state at each block's input over "
                                               f"{CPU['id_samples']} training leads; {CPU['num_layers']} blocks "
                                               "around the minimum (block 0 excluded)"}

REPRODUCTION = Claim(
    plugin="kv-embedding", claim=CLAIM, task="embedding_quality", seeds=(0, 1, 2),
    rows=[Row(KV_ROW, lm_row, {"reroute": True, "pooling": "mean"}),
          Row(MEAN_ROW, lm_row, {"reroute": False, "pooling": "mean"}),
          Row(LAST_ROW, lm_row, {"reroute": False, "pooling": "last"}),
          Row("kv_embedding_hybrid", lm_row, {"reroute": True, "pooling": "hybrid"}),
          Row("hybrid_pooling", lm_row, {"reroute": False, "pooling": "hybrid"}),
          Row("tfidf", tfidf_row),
          Row(task.MINILM_ROW, minilm_row)],
    checks=[Check(KV_ROW, "mrr", baseline=MEAN_ROW, margin=MRR_MARGIN),
            Check(KV_ROW, "mrr", baseline=LAST_ROW, margin=MRR_MARGIN)],
    settings=SETTINGS,
    task_options={"corpus": "wiki", "mode": "sentence"},
    notes=f"margins fixed before the recorded run: description -> lead MRR of kv_embedding minus that of mean "
          f"pooling, and minus that of last-token pooling, of the same frozen LM, each >= {MRR_MARGIN} over the 95% "
          f"interval of the per-seed (paired) difference. Why 0: the paper's claim is that re-routing beats the "
          f"training-free poolings (by up to 10% relative on MTEB); this LM's absolute MRR is small, so a fixed "
          f"absolute margin would be arbitrary, and the paired interval over 3 LM seeds (t = 4.30) already demands a "
          f"consistent gain. The prefix bias ({CPU['bias']}) and the re-routed blocks (the {CPU['num_layers']} "
          f"around the TwoNN minimum) were fixed before the recorded run on a development split (600 training "
          f"articles, an LM of seed 100, never the test leads): no setting of a grid (bias 0/2/4/8 x blocks [1,2], "
          f"[1,2,3], [2,3]) beat plain mean pooling there (MRR 0.037-0.039 vs 0.039), so the neutral bias 0 and the "
          f"TwoNN choice were kept. One exploratory seed-0 run with these settings had shown the test figures of "
          f"all poolings within 0.01 MRR of each other before the margins were written. topic_acc, recall@1/@10, "
          f"lee_spearman, the hybrid rows, "
          "TF-IDF and MiniLM (pretrained on far more data) are reported only.",
)
