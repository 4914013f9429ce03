"""tabular_ctr's ``table`` mode: train a table model with early stopping on the validation part, score it on the
test part (``tables.load_table`` gives the data).

Training (a model without ``fit_table``), after Gorishniy et al. (2021, 2022): the optional hook
``model.prepare(x_num_train (N, n_num), y_train (N,))`` is called once first (where a model needs the training data:
quantile bins of a piecewise-linear encoding); then AdamW (``lr``, ``weight_decay``), shuffled mini-batches of
``batch``, at most ``epochs`` epochs, and after each epoch the validation loss (MSE on the standardised target,
binary or multi-class cross-entropy); training stops after ``patience`` epochs without improvement and the best
epoch's weights are restored. A model with ``fit_table(table)`` (``hgb``) fits itself.

Metrics on the test part: regression ``rmse`` (original units); binary ``accuracy`` (logit > 0), ``auc``,
``logloss``; multi-class ``accuracy``, ``logloss``; always ``params`` (trainable), ``epochs`` (run), ``val_loss``
(the restored epoch's).
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from zoo.task import count_params, match_width

from . import metrics as M
from .table_baselines import TABLE_BASELINES, HGBTable, TableMLP
from .tables import Split, Table, load_table

NAME = "tabular_ctr"
EPOCHS, BATCH, LR, WEIGHT_DECAY, PATIENCE = 100, 256, 1e-3, 1e-5, 16


def _loss(t: Table, out: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    if t.kind == "regression":
        return nn.functional.mse_loss(out, y)
    if t.kind == "binary":
        return nn.functional.binary_cross_entropy_with_logits(out, y)
    return nn.functional.cross_entropy(out, y)


def predict(model: nn.Module, t: Table, part: Split, batch: int = 4096) -> torch.Tensor:
    """The model's outputs on ``part``, checked against the contract's shape and finiteness."""
    with torch.no_grad():
        out = torch.cat([model(part.x_num[i:i + batch], part.x_cat[i:i + batch]) for i in range(0, len(part.y), batch)])
    want = (len(part.y),) if t.d_out == 1 else (len(part.y), t.d_out)
    if tuple(out.shape) != want or not torch.isfinite(out).all():
        raise TypeError(f"{NAME}: on {t.name} the model must return finite outputs {want}, got {tuple(out.shape)} "
                        f"(finite: {bool(torch.isfinite(out).all())})")
    return out.float()


def train_table(model: nn.Module, t: Table, *, seed: int, epochs: int = EPOCHS, batch: int = BATCH, lr: float = LR,
                weight_decay: float = WEIGHT_DECAY, patience: int = PATIENCE) -> dict[str, float]:
    """Fit ``model`` on ``t.train`` as the module docstring says; returns ``epochs`` and ``val_loss``."""
    if callable(getattr(model, "fit_table", None)):
        model.fit_table(t)
        return {"epochs": 0.0, "val_loss": float(_loss(t, predict(model, t, t.val), t.val.y))}
    torch.manual_seed(seed)
    if callable(getattr(model, "prepare", None)):
        model.prepare(t.train.x_num, t.train.y)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise TypeError(f"{NAME}: {type(model).__name__} has neither fit_table(table) nor trainable parameters")
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    g = torch.Generator().manual_seed(seed)
    n = len(t.train.y)
    best, best_state, bad, ran = float("inf"), copy.deepcopy(model.state_dict()), 0, 0
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(n, generator=g)
        for i in range(0, n, batch):
            idx = perm[i:i + batch]
            loss = _loss(t, model(t.train.x_num[idx], t.train.x_cat[idx]), t.train.y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        ran += 1
        model.eval()
        val = float(_loss(t, predict(model, t, t.val), t.val.y))
        if val < best:
            best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= patience:
                break
    model.load_state_dict(best_state)
    model.eval()
    return {"epochs": float(ran), "val_loss": best}


def score_table(model: nn.Module, t: Table) -> dict[str, float]:
    """Test metrics of a fitted model (see the module docstring)."""
    out = predict(model, t, t.test).double().numpy()
    y = t.test.y.numpy()
    if t.kind == "regression":
        return {"rmse": M.rmse(y * t.y_std, out * t.y_std)}
    if t.kind == "binary":
        return {"accuracy": float(((out > 0) == (y > 0.5)).mean()), "auc": M.auc(y, out), "logloss": M.logloss(y, out)}
    return {"accuracy": float((out.argmax(1) == y).mean()), "logloss": M.multiclass_logloss(y, out)}


def fit_dims(model: nn.Module, t: Table, *, seed: int, rebuild: Callable[..., nn.Module] | None) -> nn.Module:
    """``model`` when it is built for ``t`` (its ``n_num``, ``cat_cardinalities``, ``d_out``), else a fresh seeded
    build through ``rebuild`` (``zoo.evaluate`` passes one), else a ``ValueError`` naming the builder arguments."""
    want = t.info()
    have = {k: getattr(model, k, v) for k, v in want.items()}
    have["cat_cardinalities"] = list(have["cat_cardinalities"])
    if have == want:
        return model
    if rebuild is not None:
        torch.manual_seed(seed)
        return rebuild(**want)
    raise ValueError(f"{NAME}: dataset {t.name!r} needs a model built with {want}; this one has {have} "
                     "(a pretrained tag is scored on the table it was trained on; create the bare model to train one)")


def build_table_baseline(name: str, dataset: str, *, params: int | None = None, seed: int = 0, width: int = 128,
                         depth: int = 2, numeric: str = "standard") -> nn.Module:
    """Baseline ``name`` for ``dataset``: ``mlp`` at ``width`` or, with ``params``, at the width whose parameter count
    is closest to it; ``hgb`` seeded."""
    if name not in TABLE_BASELINES:
        raise ValueError(f"{NAME}: unknown table baseline {name!r}; choose from {TABLE_BASELINES}")
    t = load_table(dataset, numeric=numeric)
    if name == "hgb":
        return HGBTable(kind=t.kind, seed=seed, **t.info())

    def build(w: int) -> nn.Module:
        return TableMLP(width=w, depth=depth, **t.info())

    w = match_width(build, params, lo=2) if params else width
    torch.manual_seed(seed)
    return build(w)


def run_table(model: nn.Module, t: Table, *, seed: int, train: bool = True, **train_kw: Any) -> dict[str, float]:
    """``train_table`` (unless ``train`` is False: a pretrained model is scored as it is) then ``score_table``, with
    ``params``."""
    if train:
        fit = train_table(model, t, seed=seed, **train_kw)
    else:
        model.eval()
        fit = {"epochs": 0.0, "val_loss": float(_loss(t, predict(model, t, t.val), t.val.y))}
    return {**score_table(model, t), "params": float(count_params(model)), **fit}


def example_table_input(model: nn.Module | None = None, batch: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x_num (4, n_num), x_cat (4, n_cat))`` for the model's ``n_num``/``cat_cardinalities`` (default: diabetes's
    10 numeric features, no categorical ones), seeded."""
    n_num = int(getattr(model, "n_num", 10))
    cards = list(getattr(model, "cat_cardinalities", []))
    g = torch.Generator().manual_seed(0)
    x_cat = torch.stack([torch.randint(0, int(k), (batch,), generator=g) for k in cards], 1) if cards else \
        torch.zeros(batch, 0, dtype=torch.long)
    return torch.randn(batch, n_num, generator=g), x_cat


def check_table_output(model: nn.Module, output: Any) -> None:
    d_out = int(getattr(model, "d_out", 1))
    want = (4,) if d_out == 1 else (4, d_out)
    if not isinstance(output, torch.Tensor) or tuple(output.shape) != want or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: a table model's forward(x_num (4, n_num), x_cat (4, n_cat)) must return finite "
                             f"{want}, got {getattr(output, 'shape', type(output))}")
