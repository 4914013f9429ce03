"""The three scales measured on the ``icl_toy`` token GPT (4 blocks, dim 64), with SAEs trained here.

* ``crystal_experiment`` (§3, as function-vector parallelograms): a point is the residual stream at the query
  token x (the position before the final "->") of one 8-shot prompt of word task T (``word_perm_a/b/c``,
  ``word_shift``). For two tasks T1, T2 and two query words x, y, the quadruple
  h(T1, x) : h(T2, x) :: h(T1, y) : h(T2, y) is a parallelogram when the task difference is one vector whatever
  the query; the particular demonstrations (and what the model already computes of f_T(x)) are the distractors.
  The 16 words are split (per seed) into 8 fit words and 8 held-out words: the LDA (k = 8) is fitted on the fit
  words' points and edges, and quality is measured on held-out quadruples only, raw, after LDA, and after a
  random k-dimensional projection (the control).
* ``universe_experiment`` (§4, §5): per residual layer 0..4 an SAE (``sae.CPU``) is trained on every token of
  prompts of all 8 token tasks; a feature co-occurs with another when both fire in the same prompt (the window);
  co-occurrence clusters (phi, spectral, 8 clusters) are compared with geometric clusters of the decoder rows
  (AMI) against shuffled rows; the eigenvalue power-law slope and the clustering entropy of the decoder cloud (and of
  the raw token activations) are reported per layer.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .geometry import (
    clustering_entropy,
    lda_projection,
    phi_cooccurrence,
    power_law_slope,
    quad_quality,
    random_projection,
    spatial_modularity,
)
from .sae import CPU, fraction_variance_explained, sae_codes, train_sae

WORD_TASKS = ("word_perm_a", "word_perm_b", "word_perm_c", "word_shift")
SHOTS = 8
LDA_K = 8
TASK_THRESHOLD = 0.5
N_CLUSTERS = 8


@torch.no_grad()
def resid_all(gpt: Any, ids: np.ndarray, batch: int = 512) -> dict[str, np.ndarray]:
    """Residual stream at every position entering every block and the final norm: {"resid.i": (N, T, D)}."""
    from zoo.activations import activations

    acts = activations(gpt, torch.from_numpy(ids), layers=["resid.*"], batch_size=batch)
    return {k: acts[k].astype(np.float64) for k in acts.names}


def crystal_points(gpt: Any, *, n_per: int, seed: int) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """Query-token states per layer for every (word task, query word, instance): arrays (4 * 16 * n_per, D),
    with the task index and query word index of each point."""
    from zoo_task_icl_toy import data as D

    rng = np.random.default_rng(seed)
    words = D.VOCAB.domain("word")
    ids, task_of, word_of = [], [], []
    for t, name in enumerate(WORD_TASKS):
        for w in range(len(words)):
            p, _ = D.token_prompts(D.TASK_NAMES.index(name), n_per, SHOTS, rng=rng)
            p[:, -2] = words[w]
            ids.append(p)
            task_of += [t] * n_per
            word_of += [w] * n_per
    states = resid_all(gpt, np.concatenate(ids))
    return {k: v[:, -2] for k, v in states.items()}, np.asarray(task_of), np.asarray(word_of)


def _pairs_and_quads(task_of: np.ndarray, word_of: np.ndarray, fit_words: np.ndarray, test_words: np.ndarray,
                     rng: np.random.Generator, n_quads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n_t = int(task_of.max()) + 1
    idx = {(t, w): np.nonzero((task_of == t) & (word_of == w))[0] for t in range(n_t) for w in np.unique(word_of)}
    rels = [(a, b) for a in range(n_t) for b in range(a + 1, n_t)]
    pairs, prel = [], []
    for r, (t1, t2) in enumerate(rels):
        for w in fit_words:
            for i in idx[(t1, w)]:
                for j in idx[(t2, w)]:
                    pairs.append((i, j))
                    prel.append(r)
    quads, qrel = [], []
    for _ in range(n_quads):
        r = int(rng.integers(len(rels)))
        t1, t2 = rels[r]
        x, y = rng.choice(test_words, 2, replace=False)
        quads.append((rng.choice(idx[(t1, x)]), rng.choice(idx[(t2, x)]), rng.choice(idx[(t1, y)]),
                      rng.choice(idx[(t2, y)])))
        qrel.append(r)
    return np.asarray(pairs), np.asarray(prel), np.asarray(quads), np.asarray(qrel)


def crystal_experiment(gpt: Any, *, seed: int, n_per: int = 6, n_quads: int = 2000, k: int = LDA_K,
                       layers: tuple[int, ...] = (1, 2, 3, 4), task_threshold: float = TASK_THRESHOLD
                       ) -> dict[str, float]:
    """Held-out parallelogram / trapezoid quality raw, after LDA and after a random projection, per layer, and
    averaged over the layers whose query position carries a task vector (raw trapezoid quality of the FIT words'
    quadruples above ``task_threshold``; the argmax when none is): chosen without looking at any projection."""
    states, task_of, word_of = crystal_points(gpt, n_per=n_per, seed=1000 + seed)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(int(word_of.max()) + 1)
    fit_w, test_w = perm[: len(perm) // 2], perm[len(perm) // 2:]
    pairs, prel, quads, _ = _pairs_and_quads(task_of, word_of, fit_w, test_w, rng, n_quads)
    _, _, fit_quads, _ = _pairs_and_quads(task_of, word_of, fit_w, fit_w, rng, n_quads)
    fit_pts = np.isin(word_of, fit_w)
    remap = -np.ones(len(word_of), dtype=np.int64)
    remap[np.nonzero(fit_pts)[0]] = np.arange(int(fit_pts.sum()))
    out: dict[str, float] = {}
    for li in layers:
        x = states[f"resid.{li}"]
        out[f"fit_trapezoid_L{li}"] = float(np.nanmean(quad_quality(x, fit_quads)["trapezoid"]))
        # LDA sees only the fit words' points (C_b) and edges (C_w)
        w = lda_projection(x[fit_pts], remap[pairs], prel, k)
        for name, proj in (("raw", None), ("lda", w), ("random", random_projection(x.shape[1], k, seed=seed))):
            q = quad_quality(x, quads, proj)
            out[f"{name}_parallelogram_L{li}"] = float(np.nanmean(q["parallelogram"]))
            out[f"{name}_trapezoid_L{li}"] = float(np.nanmean(q["trapezoid"]))
    chosen = [li for li in layers if out[f"fit_trapezoid_L{li}"] > task_threshold] or \
        [max(layers, key=lambda li: out[f"fit_trapezoid_L{li}"])]
    for name in ("raw", "lda", "random"):
        for m in ("parallelogram", "trapezoid"):
            out[f"{name}_{m}"] = float(np.mean([out[f"{name}_{m}_L{li}"] for li in chosen]))
    out["n_layers_chosen"] = float(len(chosen))
    out["first_layer_chosen"] = float(min(chosen))
    return out


def universe_prompts(n_per_task: int, seed: int) -> np.ndarray:
    from zoo_task_icl_toy import data as D

    rng = np.random.default_rng(seed)
    return np.concatenate([D.token_prompts(t, n_per_task, SHOTS, rng=rng)[0] for t in range(len(D.TASK_NAMES))])


def universe_experiment(gpt: Any, *, seed: int, n_per_task: int = 150, steps: int = CPU["steps"],
                        n_clusters: int = N_CLUSTERS, n_shuffles: int = 10) -> dict[str, float]:
    """Per residual layer: SAE, lobes (AMI vs shuffled) and galaxy (power-law slope, clustering entropy)."""
    states = resid_all(gpt, universe_prompts(n_per_task, seed=2000 + seed))
    out: dict[str, float] = {}
    amis, shuf = [], []
    for name in sorted(states):
        li = name.split(".")[1]
        h = states[name]                          # (prompts, T, D)
        tokens = h.reshape(-1, h.shape[-1])
        sae, scale = train_sae(tokens, steps=steps, seed=seed)
        codes = sae_codes(sae, tokens, scale).reshape(h.shape[0], h.shape[1], -1)
        fired = (codes > 0).any(1)                # (windows, F): fires anywhere in the prompt
        rate = fired.mean(0)
        alive = (rate > 0) & (rate < 1)
        dec = sae.w_dec.detach().double().numpy()[alive]
        out[f"fve_L{li}"] = fraction_variance_explained(sae, tokens, scale)
        out[f"l0_L{li}"] = float((codes > 0).sum(-1).mean())
        out[f"alive_L{li}"] = float(alive.sum())
        if int(li) >= 1 and alive.sum() > 2 * n_clusters:
            mod = spatial_modularity(dec, phi_cooccurrence(fired[:, alive]), n_clusters, seed=seed,
                                     n_shuffles=n_shuffles)
            out[f"ami_L{li}"], out[f"ami_shuffled_L{li}"] = mod["ami"], mod["ami_shuffled"]
            amis.append(mod["ami"])
            shuf.append(mod["ami_shuffled"])
        all_dec = sae.w_dec.detach().double().numpy()
        out[f"slope_L{li}"] = power_law_slope(all_dec)["slope"]
        out[f"raw_slope_L{li}"] = power_law_slope(tokens)["slope"]
        out[f"clustering_entropy_L{li}"] = clustering_entropy(all_dec)["clustering_entropy"]
    out["ami"] = float(np.mean(amis)) if amis else float("nan")
    out["ami_shuffled"] = float(np.mean(shuf)) if shuf else float("nan")
    slopes = [out[f"slope_L{i}"] for i in range(len(states))]
    out["steepest_layer"] = float(int(np.argmin(slopes)))
    return out
