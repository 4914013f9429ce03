"""voxel_encode: predict a new voxel's responses to new images from a few (image, response) shots.

Data (``data``): 1997 real images (scikit-learn digits + scikit-image lfw_subset), their 64 features from a fixed
random CNN, and seeded synthetic voxels (sparse nonlinear readouts of those features plus noise at ``snr``). A seed
holds out ``n_test_images`` images and draws ``n_train_voxels`` meta-train voxels and ``n_test_voxels`` new ones.

Model contract: ``forward(ctx_feats (B, Nc, F), ctx_resp (B, Nc), query_feats (B, Nq, F)) -> (B, Nq)``: B voxels,
each with its own Nc context images and measured responses, predicted on Nq query images.

Protocol: a model with trainable parameters (and no pretrained weights) is meta-trained for ``steps`` AdamW steps
(learning rate on a cosine from ``lr`` to 0; constant under a ``budget_s`` alone) on the meta-train voxels: each
step takes ``batch`` voxels, one context size drawn uniformly in ``[min_context, max_context]``, that many random
meta-train images as context and ``n_query`` others as queries, and minimises the MSE of the predicted measured
responses. Scoring: for every context size in ``contexts`` and each of ``episodes`` draws, every new voxel gets that
many random meta-train images (with its measured, noisy responses) as context and is predicted on all held-out
images; ``r_c{N}`` is the Pearson r with the voxel's noise-free response, averaged over voxels and draws. Baselines
see the same draws: ``ridge`` (same shots, lambda by leave-one-out CV), ``ridge_full`` (all meta-train images as
context: the many-shot reference, the same value in every column) and ``mean_response`` (no context). ``out_dir``
receives ``r_vs_context.png``.

>>> from zoo_task_voxel_encode.baselines import RidgeCV
>>> r = evaluate(RidgeCV(), contexts=(10, 100), n_train_voxels=20, n_test_voxels=20, seed=0, baselines=[])
>>> r.metrics["r_c100"] > r.metrics["r_c10"]
True
"""
from __future__ import annotations

import inspect
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from zoo.figures import pyplot, save_figure
from zoo.task import Result, count_params, model_device, run_budget

from . import data as D_
from .baselines import BASELINES, build_baseline  # noqa: F401 - the Task protocol's names

NAME = "voxel_encode"
DEFAULT_STEPS = 1500
CONTEXTS = (5, 10, 20, 50, 100)


def _pearson(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Row-wise Pearson r; a constant prediction scores 0."""
    a = pred.double() - pred.double().mean(-1, keepdim=True)
    b = target.double() - target.double().mean(-1, keepdim=True)
    den = (a.pow(2).sum(-1) * b.pow(2).sum(-1)).sqrt()
    return torch.where(den > 1e-12, (a * b).sum(-1) / den.clamp_min(1e-12), torch.zeros_like(den))


def meta_train(model: nn.Module, sp: D_.Split, *, steps: int | None, budget_s: float | None, seed: int, batch: int = 32,
               n_query: int = 50, min_context: int = 2, max_context: int = 100, lr: float = 1e-3,
               weight_decay: float = 1e-4, progress: str | None = None) -> dict[str, float]:
    """Meta-train ``model`` on ``sp``'s meta-train voxels (see the module docstring); returns ``run_budget``'s figures."""
    if not 1 <= min_context <= max_context or max_context + n_query > sp.n_train_images:
        raise ValueError(f"{NAME}: need 1 <= min_context <= max_context and max_context + n_query <= "
                         f"{sp.n_train_images} meta-train images, got {min_context}, {max_context}, {n_query}")
    dev = model_device(model)
    g = torch.Generator().manual_seed(seed)
    feats, resp = sp.train_feats, sp.train_voxels.responses[:, :sp.n_train_images]
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr, weight_decay=weight_decay)
    # cosine decay to 0 over a known number of steps (a time budget keeps lr constant): the late, small steps
    # average out the noise of 32-voxel batches
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps))) \
        if steps else None
    model.train()

    def step(i: int) -> float:
        v = torch.randint(len(resp), (batch,), generator=g)
        c = int(torch.randint(min_context, max_context + 1, (1,), generator=g))
        idx = torch.rand(batch, sp.n_train_images, generator=g).argsort(1)[:, :c + n_query]
        x, y = feats[idx].to(dev), resp[v[:, None], idx].to(dev)
        loss = nn.functional.mse_loss(model(x[:, :c], y[:, :c], x[:, c:]), y[:, c:])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        return float(loss.detach())

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out


def context_draws(sp: D_.Split, contexts: Sequence[int], episodes: int, seed: int) -> dict[int, list[torch.Tensor]]:
    """For each context size, ``episodes`` index tensors (n_test_voxels, size) into the meta-train images."""
    g = torch.Generator().manual_seed(777 + seed)
    n_vox = len(sp.test_voxels.responses)
    return {c: [torch.rand(n_vox, sp.n_train_images, generator=g).argsort(1)[:, :c] for _ in range(episodes)]
            for c in contexts}


def score(model: nn.Module, sp: D_.Split, draws: dict[int, list[torch.Tensor]], *, chunk: int = 50) -> dict[str, float]:
    """``r_c{N}``: mean Pearson r on the held-out images over new voxels and draws, per context size N."""
    dev = model_device(model)
    n = sp.n_train_images
    resp, clean = sp.test_voxels.responses[:, :n], sp.test_voxels.clean[:, n:]
    out: dict[str, float] = {}
    with torch.no_grad():
        for c, episodes in draws.items():
            rs = []
            for idx in episodes:
                for s in range(0, len(idx), chunk):
                    i = idx[s:s + chunk]
                    q = sp.test_feats.expand(len(i), -1, -1)
                    pred = model(sp.train_feats[i].to(dev), resp[s:s + chunk].gather(1, i).to(dev), q.to(dev))
                    if pred.shape != (len(i), q.shape[1]):
                        raise ValueError(f"{NAME}: forward must return (B, Nq) = {(len(i), q.shape[1])}, got "
                                         f"{tuple(pred.shape)}; see the module docstring for the contract")
                    rs.append(_pearson(pred.cpu(), clean[s:s + chunk]))
            out[f"r_c{c}"] = float(torch.cat(rs).mean())
    return out


def evaluate(model: nn.Module, *, steps: int | None = None, budget_s: float | None = None, seed: int = 0,
             rebuild: Callable[..., nn.Module] | None = None, progress: bool = False, out_dir: str | None = None,
             baselines: Sequence[str] | None = None, train_model: bool | None = None,
             contexts: Sequence[int] = CONTEXTS, episodes: int = 2, n_train_voxels: int = 2000, n_test_voxels: int = 200,
             n_test_images: int = 500, k: int = 4, snr: float = 1.0, gain: float = 1.0, batch: int = 32,
             n_query: int = 50, min_context: int = 2, max_context: int = 100, lr: float = 1e-3,
             weight_decay: float = 1e-4) -> Result:
    """Meta-train ``model`` (when it has parameters and no pretrained weights) and score it and the baselines on the
    same new voxels and context draws; see the module docstring."""
    t0 = time.perf_counter()
    if any(c < 2 for c in contexts):
        raise ValueError(f"{NAME}: context sizes must be >= 2 (Pearson r and the ridge baseline need 2 shots): {contexts}")
    baselines = list(BASELINES) if baselines is None else list(baselines)
    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ValueError(f"unknown {NAME} baseline(s) {unknown}; choose from {', '.join(BASELINES)}")
    sp = D_.split(seed=seed, n_train_voxels=n_train_voxels, n_test_voxels=n_test_voxels, n_test_images=n_test_images,
                  k=k, snr=snr, gain=gain)
    if max(contexts) > sp.n_train_images:
        raise ValueError(f"{NAME}: context sizes must be <= {sp.n_train_images} meta-train images: {contexts}")
    if train_model is None:
        train_model = count_params(model) > 0 and not getattr(getattr(model, "zoo", None), "pretrained", False)
    if train_model and steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    metrics: dict[str, float] = {"params": float(count_params(model))}
    if train_model:
        metrics.update(meta_train(model, sp, steps=steps, budget_s=budget_s, seed=seed, batch=batch, n_query=n_query,
                                  min_context=min_context, max_context=max_context, lr=lr, weight_decay=weight_decay,
                                  progress=f"meta-train {NAME}" if progress else None))
    model.eval()
    draws = context_draws(sp, contexts, episodes, seed)
    metrics.update(score(model, sp, draws))
    results: dict[str, dict[str, float]] = {}
    for name in baselines:
        base = build_baseline(name, data=sp, seed=seed)
        if name == "ridge_full":
            full = {c: [torch.arange(sp.n_train_images).expand(len(sp.test_voxels.responses), -1)] for c in contexts[:1]}
            r = score(base, sp, full, chunk=25)[f"r_c{contexts[0]}"]
            results[name] = {f"r_c{c}": r for c in contexts} | {"shots": float(sp.n_train_images)}
        else:
            results[name] = score(base, sp, draws)
    artifacts = {}
    if out_dir is not None:
        artifacts["r_vs_context"] = plot(Path(out_dir) / "r_vs_context.png", contexts,
                                         {"model": metrics, **results}, title=f"{NAME}: seed {seed}, snr {snr:g}")
    return Result(task=NAME, metrics=metrics, baselines=results, n=len(sp.test_voxels.responses) * len(sp.test_feats),
                  seconds=time.perf_counter() - t0, artifacts=artifacts,
                  config={**describe(contexts=contexts, episodes=episodes, n_train_voxels=n_train_voxels,
                                     n_test_voxels=n_test_voxels, n_test_images=n_test_images, k=k, snr=snr, gain=gain,
                                     batch=batch, n_query=n_query, min_context=min_context, max_context=max_context,
                                     lr=lr, weight_decay=weight_decay),
                          "steps": steps, "budget_s": budget_s, "seed": seed, "trained": train_model})


def plot(path: Path, contexts: Sequence[int], rows: dict[str, dict[str, float]], *, title: str) -> str:
    """The r-vs-context curve of each row (``ridge_full`` dashed: it does not depend on the context size)."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6, 4))
    for label, m in rows.items():
        ax.plot(list(contexts), [m[f"r_c{c}"] for c in contexts], "--" if label == "ridge_full" else "o-", label=label)
    ax.set_xscale("log")
    ax.set_xticks(list(contexts), [str(c) for c in contexts])
    ax.minorticks_off()
    ax.set(xlabel="context size (shots)", ylabel="Pearson r on held-out images", title=title)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def example_input() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(ctx_feats (2, 5, 64), ctx_resp (2, 5), query_feats (2, 7, 64))`` from the real features and two voxels."""
    feats = D_.features()
    vox = D_.voxels(2, feats[:12], seed=0)
    ctx = feats[:5].expand(2, -1, -1).clone()
    return ctx, vox.responses[:, :5].clone(), feats[5:12].expand(2, -1, -1).clone()


def check_output(model: nn.Module, output: Any) -> None:
    """The contract on :func:`example_input`: a finite float (2, 7) tensor, one prediction per voxel and query."""
    if not isinstance(output, torch.Tensor) or output.shape != (2, 7) or not output.is_floating_point() \
            or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: forward must return finite float predictions (B=2, Nq=7), got "
                             f"{getattr(output, 'dtype', type(output))} {tuple(getattr(output, 'shape', ()))}")


def describe(**options: Any) -> dict[str, Any]:
    """The protocol's settings as :func:`evaluate` runs them with ``options``.

    >>> describe(snr=0.5)["snr"]
    0.5
    """
    params = inspect.signature(evaluate).parameters
    known = {k: p.default for k, p in params.items() if k not in ("model", "out_dir", "steps", "budget_s", "progress",
                                                                    "rebuild", "baselines", "seed", "train_model")}
    unknown = set(options) - set(known)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)}; choose from {', '.join(known)}")
    opt = {**known, **options}
    opt["contexts"] = list(opt["contexts"])
    return {**opt, "default_steps": DEFAULT_STEPS, "images": "1797 sklearn digits + 200 skimage lfw_subset, 16x16",
            "features": f"{D_.N_FEATURES} z-scored features of a random CNN (seed {D_.CNN_SEED}, frozen)",
            "voxels": "softplus(gain <w, f_S> + b) on k random features, z-scored, + N(0, 1/snr) noise",
            "metric": "Pearson r with the noise-free response on held-out images, mean over voxels and draws",
            "optimizer": "AdamW, cosine decay to 0 over steps", "loss": "MSE of measured query responses",
            "baselines": dict(BASELINES)}
