"""``zoo reproduce byte-recconv-sentence-ae``: recursive vs per-level autoencoder, and its sentence vectors vs TF-IDF.

Rows (one torch thread, seeds 0-2):

- ``byte_recconv_ae`` / ``unshared``: built under the seed (CPU preset), ``fit`` on the embedding_quality ``stdlib``
  corpus (18,215 docstring sentences of CPython 3.11.7; every 10th held out) for ``STEPS`` Adam steps on batches
  drawn from the seed; then scored by the task in sentence mode on wiki without refitting
  (``evaluate(model, mode="sentence", corpus="wiki", train_model=False)``): ``topic_acc`` (logistic probe, 12
  topics, 3,000 training leads drawn with the seed), description -> lead retrieval, Lee document similarity. A text
  is embedded as the mean of its sentences' vectors, each from its first 64 bytes.
- ``tfidf``: the task's bag-of-words baseline, fit on the wiki training leads (in-domain for the probe, unlike the
  autoencoders, which never see wiki text) and scored the same way.

Quick run: fit on the Lee corpus's sentences for 30 steps (TF-IDF on Lee), probe trained on 300 leads: a smoke test.
"""
from __future__ import annotations

from typing import Any

import torch

import zoo
from zoo.claims import Check, Claim, Row
from zoo.task import count_params
from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.baselines import build_baseline
from zoo_task_embedding_quality.data import load_corpus

from .model import CPU, TRAIN
from .plugin import CLAIM

CORPUS, QUICK_CORPUS = "stdlib", "lee"
STEPS, QUICK_STEPS = TRAIN["steps"], 30
QUICK_PROBE = 300  # probe training leads in the quick run (the task's 3,000 otherwise)
BYTE_MARGIN, TOPIC_MARGIN = 0.0, 0.0
SCORES = ("topic_acc", "recall@1", "mrr", "lee_spearman")


def _scores(model: Any, seed: int, quick: bool) -> dict[str, float]:
    res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[], train_model=False,
                        probe_train=QUICK_PROBE if quick else task.PROBE_TRAIN)
    return {k: float(res.metrics[k]) for k in SCORES if k in res.metrics}


def ae_row(*, seed: int, quick: bool, steps: int, name: str) -> dict[str, float]:
    """``name`` (CPU preset) built under ``seed``, fit on the docstring sentences, scored by the task."""
    torch.manual_seed(seed)
    model = zoo.create(name)
    fig = model.fit(load_corpus(QUICK_CORPUS if quick else CORPUS), steps=steps, seed=seed)
    keep = {k: fig[k] for k in ("heldout_byte_acc", "heldout_exact", "train_seconds", "final_train_loss")}
    return {**keep, "params": float(count_params(model)), **_scores(model, seed, quick)}


def tfidf_row(*, seed: int, quick: bool, steps: int) -> dict[str, float]:
    """The task's TF-IDF, fit on the wiki training leads (Lee in the quick run) and scored the same way."""
    base = build_baseline("tfidf", data=load_corpus(QUICK_CORPUS) if quick else load_corpus("wiki", "train"), seed=seed)
    return _scores(base, seed, quick)


SETTINGS: dict[str, Any] = {"corpus": CORPUS, "quick_corpus": QUICK_CORPUS, "model": dict(CPU), **TRAIN,
                            "quick_steps": QUICK_STEPS, "embed": "mean over the text's sentences of their first 64 bytes"}

REPRODUCTION = Claim(
    plugin="byte-recconv-sentence-ae", claim=CLAIM, task=task.NAME, seeds=(0, 1, 2), steps=STEPS,
    quick_steps=QUICK_STEPS,
    rows=[Row("byte_recconv_ae", ae_row, {"name": "byte_recconv_ae"}),
          Row("unshared", ae_row, {"name": "byte_conv_ae_unshared"}),
          Row("tfidf", tfidf_row)],
    checks=[Check("byte_recconv_ae", "heldout_byte_acc", baseline="unshared", margin=BYTE_MARGIN),
            Check("byte_recconv_ae", "topic_acc", baseline="tfidf", margin=TOPIC_MARGIN)],
    settings=SETTINGS,
    task_options={"mode": "sentence", "corpus": "wiki"},
    notes=f"margins fixed before the first run: held-out byte accuracy recursive - per-level >= {BYTE_MARGIN:g} "
          f"(the paper's 'better auto-encoding' than the base model, at equal steps and batches, paired by seed; the "
          f"parameter saving is true by construction and reported, not checked; training seconds reported); wiki "
          f"topic probe accuracy recursive - TF-IDF >= {TOPIC_MARGIN:g} (the paper's 'better alternative to "
          f"bag-of-words', on the task's sentence probe in place of SentEval). The autoencoders learn from docstrings "
          f"only and read 64 bytes per sentence; TF-IDF is fit on the wiki leads themselves. Seeds 0-2 (an "
          f"autoencoder row takes about a minute).",
)
