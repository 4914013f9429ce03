"""``zoo reproduce lambda-orthogonality``: compatibility vs preservation of free, lambda- and strict-orthogonal adapters.

Setting (the catalog's small-scale form of the paper's model-update experiments): two encoders of
``digits_classify`` images from ``zoo_nn.backbones``, trained on all ten classes: the *old* model
a ``DigitsMLP`` (hidden 64, 300 steps), the *new* one a ``DigitsCNN`` with a 64-d embedding (600
steps, another seed). Embeddings are their 64-d features, compared by cosine. An adapter T (new ->
old space) is fitted on the *downstream distribution*, the training images of classes 0-4 only,
by the retrieval task's ``train``: a contrastive backward alignment of T(new(x)) with old(x) of the
same image, the batch's other images as negatives (400 steps, batch 128; ``fit_adapter``), plus
its regulariser. The 450 test images are split into a gallery (even positions) and queries (odd
positions).

Measured, mean over seeds: *compatibility*, new queries mapped by T searching the old gallery
(CMC top-1 and mAP, class labels), on queries of the downstream classes and of the five unseen
classes; *preservation*, the new model's own kNN top-1 once T is applied to its queries and
gallery (all classes), against the unadapted new model. Adapters: free affine (lam = 0),
lambda-orthogonal (lam in ``LAMBDAS``), strictly orthogonal. The claim holds when, at the
default lam = 1, compatibility on the downstream classes is at least the orthogonal adapter's and
preservation is within 1 point of the new model's own top-1.
"""
from __future__ import annotations

import logging
import time

import torch
from torch.nn import functional as F

import zoo
from zoo_task_retrieval import task
from zoo_task_retrieval.data import RetrievalData

log = logging.getLogger(__name__)

DOWNSTREAM = (0, 1, 2, 3, 4)
LAMBDAS = (0.01, 0.1, 1.0, 10.0)
ALIGNMENTS = ("instance", "class", "instance, class ignored")
DEFAULT_LAM, TOLERANCE = 1.0, 0.01
FULL = {"seeds": (0, 1, 2), "old_steps": 300, "new_steps": 600, "adapt_steps": 400}
QUICK = {"seeds": (0,), "old_steps": 20, "new_steps": 20, "adapt_steps": 5}


def encoders(seed: int, old_steps: int, new_steps: int) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The old (DigitsMLP, hidden 64) and new (DigitsCNN, 64-d embedding) models, trained on digits_classify."""
    from zoo_nn.backbones import DigitsCNN, DigitsMLP
    from zoo_task_digits import task as digits

    torch.manual_seed(seed)
    old = DigitsMLP(hidden=64)
    digits.train(old, steps=old_steps, seed=seed)
    torch.manual_seed(seed + 100)
    new = DigitsCNN(embed_dim=64)
    digits.train(new, steps=new_steps, seed=seed + 100)
    return old.eval(), new.eval()


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
                alignment: str = "instance", batch_size: int = 128, seed: int = 0) -> torch.nn.Module:
    """Fit the adapter on the downstream data with a contrastive alignment of T(new(x)) with old embeddings.

    ``alignment`` says which old embeddings are each new embedding's positives (``ALIGNMENTS``):

    * "instance" (the protocol): old(x) of the same image; every other image of the batch is a
      negative. The task's ``train`` (Adam 3e-3).
    * "class": any old embedding of the same class (the task's ``train`` samples one as the
      positive and leaves the others out of the softmax).
    * "instance, class ignored": old(x) of the same image, the other images of its class left out
      of the softmax (a loop of the same form as the task's ``train``, which cannot express it).
    """
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {alignment!r}")
    if alignment != "instance, class ignored":
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
        y = labels[idx]
        ignore = (y[:, None] == y[None, :]) & ~torch.eye(len(idx), dtype=torch.bool)
        loss = model.loss(model.encode_queries(new[idx]), model.encode_docs(old[idx]), torch.arange(len(idx)), ignore)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return model.eval()


def one_seed(seed: int, old_steps: int, new_steps: int, adapt_steps: int,
             alignment: str = "instance") -> dict[str, dict[str, float]]:
    """Every row of the table for one seed."""
    from zoo_task_digits import task as digits

    old, new = encoders(seed, old_steps, new_steps)
    x_tr, y_tr, x_te, y_te = digits.load_split()
    down = torch.isin(y_tr, torch.tensor(DOWNSTREAM))
    with torch.no_grad():
        old_tr, new_tr = old.forward_features(x_tr[down]), new.forward_features(x_tr[down])
        old_te, new_te = old.forward_features(x_te), new.forward_features(x_te)
    gal, qry = torch.arange(0, len(y_te), 2), torch.arange(1, len(y_te), 2)
    yg, yq = y_te[gal], y_te[qry]
    seen = torch.isin(yq, torch.tensor(DOWNSTREAM))

    def compat(q: torch.Tensor) -> dict[str, float]:
        a = ranking_metrics(q[seen], old_te[gal], yq[seen], yg)
        b = ranking_metrics(q[~seen], old_te[gal], yq[~seen], yg)
        return {"compat top1 (classes 0-4)": a["top1"], "compat mAP (0-4)": a["map"],
                "compat top1 (unseen 5-9)": b["top1"], "compat mAP (5-9)": b["map"]}

    rows: dict[str, dict[str, float]] = {
        "old -> old (reference)": {**compat(old_te[qry]),
                                   "self kNN top1": ranking_metrics(old_te[qry], old_te[gal], yq, yg)["top1"]},
        "new -> old, no adapter": {**compat(new_te[qry]),
                                   "self kNN top1": ranking_metrics(new_te[qry], new_te[gal], yq, yg)["top1"]},
    }
    variants = [("affine (lam=0)", "lambda", 0.0)] + [(f"lambda-orthogonal (lam={lam:g})", "lambda", lam) for lam in LAMBDAS]
    variants.append(("orthogonal", "orthogonal", 0.0))
    for name, mode, lam in variants:
        torch.manual_seed(seed)
        t = fit_adapter(zoo.create("lambda_orthogonal_adapter", lam=lam, mode=mode), new_tr, old_tr, y_tr[down],
                        steps=adapt_steps, alignment=alignment, seed=seed)
        with torch.no_grad():
            mq, mg = t(new_te[qry]), t(new_te[gal])
            gap = float((t.weight.T @ t.weight - torch.eye(t.weight.shape[1])).norm())
        rows[name] = {**compat(mq), "self kNN top1": ranking_metrics(mq, mg, yq, yg)["top1"], "||A^T A - I||_F": gap}
    return rows


def reproduce(quick: bool = False, alignment: str = "instance") -> zoo.ClaimResult:
    """Train the encoders and adapters for each seed; return the mean table and the verdict.

    Args:
        quick: tiny step counts and one seed (seconds; for tests). The numbers then mean nothing.
        alignment: the adapters' alignment loss (``fit_adapter``); the claim's protocol is "instance",
            the others are variants reported in the README.
    """
    from .plugin import CLAIM

    t0, cpu0 = time.perf_counter(), time.process_time()
    cfg = QUICK if quick else FULL
    with task.cpu_threads(1):
        per_seed = [one_seed(s, cfg["old_steps"], cfg["new_steps"], cfg["adapt_steps"], alignment) for s in cfg["seeds"]]
    table = {name: {col: sum(r[name][col] for r in per_seed) / len(per_seed) for col in per_seed[0][name]}
             for name in per_seed[0]}
    lam_row, orth, affine = table[f"lambda-orthogonal (lam={DEFAULT_LAM:g})"], table["orthogonal"], table["affine (lam=0)"]
    own = table["new -> old, no adapter"]["self kNN top1"]
    key = "compat top1 (classes 0-4)"
    adapts = lam_row[key] >= orth[key]
    preserves = lam_row["self kNN top1"] >= own - TOLERANCE
    summary = (f"mean over seeds {list(cfg['seeds'])}: compatibility top-1 on the downstream classes: affine "
               f"{affine[key]:.3f}, lambda-orthogonal (lam={DEFAULT_LAM:g}) {lam_row[key]:.3f}, orthogonal {orth[key]:.3f}; "
               f"new model's own kNN top-1 {own:.3f} -> after the adapter: affine {affine['self kNN top1']:.3f}, "
               f"lambda {lam_row['self kNN top1']:.3f}, orthogonal {orth['self kNN top1']:.3f}. Needed: lambda >= "
               f"orthogonal in compatibility ({'yes' if adapts else 'no'}) and lambda's kNN top-1 >= own - "
               f"{TOLERANCE} ({'yes' if preserves else 'no'})."
               + (" quick=True: a smoke run, not a measurement." if quick else ""))
    return zoo.ClaimResult(plugin="lambda-orthogonality", claim=CLAIM, passed=adapts and preserves, table=table,
                           summary=summary, seconds=time.perf_counter() - t0,
                           settings={"cpu_seconds": time.process_time() - cpu0, "quick": quick, **cfg,
                                     "seeds": list(cfg["seeds"]), "downstream_classes": list(DOWNSTREAM),
                                     "lambdas": list(LAMBDAS), "default_lam": DEFAULT_LAM, "tolerance": TOLERANCE,
                                     "alignment": alignment,
                                     "torch_threads": 1,
                                     "per_seed": per_seed})
