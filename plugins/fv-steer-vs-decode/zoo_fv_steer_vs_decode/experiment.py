"""Steerability vs decodability of function vectors on ``icl_toy``'s token GPT, per (task, layer).

For one seed: ``zoo-function-vectors``' ``FunctionVector`` is fitted on the fit prompts (AIE scan, top-k heads' task
means); for every task t and layer l in 0..depth-1 (the residual stream entering block l: the intermediate layers;
layer ``depth`` is the model's output, decodable by construction):

* steering: zero-shot test accuracy of task t with ``FV_t`` added at layer l (last position), minus the zero-shot
  accuracy with nothing added (the gain; steerable when > ``STEER_THRESHOLD``);
* decoding on the clean ``shots``-shot test prompts of task t at layer l: the logit lens, a diagonal tuned lens
  (trained on the fit prompts' clean states of all tasks) and a 2-layer MLP probe with a Hewitt & Liang control task
  (types: the (task, query token) pair, the information the answer is a function of; trained on the fit prompts,
  scored on the test prompts; decodable when accuracy >= ``DECODE_THRESHOLD``; the probe counts only when its
  selectivity is >= 0.1 too);
* the same steering with a random vector of the FV's norm per task (the chance level of "steerable");
* the FV through the unembedding (``gpt.unembed``: final norm and head) against a random vector of the same norm;
* the norm-transfer correlation across tasks: ||FV_t|| against the mean gain over layers.

Two more steering vectors: the FV scaled by ``SCALE`` (reported only) and the mean difference of the residual stream
(clean minus zero-shot prompts, last position, per task and layer), which is the paper's own definition of an FV
("mean-difference directions extracted from in-context learning demonstrations", Nadaf 2026, abstract and §3).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from zoo_function_vectors.model import function_vector
from zoo_task_icl_toy import task as T
from zoo_task_icl_toy.gpt import HookedGPT, add_to_residual, residual_states

from .decode import (
    DECODE_THRESHOLD,
    STEER_THRESHOLD,
    contingency,
    diagonal_lens_accuracy,
    fit_diagonal_lens,
    pearson,
    probe_with_control,
    unembed_stats,
)

SCALE = 5.0
SELECTIVITY_MIN = 0.1


def task_domains(tasks: tuple[str, ...]) -> list[np.ndarray]:
    """Each token task's output tokens (its domain's ids)."""
    return [T.D.VOCAB.domain(T.D.TOKEN_TASKS[name][0]) for name in tasks]


@torch.no_grad()
def steer_accuracy(gpt: HookedGPT, prompts: T.Prompts, vectors: torch.Tensor, layer: int) -> torch.Tensor:
    """Per prompt hit (B,) with ``vectors[task]`` ((n_tasks, dim)) added entering block ``layer`` at the last
    position."""
    with add_to_residual(gpt, {layer: vectors[prompts.task]}):
        return (gpt(prompts.inputs)[:, -1].argmax(-1) == prompts.targets).float()


def _per_task(hits: Any, task: torch.Tensor, n_tasks: int) -> np.ndarray:
    hits = torch.as_tensor(np.asarray(hits)).float()
    return np.array([float(hits[task == t].mean()) for t in range(n_tasks)])


def steering_table(gpt: HookedGPT, test: T.ICLData, vectors: torch.Tensor, layers: range) -> np.ndarray:
    """(n_tasks, len(layers)) zero-shot accuracy with ``vectors`` ((n_tasks, dim) or (n_tasks, L, dim)) added."""
    cols = []
    for j, layer in enumerate(layers):
        v = vectors if vectors.ndim == 2 else vectors[:, j]
        cols.append(_per_task(steer_accuracy(gpt, test.zero, v, layer), test.zero.task, test.n_tasks))
    return np.stack(cols, 1)


def _table(steer_gain: np.ndarray, decodable: np.ndarray, prefix: str = "") -> dict[str, float]:
    """Per (task, layer) cells, plus the paper's unit (per task: steerable at its best layer, decodable at any)."""
    c = contingency(steer_gain > STEER_THRESHOLD, decodable)
    out = {f"{prefix}{k}": float(v) for k, v in c.items()}
    out[f"{prefix}steerable"] = float((steer_gain > STEER_THRESHOLD).sum())
    per_task = contingency(steer_gain.max(1) > STEER_THRESHOLD, decodable.any(1))
    out.update({f"{prefix}task_{k}": float(v) for k, v in per_task.items()})
    return out


@torch.no_grad()
def run(gpt: HookedGPT, seed: int = 0, *, n_fit: int = T.N_FIT, n_test: int = T.N_TEST,
        probe_steps: int = 300, lens_steps: int = 200) -> dict[str, Any]:
    """Every figure of one seed (see the module docstring): tables (n_tasks, depth) and scalars."""
    fit = T.icl_data("token", n=n_fit, seed=seed, stream="fit")
    test = T.icl_data("token", n=n_test, seed=seed, stream="test")
    n_tasks, layers = fit.n_tasks, range(gpt.depth)
    torch.manual_seed(seed)
    fv = function_vector(n_tasks=n_tasks, depth=gpt.depth, dim=gpt.dim, heads=gpt.heads)
    fv.fit(gpt, fit, seed=seed)
    vecs = fv.vectors[:, fv.layer].clone()  # (n_tasks, dim)

    zero = _per_task((gpt(test.zero.inputs)[:, -1].argmax(-1) == test.zero.targets).float(), test.zero.task, n_tasks)
    acc_fv = steering_table(gpt, test, vecs, layers)
    acc_scaled = steering_table(gpt, test, SCALE * vecs, layers)
    r_fit_clean, r_fit_zero = residual_states(gpt, fit.clean.inputs), residual_states(gpt, fit.zero.inputs)
    md = torch.stack([r_fit_clean[fit.clean.task == t].mean(0) - r_fit_zero[fit.zero.task == t].mean(0)
                      for t in range(n_tasks)])  # (n_tasks, depth + 1, dim)
    acc_md = steering_table(gpt, test, md[:, : gpt.depth], layers)
    g = torch.Generator().manual_seed(20_000 + seed)
    rnd = torch.randn(vecs.shape, generator=g)
    rnd = rnd / rnd.norm(dim=-1, keepdim=True) * vecs.norm(dim=-1, keepdim=True)  # random directions, FV norms
    acc_rnd = steering_table(gpt, test, rnd, layers)

    # decoding at every layer on the clean prompts (logit lens, diagonal tuned lens, MLP probe + control)
    h_fit, h_test = r_fit_clean, residual_states(gpt, test.clean.inputs)
    # the control task's type: the (task, query token) pair, the information the real answer is a function of
    q_fit = (fit.clean.task * 1000 + fit.clean.inputs[:, -2]).numpy()
    q_test = (test.clean.task * 1000 + test.clean.inputs[:, -2]).numpy()
    lens, tuned, probe, control = (np.zeros((n_tasks, gpt.depth)) for _ in range(4))
    for j, layer in enumerate(layers):
        ht = h_test[:, layer]
        lens[:, j] = _per_task((gpt.unembed(ht).argmax(-1) == test.clean.targets).float(), test.clean.task, n_tasks)
        a, b = fit_diagonal_lens(h_fit[:, layer], fit.clean.targets, gpt.unembed, steps=lens_steps, seed=seed)
        tuned[:, j] = _per_task(diagonal_lens_accuracy(ht, test.clean.targets, gpt.unembed, a, b), test.clean.task,
                                n_tasks)
        pc = probe_with_control(h_fit[:, layer], fit.clean.targets, q_fit, ht, test.clean.targets, q_test,
                                seed=seed, steps=probe_steps)
        probe[:, j] = _per_task(pc["probe"], test.clean.task, n_tasks)
        control[:, j] = _per_task(pc["control"], test.clean.task, n_tasks)
    selectivity = probe - control

    gain, gain_scaled, gain_md = acc_fv - zero[:, None], acc_scaled - zero[:, None], acc_md - zero[:, None]
    gain_rnd = acc_rnd - zero[:, None]
    dec_lens = lens >= DECODE_THRESHOLD
    dec_tuned = tuned >= DECODE_THRESHOLD
    dec_probe = (probe >= DECODE_THRESHOLD) & (selectivity >= SELECTIVITY_MIN)
    snd = (gain > STEER_THRESHOLD) & ~dec_lens
    snd_md = (gain_md > STEER_THRESHOLD) & ~dec_lens

    doms = task_domains(fit.tasks)
    fv_u = unembed_stats(vecs, gpt.unembed, doms)
    rnd_u = unembed_stats(rnd, gpt.unembed, doms)
    md_u = unembed_stats(md[:, fv.layer], gpt.unembed, doms)
    norms = vecs.norm(dim=-1).numpy()

    return {
        "tasks": list(fit.tasks), "fv_layer": fv.layer, "zero": zero, "acc_fv": acc_fv, "gain": gain,
        "gain_scaled": gain_scaled, "gain_mean_diff": gain_md, "gain_random": gain_rnd, "lens": lens, "tuned": tuned,
        "probe": probe, "control": control, "selectivity": selectivity,
        "fv_table": _table(gain, dec_lens), "scaled_table": _table(gain_scaled, dec_lens, "scaled_"),
        "mean_diff_table": _table(gain_md, dec_lens, "mean_diff_"), "random_table": _table(gain_rnd, dec_lens, "random_"),
        "tuned_table": _table(gain, dec_tuned, "tuned_"), "probe_table": _table(gain, dec_probe, "probe_"),
        "snd_closed_by_tuned": float((snd & dec_tuned).sum()), "snd_closed_by_probe": float((snd & dec_probe).sum()),
        "mean_diff_snd_closed_by_tuned": float((snd_md & dec_tuned).sum()),
        "mean_diff_snd_closed_by_probe": float((snd_md & dec_probe).sum()),
        "fv_unembed": {k: v for k, v in fv_u.items() if k != "top"}, "fv_top": fv_u["top"],
        "random_unembed": {k: v for k, v in rnd_u.items() if k != "top"},
        "mean_diff_unembed": {k: v for k, v in md_u.items() if k != "top"},
        "fv_norm": norms,
        "norm_transfer_r": pearson(norms, gain.mean(1)) if np.ptp(gain.mean(1)) > 0 else float("nan"),
        "norm_transfer_r_mean_diff": (pearson(md[:, : gpt.depth].norm(dim=-1).numpy(), gain_md)
                                      if np.ptp(gain_md) > 0 else float("nan")),
        "norm_transfer_r_scaled": (pearson(norms, gain_scaled.mean(1)) if np.ptp(gain_scaled.mean(1)) > 0
                                   else float("nan")),
    }
