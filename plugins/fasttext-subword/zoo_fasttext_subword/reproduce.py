"""``zoo reproduce fasttext-subword``: subword skip-gram vs plain skip-gram, on unseen and rare words.

Each model row fits twice per seed, with the same settings (d = 100, window 5, 5 negatives, t = 1e-3, 5 epochs,
min_count 5; each model at its own learning rate, 0.05 for fastText and word2vec.c's 0.025 for skip-gram, as
1607.04606 §4 runs its baseline):

* **morphology** (planted, ``embedding_quality`` morphology mode, generated from the seed): ``morph_oov_stem_acc``
  (the nearest corpus word of each of the 80 held-out stem+suffix forms has its stem), ``morph_spearman`` and
  ``morph_oov_spearman`` (cosine vs the planted similarity on corpus pairs / on pairs with an unseen form);
* **wiki** (word mode on the 10,033 Wikipedia leads): the task's in-vocabulary WS353 / SimLex / analogy figures,
  and :func:`all_pair_scores`: WS353 and SimLex over *all* pairs, a word outside the vocabulary getting the
  model's vector for it (its n-grams for fastText, zeros for skip-gram: Table 1's protocol in the paper). For
  fastText the same vectors with zeros for unseen words are reported too (``*_all_sisg_minus``, the paper's
  "sisg-" ablation). ``fasttext_subword (untrained)`` is fastText's initial matrix (epochs 0) on the morphology
  corpus: what n-gram sharing alone gives, the control of the check that training adds to it.
"""
from __future__ import annotations

import time
from typing import Any

import numpy as np

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_embedding_quality import metrics as M
from zoo_task_embedding_quality import planted, task
from zoo_task_embedding_quality.data import load_word_pairs

from .model import CPU
from .plugin import CLAIM

CORPUS, QUICK_CORPUS = "wiki", "lee"
QUICK_EPOCHS, QUICK_MORPH_SENTENCES = 1, 4000
WORD_METRICS = ("ws353", "simlex", "analogy", "ws353_coverage", "simlex_coverage", "analogy_coverage", "fit_seconds",
                "words_per_second")
MORPH_METRICS = ("oov_stem_acc", "spearman", "oov_spearman", "fit_seconds")
OOV_MARGIN, TRAINING_MARGIN, ALL_PAIRS_MARGIN, INVOCAB_MARGIN = 0.5, 0.1, 0.03, -0.03


def all_pair_scores(model: Any, suffix: str = "") -> dict[str, float]:
    """WS353 and SimLex Spearman over every pair, each word embedded by the model (a zero row when it has none),
    and the share of pairs whose two words both get a vector (``*_all_embedded``).

    This is what the task's word mode leaves out (it scores the in-vocabulary pairs only); it should move there.
    """
    out = {}
    for name in ("ws353", "simlex"):
        pairs = load_word_pairs(name)
        words = sorted({w for a, b, _ in pairs for w in (a, b)})
        x = M.as_matrix(model.embed(words), len(words))
        has = dict(zip(words, np.linalg.norm(x, axis=1) > 0, strict=True))
        out[f"{name}_all{suffix}"] = M.pair_spearman((words, x), pairs)[0]
        out[f"{name}_all_embedded{suffix}"] = float(np.mean([has[a] and has[b] for a, b, _ in pairs]))
    return out


def _morphology(name: str, *, seed: int, quick: bool, epochs: int | None = None) -> dict[str, float]:
    model = zoo.create(name)
    if quick:  # the smoke run: a smaller planted corpus (evaluate generates the default 20,000 sentences)
        data = planted.morphology(seed=seed, sentences=QUICK_MORPH_SENTENCES)
        t0 = time.perf_counter()
        model.fit(data.corpus, epochs=QUICK_EPOCHS if epochs is None else epochs, seed=seed)
        metrics = {**task.morphology_scores(model, data, seed=seed), "fit_seconds": time.perf_counter() - t0}
    else:
        metrics = task.evaluate(model, mode="morphology", seed=seed, baselines=[], steps=epochs).metrics
    return {f"morph_{k}": float(metrics[k]) for k in MORPH_METRICS}


def _wiki(name: str, *, seed: int, quick: bool) -> dict[str, float]:
    model = zoo.create(name)
    res = task.evaluate(model, mode="word", corpus=QUICK_CORPUS if quick else CORPUS, seed=seed, baselines=[],
                        steps=QUICK_EPOCHS if quick else None)
    out = {k: float(res.metrics[k]) for k in WORD_METRICS if k in res.metrics}
    out.update(all_pair_scores(model))
    if getattr(model, "oov_vectors", False):  # the same fitted vectors, unseen words as zeros ("sisg-")
        model.oov_vectors, model._rows = False, {}
        out.update(all_pair_scores(model, "_sisg_minus"))
    return out


def model_row(*, seed: int, quick: bool, name: str) -> dict[str, float]:
    """``name`` (fasttext_subword / word2vec_sgns, CPU defaults) on the morphology corpus and on the wiki corpus."""
    return {**_morphology(name, seed=seed, quick=quick), **_wiki(name, seed=seed, quick=quick)}


def untrained_row(*, seed: int, quick: bool) -> dict[str, float]:
    """fastText's initial matrix (vocabulary and n-gram table built, no update) on the morphology corpus."""
    return _morphology("fasttext_subword", seed=seed, quick=quick, epochs=0)


SETTINGS: dict[str, Any] = {"corpus": CORPUS, "quick_corpus": QUICK_CORPUS, "quick_epochs": QUICK_EPOCHS,
                            "quick_morphology_sentences": QUICK_MORPH_SENTENCES,
                            "fasttext_subword": dict(CPU), "word2vec_sgns": "its CPU default (d=100, window 5, 5 "
                            "negatives, t=1e-3, 5 epochs, min_count 5, lr 0.025)"}

REPRODUCTION = Claim(
    plugin="fasttext-subword", claim=CLAIM, task="embedding_quality", seeds=(0, 1, 2),
    rows=[Row("fasttext_subword", model_row, {"name": "fasttext_subword"}),
          Row("word2vec_sgns", model_row, {"name": "word2vec_sgns"}),
          Row("fasttext_subword (untrained)", untrained_row)],
    checks=[Check("fasttext_subword", "morph_oov_stem_acc", baseline="word2vec_sgns", margin=OOV_MARGIN),
            Check("fasttext_subword", "morph_oov_spearman", baseline="fasttext_subword (untrained)",
                  margin=TRAINING_MARGIN),
            Check("fasttext_subword", "ws353_all", baseline="word2vec_sgns", margin=ALL_PAIRS_MARGIN),
            Check("fasttext_subword", "ws353", baseline="word2vec_sgns", margin=INVOCAB_MARGIN)],
    settings=SETTINGS,
    task_options={"corpus": CORPUS},
    notes=f"margins fixed before the first run. (1) morphology oov_stem_acc fastText - SGNS >= {OOV_MARGIN}: SGNS has "
          f"no vector for an unseen form and scores 0 by construction, so this check is fastText's own accuracy "
          f"against {OOV_MARGIN} (a majority of the 80 unseen forms next to their stem; chance is 4/320 = 0.0125); "
          "it is a check the baseline cannot pass by construction, kept because the paper claims exactly this "
          "(§3.2 and the abstract: vectors for words that did not appear in training). It is not evidence of "
          "learning on its own: n-gram overlap alone puts an unseen form near its stem (the untrained matrix scores "
          f"about as high), hence (1b) morphology oov_spearman fastText - its untrained matrix >= {TRAINING_MARGIN}: "
          "the planted truth also ranks same-topic above unrelated words, which only training can give an unseen "
          "form (through the n-grams it shares with its stem's seen forms); 0.1 is five standard errors of a "
          "Spearman over the ~2,300 pairs, set after one pilot seed (seed 0: 0.74 vs 0.51) and before the recorded "
          "run. (2) WS353 over all 353 pairs "
          f"fastText - SGNS >= {ALL_PAIRS_MARGIN}, SGNS giving zero vectors to words outside its vocabulary (the "
          "paper's Table 1 protocol for its baselines): fastText's vectors for the ~28% pairs with an unseen or rare "
          "word must rank better than no vector at all, which random n-gram vectors would not; 0.03 is about one "
          f"standard error of a Spearman over 353 pairs. (3) in-vocabulary WS353 fastText - SGNS >= {INVOCAB_MARGIN} "
          "(non-inferiority, the word2vec plugin's margin: half the standard error of a Spearman over the ~250 "
          "in-vocabulary pairs): the subwords must not cost the words skip-gram knows. Parameters are not matched "
          "(fastText adds 200,000 n-gram rows): the claim is a capability skip-gram lacks, not an efficiency. "
          "SimLex, analogies, the sisg- ablation and the untrained row's other figures are reported only.",
)
