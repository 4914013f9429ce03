"""``ssl_probe``: self-supervised pretraining, scored by probes on the frozen features.

Modes (``evaluate(model, mode=...)``, the table ``MODES``; data in ``data.py``): ``fashion_mnist`` (default),
``digits``, ``ucr`` (``dataset=``), ``multiscale`` (raw values), and ``pong`` (``pong.py``, its own protocol).

Model contract: ``encode(x) -> (N, D)`` features; ``ssl_loss(*views) -> scalar``; ``ssl_views`` (default 2) views
per batch: for 2 (or more) independent random augmentations (``augment.py``) of the same batch, for 1 the clean
batch (masking models mask inside ``ssl_loss``), for 0 nothing is pretrained. Optional: ``reconstruct(x) -> x_hat``
(the task reports ``recon_mse`` on the test split, torch seeded by ``seed``), ``ssl_defaults`` (optimiser settings,
``train.DEFAULTS`` keys), ``ssl_param_groups()`` (``train.pretrain``), ``ssl_input`` ("image" or "series": which
example input the conformance kit feeds), ``encoder`` (the module whose parameter count sizes the baselines).

Protocol: the model is pretrained on the mode's unlabeled pretraining inputs for ``steps`` steps (``train.pretrain``;
a model zoo loaded with pretrained weights is not retrained), then its features of the probe-training and test parts
(eval mode, no gradient) are scored: ``linear_probe_acc``, ``knn_acc``, ``fewshot_acc``, ``feature_std``,
``effective_rank`` (``probe.py`` says what each computes), with ``linear_probe_acc_init`` / ``knn_acc_init`` measured
on the model before pretraining, ``params``, ``pretrain_seconds``, ``final_ssl_loss``, ``recon_mse`` when the model
reconstructs. The baselines (``baselines.py``: ``supervised``, ``random_init``, ``raw``) are scored the same way, the
first two with the reference encoder sized to the model's encoder (``baseline_params="encoder"``).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch import nn

from zoo.task import Result, count_params, model_device, status

from . import augment, data, probe
from .baselines import BASELINES, build_baseline  # noqa: F401 - the Task protocol's names
from .train import DEFAULTS as TRAIN_DEFAULTS
from .train import pretrain, settings

NAME = "ssl_probe"
MODES = {
    "fashion_mnist": "Fashion-MNIST 28x28: 10k pretraining/probe-training images, official 10k test",
    "digits": "scikit-learn digits 8x8, stratified 75/25 split",
    "ucr": "UCR univariate sets from sktime's wheel (dataset=), official splits, normalize='znorm'|'none'",
    "multiscale": "synthetic sine/square/sawtooth/chirp/random-walk series, scales 1e-3..1e3, raw values",
    "pong": "Pong frames (pong.py)",
}
DEFAULT_STEPS = {"fashion_mnist": 400, "digits": 300, "ucr": 300, "multiscale": 300}
DATA_OPTIONS = {"ucr": {"dataset": "gunpoint", "normalize": "znorm"}, "multiscale": {"data_seed": 0}}
ENCODE_CHUNK = 1000


def _check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"{NAME}: mode={mode!r}; choose from {list(MODES)}")


def mode_kind(mode: str) -> str:
    """``"image"`` or ``"series"``: the kind of input ``mode`` feeds."""
    _check_mode(mode)
    return "image" if mode in ("fashion_mnist", "digits") else "series" if mode != "pong" else "pong"


def pong_module():
    """The Pong mode's module (``zoo_task_ssl_probe.pong``), imported on first use."""
    try:
        from . import pong
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.pong":
            raise
        raise NotImplementedError(f"{NAME}: mode='pong' needs zoo_task_ssl_probe/pong.py, which this install lacks; "
                                  f"choose another mode from {[m for m in MODES if m != 'pong']}") from None
    return pong


def load(mode: str, **data_options: Any) -> data.Split:
    """The :class:`data.Split` of ``mode`` with its data options (``DATA_OPTIONS``: ``dataset``/``normalize`` for
    ucr, ``data_seed`` for multiscale); unknown options raise ``ValueError`` naming the valid ones."""
    _check_mode(mode)
    if mode == "pong":
        raise ValueError(f"{NAME}: mode='pong' has its own protocol (pong.py), no Split")
    valid = DATA_OPTIONS.get(mode, {})
    unknown = set(data_options) - set(valid)
    if unknown:
        raise ValueError(f"{NAME}: mode={mode!r} takes no option(s) {sorted(unknown)}; its data options are "
                         f"{sorted(valid) or 'none'}")
    opts = {**valid, **data_options}
    if mode == "fashion_mnist":
        return data.fashion_mnist()
    if mode == "digits":
        return data.digits()
    if mode == "ucr":
        return data.ucr(opts["dataset"], opts["normalize"])
    return data.multiscale(int(opts["data_seed"]))


@torch.no_grad()
def features(model: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """``model.encode`` of ``x`` in eval mode, in chunks, on the model's device; returned on the CPU as float."""
    model.eval()
    dev = model_device(model)
    out = [model.encode(x[s:s + ENCODE_CHUNK].to(dev)).detach().float().cpu() for s in range(0, len(x), ENCODE_CHUNK)]
    f = torch.cat(out)
    if f.ndim != 2 or len(f) != len(x):
        raise TypeError(f"{NAME}: encode(x) must return (N, D) features, got {tuple(f.shape)} for N={len(x)}")
    return f


def probe_metrics(model: nn.Module, split: data.Split, *, seed: int = 0, quick: bool = False) -> dict[str, float]:
    """The probe metrics of ``model``'s frozen features on ``split`` (``quick``: linear probe and kNN only)."""
    tr, te = features(model, split.x_train), features(model, split.x_test)
    if not torch.isfinite(tr).all() or not torch.isfinite(te).all():
        raise FloatingPointError(f"{NAME}: {type(model).__name__}.encode gave non-finite features")
    out = {"linear_probe_acc": probe.linear_probe(tr, split.y_train, te, split.y_test),
           "knn_acc": probe.knn(tr, split.y_train, te, split.y_test)}
    if not quick:
        out["fewshot_acc"] = probe.few_shot(tr, split.y_train, te, split.y_test, seed=seed)
        out.update(probe.collapse(te))
    return out


def sampler(model: nn.Module, split: data.Split, mode: str) -> Callable[[torch.Generator, int], tuple[torch.Tensor, ...]]:
    """``sample_views(g, batch)`` for ``model``: ``ssl_views`` augmented views of one random batch of the pretraining
    inputs (the clean batch for 1 view); a model with ``uses_labels`` gets one view and its labels."""
    n_views = int(getattr(model, "ssl_views", 2))
    view = augment.view_fn(mode, split.kind)
    dev = model_device(model)
    x, y = split.x_pretrain, split.y_train
    labels = bool(getattr(model, "uses_labels", False))
    if labels and x is not split.x_train:
        raise ValueError(f"{NAME}: a label-trained model needs the pretraining inputs to be the probe-training part")

    def sample(g: torch.Generator, batch: int) -> tuple[torch.Tensor, ...]:
        idx = torch.randint(len(x), (batch,), generator=g)
        xb = x[idx]
        if labels:
            return view(xb, g).to(dev), y[idx].to(dev)
        if n_views == 1:
            return (xb.to(dev),)
        return tuple(view(xb, g).to(dev) for _ in range(n_views))

    return sample


def run_model(model: nn.Module, split: data.Split, *, mode: str, steps: int | None, seed: int = 0,
              budget_s: float | None = None, train: bool = True, init_probe: bool = True, progress: str | None = None,
              **train_options: Any) -> dict[str, float]:
    """One row of ``evaluate``: init probes, pretraining, probes, reconstruction error (see the module docstring)."""
    m: dict[str, float] = {"params": float(count_params(model))}
    pretrains = train and int(getattr(model, "ssl_views", 2)) > 0
    if init_probe and pretrains:
        m.update({f"{k}_init": v for k, v in probe_metrics(model, split, seed=seed, quick=True).items()})
    if pretrains:
        fit = pretrain(model, sampler(model, split, mode), steps=steps, seed=seed, budget_s=budget_s,
                       progress=progress, **train_options)
        m.update({"pretrain_steps": float(fit["steps"]), "pretrain_seconds": fit["train_seconds"],
                  "final_ssl_loss": fit["final_train_loss"]})
    m.update(probe_metrics(model, split, seed=seed))
    if callable(getattr(model, "reconstruct", None)):
        torch.manual_seed(seed)
        with torch.no_grad():
            x = split.x_test.to(model_device(model))
            m["recon_mse"] = float(sum(float(((model.reconstruct(x[s:s + ENCODE_CHUNK]) - x[s:s + ENCODE_CHUNK]) ** 2)
                                             .sum()) for s in range(0, len(x), ENCODE_CHUNK)) / x.numel())
    return m


def _encoder_size(model: nn.Module, baseline_params: Any) -> int | None:
    if baseline_params == "encoder":
        enc = getattr(model, "encoder", None)
        return count_params(enc if isinstance(enc, nn.Module) else model) or None
    if baseline_params == "model":
        return count_params(model) or None
    if baseline_params is None or isinstance(baseline_params, int):
        return baseline_params
    raise ValueError(f"{NAME}: baseline_params must be 'encoder', 'model', a parameter count or None, "
                     f"got {baseline_params!r}")


def evaluate(model: nn.Module, *, mode: str = "fashion_mnist", steps: int | None = None, seed: int = 0,
             baselines: Sequence[str] | None = None, out_dir: str | None = None, budget_s: float | None = None,
             rebuild: Callable[..., nn.Module] | None = None, progress: bool = False, init_probe: bool = True,
             baseline_params: int | str | None = "encoder", train_model: bool | None = None, **options: Any) -> Result:
    """Pretrain ``model`` on ``mode``'s unlabeled data and score its frozen features next to the baselines (default:
    all three) under the same steps, seed and batch; see the module docstring.

    ``options``: the mode's data options (``load``) and training options (``optimizer``, ``lr``, ``weight_decay``,
    ``momentum``, ``batch``, ``schedule``: ``train.settings``; the model's ``ssl_defaults`` fill what is not given).
    ``train_model=None`` pretrains unless zoo loaded pretrained weights. ``mode="pong"`` hands everything to
    ``pong.run``. ``out_dir`` and ``rebuild`` are accepted for the Task protocol and unused by the other modes.
    """
    _check_mode(mode)
    if mode == "pong":
        return pong_module().run(model, steps=steps, seed=seed, baselines=baselines, out_dir=out_dir,
                                 budget_s=budget_s, rebuild=rebuild, progress=progress, init_probe=init_probe,
                                 baseline_params=baseline_params, train_model=train_model, **options)
    del out_dir, rebuild
    t0 = time.perf_counter()
    data_opts = {k: options.pop(k) for k in list(options) if k in DATA_OPTIONS.get(mode, {})}
    unknown = set(options) - set(TRAIN_DEFAULTS)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)} for mode={mode!r}; data options "
                         f"{sorted(DATA_OPTIONS.get(mode, {})) or 'none'}, training options {sorted(TRAIN_DEFAULTS)}")
    names = list(BASELINES if baselines is None else baselines)
    bad = [b for b in names if b not in BASELINES]
    if bad:
        raise ValueError(f"{NAME}: unknown baseline(s) {bad}; choose from {list(BASELINES)}")
    split = load(mode, **data_opts)
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    steps = DEFAULT_STEPS[mode] if steps is None and budget_s is None else steps
    size = _encoder_size(model, baseline_params)
    model_opts = settings(model, **options)  # the model's ssl_defaults, overridden by the caller's options
    kw = dict(mode=mode, steps=steps, seed=seed, budget_s=budget_s, init_probe=init_probe)
    status(f"{NAME}: {'pretraining' if train_model else 'probing the pretrained'} {type(model).__name__} on {mode}"
           + (f" ({steps} steps)" if train_model else ""), force=progress)
    metrics = run_model(model, split, train=train_model, progress=f"pretrain {NAME}" if progress else None,
                        **kw, **model_opts)
    base_opts = settings(None, **{**options, "batch": model_opts["batch"]})  # same batch; the task's optimiser
    results = {}
    for name in names:
        status(f"{NAME}: baseline {name}", force=progress)
        b = build_baseline(name, params=size, seed=seed, mode=mode, n_classes=split.n_classes).to(model_device(model))
        results[name] = run_model(b, split, progress=f"train {name}" if progress else None, **kw, **base_opts)
        if name != "raw":
            results[name]["params"] = float(count_params(b.encoder))  # the encoder the features come from
    config = {**describe(mode=mode, steps=steps, budget_s=budget_s, **data_opts, **options), "seed": seed,
              "trained": bool(train_model), "model_training": model_opts, "baseline_params": baseline_params}
    return Result(task=NAME, metrics=metrics, baselines=results, n=len(split.y_test),
                  seconds=time.perf_counter() - t0, config=config)


def example_input(model: nn.Module | None = None) -> torch.Tensor:
    """Four test inputs of the kind ``model.ssl_input`` names: Fashion-MNIST images (4, 1, 28, 28) by default,
    multiscale series (4, 128) for ``"series"``, the Pong mode's for ``"pong"``."""
    kind = getattr(model, "ssl_input", "image")
    if kind == "pong":
        return pong_module().example_input()
    if kind == "series":
        return data.multiscale().x_test[::100][:4].clone()
    if kind != "image":
        raise ValueError(f"{NAME}: ssl_input={kind!r}; choose from ['image', 'series', 'pong']")
    return data.fashion_mnist().x_test[:4].clone()


def check_output(model: nn.Module, output: Any) -> None:
    """The contract on :func:`example_input`: the model has ``encode`` and ``ssl_loss`` and its forward output is a
    finite tensor (or a dict/tuple of them) with batch size 4."""
    for attr in ("encode", "ssl_loss"):
        if not callable(getattr(model, attr, None)):
            raise AssertionError(f"{NAME}: {type(model).__name__} has no {attr}(); the contract needs encode(x) -> "
                                 "(N, D) and ssl_loss(*views) -> scalar")
    outs = (list(output.values()) if isinstance(output, dict) else list(output) if isinstance(output, (tuple, list))
            else [output])
    for o in outs:
        if not isinstance(o, torch.Tensor) or o.ndim < 1 or o.shape[0] != 4 or not torch.isfinite(o).all():
            raise AssertionError(f"{NAME}: forward on 4 inputs must give finite tensors with batch size 4, got "
                                 f"{getattr(o, 'shape', type(o).__name__)}")


def describe(*, mode: str | None = None, steps: int | None = None, budget_s: float | None = None,
             **options: Any) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options; per mode when ``mode`` is None.

    >>> describe(mode="digits")["steps"], describe(mode="digits")["knn"]
    (300, 'cosine, k=20, votes exp(cos/0.07)')
    """
    if mode is None:
        return {m: describe(mode=m) for m in MODES if m != "pong"}
    _check_mode(mode)
    if mode == "pong":
        fn = getattr(pong_module(), "describe", None)
        return fn(steps=steps, budget_s=budget_s, **options) if fn else {"mode": "pong"}
    data_opts = {**DATA_OPTIONS.get(mode, {}), **{k: v for k, v in options.items() if k in DATA_OPTIONS.get(mode, {})}}
    train_opts = {k: v for k, v in options.items() if k not in data_opts}
    split = load(mode, **data_opts)
    return {"mode": mode, "data": split.source, "n_pretrain": len(split.x_pretrain), "n_probe_train": len(split.y_train),
            "n_test": len(split.y_test), **data_opts,
            "steps": DEFAULT_STEPS[mode] if steps is None and budget_s is None else steps, "budget_s": budget_s,
            "views": augment.describe_views(mode, split.kind), "training": settings(None, **train_opts),
            "training_note": "the model's ssl_defaults replace the task's training defaults; baselines use the task's "
                             "with the model's batch",
            "linear_probe": f"standardised features, multinomial logistic regression, L2 {probe.PROBE_L2}, full-batch "
                            f"L-BFGS {probe.PROBE_ITERS} iterations",
            "knn": f"cosine, k={probe.KNN_K}, votes exp(cos/{probe.KNN_T})",
            "fewshot": f"{probe.FEWSHOT_K}-shot nearest centroid (cosine), mean of {probe.FEWSHOT_EPISODES} episodes",
            "collapse": "feature_std: mean per-dim std of l2-normalised test features; effective_rank: exp entropy "
                        "of normalised singular values",
            "baselines": list(BASELINES), "baseline_size": "reference encoder sized to the model's encoder "
                                                           "(count_params of model.encoder, else of the model)"}

