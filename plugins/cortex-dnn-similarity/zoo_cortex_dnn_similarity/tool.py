"""The ``similarity_of_similarity`` tool: SSM between recorded responses and every other layer of an
``ActivationSet``, bootstrapped, with the pseudo-depth (``ssm.similarity_of_similarity``).

The responses are the set's layer ``responses`` (a name: ``{"responses": R, "conv1": A1, ...}``, or a model layer
such as ``output`` from ``zoo analyze ... --tool-arg responses=output``) or an (N_stim, N_units) array passed directly.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from zoo.figures import pyplot, save_figure

from . import ssm as _ssm


def similarity_of_similarity(acts: Any, *, responses: Any = "responses", layers: Sequence[str] | str | None = None,
                             n_boot: int = 100, stim_frac: float = 0.8, unit_frac: float = 0.5,
                             method: str = "pearson", seed: int = 0, pool: str = "mean",
                             out_dir: str | None = None) -> dict[str, Any]:
    """SSM of the responses with each layer (all other layers of ``acts`` in their order, or ``layers``), bootstrap
    intervals over stimulus and unit subsampling, and the pseudo-depth of the best-matching layer."""
    if isinstance(responses, str):
        if responses not in acts.names:
            raise ValueError(f"no responses layer {responses!r} in this ActivationSet ({', '.join(acts.names)}): "
                             "add the recorded responses as that layer or pass responses=<layer name or array>")
        r = acts.matrix(responses, min_samples=4, pool=pool)
        others = [n for n in acts.names if n != responses]
    else:
        r = np.asarray(responses, dtype=np.float64)
        others = list(acts.names)
    names = [layers] if isinstance(layers, str) else list(layers or others)
    if not names:
        raise ValueError("the ActivationSet holds only the responses; add the layers to compare them with")
    result = _ssm.similarity_of_similarity(r, {n: acts.matrix(n, min_samples=4, pool=pool) for n in names},
                                           n_boot=n_boot, stim_frac=stim_frac, unit_frac=unit_frac, method=method,
                                           seed=seed)
    if out_dir is not None:
        result["artifacts"] = {"ssm": _plot(result, os.path.join(out_dir, "similarity_of_similarity.png"))}
    return result


def _plot(res: dict[str, Any], path: str) -> str:
    plt = pyplot()

    names = res["layers"]
    x = np.arange(len(names))
    mean = np.array([res["boot_mean"][n] for n in names])
    lo, hi = (np.array([res["interval"][n][i] for n in names]) for i in (0, 1))
    fig, ax = plt.subplots(figsize=(max(4.0, 0.6 * len(names) + 2), 3.4))
    ax.errorbar(x, mean, yerr=[mean - lo, hi - mean], fmt="o-", capsize=3, label="bootstrap mean, 95% interval")
    ax.plot(x, [res["ssm"][n] for n in names], "k.", label="all data")
    ax.set_xticks(x, names, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("SSM (similarity of similarity matrices)")
    ax.set_title(f"pseudo-depth {res['pseudo_depth']:.2f} ({res['best_layer']})")
    ax.legend(fontsize=7)
    return save_figure(fig, path)
