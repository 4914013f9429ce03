"""``algorithmic_seq``: associative recall, sorting, convex hull, TSP and SUBLEQ programs, with length generalisation.

Modes and contracts (a model declares which by its ``input_kind`` attribute):

* ``recall`` (``input_kind = "tokens"``, the default) and ``recall_update`` (the same with every key re-stored: after
  the S keys are stored once, S more assignments give random ones new values; the answer is the latest, so a memory
  must overwrite; Schlag et al. 2021 §4.1 setting 2): ``model(ids (B, T) long) -> logits (B, T, vocab)``; the answer is
  read at the last position. Trained on 1..``train_sizes`` pairs, tested at every ``test_sizes`` pair count (the
  capacity curve of fast-weight memories). Baselines ``transformer`` and ``lstm`` at the model's parameter count.
* ``sort``, ``hull``, ``tsp`` (``input_kind = "points"``): ``model(points (B, N, d), targets (B, M)) -> logprobs
  (B, M, N + 1)`` with teacher forcing (END is index N; targets are padded with -100 after END) and ``model.decode
  (points, max_len) -> (B, max_len)`` (greedy; everything after the first END is ignored). Trained on sizes
  ``train_sizes`` (default 5-10; TSP 5-8), tested at ``test_sizes`` (default 5, 10, 15, 20; TSP 5-8 against the
  brute-force optimum). Baseline ``seq2seq`` (fixed output classes) at the model's parameter count.
* ``subleq`` (``input_kind = "machine"``): ``model.run(memory (B, n) long, *, max_steps) -> (B, n) long``, a machine
  that is built, not trained; every program of ``data.PROGRAMS`` on seeded inputs must end in exactly the memory
  the reference interpreter leaves (``exact`` per program and overall).

Training: Adam (lr 1e-3), batches of 64 problems of one size drawn uniformly from the training range, cross-entropy
(recall: at the answer position; pointers: every target step), seeded; scored on ``n_test`` fresh problems per size.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from zoo.figures import pyplot, save_figure
from zoo.task import Result, check_choice, count_params, match_width, model_device, run_budget

from . import data as D
from .baselines import RecallLSTM, RecallTransformer, Seq2SeqAttention

NAME = "algorithmic_seq"
MODES = ("recall", "recall_update", "sort", "hull", "tsp", "subleq")
RECALL_MODES = ("recall", "recall_update")
UPDATE_REPEATS = 2  # recall_update: every key stored once, then as many re-stores of random keys with new values
KIND = {"recall": "tokens", "recall_update": "tokens", "sort": "points", "hull": "points", "tsp": "points",
        "subleq": "machine"}
BASELINES = {"transformer": "recall", "lstm": "recall", "seq2seq": "pointer"}
TRAIN_SIZES = {"recall": (1, 8), "recall_update": (1, 8), "sort": (5, 10), "hull": (5, 10), "tsp": (5, 8)}
TEST_SIZES = {"recall": (4, 8, 16, 32), "recall_update": (4, 8, 16, 32), "sort": (5, 10, 15, 20), "hull": (5, 10, 15, 20),
              "tsp": (5, 6, 7, 8)}
DEFAULT_STEPS = 600
BATCH_SIZE = 64
LR = 1e-3
N_TEST = 256
SUBLEQ_CASES = 20
VOCAB = D.RecallVocab()


def mode_of(model: nn.Module) -> str:
    """The default mode for a model: recall for token models, hull for point models, subleq for machines."""
    return {"tokens": "recall", "points": "hull", "machine": "subleq"}[getattr(model, "input_kind", "tokens")]


# ------------------------------------------------------------------------------------------ training and scoring
def _batch(mode: str, size: int, batch: int, rng: np.random.Generator, dev: torch.device) -> tuple:
    if mode in RECALL_MODES:
        ids, ans = D.recall_batch(batch, size, rng=rng, vocab=VOCAB, repeats=UPDATE_REPEATS if mode == "recall_update" else 1)
        return torch.from_numpy(ids).to(dev), torch.from_numpy(ans).to(dev)
    x, t = D.pointer_batch(mode, batch, size, rng=rng)
    return torch.from_numpy(x).to(dev), torch.from_numpy(t).to(dev)


def _loss(model: nn.Module, mode: str, inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    if mode in RECALL_MODES:
        return F.cross_entropy(model(inputs)[:, -1], targets)
    logp = model(inputs, targets)
    return F.nll_loss(logp.reshape(-1, logp.shape[-1]), targets.reshape(-1), ignore_index=D.PAD)


def train(model: nn.Module, mode: str, *, steps: int | None = DEFAULT_STEPS, budget_s: float | None = None,
          seed: int = 0, sizes: tuple[int, int] | None = None, batch_size: int = BATCH_SIZE, lr: float = LR,
          progress: str | None = None) -> dict[str, float]:
    """Train ``model`` in place on ``mode``'s problems of sizes ``sizes`` (inclusive range); ``run_budget``'s figures."""
    check_choice(NAME, "mode", mode, MODES)
    if mode == "subleq":
        raise ValueError(f"{NAME}: subleq machines are built, not trained")
    lo, hi = sizes or TRAIN_SIZES[mode]
    rng = np.random.default_rng(seed)
    dev = model_device(model)
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=lr)
    model.train()

    def step(_i: int) -> float:
        inputs, targets = _batch(mode, int(rng.integers(lo, hi + 1)), batch_size, rng, dev)
        loss = _loss(model, mode, inputs, targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.item()

    out = run_budget(step, steps=steps, budget_s=budget_s, progress=progress)
    model.eval()
    return out


def _cyclic_equal(a: Sequence[int], b: Sequence[int]) -> bool:
    if len(a) != len(b) or not a:
        return len(a) == len(b)
    k = list(a).index(b[0]) if b[0] in a else -1
    return k >= 0 and list(a[k:]) + list(a[:k]) == list(b)


def _until_end(row: Sequence[int], n: int) -> list[int]:
    out = []
    for i in row:
        if i == n or i < 0:
            break
        out.append(int(i))
    return out


@torch.no_grad()
def score(model: nn.Module, mode: str, size: int, *, n: int = N_TEST, seed: int = 0) -> dict[str, float]:
    """``mode``'s metrics at problem size ``size`` on ``n`` fresh seeded problems (see the module docstring)."""
    check_choice(NAME, "mode", mode, MODES)
    rng = np.random.default_rng(10_000 + 97 * seed + size)  # never the training stream
    dev = model_device(model)
    model.eval()
    if mode in RECALL_MODES:
        ids, ans = _batch(mode, size, n, rng, dev)
        pred = model(ids)[:, -1].argmax(-1)
        return {"acc": float((pred == ans).float().mean())}
    x, t = _batch(mode, size, n, rng, dev)
    decode = getattr(model, "decode", None)
    if decode is None:
        raise ValueError(f"{NAME}: a {mode} model needs decode(points, max_len) -> (B, max_len) indices (greedy)")
    pred = decode(x, size + 1).cpu().numpy()
    pts, tgt = x.cpu().numpy(), t.cpu().numpy()
    exact, extra = [], []
    for i in range(n):
        want, got = _until_end(tgt[i], size), _until_end(pred[i], size)
        if mode == "sort":
            exact.append(got == want)
            extra.append(np.mean([a == b for a, b in zip(got, want, strict=False)]) if got else 0.0)  # token accuracy
        elif mode == "hull":
            exact.append(_cyclic_equal(got, want))
            ok = len(set(got)) == len(got) >= 3
            extra.append(min(D.polygon_area(pts[i], got) / max(D.polygon_area(pts[i], want), 1e-12), 1.0) if ok else 0.0)
        else:  # tsp: a valid tour visits every city once
            valid = sorted(got) == list(range(size))
            exact.append(valid and _cyclic_equal(got, want) or valid and _cyclic_equal(got[::-1], want))
            extra.append(D.tour_length(pts[i], got) / D.tour_length(pts[i], want) if valid else float("nan"))
    out = {"acc": float(np.mean(exact))}
    if mode == "sort":
        out["token_acc"] = float(np.mean(extra))
    elif mode == "hull":
        out["area"] = float(np.mean(extra))
    else:
        lengths = np.array(extra)
        out["valid"] = float(np.isfinite(lengths).mean())
        out["length_ratio"] = float(np.nanmean(lengths)) if np.isfinite(lengths).any() else float("nan")
    return out


def run_programs(model: Any, *, cases: int = SUBLEQ_CASES, seed: int = 0, max_steps: int = 2_000,
                 programs: Sequence[str] | None = None) -> dict[str, float]:
    """Every SUBLEQ program on ``cases`` seeded inputs through ``model.run``: the fraction of runs whose final memory
    equals the reference interpreter's exactly, per program and overall (``exact``)."""
    run = getattr(model, "run", None)
    if run is None:
        raise ValueError(f"{NAME}: a subleq model needs run(memory (B, n) long, *, max_steps) -> (B, n) long")
    out, total = {}, []
    for name in programs or sorted(D.PROGRAMS):
        mems, wants = [], []
        for mem, _addr, _expected in D.program_cases(name, cases, seed=seed):
            final, _steps, halted = D.run(mem, max_steps=max_steps)
            if not halted:
                raise RuntimeError(f"{NAME}: reference interpreter did not halt on {name}")  # a bug in data.PROGRAMS
            mems.append(mem)
            wants.append(final)
        got = run(torch.tensor(mems, dtype=torch.long), max_steps=max_steps)
        got = torch.as_tensor(got).cpu().long().tolist()
        ok = [g == w for g, w in zip(got, wants, strict=True)]
        out[f"exact:{name}"] = float(np.mean(ok))
        total += ok
    out["exact"] = float(np.mean(total))
    return out


# ------------------------------------------------------------------------------------------ baselines
def build_baseline(name: str, *, params: int | None = None, data: Any = None, seed: int = 0, mode: str = "recall",
                   **options: Any) -> nn.Module:
    """Baseline ``name`` for ``mode``, seeded, its width chosen so its ``count_params`` is closest to ``params``
    (default widths without it)."""
    if name not in BASELINES:
        raise ValueError(f"{NAME}: unknown baseline {name!r}; choose from {sorted(BASELINES)}")
    want = BASELINES[name]
    if (want == "recall") != (mode in RECALL_MODES) or mode == "subleq":
        raise ValueError(f"{NAME}: baseline {name!r} is for {want} modes, not {mode!r}")
    repeats = UPDATE_REPEATS if mode == "recall_update" else 1
    longest = 2 * repeats * max(TEST_SIZES["recall"] + (options.get("max_pairs", 0),)) + 2

    def build(w: int) -> nn.Module:
        if name == "transformer":
            return RecallTransformer(vocab_size=VOCAB.size, dim=4 * w, depth=2, heads=4, block_size=longest)
        if name == "lstm":
            return RecallLSTM(VOCAB.size, dim=w)
        return Seq2SeqAttention(in_dim=D.DIMS[mode], hidden=w, positions=options.get("positions", TRAIN_SIZES[mode][1]))

    default = {"transformer": 16, "lstm": 64, "seq2seq": 64}[name]
    width = match_width(build, params, lo=2) if params else default
    torch.manual_seed(seed)
    return build(width)


# ------------------------------------------------------------------------------------------ the task contract
def example_input(model: nn.Module | None = None) -> Any:
    """A small input for the model's kind: ids (2, 10) for token models, (points (2, 6, 2), targets (2, 7)) for point
    models; None for machines (their contract is ``run``, checked by ``evaluate(mode="subleq")``)."""
    kind = getattr(model, "input_kind", "tokens")
    rng = np.random.default_rng(0)
    if kind == "machine":
        return None
    if kind == "points":
        x, t = D.pointer_batch("hull", 2, 6, rng=rng)
        return torch.from_numpy(x), torch.from_numpy(t)
    return torch.from_numpy(D.recall_batch(2, 4, rng=rng, vocab=VOCAB)[0])


def check_output(model: nn.Module, output: Any) -> None:
    kind = getattr(model, "input_kind", "tokens")
    if not isinstance(output, torch.Tensor):
        raise AssertionError(f"{NAME}: output is a {type(output).__name__}, expected a tensor")
    if kind == "points":
        _, targets = example_input(model)
        want = (2, targets.shape[1], 7)
        if tuple(output.shape) != want:
            raise AssertionError(f"{NAME}: a point model must return logprobs (B, M, N + 1) = {want} for 6 points "
                                 f"and targets (2, {targets.shape[1]}), got {tuple(output.shape)}")
    elif output.ndim != 3 or output.shape[:2] != (2, 10) or output.shape[-1] < VOCAB.size:
        raise AssertionError(f"{NAME}: a token model must return logits (B, T, >= {VOCAB.size}) = (2, 10, ...), got "
                             f"{tuple(output.shape)}")


def describe(*, mode: str = "recall", steps: int | None = None, budget_s: float | None = None,
             train_sizes: tuple[int, int] | None = None, test_sizes: Sequence[int] | None = None,
             batch_size: int = BATCH_SIZE, lr: float = LR, n_test: int = N_TEST) -> dict[str, Any]:
    """The protocol ``evaluate`` runs with these options."""
    check_choice(NAME, "mode", mode, MODES)
    if mode == "subleq":
        return {"mode": mode, "programs": sorted(D.PROGRAMS), "cases_per_program": SUBLEQ_CASES,
                "reference": "data.run, the Python SUBLEQ interpreter; a run passes when the whole memory matches"}
    if steps is None and budget_s is None:
        steps = DEFAULT_STEPS
    return {"mode": mode, "train_sizes": list(train_sizes or TRAIN_SIZES[mode]),
            "test_sizes": list(test_sizes or TEST_SIZES[mode]),
            "size": "distinct keys" if mode in RECALL_MODES else "points", "steps": steps, "budget_s": budget_s,
            "optimizer": "Adam", "lr": lr, "batch_size": batch_size, "grad_clip": 1.0, "n_test": n_test,
            "vocab": {"keys": VOCAB.n_keys, "values": VOCAB.n_values} if mode in RECALL_MODES else None,
            **({"assignments_per_key": UPDATE_REPEATS} if mode == "recall_update" else {}),
            "metrics": {"recall": ["acc"], "recall_update": ["acc"], "sort": ["acc", "token_acc"], "hull": ["acc", "area"],
                        "tsp": ["acc", "valid", "length_ratio"]}[mode],
            "baselines": [b for b, k in BASELINES.items() if (k == "recall") == (mode in RECALL_MODES)]}


def _row(model: nn.Module, mode: str, sizes: Sequence[int], n_test: int, seed: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for s in sizes:
        for k, v in score(model, mode, s, n=n_test, seed=seed).items():
            out[f"{k}@{s}"] = v
    return out


def _plot(rows: dict[str, dict[str, float]], sizes: Sequence[int], mode: str, path: Path) -> str:
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for name, m in rows.items():
        ax.plot(list(sizes), [m.get(f"acc@{s}", float("nan")) for s in sizes], marker="o", label=name)
    ax.set_xlabel("distinct keys" if mode in RECALL_MODES else "points")
    ax.set_ylabel("accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"{NAME} {mode}: length generalisation")
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def evaluate(model: nn.Module, *, mode: str | None = None, steps: int | None = None, budget_s: float | None = None,
             seed: int = 0, baselines: list[str] | None = None, train_model: bool | None = None,
             train_sizes: tuple[int, int] | None = None, test_sizes: Sequence[int] | None = None,
             batch_size: int = BATCH_SIZE, lr: float = LR, n_test: int = N_TEST, out_dir: str | None = None,
             progress: bool = False, rebuild: Callable[..., nn.Module] | None = None) -> Result:
    """Train (unless pretrained or a machine) and score ``model`` on ``mode`` at every test size, next to the
    baselines at its parameter count; ``out_dir`` receives the length-generalisation curve (PNG)."""
    t0 = time.perf_counter()
    mode = mode or mode_of(model)
    check_choice(NAME, "mode", mode, MODES)
    kind = getattr(model, "input_kind", "tokens")
    if kind != KIND[mode]:
        raise ValueError(f"{NAME}: mode {mode!r} takes {KIND[mode]} models; this one declares input_kind={kind!r} "
                         f"(choose mode= among {[m for m, k in KIND.items() if k == kind]})")
    if mode == "subleq":
        metrics = run_programs(model, seed=seed)
        return Result(task=NAME, metrics=metrics, n=SUBLEQ_CASES * len(D.PROGRAMS), seconds=time.perf_counter() - t0,
                      config={**describe(mode=mode), "seed": seed})
    settings = describe(mode=mode, steps=steps, budget_s=budget_s, train_sizes=train_sizes, test_sizes=test_sizes,
                        batch_size=batch_size, lr=lr, n_test=n_test)
    steps = settings["steps"]
    sizes = settings["test_sizes"]
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    names = settings["baselines"] if baselines is None else list(baselines)
    params = count_params(model)
    fit = {"steps": steps, "budget_s": budget_s, "seed": seed, "sizes": tuple(settings["train_sizes"]),
           "batch_size": batch_size, "lr": lr}
    metrics: dict[str, float] = {"params": float(params)}
    if train_model:
        torch.manual_seed(seed)
        metrics.update(train(model, mode, progress=f"train {NAME}" if progress else None, **fit))
    metrics.update(_row(model, mode, sizes, n_test, seed))
    rows = {}
    for b in names:
        base = build_baseline(b, params=params or None, seed=seed, mode=mode,
                              max_pairs=max(sizes) if mode in RECALL_MODES else 0).to(model_device(model))
        m = {"params": float(count_params(base)), **train(base, mode, progress=f"train {b}" if progress else None, **fit)}
        m.update(_row(base, mode, sizes, n_test, seed))
        rows[b] = m
    artifacts = {}
    if out_dir is not None:
        model_name = getattr(getattr(model, "zoo", None), "name", None) or type(model).__name__
        artifacts["length_generalisation"] = _plot({model_name: metrics, **rows}, sizes, mode,
                                                   Path(out_dir) / f"{mode}_length.png")
    return Result(task=NAME, metrics=metrics, baselines=rows, n=n_test * len(sizes), seconds=time.perf_counter() - t0,
                  config={**settings, "seed": seed, "trained": train_model}, artifacts=artifacts)
