"""tabular_ctr: prediction over tables of outcomes. Modes (``evaluate(model, mode=...)``, the table ``MODES``):

- ``matrix``: a seeded synthetic correctness matrix of 30 "models" x 2,000 "questions" (``zoo_task_tabular_ctr.data``:
  latent skills, requirements, difficulty, Bernoulli correctness, 15 planted coding specialists; question features are
  a noisy random projection of the requirements and difficulty), split over questions (70% train, 30% held out).
  Contract (:class:`zoo_task_tabular_ctr.baselines.CorrectnessModel`): ``forward(model_ids (B,), question_feats (B,
  F)) -> logit (B,)``; optional ``route(question_feats)``, ``model_embeddings() -> (M, d)``, ``fit(y, x)``. A model
  without ``fit`` is trained by the task: binary cross-entropy on random (model, training question) pairs, Adam,
  ``steps`` steps of ``batch`` pairs, ``lr``, ``weight_decay``, seeded. Metrics on the held-out questions:
  ``accuracy`` (predicted probability > 1/2 vs the outcome, over all pairs), ``auc``, ``routing_accuracy`` (the
  fraction of questions the routed model, argmax of the predicted logits, answers correctly),
  ``best_single_accuracy`` (the model with the best training accuracy, always), ``oracle_accuracy`` (some model is
  right), and for a model with embeddings ``probe_accuracy``: leave-one-out accuracy of a logistic-regression probe
  (standardised embeddings, C = 1) for the planted coding attribute, with ``probe_chance`` the majority fraction.
  Baselines: ``best_single``, ``knn_router``, ``per_model_logreg``, ``matrix_factorization``.

The table/CTR modes are planned (issue 17) and will be added to ``MODES``.

>>> from zoo_task_tabular_ctr.baselines import BestSingle
>>> r = evaluate(BestSingle(30, 24), seed=0, baselines=[])
>>> r.metrics["routing_accuracy"] == r.metrics["best_single_accuracy"]
True
"""
from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result

from . import data as D_
from .baselines import BASELINES, build_baseline  # noqa: F401 - the Task protocol's names

NAME = "tabular_ctr"
MODES = {"matrix": "model x question correctness: held-out accuracy/AUC, routing accuracy, planted-trait probe"}
DEFAULT_STEPS, BATCH, LR, WEIGHT_DECAY = 1500, 512, 3e-3, 1e-5


def train_matrix(model: nn.Module, m: D_.Matrix, *, seed: int, steps: int, batch: int = BATCH, lr: float = LR,
                 weight_decay: float = WEIGHT_DECAY) -> None:
    """Fit ``model`` on the training questions: its own ``fit(y, x)`` when it has one, else the task's BCE loop."""
    y, x = m.y[:, m.train], m.x[m.train]
    if callable(getattr(model, "fit", None)):
        model.fit(y, x)
        return
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise TypeError(f"{NAME}: {type(model).__name__} has neither fit(y, x) nor trainable parameters")
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    n_models, n_q = y.shape
    model.train()
    for _ in range(steps):
        mi = torch.randint(0, n_models, (batch,), generator=g)
        qi = torch.randint(0, n_q, (batch,), generator=g)
        loss = nn.functional.binary_cross_entropy_with_logits(model(mi, x[qi]), y[mi, qi])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()


def _scores(model: nn.Module, x: torch.Tensor, n_models: int) -> torch.Tensor:
    if callable(getattr(model, "scores", None)):
        return model.scores(x)
    q = x.shape[0]
    return model(torch.arange(n_models).repeat(q), x.repeat_interleave(n_models, dim=0)).reshape(q, n_models)


def probe_accuracy(embeddings: torch.Tensor, labels: torch.Tensor) -> float:
    """Leave-one-out accuracy of a logistic-regression probe (standardised features, C = 1) for ``labels``."""
    from sklearn.linear_model import LogisticRegression

    e = embeddings.double().numpy()
    e = (e - e.mean(0)) / np.maximum(e.std(0), 1e-12)
    lab = labels.numpy().astype(int)
    right = 0
    for i in range(len(lab)):
        keep = np.arange(len(lab)) != i
        clf = LogisticRegression(C=1.0, max_iter=1000).fit(e[keep], lab[keep])
        right += int(clf.predict(e[i:i + 1])[0] == lab[i])
    return right / len(lab)


def _matrix_metrics(model: nn.Module, m: D_.Matrix) -> dict[str, float]:
    from sklearn.metrics import roc_auc_score

    n_models = m.y.shape[0]
    with torch.no_grad():
        logits = _scores(model, m.x[m.test], n_models).T  # (M, Q_test)
    if logits.shape != (n_models, len(m.test)) or not torch.isfinite(logits).all():
        raise TypeError(f"{NAME}: the model's logits for {len(m.test)} questions x {n_models} models came out "
                        f"{tuple(logits.shape)} (finite: {bool(torch.isfinite(logits).all())})")
    y = m.y[:, m.test]
    routed = logits.argmax(dim=0)
    best = int(m.y[:, m.train].mean(1).argmax())
    out = {"accuracy": float(((logits > 0).float() == y).double().mean()),
           "auc": float(roc_auc_score(y.flatten().numpy(), logits.flatten().double().numpy())),
           "routing_accuracy": float(y[routed, torch.arange(y.shape[1])].double().mean()),
           "best_single_accuracy": float(y[best].double().mean()),
           "oracle_accuracy": float(y.max(dim=0).values.double().mean())}
    emb = getattr(model, "model_embeddings", None)
    if callable(emb):
        with torch.no_grad():
            out["probe_accuracy"] = probe_accuracy(emb().float(), m.coding)
        frac = float(m.coding.double().mean())
        out["probe_chance"] = max(frac, 1 - frac)
    return out


def _run_matrix(model: nn.Module, *, seed: int, steps: int, batch: int, lr: float, weight_decay: float) -> dict[str, float]:
    m = D_.correctness_matrix(seed)
    n_models, n_features = m.y.shape[0], m.x.shape[1]
    for attr, want in (("n_models", n_models), ("n_features", n_features)):
        have = getattr(model, attr, want)
        if have != want:
            raise ValueError(f"{NAME}: the model has {attr}={have}, the matrix needs {want}; build it with "
                             f"{attr}={want}")
    train_matrix(model, m, seed=seed, steps=steps, batch=batch, lr=lr, weight_decay=weight_decay)
    return _matrix_metrics(model, m)


def evaluate(model: nn.Module, *, mode: str = "matrix", seed: int = 0, steps: int | None = None, batch: int = BATCH,
             lr: float = LR, weight_decay: float = WEIGHT_DECAY, baselines: Sequence[str] | None = None,
             out_dir: str | None = None, budget_s: float | None = None, progress: bool = False,
             rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Train (or fit) ``model`` on the mode's training part and score it and the baselines (default: all four) on the
    held-out part; see the module docstring. ``out_dir``, ``budget_s``, ``rebuild`` are accepted for the Task
    protocol and unused."""
    del out_dir, budget_s, progress, rebuild
    if mode not in MODES:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {tuple(MODES)} (the table/CTR modes come with issue 17)")
    names = list(BASELINES if baselines is None else baselines)
    for b in names:
        if b not in BASELINES:
            raise ValueError(f"{NAME}: unknown baseline {b!r}; choose from {BASELINES}")
    steps = DEFAULT_STEPS if steps is None else int(steps)
    kw = dict(seed=seed, steps=steps, batch=batch, lr=lr, weight_decay=weight_decay)
    t0 = time.perf_counter()
    metrics = _run_matrix(model, **kw)
    base = {b: _run_matrix(build_baseline(b, D_.N_MODELS, D_.N_FEATURES), **kw) for b in names}
    config = {"mode": mode, **kw, "n_models": D_.N_MODELS, "n_questions": D_.N_QUESTIONS}
    n_test = round(D_.TEST_FRACTION * D_.N_QUESTIONS)
    return Result(task=NAME, metrics=metrics, baselines=base, n=n_test, seconds=time.perf_counter() - t0, config=config)


def example_input() -> tuple[torch.Tensor, torch.Tensor]:
    """``(model_ids (4,), question_feats (4, 24))``: four (model, question) pairs of the seed-0 matrix."""
    m = D_.correctness_matrix(0)
    return torch.tensor([0, 7, 15, 29]), m.x[:4].clone()


def check_output(model: nn.Module, output: Any) -> None:
    """``forward`` on :func:`example_input` returns four finite logits."""
    if not isinstance(output, torch.Tensor) or output.shape != (4,) or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: forward(model_ids (4,), question_feats (4, 24)) must return finite logits (4,), "
                             f"got {getattr(output, 'shape', type(output))}")


def describe(*, mode: str | None = None, **options: Any) -> dict[str, Any]:
    """The protocol's settings as :func:`evaluate` runs them with ``options``.

    >>> describe()["matrix"]["n_models"]
    30
    """
    params = inspect.signature(evaluate).parameters
    known = {k: p.default for k, p in params.items() if k in ("steps", "batch", "lr", "weight_decay")}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(known)}")
    opt = {**known, **options}
    matrix = {"n_models": D_.N_MODELS, "n_questions": D_.N_QUESTIONS, "n_skills": D_.N_SKILLS,
              "n_features": D_.N_FEATURES, "n_specialists": D_.N_SPECIALISTS, "specialist_boost": D_.SPECIALIST_BOOST,
              "skill_scale": D_.SKILL_SCALE, "feature_noise": D_.FEATURE_NOISE, "test_fraction": D_.TEST_FRACTION,
              "correctness": "Bernoulli(sigmoid(a_m + scale <s_m, r_q> - b_q))",
              "features": "A (r_q, b_q standardised) + noise, A ~ N(0, 1/(k+1))",
              "steps": DEFAULT_STEPS if opt["steps"] is None else opt["steps"], "batch": opt["batch"], "lr": opt["lr"],
              "weight_decay": opt["weight_decay"], "loss": "binary cross-entropy (models without fit)",
              "probe": "leave-one-out logistic regression, C=1", "baselines": list(BASELINES)}
    out = {"matrix": matrix}
    if mode is not None and mode not in out:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {tuple(MODES)}")
    return out if mode is None else {mode: out[mode]}

