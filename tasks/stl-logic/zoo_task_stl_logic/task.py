"""stl_logic: Signal Temporal Logic formulae embedded and inverted, scored against the STL kernel.

Data (``dataset(seed, ...)``, everything fixed by ``seed``): ``n_train`` + ``n_test`` distinct random formulae of the
kernel papers' generator over 2 variables (``semantics.sample_formulae``), ``n_traj`` trajectories of the base
measure mu0 for the kernel (the teacher), ``n_readout`` further trajectories held out for the readouts, and
``n_anchors`` anchor formulae (leaf probability 0.4, as stl2vec's anchor set) for kernel embeddings.

Modes (a model declares its kind by ``input_kind``):

* ``embed`` (``"formula"``): ``encode(ids (B, T) long) -> (B, D)`` over ``<bos> prefix tokens <eos> <pad>...``
  (``syntax.encode_batch``). A model with ``fit(ids, robustness, *, steps, seed)`` is first trained on the training
  formulae and their robustness vectors on the kernel trajectories (the kernel between two formulae is the cosine of
  these vectors, ``semantics.kernel``). Metrics on the test formulae: ``spearman`` between embedding cosine and
  kernel similarity over all test pairs; ``robustness_r2`` (mean over held-out trajectories) of a ridge readout from
  the standardised embedding (fit on the training formulae); ``satisfaction_acc``: the sign of a ridge readout fit on
  +/-1 satisfaction labels (a least-squares classifier, closed form); ``encode_ms`` per formula, ``kernel_ms`` per
  formula for the symbolic kernel embedding (robustness on ``n_traj`` trajectories and the kernel against the
  anchors) and ``speedup`` = kernel_ms / encode_ms. Baselines: ``kernel`` (the anchor kernel embedding on an
  independent trajectory sample: the upper reference, with its cost), ``bag_of_tokens``, ``random_encoder`` (the
  model's Transformer shape, untrained, when the model exposes ``arch``; else sized to its parameter count).
* ``invert`` (``"embedding"``): ``decode(embedding (B, D)) -> list[str]`` (infix strings, ``syntax.to_string``) and
  ``forward(embedding, ids) -> logits (B, T, V)``; the embedding is the kernel embedding against the anchors
  (``D = n_anchors``). A model with ``fit(embeddings, ids, *, steps, seed, batch_size)`` trains first, for ``epochs``
  passes over the training formulae (``steps`` overrides). Metrics on the test formulae: ``validity`` (decoded strings
  that parse), ``kernel_sim`` (kernel between decoded and gold on the held-out trajectories, 0 for invalid decodes),
  ``kernel_sim_valid`` (over valid ones), ``exact`` (decoded == gold), ``length_ratio`` (decoded / gold tokens, valid
  ones) and ``shorter_or_equal``. Baseline ``nn_retrieval``: the training formula with the nearest embedding.
"""
from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, check_choice, count_params, model_device

from . import semantics as S
from . import syntax as Y
from .baselines import BASELINES, MAX_LEN, build_baseline

NAME = "stl_logic"
MODES = ("embed", "invert")
KIND = {"embed": "formula", "invert": "embedding"}
DEFAULTS = {"n_train": 2000, "n_test": 300, "n_traj": 500, "n_readout": 200, "n_anchors": 128, "n_vars": 2,
            "points": S.POINTS}
DEFAULT_STEPS = {"embed": 600}
DEFAULT_EPOCHS = 10
BATCH = 32
RIDGE = 1.0


@dataclass(frozen=True)
class Dataset:
    """One seed's formulae, token ids, robustness vectors and kernel embeddings (see the module docstring)."""

    train: list[Y.Formula]
    test: list[Y.Formula]
    anchors: list[Y.Formula]
    ids_train: torch.Tensor
    ids_test: torch.Tensor
    rho_train: np.ndarray  # (n_train, n_traj) robustness at time 0 on the kernel trajectories
    rho_test: np.ndarray
    read_train: np.ndarray  # (n_train, n_readout) on the held-out trajectories
    read_test: np.ndarray
    emb_train: np.ndarray  # (n_train, n_anchors) kernel embedding
    emb_test: np.ndarray
    kernel_test: np.ndarray  # (n_test, n_test) the reference kernel
    traj: np.ndarray
    traj_readout: np.ndarray
    traj_independent: np.ndarray  # for the kernel baseline's own estimate
    kernel_ms: float  # symbolic kernel embedding cost per test formula


@lru_cache(maxsize=2)
def dataset(seed: int, n_train: int = DEFAULTS["n_train"], n_test: int = DEFAULTS["n_test"],
            n_traj: int = DEFAULTS["n_traj"], n_readout: int = DEFAULTS["n_readout"],
            n_anchors: int = DEFAULTS["n_anchors"], n_vars: int = DEFAULTS["n_vars"],
            points: int = DEFAULTS["points"]) -> Dataset:
    """The data of one seed (cached: the model and its baselines see the same formulae and trajectories)."""
    fs = S.sample_formulae(n_train + n_test, seed=seed, n_vars=n_vars)
    train, test = fs[:n_train], fs[n_train:]
    anchors = S.sample_formulae(n_anchors, seed=seed + 7919, n_vars=n_vars, leaf_prob=S.ANCHOR_LEAF_PROB)
    traj = S.sample_trajectories(n_traj, seed=seed + 1, n_vars=n_vars, points=points)
    readout = S.sample_trajectories(n_readout, seed=seed + 2, n_vars=n_vars, points=points)
    independent = S.sample_trajectories(n_traj, seed=seed + 3, n_vars=n_vars, points=points)
    rho_train = S.robustness_matrix(train, traj)
    rho_anchor = S.robustness_matrix(anchors, traj)
    t0 = time.perf_counter()
    rho_test = S.robustness_matrix(test, traj)
    emb_test = S.kernel(rho_test, rho_anchor)
    kernel_ms = 1000 * (time.perf_counter() - t0) / max(n_test, 1)
    ids = lambda f: torch.tensor(Y.encode_batch(f, MAX_LEN), dtype=torch.long)  # noqa: E731
    return Dataset(train=train, test=test, anchors=anchors, ids_train=ids(train), ids_test=ids(test),
                   rho_train=rho_train, rho_test=rho_test, read_train=S.robustness_matrix(train, readout),
                   read_test=S.robustness_matrix(test, readout), emb_train=S.kernel(rho_train, rho_anchor),
                   emb_test=emb_test, kernel_test=S.kernel(rho_test, rho_test), traj=traj, traj_readout=readout,
                   traj_independent=independent, kernel_ms=kernel_ms)


def _ranks(v: np.ndarray) -> np.ndarray:
    r = np.empty(len(v))
    r[np.argsort(v, kind="stable")] = np.arange(len(v))
    return r


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman correlation of two vectors (ties broken by order: the values here are continuous).

    >>> spearman(np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0, 15.0]))
    0.5
    """
    ra, rb = _ranks(np.asarray(a, float)), _ranks(np.asarray(b, float))
    return float(np.corrcoef(ra, rb)[0, 1])


def cosine_matrix(z: np.ndarray) -> np.ndarray:
    z = z / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    return z @ z.T


def ridge_readout(z_train: np.ndarray, y_train: np.ndarray, z_test: np.ndarray, alpha: float = RIDGE) -> np.ndarray:
    """Predictions for ``z_test`` of a ridge regression (standardised features, intercept) fit on the training set."""
    mu, sd = z_train.mean(0), z_train.std(0)
    sd = np.where(sd > 1e-8, sd, 1.0)
    a, b = (z_train - mu) / sd, (z_test - mu) / sd
    w = np.linalg.solve(a.T @ a + alpha * np.eye(a.shape[1]), a.T @ (y_train - y_train.mean(0)))
    return b @ w + y_train.mean(0)


def r2(pred: np.ndarray, y: np.ndarray) -> float:
    """Mean over columns of the coefficient of determination."""
    sst = ((y - y.mean(0)) ** 2).sum(0)
    return float(np.mean(1 - ((pred - y) ** 2).sum(0) / np.maximum(sst, 1e-12)))


def _encode(model: Any, ids: torch.Tensor, batch: int = 256) -> tuple[np.ndarray, float]:
    """Embeddings of ``ids`` and milliseconds per formula; batches of similar length, trailing padding trimmed
    (what any deployment of an encoder does)."""
    dev = model_device(model) if isinstance(model, nn.Module) else "cpu"
    lengths = (ids != Y.PAD).sum(1)
    order = torch.argsort(lengths, stable=True)
    with torch.no_grad():
        model.encode(ids[order[:8], :int(lengths[order[:8]].max())].to(dev))  # warm-up: first calls allocate
    t0 = time.perf_counter()
    with torch.no_grad():
        parts = []
        for i in range(0, len(ids), batch):
            idx = order[i:i + batch]
            parts.append(model.encode(ids[idx, :int(lengths[idx].max())].to(dev)).float().cpu())
        out = torch.cat(parts)
    seconds = time.perf_counter() - t0
    z = torch.empty_like(out)
    z[order] = out
    z = z.numpy().astype(np.float64)
    if z.ndim != 2 or z.shape[0] != len(ids) or not np.isfinite(z).all():
        raise ValueError(f"{NAME}: encode must return finite (B, D) embeddings, got shape {tuple(z.shape)}")
    return z, 1000 * seconds / max(len(ids), 1)


def score_embedding(model: Any, data: Dataset) -> dict[str, float]:
    """The ``embed`` metrics of an already trained (or untrained) encoder."""
    z_test, encode_ms = _encode(model, data.ids_test)
    z_train, _ = _encode(model, data.ids_train)
    iu = np.triu_indices(len(data.test), 1)
    pred = ridge_readout(z_train, data.read_train, z_test)
    sat = ridge_readout(z_train, np.where(data.read_train > 0, 1.0, -1.0), z_test)
    return {"spearman": spearman(cosine_matrix(z_test)[iu], data.kernel_test[iu]),
            "robustness_r2": r2(pred, data.read_test),
            "satisfaction_acc": float(((sat > 0) == (data.read_test > 0)).mean()),
            "encode_ms": encode_ms, "kernel_ms": data.kernel_ms, "speedup": data.kernel_ms / max(encode_ms, 1e-9),
            "dim": float(z_test.shape[1])}


def score_inversion(model: Any, data: Dataset) -> dict[str, float]:
    """The ``invert`` metrics of a decoder on the test formulae's kernel embeddings."""
    emb = torch.as_tensor(data.emb_test, dtype=torch.float32)
    if isinstance(model, nn.Module):
        emb = emb.to(model_device(model))
    with torch.no_grad():
        texts = list(model.decode(emb))
    if len(texts) != len(data.test):
        raise ValueError(f"{NAME}: decode returned {len(texts)} strings for {len(data.test)} embeddings")
    sims, ratios, exact = [], [], 0
    for text, gold, gold_rho in zip(texts, data.test, data.read_test, strict=True):
        try:
            f = Y.from_string(text)
        except Y.STLSyntaxError:
            sims.append(None)
            continue
        rho = S.robustness_matrix([f], data.traj_readout)
        sims.append(float(S.kernel(rho, gold_rho[None])[0, 0]))
        ratios.append(Y.size(f) / Y.size(gold))
        exact += f == gold
    valid = [s for s in sims if s is not None]
    n = len(sims)
    return {"validity": len(valid) / n, "kernel_sim": float(sum(valid)) / n,
            "kernel_sim_valid": float(np.mean(valid)) if valid else float("nan"), "exact": exact / n,
            "length_ratio": float(np.mean(ratios)) if ratios else float("nan"),
            "shorter_or_equal": float(np.mean([r <= 1 for r in ratios])) if ratios else float("nan")}


def mode_of(model: Any) -> str:
    kind = getattr(model, "input_kind", "formula")
    for mode, k in KIND.items():
        if k == kind:
            return mode
    raise ValueError(f"{NAME}: input_kind {kind!r} is none of {sorted(KIND.values())}")


def describe(*, mode: str = "embed", steps: int | None = None, epochs: int = DEFAULT_EPOCHS, **options: Any) -> dict[str, Any]:
    """The settings a run uses (data sizes, generator, measure, budget)."""
    check_choice(NAME, "mode", mode, MODES)
    sizes = {**DEFAULTS, **{k: int(v) for k, v in options.items() if k in DEFAULTS}}
    out = {"mode": mode, **sizes, "baselines": [b for b, m in BASELINES.items() if m == mode],
           "generator": {"leaf_prob": S.LEAF_PROB, "anchor_leaf_prob": S.ANCHOR_LEAF_PROB, "max_range": S.MAX_RANGE,
                         "unbound_prob": S.UNBOUND_PROB, "max_depth": S.MAX_DEPTH, "max_tokens": S.MAX_TOKENS,
                         "inner_probs": "uniform over " + ", ".join(Y.OPS)},
           "measure": dict(S.MEASURE), "vocab": len(Y.VOCAB), "max_len": MAX_LEN, "ridge_alpha": RIDGE}
    if mode == "embed":
        out["steps"] = DEFAULT_STEPS["embed"] if steps is None else int(steps)
    else:
        per_epoch = math.ceil(sizes["n_train"] / BATCH)
        out.update(epochs=epochs, batch_size=BATCH, steps=epochs * per_epoch if steps is None else int(steps))
    return out


def _data(seed: int, settings: dict[str, Any]) -> Dataset:
    return dataset(seed, **{k: settings[k] for k in DEFAULTS})


def evaluate(model: Any, *, mode: str | None = None, steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, baselines: Sequence[str] | None = None, train_model: bool | None = None,
             epochs: int = DEFAULT_EPOCHS, progress: bool = False, **options: Any) -> Result:
    """Train ``model`` when it has ``fit`` and is not pretrained, then score it and the mode's baselines on the same
    formulae; ``options``: the data sizes of ``DEFAULTS`` (``n_train``, ``n_test``, ...)."""
    del budget_s, progress
    t0 = time.perf_counter()
    mode = mode or mode_of(model)
    check_choice(NAME, "mode", mode, MODES)
    kind = getattr(model, "input_kind", "formula")
    if kind != KIND[mode]:
        raise ValueError(f"{NAME}: mode {mode!r} takes {KIND[mode]!r} models; this one declares input_kind={kind!r}")
    unknown_opts = sorted(set(options) - set(DEFAULTS) - {"rebuild", "out_dir"})
    if unknown_opts:
        raise ValueError(f"{NAME}: unknown options {unknown_opts}; the data options are {sorted(DEFAULTS)}")
    settings = describe(mode=mode, steps=steps, epochs=epochs, **options)
    data = _data(seed, settings)
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    names = settings["baselines"] if baselines is None else list(baselines)
    wrong = [b for b in names if BASELINES.get(b) != mode]
    if wrong:
        raise ValueError(f"{NAME}: {wrong} are not baselines of mode {mode!r}: {settings['baselines']}")
    params = count_params(model) if isinstance(model, nn.Module) else 0
    if mode == "invert" and getattr(model, "embed_dim", data.emb_train.shape[1]) != data.emb_train.shape[1]:
        raise ValueError(f"{NAME}: the decoder takes {model.embed_dim}-dimensional embeddings, the task's kernel "
                         f"embedding has n_anchors={data.emb_train.shape[1]}; build it with embed_dim="
                         f"{data.emb_train.shape[1]} or pass n_anchors={model.embed_dim}")

    def run(m: Any, train: bool) -> dict[str, float]:
        fig: dict[str, float] = {}
        if train and hasattr(m, "fit"):
            torch.manual_seed(seed)
            if mode == "embed":
                fig = m.fit(data.ids_train, data.rho_train, steps=settings["steps"], seed=seed) or {}
            else:
                fig = m.fit(torch.as_tensor(data.emb_train, dtype=torch.float32), data.ids_train,
                            steps=settings["steps"], seed=seed, batch_size=BATCH) or {}
        if isinstance(m, nn.Module):
            m.eval()
        scores = score_embedding(m, data) if mode == "embed" else score_inversion(m, data)
        return {**{k: float(v) for k, v in fig.items()}, **scores}

    metrics = {"params": float(params), **run(model, train_model)}
    rows = {}
    for b in names:
        base = build_baseline(b, params=params or None, seed=seed, arch=getattr(model, "arch", None),
                              anchors=data.anchors, trajectories=data.traj_independent)
        rows[b] = {"params": float(count_params(base)), **run(base, True)}
    return Result(task=NAME, metrics=metrics, baselines=rows, n=len(data.test), seconds=time.perf_counter() - t0,
                  config={**settings, "seed": seed, "trained": train_model})


def example_input(model: Any = None) -> Any:
    """embed: ids (2, T) of two fixed formulae; invert: (embedding (2, D), ids (2, T)) with D the model's
    ``embed_dim`` (default ``n_anchors``)."""
    fs = [("always", 0, 5, ("atom", 0, ">=", 0.5)), ("until", 1, 4, ("atom", 1, "<=", -0.2), ("atom", 0, ">=", 1.0))]
    ids = torch.tensor(Y.encode_batch(fs, 12), dtype=torch.long)
    if getattr(model, "input_kind", "formula") == "embedding":
        g = torch.Generator().manual_seed(0)
        return torch.rand(2, int(getattr(model, "embed_dim", DEFAULTS["n_anchors"])), generator=g), ids
    return ids


def check_output(model: Any, output: Any) -> None:
    if getattr(model, "input_kind", "formula") == "embedding":
        ok = isinstance(output, torch.Tensor) and tuple(output.shape) == (2, 12, len(Y.VOCAB))
        if not ok:
            raise AssertionError(f"{NAME}: a decoder returns logits (2, 12, {len(Y.VOCAB)}) for the example input")
        return
    if not (isinstance(output, torch.Tensor) and output.ndim == 2 and output.shape[0] == 2 and bool(output.isfinite().all())):
        raise AssertionError(f"{NAME}: an encoder returns finite embeddings (2, D) for the example input")
