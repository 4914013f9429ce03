"""Similarity of similarity matrices (SSM) and pseudo-depth (Shi, Shea-Brown and Buice 2019, "Comparison Against
Task Driven Artificial Neural Networks Reveals Functional Properties in Mouse Visual Cortex", NeurIPS; section 2).

Responses ``R`` (N_stim, N_units) and each layer's activations ``A_l`` (N_stim, D_l) to the same stimuli are reduced to
(N_stim, N_stim) representational similarity matrices (Pearson correlation between the stimuli's patterns); the SSM of
layer l is the Pearson correlation of the two matrices' off-diagonal upper triangles (``zoo_task_rep_metrics``'s
``rdm`` and ``rsa``). To tell a stable preference from the luck of one stimulus set and one survey of neurons, every
bootstrap draw takes a random subset of the stimuli (without replacement) and of the units, recomputes the SSM of
every layer, and notes the best layer. The pseudo-depth is the relative depth of the best layer,
``index / (L - 1)`` in [0, 1] with the layers in the order given (input side first).

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> a = rng.standard_normal((60, 20))
>>> layers = {"l0": a, "l1": np.tanh(a @ rng.standard_normal((20, 20))), "l2": rng.standard_normal((60, 20))}
>>> res = similarity_of_similarity(layers["l1"] @ rng.standard_normal((20, 40)), layers, n_boot=20)
>>> res["best_layer"], res["frequency"]["l1"] > 0.9
('l1', True)
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from zoo_task_rep_metrics.similarity import rdm, rsa

METHODS = ("pearson", "spearman")


def _as_matrix(x: Any, what: str) -> np.ndarray:
    a = np.asarray(x.detach().cpu().numpy() if hasattr(x, "detach") else x, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError(f"{what} has shape {a.shape}; the SSM needs (N_stim, N_units) / (N_stim, D) matrices "
                         "(flatten or pool maps and tokens first)")
    if not np.isfinite(a).all():
        raise ValueError(f"{what} holds NaN/inf values; drop those stimuli or units before comparing")
    return a


def similarity_of_similarity(responses: Any, layers: Mapping[str, Any], *, n_boot: int = 100,
                             stim_frac: float = 0.8, unit_frac: float = 0.5, method: str = "pearson",
                             seed: int = 0) -> dict[str, Any]:
    """SSM between ``responses`` (N_stim, N_units) and every layer in ``layers`` ({name: (N_stim, D_l)}, input side
    first), on all the data and over ``n_boot`` draws of ``stim_frac`` of the stimuli and ``unit_frac`` of the units.

    Returns:
        ``ssm`` {layer: value on all data}; ``boot_mean``, ``interval`` {layer: [2.5%, 97.5%] percentiles};
        ``frequency`` {layer: share of draws where it matched best}; ``best_layer`` (the best on all data),
        ``pseudo_depth`` (its relative depth) and ``pseudo_depth_interval`` (percentiles over the draws);
        ``preferred``: the largest ``frequency`` (1 = every draw agrees; 1/L = no preferred layer).
    """
    if method not in METHODS:
        raise ValueError(f"unknown SSM method {method!r}; choose from {list(METHODS)}")
    if not (0 < stim_frac <= 1 and 0 < unit_frac <= 1):
        raise ValueError(f"stim_frac and unit_frac are fractions in (0, 1]; got {stim_frac}, {unit_frac}")
    if n_boot < 1:
        raise ValueError(f"n_boot={n_boot}: at least one bootstrap draw")
    r = _as_matrix(responses, "responses")
    n, units = r.shape
    if not layers:
        raise ValueError("the SSM needs at least one layer to compare the responses with")
    acts = {str(k): _as_matrix(v, f"layer {k!r}") for k, v in layers.items()}
    wrong = {k: a.shape[0] for k, a in acts.items() if a.shape[0] != n}
    if wrong:
        raise ValueError(f"every layer must hold the same {n} stimuli as the responses; got {wrong}")
    n_stim, n_units = int(round(stim_frac * n)), int(round(unit_frac * units))
    if n_stim < 4:
        raise ValueError(f"a draw keeps {n_stim} of {n} stimuli; the SSM needs at least 4 (more stimuli or stim_frac)")
    if n_units < 2:
        raise ValueError(f"a draw keeps {n_units} of {units} units; the correlation RSM needs at least 2 "
                         "(more units or unit_frac)")
    names = list(acts)
    layer_rdms = {k: rdm(a) for k, a in acts.items()}  # a stimulus subset is a sub-block of these
    ssm = {k: rsa(rdm(r), m, method, metric="precomputed") for k, m in layer_rdms.items()}
    rng = np.random.default_rng(seed)
    draws = np.empty((n_boot, len(names)))
    for b in range(n_boot):
        s = np.sort(rng.choice(n, n_stim, replace=False))
        u = rng.choice(units, n_units, replace=False)
        r_rdm = rdm(r[np.ix_(s, u)])
        draws[b] = [rsa(r_rdm, layer_rdms[k][np.ix_(s, s)], method, metric="precomputed") for k in names]
    best = draws.argmax(1)
    depth = best / max(len(names) - 1, 1)
    freq = np.bincount(best, minlength=len(names)) / n_boot
    top = max(names, key=lambda k: ssm[k])
    return {"layers": names, "ssm": ssm, "boot_mean": dict(zip(names, draws.mean(0).tolist(), strict=True)),
            "interval": {k: np.percentile(draws[:, i], [2.5, 97.5]).tolist() for i, k in enumerate(names)},
            "frequency": dict(zip(names, freq.tolist(), strict=True)), "best_layer": top,
            "pseudo_depth": names.index(top) / max(len(names) - 1, 1),
            "pseudo_depth_mean": float(depth.mean()),
            "pseudo_depth_interval": np.percentile(depth, [2.5, 97.5]).tolist(), "preferred": float(freq.max()),
            "n_stim": n, "n_units": units, "draw": {"stimuli": n_stim, "units": n_units, "n_boot": n_boot}}
