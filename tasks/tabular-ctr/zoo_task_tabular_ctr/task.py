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

- ``table`` (``dataset=`` one of ``tables.DATASETS``: diabetes, breast_cancer, wine, california_housing, adult,
  friedman1, gbdt_friendly): a fixed 64/16/20 split, numeric features standardised (``numeric="quantile"``: quantile
  transformed) on the training part, categorical ones as integer codes. Contract: ``forward(x_num (B, n_num), x_cat
  (B, n_cat) long) -> (B,)`` (regression, binary logit) or ``(B, n_classes)``; a model is built for a dataset with
  ``tables.load_table(dataset).info()`` (``n_num``, ``cat_cardinalities``, ``d_out``; ``zoo.evaluate``'s ``rebuild``
  does it for zoo models) and may define ``prepare(x_num_train, y_train)``, called before training (quantile bins).
  Training and metrics: ``table_mode`` (AdamW, early stopping on the validation loss; RMSE / accuracy / AUC /
  logloss). Baselines: ``mlp`` (matched parameters with ``build_baseline("mlp", params=...)``), ``hgb``.
- ``ctr`` (``dataset=`` synthetic | movielens): impressions with the user's last 20 behaviours, split by time per
  user (``ctr_data``). Contract: ``forward(hist_ids (B, L) long, hist_mask (B, L) bool, ad_id (B,) long, dense (B,
  F)) -> logit (B,)``, built with ``ctr_data.ctr_data(dataset).info()`` (``n_items``, ``n_dense``); optional
  ``prepare(hist_ids, hist_mask, ad_id, dense, y)`` and ``extra_loss(hist_ids, hist_mask, ad_id, dense)`` (a
  regulariser added to the BCE). Training and metrics: ``ctr_mode`` (Adam, fixed epochs; AUC, logloss, user-weighted
  GAUC). Baselines: ``sum_pooling`` (the DIN paper's Embedding&MLP base model), ``mean_pooling``.

A model says which contract it follows with ``input_kind`` ("table" or "ctr"; none: the matrix contract).

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

from zoo.task import Result, count_params

from . import data as D_
from .baselines import BASELINES as MATRIX_BASELINES
from .baselines import build_baseline as build_matrix_baseline
from .ctr_baselines import CTR_BASELINES
from .table_baselines import TABLE_BASELINES

NAME = "tabular_ctr"
MODES = {"matrix": "model x question correctness: held-out accuracy/AUC, routing accuracy, planted-trait probe",
         "table": "real and synthetic tables: RMSE / accuracy / AUC / logloss on a fixed test split",
         "ctr": "click-through with behaviour histories: AUC, logloss, GAUC on each user's later impressions"}
MODE_BASELINES = {"matrix": MATRIX_BASELINES, "table": TABLE_BASELINES, "ctr": CTR_BASELINES}
BASELINES = MATRIX_BASELINES + TABLE_BASELINES + CTR_BASELINES
DEFAULT_DATASET = {"table": "diabetes", "ctr": "synthetic"}
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


def evaluate(model: nn.Module, *, mode: str = "matrix", seed: int = 0, steps: int | None = None, batch: int | None = None,
             lr: float | None = None, weight_decay: float | None = None, baselines: Sequence[str] | None = None,
             dataset: str | None = None, epochs: int | None = None, patience: int | None = None,
             numeric: str = "standard", out_dir: str | None = None, budget_s: float | None = None,
             progress: bool = False, rebuild: Callable[..., nn.Module] | None = None,
             train_model: bool | None = None) -> Result:
    """Train (or fit) ``model`` on the mode's training part and score it and the baselines (default: all of the
    mode's) on the held-out part; see the module docstring. ``steps`` is the matrix mode's, ``dataset``, ``epochs``,
    ``patience`` (table) and ``numeric`` (table) the others'. ``out_dir``, ``budget_s`` are accepted for the Task
    protocol and unused; ``rebuild`` builds a zoo model for the chosen dataset. Table and ctr modes:
    ``train_model=None`` trains unless zoo loaded pretrained weights (a tag such as ``mlp_plr.california_housing`` is
    scored as it is; its dataset must be the one it was trained on)."""
    del out_dir, budget_s, progress
    if mode not in MODES:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {tuple(MODES)}")
    names = list(MODE_BASELINES[mode] if baselines is None else baselines)
    for b in names:
        if b not in MODE_BASELINES[mode]:
            raise ValueError(f"{NAME}: unknown {mode} baseline {b!r}; choose from {MODE_BASELINES[mode]}")
    if mode == "matrix":
        if dataset is not None or epochs is not None or patience is not None:
            raise ValueError(f"{NAME}: dataset/epochs/patience are the table and ctr modes' options, not matrix's")
        return _evaluate_matrix(model, names, seed=seed, steps=DEFAULT_STEPS if steps is None else int(steps),
                                batch=BATCH if batch is None else batch, lr=LR if lr is None else lr,
                                weight_decay=WEIGHT_DECAY if weight_decay is None else weight_decay)
    if steps is not None:
        raise ValueError(f"{NAME}: mode {mode!r} trains for epochs=, not steps=")
    if getattr(model, "input_kind", None) != mode:
        raise ValueError(f"{NAME}: mode {mode!r} needs a model with input_kind = {mode!r} (its forward contract); "
                         f"{type(model).__name__} has {getattr(model, 'input_kind', None)!r}")
    dataset = dataset or DEFAULT_DATASET[mode]
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    t0 = time.perf_counter()
    if mode == "table":
        from . import table_mode as T
        from .tables import load_table

        t = load_table(dataset, numeric=numeric)
        kw = {"epochs": epochs or T.EPOCHS, "batch": batch or T.BATCH, "lr": lr or T.LR,
              "weight_decay": T.WEIGHT_DECAY if weight_decay is None else weight_decay,
              "patience": patience or T.PATIENCE}
        model = T.fit_dims(model, t, seed=seed, rebuild=rebuild if train_model else None)
        metrics = T.run_table(model, t, seed=seed, train=train_model, **kw)
        base = {b: T.run_table(T.build_table_baseline(b, dataset, params=count_params(model) or None, seed=seed,
                                                      numeric=numeric), t, seed=seed, **kw) for b in names}
        n = len(t.test.y)
    else:
        from . import ctr_mode as C
        from .ctr_data import ctr_data

        if weight_decay is not None or patience is not None or numeric != "standard":
            raise ValueError(f"{NAME}: the ctr mode takes epochs=, batch=, lr=; not weight_decay/patience/numeric")
        d = ctr_data(dataset)
        kw = {"epochs": epochs or C.EPOCHS[dataset], "batch": batch or C.BATCH, "lr": lr or C.LR}
        model = C.fit_ctr_dims(model, d, seed=seed, rebuild=rebuild if train_model else None)
        metrics = C.run_ctr(model, d, seed=seed, train=train_model, **kw)
        base = {b: C.run_ctr(C.build_ctr_baseline(b, dataset, params=count_params(model), seed=seed), d, seed=seed,
                             **kw) for b in names}
        n = len(d.test.y)
    config = {"mode": mode, "dataset": dataset, "seed": seed, **kw, "trained": bool(train_model)}
    return Result(task=NAME, metrics=metrics, baselines=base, n=n, seconds=time.perf_counter() - t0, config=config)


def _evaluate_matrix(model: nn.Module, names: list[str], **kw: Any) -> Result:
    t0 = time.perf_counter()
    metrics = _run_matrix(model, **kw)
    base = {b: _run_matrix(build_matrix_baseline(b, D_.N_MODELS, D_.N_FEATURES), **kw) for b in names}
    config = {"mode": "matrix", **kw, "n_models": D_.N_MODELS, "n_questions": D_.N_QUESTIONS}
    n_test = round(D_.TEST_FRACTION * D_.N_QUESTIONS)
    return Result(task=NAME, metrics=metrics, baselines=base, n=n_test, seconds=time.perf_counter() - t0, config=config)


def build_baseline(name: str, *args: Any, params: int | None = None, seed: int = 0, mode: str | None = None,
                   dataset: str | None = None, **options: Any) -> nn.Module:
    """Baseline ``name`` of any mode (the mode follows from the name). Matrix baselines take ``(n_models,
    n_features)``; table and CTR baselines are built for ``dataset`` (default: the mode's default dataset) and, with
    ``params``, sized to that parameter count.

    >>> build_baseline("sum_pooling", dataset="synthetic").n_items
    201
    """
    if name in MATRIX_BASELINES:
        return build_matrix_baseline(name, *args, **options)
    if name in TABLE_BASELINES:
        from .table_mode import build_table_baseline

        return build_table_baseline(name, dataset or DEFAULT_DATASET["table"], params=params, seed=seed, **options)
    if name in CTR_BASELINES:
        from .ctr_mode import build_ctr_baseline

        return build_ctr_baseline(name, dataset or DEFAULT_DATASET["ctr"], params=params, seed=seed, **options)
    raise ValueError(f"{NAME}: unknown baseline {name!r}; choose from {BASELINES}")


def example_input(model: nn.Module | None = None) -> tuple[torch.Tensor, ...]:
    """A small input for the model's contract (its ``input_kind``): matrix ``(model_ids (4,), question_feats (4,
    24))``, table ``(x_num (4, n_num), x_cat (4, n_cat))``, CTR ``(hist_ids (4, 20), hist_mask, ad_id (4,), dense)``."""
    kind = getattr(model, "input_kind", "matrix")
    if kind == "table":
        from .table_mode import example_table_input

        return example_table_input(model)
    if kind == "ctr":
        from .ctr_mode import example_ctr_input

        return example_ctr_input(model)
    m = D_.correctness_matrix(0)
    return torch.tensor([0, 7, 15, 29]), m.x[:4].clone()


def check_output(model: nn.Module, output: Any) -> None:
    """``forward`` on :func:`example_input` keeps the model's contract (finite outputs of the right shape)."""
    kind = getattr(model, "input_kind", "matrix")
    if kind == "table":
        from .table_mode import check_table_output

        return check_table_output(model, output)
    if kind == "ctr":
        from .ctr_mode import check_ctr_output

        return check_ctr_output(model, output)
    if not isinstance(output, torch.Tensor) or output.shape != (4,) or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: forward(model_ids (4,), question_feats (4, 24)) must return finite logits (4,), "
                             f"got {getattr(output, 'shape', type(output))}")


def describe(*, mode: str | None = None, **options: Any) -> dict[str, Any]:
    """The protocol's settings as :func:`evaluate` runs them with ``options``, per mode (all modes without ``mode``).

    >>> describe()["matrix"]["n_models"]
    30
    >>> describe(mode="ctr", dataset="movielens")["ctr"]["split"][:8]
    'per user'
    """
    from . import ctr_data as CD
    from . import ctr_mode as C
    from . import table_mode as T
    from . import tables as TB

    params = inspect.signature(evaluate).parameters
    known = {k: p.default for k, p in params.items()
             if k in ("steps", "batch", "lr", "weight_decay", "dataset", "epochs", "patience", "numeric")}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(known)}")
    if mode is not None and mode not in MODES:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {tuple(MODES)}")
    opt = {**known, **options}
    pick = lambda key, default: default if opt[key] is None else opt[key]  # noqa: E731
    matrix = {"n_models": D_.N_MODELS, "n_questions": D_.N_QUESTIONS, "n_skills": D_.N_SKILLS,
              "n_features": D_.N_FEATURES, "n_specialists": D_.N_SPECIALISTS, "specialist_boost": D_.SPECIALIST_BOOST,
              "skill_scale": D_.SKILL_SCALE, "feature_noise": D_.FEATURE_NOISE, "test_fraction": D_.TEST_FRACTION,
              "correctness": "Bernoulli(sigmoid(a_m + scale <s_m, r_q> - b_q))",
              "features": "A (r_q, b_q standardised) + noise, A ~ N(0, 1/(k+1))",
              "steps": pick("steps", DEFAULT_STEPS), "batch": pick("batch", BATCH), "lr": pick("lr", LR),
              "weight_decay": pick("weight_decay", WEIGHT_DECAY), "loss": "binary cross-entropy (models without fit)",
              "probe": "leave-one-out logistic regression, C=1", "baselines": list(MATRIX_BASELINES)}
    tds = pick("dataset", DEFAULT_DATASET["table"])
    table = {"dataset": tds, "kind": TB.DATASETS.get(tds), "split": "fixed (seed 0): 64% train, 16% val, 20% test",
             "numeric": opt["numeric"], "categorical": "integer codes of training categories (+1 unseen)",
             "optimizer": "AdamW", "epochs": pick("epochs", T.EPOCHS), "batch": pick("batch", T.BATCH),
             "lr": pick("lr", T.LR), "weight_decay": pick("weight_decay", T.WEIGHT_DECAY),
             "patience": pick("patience", T.PATIENCE), "early_stopping": "validation loss, best epoch restored",
             "metrics": "rmse (regression), accuracy/auc/logloss (binary), accuracy/logloss (multiclass)",
             "baselines": list(TABLE_BASELINES)}
    cds = pick("dataset", DEFAULT_DATASET["ctr"])
    ctr = {"dataset": cds, "history": CD.L, "optimizer": "Adam", "epochs": pick("epochs", C.EPOCHS.get(cds)),
           "batch": pick("batch", C.BATCH), "lr": pick("lr", C.LR), "loss": "BCE + model.extra_loss",
           "metrics": "auc, logloss, gauc (impression-weighted per-user AUC)", "baselines": list(CTR_BASELINES),
           "split": (f"per user by time: last {CD.TEST_LAST} impressions test" if cds == "movielens" else
                     f"per user by time: impressions at {CD.TIMES[:CD.N_TRAIN_TIMES]} train, the rest test"),
           "data": ("MovieLens-100k, click = rating >= 4, history = earlier rated movies" if cds == "movielens" else
                    f"{CD.N_USERS} users, {CD.N_ITEMS} items in {CD.K} clusters, 2-4 interests, "
                    f"click ~ sigmoid({CD.ALPHA:g} max cos(ad, history) {CD.BETA:+g})")}
    out = {"matrix": matrix, "table": table, "ctr": ctr}
    return out if mode is None else {mode: out[mode]}
