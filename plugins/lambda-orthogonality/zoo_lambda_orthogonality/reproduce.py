"""``zoo reproduce lambda-orthogonality``: compatibility vs preservation of free, lambda- and strict-orthogonal adapters.

Setting (the catalog's small-scale form of the paper's model-update experiments): two encoders of
``digits_classify`` images from ``zoo_nn.backbones``, trained on all ten classes: the *old* model
a ``DigitsMLP`` (hidden 64, 300 steps), the *new* one a ``DigitsCNN`` with a 64-d embedding (600
steps, another seed). Embeddings are their 64-d features, compared by cosine. An adapter T (new ->
old space) is fitted on the *downstream distribution*, the training images of classes 0-4 only:
a cosine regression of T(new(x)) on old(x) of the same image (400 steps, batch 128, Adam 3e-3;
``fit_adapter``, which also has the contrastive alignments of the first runs), plus its
regulariser. The 450 test images are split into a gallery (even positions) and queries (odd
positions).

Measured per seed: *compatibility*, new queries mapped by T searching the old gallery (CMC top-1
and mAP, class labels), on queries of the downstream classes (``*_seen``) and of the five unseen
classes (``*_unseen``); *preservation*, the new model's own kNN top-1 once T is applied to its
queries and gallery (all classes), against the unadapted new model. Adapters: free affine
(lam = 0), lambda-orthogonal (lam in ``LAMBDAS``), the tolerance (hinge) form (tau in ``TOLERANCES``),
strictly orthogonal. The claim holds when, at the default lam = 1, compatibility (mAP) on the
downstream classes is at least the orthogonal adapter's and preservation is within 1 point of the
new model's own top-1.
"""
from __future__ import annotations

import dataclasses
import functools

import torch
from torch.nn import functional as F

import zoo
from zoo.claims import Check, Claim, Row
from zoo_task_digits import task as digits
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData

from .plugin import CLAIM

DOWNSTREAM = (0, 1, 2, 3, 4)
LAMBDAS = (0.01, 0.1, 1.0, 10.0)
ALIGNMENTS = ("cosine", "instance", "class", "instance, class ignored")
TOLERANCES = (0.1, 1.0, 3.0)  # the tolerance (hinge) form: ||A^T A - I||_F allowed up to tau for free
DEFAULT_LAM, TOLERANCE = 1.0, 0.01
STEPS = {"old_steps": 300, "new_steps": 600, "adapt_steps": 400}
QUICK_STEPS = {"old_steps": 20, "new_steps": 20, "adapt_steps": 5}


@functools.lru_cache(maxsize=2)  # every row of a seed shares that seed's encoders
def embeddings(seed: int, old_steps: int, new_steps: int) -> dict[str, torch.Tensor]:
    """Train the old (DigitsMLP, hidden 64) and new (DigitsCNN, 64-d embedding) encoders on digits_classify; their
    64-d features of the downstream training images and of the test split (gallery: even positions, queries: odd),
    with the labels."""
    from zoo_nn.backbones import DigitsCNN, DigitsMLP

    torch.manual_seed(seed)
    old = DigitsMLP(hidden=64)
    digits.train(old, steps=old_steps, seed=seed)
    torch.manual_seed(seed + 100)
    new = DigitsCNN(embed_dim=64)
    digits.train(new, steps=new_steps, seed=seed + 100)
    x_tr, y_tr, x_te, y_te = digits.load_split()
    down = torch.isin(y_tr, torch.tensor(DOWNSTREAM))
    gal, qry = torch.arange(0, len(y_te), 2), torch.arange(1, len(y_te), 2)
    with torch.no_grad():
        old_te, new_te = old.forward_features(x_te), new.forward_features(x_te)
        return {"old_train": old.forward_features(x_tr[down]), "new_train": new.forward_features(x_tr[down]),
                "y_train": y_tr[down], "old_gallery": old_te[gal], "new_gallery": new_te[gal], "y_gallery": y_te[gal],
                "old_queries": old_te[qry], "new_queries": new_te[qry], "y_queries": y_te[qry]}


def ranking_metrics(q: torch.Tensor, g: torch.Tensor, yq: torch.Tensor, yg: torch.Tensor) -> dict[str, float]:
    """CMC top-1 and mAP of cosine search of queries ``q`` over gallery ``g`` (relevant: same label).

    >>> e = torch.eye(2); ranking_metrics(e, e, torch.tensor([0, 1]), torch.tensor([0, 1]))
    {'top1': 1.0, 'map': 1.0}
    """
    s = F.normalize(q, dim=-1) @ F.normalize(g, dim=-1).T
    order = s.argsort(1, descending=True)
    rel = (yg[order] == yq[:, None]).float()  # (Q, G) relevance in rank order
    hits = rel.cumsum(1)
    ranks = torch.arange(1, rel.shape[1] + 1, dtype=torch.float32)
    ap = (rel * hits / ranks).sum(1) / rel.sum(1).clamp_min(1)
    return {"top1": float(rel[:, 0].mean()), "map": float(ap.mean())}


def fit_adapter(model: torch.nn.Module, new: torch.Tensor, old: torch.Tensor, labels: torch.Tensor, *, steps: int,
                alignment: str = "cosine", batch_size: int = 128, seed: int = 0) -> torch.nn.Module:
    """Fit the adapter on the downstream data: an alignment of T(new(x)) with old embeddings plus its regulariser.

    ``alignment`` (``ALIGNMENTS``):

    * "cosine" (the protocol): regression of T(new(x)) on old(x) of the same image,
      ``mean(1 - cos(T(new(x)), old(x)))``. Under it the free affine map is the best fit of the
      downstream data (the contrastive forms below also push apart images of the same class, which
      makes the free map the *worst* fit of the very classes it is fitted on).
    * "instance": in-batch contrastive, old(x) of the same image the positive and every other image
      of the batch a negative. The task's ``train`` (Adam 3e-3).
    * "class": any old embedding of the same class the positive (the task's ``train`` samples one
      and leaves the others out of the softmax).
    * "instance, class ignored": old(x) of the same image the positive, the other images of its
      class left out of the softmax.

    The loops not run by the task's ``train`` use its optimiser (Adam 3e-3) and batch sampling.
    """
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {alignment!r}")
    if alignment in ("instance", "class"):
        by_class = {int(c): {int(i): 1.0 for i in (labels == c).nonzero().flatten()} for c in labels.unique()}
        qrels = [{i: 1.0} for i in range(len(new))] if alignment == "instance" else [by_class[int(c)] for c in labels]
        task.train(model, RetrievalData(new, old, qrels, "single", name="digits-alignment"), steps=steps,
                   batch_size=batch_size, seed=seed)
        return model.eval()
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=3e-3)
    model.train()
    for _ in range(steps):
        idx = torch.randperm(len(new), generator=g)[:batch_size]
        q, d = model.encode_queries(new[idx]), model.encode_docs(old[idx])
        if alignment == "cosine":
            loss = (1 - (q * d).sum(-1)).mean() + model.regularizer()
        else:
            y = labels[idx]
            ignore = (y[:, None] == y[None, :]) & ~torch.eye(len(idx), dtype=torch.bool)
            loss = model.loss(q, d, torch.arange(len(idx)), ignore)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


def adapter_row(*, seed: int, old_steps: int, new_steps: int, adapt_steps: int, queries: str, lam: float = 0.0,
                alignment: str = "cosine") -> dict[str, float]:
    """Compatibility and preservation of one way of querying the old gallery: ``queries`` "old" (the reference),
    "new" (no adapter), or an adapter mode ("lambda" with weight ``lam``, "tolerance" with tolerance ``lam``,
    "orthogonal") fitted on the downstream data."""
    e = embeddings(seed, old_steps, new_steps)
    yq, yg = e["y_queries"], e["y_gallery"]
    out: dict[str, float] = {}
    if queries in ("old", "new"):
        q, g = e[f"{queries}_queries"], e[f"{queries}_gallery"]
    else:
        torch.manual_seed(seed)
        t = fit_adapter(zoo.create("lambda_orthogonal_adapter", lam=lam, mode=queries), e["new_train"], e["old_train"],
                        e["y_train"], steps=adapt_steps, alignment=alignment, seed=seed)
        with torch.no_grad():
            q, g = t(e["new_queries"]), t(e["new_gallery"])
            out["orth_gap"] = float((t.weight.T @ t.weight - torch.eye(t.weight.shape[1])).norm())
    seen = torch.isin(yq, torch.tensor(DOWNSTREAM))
    for part, mask in (("seen", seen), ("unseen", ~seen)):
        m = ranking_metrics(q[mask], e["old_gallery"], yq[mask], yg)
        out.update({f"compat_top1_{part}": m["top1"], f"compat_map_{part}": m["map"]})
    out["self_knn_top1"] = ranking_metrics(q, g, yq, yg)["top1"]
    return out


ROWS = {"old -> old (reference)": {"queries": "old"}, "new -> old, no adapter": {"queries": "new"},
        "affine (lam=0)": {"queries": "lambda", "lam": 0.0},
        **{f"lambda-orthogonal (lam={lam:g})": {"queries": "lambda", "lam": lam} for lam in LAMBDAS},
        **{f"tolerance (tau={tau:g})": {"queries": "tolerance", "lam": tau} for tau in TOLERANCES},
        "orthogonal": {"queries": "orthogonal"}}
LAMBDA_ROW = f"lambda-orthogonal (lam={DEFAULT_LAM:g})"

REPRODUCTION = Claim(
    plugin="lambda-orthogonality", claim=CLAIM, task="retrieval", seeds=(0, 1, 2, 3, 4),
    rows=[Row(label, adapter_row, {**STEPS, **args}, quick_args=QUICK_STEPS) for label, args in ROWS.items()],
    checks=[Check(LAMBDA_ROW, "compat_map_seen", baseline="orthogonal"),
            Check(LAMBDA_ROW, "self_knn_top1", baseline="new -> old, no adapter", margin=-TOLERANCE)],
    settings={"downstream_classes": list(DOWNSTREAM), "alignment": "cosine", "encoders": digits.describe()},
    notes="alignment: cosine regression of T(new(x)) on old(x) (the free affine map is then the best fit of the "
          "downstream data, not a degenerate one). Margin 0 on compatibility: the paper claims adaptation beyond "
          "the orthogonal map, not by how much; it is judged on mAP of the downstream classes because top-1 "
          "saturates at 1.0 for every adapter under this alignment (a tie of exact zeros would pass a top-1 "
          "check by construction). -0.01: the new model's own kNN top-1 kept within 1 point (the claim's "
          "'preserves zero-shot performance'). The unseen classes, top-1, the free affine map, the other lambdas "
          "and the tolerance (hinge) form are reported only: they show the trade-off. 5 seeds: each adapter row runs in "
          "about a second once a seed's encoders are trained",
)


def with_alignment(alignment: str) -> Claim:
    """``REPRODUCTION`` with another alignment loss for the adapters (``fit_adapter``; the README's variants)."""
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {alignment!r}")
    return dataclasses.replace(REPRODUCTION, rows=[dataclasses.replace(r, args={**r.args, "alignment": alignment})
                                                   for r in REPRODUCTION.rows])
