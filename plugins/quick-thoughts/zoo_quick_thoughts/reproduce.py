"""``zoo reproduce quick-thoughts``: Quick-Thoughts vs a generative next-sentence model at equal CPU time.

Every trained row is ``embedding_quality.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[],
cpu_budget_s=BUDGET)``: the model fits on the consecutive sentences of the 9,033 training leads for the same
number of CPU seconds of training (one torch thread; CPU time, not wall time, because the machine is shared),
then the task scores it: the 12-topic logistic probe (``topic_acc``), description -> lead retrieval and the Lee
Spearman. The rows:

* ``quick_thoughts``: the method (CPU default: word 64, GRU 128 per encoder, embedding [f; g] of 256);
* ``skip_thoughts``: the generative baseline (``skipthought.py``): the same GRU encoder (word 64, GRU 128), two
  GRU decoders generating the previous and next sentence over the same vocabulary, same batches and optimiser;
* ``quick_thoughts_init``: Quick-Thoughts with no training step (its random initialisation): what the probe gets
  from untrained GRU features of the same width, so a win over the baseline is not just the encoder's shape;
* ``tfidf``: the task's TF-IDF vectors (reference: a strong bag-of-words on this task).

Each trained row also reports a learning curve measured during training (the clock paused):
``dev_acc@Ns``, the nearest-centroid topic accuracy of standardised embeddings on 1,200 *training* leads
(600 build the 12 centroids, 600 are classified; a cheap stand-in for the probe, never the test leads), after N
CPU seconds, and ``cpu_s_to_target``: the first checkpoint where ``dev_acc`` reaches ``DEV_TARGET``, or twice
the budget when it never does within the budget (a censored value, flagged by ``reached_target`` = 0).
"""
from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import torch

from zoo.claims import Check, Claim, Row
from zoo_task_embedding_quality import task
from zoo_task_embedding_quality.baselines import build_baseline
from zoo_task_embedding_quality.data import load_wiki_articles, wiki_split

from .model import CPU, QuickThoughts, quick_thoughts
from .plugin import CLAIM
from .skipthought import SkipThoughts

BUDGET, QUICK_BUDGET = 30.0, 3.0  # CPU seconds of training per trained row
CHECKPOINT_EVERY, QUICK_CHECKPOINT_EVERY = 10.0, 1.0
QUICK_PROBE_TRAIN = 300  # the quick run's probe (the task's default, 3,000, in the real run)
DEV_LEADS, DEV_TARGET = 1200, 0.30
TOPIC_MARGIN, INIT_MARGIN = 0.05, 0.05
METRICS = ("topic_acc", "recall@1", "recall@10", "mrr", "lee_spearman", "train_steps", "train_sentences",
           "train_cpu_seconds", "sentences_per_cpu_second", "final_train_loss", "dim")


@cache
def _dev() -> tuple[list[str], np.ndarray]:
    """1,200 training leads (fixed draw) and their topic ids: the learning curve's data, never the test split."""
    arts = load_wiki_articles()
    # a random order, not sorted: the file lists the leads topic by topic, and both halves need every topic
    ids = np.random.default_rng(12345).choice(wiki_split()[0], DEV_LEADS, replace=False)
    topics = sorted({a["topic"] for a in arts})
    return [arts[i]["extract"] for i in ids], np.array([topics.index(arts[i]["topic"]) for i in ids])


def dev_accuracy(model: Any) -> float:
    """Nearest-centroid topic accuracy of ``model.embed`` on the dev leads (first half: centroids; second: scored)."""
    texts, y = _dev()
    x = model.embed(texts)
    x = x.detach().double().numpy() if isinstance(x, torch.Tensor) else np.asarray(x, dtype=float)
    half = len(y) // 2
    mu, sd = x[:half].mean(0), x[:half].std(0) + 1e-9
    z = (x - mu) / sd
    z /= np.linalg.norm(z, axis=1, keepdims=True) + 1e-12
    cent = np.stack([z[:half][y[:half] == k].mean(0) for k in range(int(y.max()) + 1)])
    return float(((z[half:] @ cent.T).argmax(1) == y[half:]).mean())


def _curve(model: Any, checkpoints: list[dict[str, float]], every: float, budget: float) -> dict[str, float]:
    out = {}
    for k in range(1, int(round(budget / every)) + 1):
        hit = [c["dev_acc"] for c in checkpoints if c["cpu_seconds"] >= k * every - 1e-6]
        out[f"dev_acc@{k * every:g}s"] = hit[0] if hit else checkpoints[-1]["dev_acc"]
    reached = [c["cpu_seconds"] for c in checkpoints if c["dev_acc"] >= DEV_TARGET]
    out["cpu_s_to_target"] = reached[0] if reached else 2 * budget
    out["reached_target"] = float(bool(reached))
    return out


def _keep(metrics: dict[str, float]) -> dict[str, float]:
    return {k: float(metrics[k]) for k in METRICS if k in metrics}


def trained_row(*, seed: int, quick: bool, kind: str) -> dict[str, float]:
    """``kind`` ("quick_thoughts" / "skip_thoughts", CPU defaults) trained for the budget and scored by the task."""
    model: QuickThoughts | SkipThoughts = quick_thoughts() if kind == "quick_thoughts" else SkipThoughts()
    budget = QUICK_BUDGET if quick else BUDGET
    every = QUICK_CHECKPOINT_EVERY if quick else CHECKPOINT_EVERY
    res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[], cpu_budget_s=budget,
                        checkpoint=lambda spent, seen: {"dev_acc": dev_accuracy(model)}, checkpoint_every_s=every,
                        probe_train=QUICK_PROBE_TRAIN if quick else task.PROBE_TRAIN)
    out = _keep({**res.metrics, "dim": float(model.dim)})
    out.update(_curve(model, model.train_log.checkpoints, every, budget))
    out["dev_acc"] = model.train_log.checkpoints[-1]["dev_acc"]
    return out


def init_row(*, seed: int, quick: bool) -> dict[str, float]:
    """Quick-Thoughts at its initialisation (vocabulary built, no step), scored by the task."""
    model = quick_thoughts()
    res = task.evaluate(model, mode="sentence", corpus="wiki", seed=seed, baselines=[], steps=0,
                        probe_train=QUICK_PROBE_TRAIN if quick else task.PROBE_TRAIN)
    return {**_keep({**res.metrics, "dim": float(model.dim)}), "dev_acc": dev_accuracy(model)}


@cache
def _tfidf() -> Any:
    # TF-IDF does not depend on the seed: fit once per process on the training leads, then scored per seed
    from zoo_task_embedding_quality.data import load_corpus

    return build_baseline("tfidf", data=load_corpus("wiki", "train"))


def tfidf_row(*, seed: int, quick: bool) -> dict[str, float]:
    """The task's TF-IDF sentence vectors (reference), probe drawn with the seed."""
    res = task.evaluate(_tfidf(), mode="sentence", corpus="wiki", seed=seed, baselines=[], train_model=False,
                        probe_train=QUICK_PROBE_TRAIN if quick else task.PROBE_TRAIN)
    return _keep(res.metrics)


SETTINGS: dict[str, Any] = {"cpu_budget_s": BUDGET, "quick_cpu_budget_s": QUICK_BUDGET, "checkpoint_every_s": CHECKPOINT_EVERY,
                            "dev_leads": DEV_LEADS, "dev_target": DEV_TARGET, "quick_probe_train": QUICK_PROBE_TRAIN,
                            "quick_thoughts": dict(CPU), "skip_thoughts": {k: CPU[k] for k in ("word_dim", "hidden",
                                                                                              "batch_size", "lr", "clip",
                                                                                              "max_len", "min_count")}}

REPRODUCTION = Claim(
    plugin="quick-thoughts", claim=CLAIM, task="embedding_quality", seeds=(0, 1, 2),
    rows=[Row("quick_thoughts", trained_row, {"kind": "quick_thoughts"}),
          Row("skip_thoughts", trained_row, {"kind": "skip_thoughts"}),
          Row("quick_thoughts_init", init_row),
          Row("tfidf", tfidf_row)],
    checks=[Check("quick_thoughts", "topic_acc", baseline="skip_thoughts", margin=TOPIC_MARGIN),
            Check("quick_thoughts", "topic_acc", baseline="quick_thoughts_init", margin=INIT_MARGIN)],
    settings=SETTINGS,
    task_options={"corpus": "wiki"},
    notes=f"margins fixed before the recorded run: topic_acc (12-topic logistic probe on the 1,000 test leads) "
          f"Quick-Thoughts - generative skip-thought baseline >= {TOPIC_MARGIN} after the same {BUDGET:g} CPU seconds of "
          f"training (the catalog's 'faster per unit of probe accuracy'; {TOPIC_MARGIN} is about three binomial "
          f"standard errors of an accuracy near 0.4 on 1,000 leads); and Quick-Thoughts - its own untrained "
          f"initialisation >= {INIT_MARGIN} (the same reason: a win over the baseline must come from training, not from "
          f"the width of random GRU features: [f; g] is 256-d, the baseline's encoder state 128-d). Budget and margins "
          f"were sized from one seed-0 pilot at 30 CPU s (cost and scale only). Reported only: retrieval and Lee "
          f"Spearman, training sentences per CPU second, the dev learning curve and CPU seconds to dev accuracy "
          f"{DEV_TARGET} (nearest centroid on training leads; 2x budget = not reached), and TF-IDF (reference). PPMI+SVD "
          "mean vectors and MiniLM are the task's own figures (task README), not rerun here: MiniLM alone costs about "
          "3 CPU minutes of the 8 this run may use.",
)
