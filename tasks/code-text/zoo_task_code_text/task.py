"""``code_text``: code and its documentation, on the Python standard library's own text and on synthetic code bags.

Modes and contracts (a model declares its kind by ``input_kind``):

* ``doc2sig`` (``"ranker"``): docstring first sentence -> formal signature. ``rank(text, candidates) -> scores (n,)``
  (or the faster ``score_matrix(texts, candidates) -> (Q, N)``); an optional ``fit(train_pairs, *, steps, seed)``
  learns from the training pairs (``data.Pair``). Every test description ranks all test signatures: ``acc@1``,
  ``acc@5``, ``mrr``. Baselines ``bm25``, ``bow``.
* ``lm`` (``"tokens"``, the ``char_lm`` contract ``model(ids (B, T)) -> logits (B, T, 97)``): trained on the
  ``char_lm`` stdlib source for a step budget; validation bits per character, and infill exact match on held-out
  lines between their prefix and suffix through ``model.infill(prefix, suffix, max_len) -> str`` (a model without it
  is scored writing left to right from the prefix, as the baseline does). Baseline ``gpt`` (char_lm's reference GPT).
* ``vulloc`` (``"bags"``): ``model(tokens (B, S, T), mask (B, S)) -> {"function_logit": (B,), "statement_scores":
  (B, S)}``, trained on function labels only (binary cross-entropy, or the model's own ``loss(output, labels)``);
  function ``f1``/``accuracy`` and statement ``top1``/``top3`` localisation on the vulnerable test functions.
  Baselines ``attn_mil``, ``mean_bag``.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo.task import Result, check_choice, count_params, match_width, model_device, run_budget

from . import data as D
from .baselines import AttentionMIL, LexicalRanker, MeanBag

NAME = "code_text"
MODES = ("doc2sig", "lm", "vulloc")
KIND = {"doc2sig": "ranker", "lm": "tokens", "vulloc": "bags"}
BASELINES = {"bm25": "doc2sig", "bow": "doc2sig", "gpt": "lm", "attn_mil": "vulloc", "mean_bag": "vulloc"}
DEFAULT_STEPS = {"doc2sig": 300, "lm": 300, "vulloc": 400}
N_INFILL = 100
N_VUL = {"train": 2000, "test": 500}
LR = 1e-3
BATCH = 32


def mode_of(model: Any) -> str:
    kind = getattr(model, "input_kind", "tokens")
    for mode, k in KIND.items():
        if k == kind:
            return mode
    raise ValueError(f"{NAME}: input_kind {kind!r} is none of {sorted(set(KIND.values()))}")


# ------------------------------------------------------------------------------------------ doc2sig
def _score_matrix(model: Any, texts: Sequence[str], candidates: Sequence[str]) -> np.ndarray:
    if hasattr(model, "score_matrix"):
        s = model.score_matrix(list(texts), list(candidates))
    elif hasattr(model, "rank"):
        s = np.stack([np.asarray(model.rank(t, list(candidates)), dtype=np.float64) for t in texts])
    else:
        raise ValueError(f"{NAME}: a doc2sig model needs rank(text, candidates) -> scores or score_matrix(texts, "
                         "candidates) -> (Q, N)")
    s = np.asarray(torch.as_tensor(s).detach().cpu().double().numpy() if hasattr(s, "detach") else s, dtype=np.float64)
    if s.shape != (len(texts), len(candidates)):
        raise ValueError(f"{NAME}: scores have shape {s.shape}, expected ({len(texts)}, {len(candidates)})")
    return s


def ranking_metrics(scores: np.ndarray) -> dict[str, float]:
    """``acc@1``, ``acc@5`` and ``mrr`` when query i's answer is candidate i (ties count against the model).

    >>> ranking_metrics(np.eye(3))["mrr"], ranking_metrics(np.zeros((2, 2)))["acc@1"]
    (1.0, 0.0)
    """
    right = np.diag(scores)[:, None]
    rank = 1 + (scores > right).sum(1) + ((scores == right).sum(1) - 1)  # pessimistic on ties
    return {"acc@1": float((rank == 1).mean()), "acc@5": float((rank <= 5).mean()), "mrr": float((1 / rank).mean())}


def _doc2sig(model: Any, *, steps: int | None, seed: int, train_model: bool) -> dict[str, float]:
    train, test = D.doc2sig_split(seed=0)
    out: dict[str, float] = {}
    if train_model and hasattr(model, "fit"):
        fig = model.fit(list(train), steps=steps, seed=seed)
        out.update({k: float(v) for k, v in (fig or {}).items() if isinstance(v, (int, float))})
    out.update(ranking_metrics(_score_matrix(model, [p.description for p in test], [p.signature for p in test])))
    return out


# ------------------------------------------------------------------------------------------ lm and infill
def _char_lm():
    from zoo_task_char_lm import task as char_lm

    return char_lm


@torch.no_grad()
def left_to_right_infill(model: nn.Module, prefix: str, suffix: str = "", max_len: int = 64) -> str:
    """Greedy characters from ``prefix`` until a newline (the suffix is not used): how a left-to-right LM fills a line."""
    cl = _char_lm()
    block = getattr(model, "block_size", 128)
    ids = cl.encode(prefix).to(model_device(model))[None]
    out = []
    for _ in range(max_len):
        nxt = int(model(ids[:, -block:])[0, -1].argmax())
        ch = cl.VOCAB[nxt]
        if ch == "\n":
            break
        out.append(ch)
        ids = torch.cat([ids, ids.new_tensor([[nxt]])], 1)
    return "".join(out)


def infill_exact(model: nn.Module, examples: Sequence[D.Infill]) -> tuple[float, str]:
    """Exact-match rate of the model's infills (its own ``infill`` when it has one), and which way it filled."""
    fill = getattr(model, "infill", None)
    how = "infill" if fill is not None else "left-to-right"
    fn: Callable[..., str] = fill if fill is not None else (lambda p, s, max_len: left_to_right_infill(model, p, s,
                                                                                                         max_len))
    model.eval()
    hits = [fn(e.prefix, e.suffix, max_len=len(e.middle) + 16).strip() == e.middle for e in examples]
    return float(np.mean(hits)), how


def _lm(model: nn.Module, *, steps: int | None, budget_s: float | None, seed: int, train_model: bool,
        n_infill: int) -> dict[str, Any]:
    cl = _char_lm()
    out: dict[str, Any] = {}
    if train_model:
        torch.manual_seed(seed)
        out.update(cl.train(model, steps=steps, budget_s=budget_s, seed=seed))
    out["val_bpc"] = cl.val_loss(model)
    out["infill_exact"], out["infill_mode"] = infill_exact(model, D.infill_examples(n_infill, seed=0))
    return out


# ------------------------------------------------------------------------------------------ vulloc
def _bags(split: str) -> tuple[torch.Tensor, ...]:
    b = D.vul_bags(N_VUL[split], seed=0 if split == "train" else 1)
    return tuple(torch.from_numpy(a) for a in (b.tokens, b.mask, b.label, b.culprit))


def train_bags(model: nn.Module, *, steps: int | None, budget_s: float | None = None, seed: int = 0,
               lr: float = LR, batch_size: int = BATCH) -> dict[str, float]:
    """Train on function labels only: the model's own ``loss(output, labels)`` or binary cross-entropy."""
    dev = model_device(model)
    tokens, mask, label, _ = (t.to(dev) for t in _bags("train"))
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    loss_fn = getattr(model, "loss", None)
    model.train()

    def step(_i: int) -> float:
        idx = torch.randint(len(label), (batch_size,), generator=g).to(dev)
        out = model(tokens[idx], mask[idx])
        y = label[idx].float()
        loss = loss_fn(out, y) if loss_fn is not None else F.binary_cross_entropy_with_logits(out["function_logit"], y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    fig = run_budget(step, steps=steps, budget_s=budget_s)
    model.eval()
    return fig


@torch.no_grad()
def score_bags(model: nn.Module) -> dict[str, float]:
    """Function F1 and accuracy (logit > 0), statement top-1/top-3 on the vulnerable test functions."""
    dev = model_device(model)
    tokens, mask, label, culprit = _bags("test")
    model.eval()
    out = model(tokens.to(dev), mask.to(dev))
    logit, scores = out["function_logit"].cpu(), out["statement_scores"].cpu().masked_fill(~mask, float("-inf"))
    pred = (logit > 0).long()
    tp = int(((pred == 1) & (label == 1)).sum())
    f1 = 2 * tp / max(int(pred.sum()) + int(label.sum()), 1)
    vul = label == 1
    order = scores[vul].argsort(dim=1, descending=True)
    where = (order == culprit[vul][:, None]).float().argmax(1)
    return {"f1": f1, "accuracy": float((pred == label).float().mean()), "top1": float((where < 1).float().mean()),
            "top3": float((where < 3).float().mean())}


# ------------------------------------------------------------------------------------------ the task contract
def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, **options: Any) -> Any:
    """Baseline ``name``; the neural ones seeded and sized to ``params`` (``count_params``) when given."""
    if name not in BASELINES:
        raise ValueError(f"{NAME}: unknown baseline {name!r}; choose from {sorted(BASELINES)}")
    if name in ("bm25", "bow"):
        return LexicalRanker(name)
    if name == "gpt":
        return _char_lm().build_baseline("gpt-ln-gelu", params=params, seed=seed, **options)
    cls = AttentionMIL if name == "attn_mil" else MeanBag
    width = match_width(lambda w: cls(w), params, lo=2) if params else 32
    torch.manual_seed(seed)
    return cls(width)


def example_input(model: Any = None) -> Any:
    """Per kind: ids (2, 16) for token models, (tokens (2, 8, 14), mask (2, 8)) for bag models; None for rankers
    (their contract is ``rank``, checked by ``evaluate(mode="doc2sig")``)."""
    kind = getattr(model, "input_kind", "tokens")
    if kind == "ranker":
        return None
    if kind == "bags":
        b = D.vul_bags(2, seed=0, statements=(8, 8))
        return torch.from_numpy(b.tokens), torch.from_numpy(b.mask)
    return _char_lm().example_input()


def check_output(model: Any, output: Any) -> None:
    kind = getattr(model, "input_kind", "tokens")
    if kind == "bags":
        ok = (isinstance(output, dict) and tuple(output.get("function_logit", torch.empty(0)).shape) == (2,)
              and tuple(output.get("statement_scores", torch.empty(0)).shape) == (2, 8))
        if not ok:
            raise AssertionError(f"{NAME}: a bag model returns {{'function_logit': (2,), 'statement_scores': (2, 8)}}")
        return
    _char_lm().check_output(model, output)


def describe(*, mode: str = "doc2sig", steps: int | None = None, budget_s: float | None = None,
             n_infill: int = N_INFILL) -> dict[str, Any]:
    check_choice(NAME, "mode", mode, MODES)
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS[mode]
    base = {"mode": mode, "steps": steps, "budget_s": budget_s,
            "baselines": [b for b, m in BASELINES.items() if m == mode]}
    if mode == "doc2sig":
        train, test = D.doc2sig_split(0)
        return {**base, "pairs": len(train) + len(test), "train": len(train), "test": len(test),
                "python": D.python_version(), "modules": len(D.STDLIB_MODULES),
                "split": f"sha256 of the signature, {D.TEST_FRACTION:.0%} test",
                "metrics": ["acc@1", "acc@5", "mrr"], "ranking": "each test description against all test signatures"}
    if mode == "lm":
        return {**base, "corpus": _char_lm().corpus_info(), "n_infill": n_infill,
                "metrics": ["val_bpc", "infill_exact"], "infill": "a held-out line between 256 chars before, 128 after"}
    return {**base, "n_train": N_VUL["train"], "n_test": N_VUL["test"], "statements": [8, 16], "lr": LR,
            "batch_size": BATCH, "labels": "function level only in training",
            "metrics": ["f1", "accuracy", "top1", "top3"]}


def evaluate(model: Any, *, mode: str | None = None, steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, baselines: list[str] | None = None, train_model: bool | None = None,
             n_infill: int = N_INFILL, progress: bool = False) -> Result:
    """Score ``model`` on ``mode`` (default: its kind's) next to the mode's baselines."""
    t0 = time.perf_counter()
    mode = mode or mode_of(model)
    check_choice(NAME, "mode", mode, MODES)
    kind = getattr(model, "input_kind", "tokens")
    if kind != KIND[mode]:
        raise ValueError(f"{NAME}: mode {mode!r} takes {KIND[mode]} models; this one declares input_kind={kind!r}")
    settings = describe(mode=mode, steps=steps, budget_s=budget_s, n_infill=n_infill)
    steps = settings["steps"]
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    names = settings["baselines"] if baselines is None else list(baselines)
    unknown = [b for b in names if BASELINES.get(b) != mode]
    if unknown:
        raise ValueError(f"{NAME}: {unknown} are not baselines of mode {mode!r}: {settings['baselines']}")
    params = count_params(model) if isinstance(model, nn.Module) else 0

    def row(m: Any, train: bool) -> dict[str, Any]:
        if mode == "doc2sig":
            return _doc2sig(m, steps=steps, seed=seed, train_model=train)
        if mode == "lm":
            return _lm(m, steps=steps, budget_s=budget_s, seed=seed, train_model=train, n_infill=n_infill)
        out = {}
        if train:
            torch.manual_seed(seed)
            out.update(train_bags(m, steps=steps, budget_s=budget_s, seed=seed))
        return {**out, **score_bags(m)}

    metrics = {"params": float(params), **row(model, train_model)}
    rows = {}
    for b in names:
        extra = dict(getattr(model, "arch", {})) if b == "gpt" else {}  # char_lm compares at equal GPT shape
        base = build_baseline(b, params=params or None, seed=seed, **extra)
        if isinstance(base, nn.Module):
            base = base.to(model_device(model)) if isinstance(model, nn.Module) else base
        rows[b] = {"params": float(count_params(base)) if isinstance(base, nn.Module) else 0.0, **row(base, True)}
    n = {"doc2sig": settings.get("test", 0), "lm": n_infill, "vulloc": N_VUL["test"]}[mode]
    return Result(task=NAME, metrics=metrics, baselines=rows, n=int(n), seconds=time.perf_counter() - t0,
                  config={**settings, "seed": seed, "trained": train_model})
