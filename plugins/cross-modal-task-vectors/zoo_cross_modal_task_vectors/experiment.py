"""The cross-modal task-vector experiment on the digit VLM (one seed = one draw of prompts, queries and images).

1. Task vectors per task and specification from ``n_prompts`` prompts each (digit images from the held-out test
   split): ``text`` (``shots`` text exemplars, text query), ``image`` (image exemplars, image query),
   ``instruction`` (``<task> xq ->``, text query).
2. Layer: the patch layer ``l`` in 1..depth-1 where the text vectors do best on held-out zero-shot **text** queries
   (never chosen on the image queries the claim is measured on).
3. Cross-modal patching: zero-shot **image** queries ``NONE <img> ->`` with, at layer ``l``, the text-derived vector
   of the query's task (``text_to_image``), the image-derived one, the instruction one, the mean of all tasks' text
   vectors (``mean_vector``, task-agnostic baseline), or nothing (``none``); plus the full cross-modal prompt (text
   exemplars, image query; ``icl_text_to_image``) for reference.
4. Ensembling in the few-example regime: an exemplar vector from ``few`` 1-shot text prompts, an instruction vector
   from ``few`` instruction prompts, and their average, each patched into image queries (``repeats`` draws per task).
5. Similarity: ``similarity.spec_similarity`` of the per-prompt states at layer ``l`` grouped by (task, spec).
6. Logit lens on the text exemplar prompts: per layer, the probability of the query's input word and of its answer.

Every patching result is also measured in our deviation ``*_add``: the task-centred vector (the task's vector minus the
mean over tasks of the same specification) *added* to the query's last-token residual at the layer ``layer_add``
chosen the same way on text queries (reported, not checked: added after the paper's replace-patching did not steer
this model on a smoke run).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import model as M
from .similarity import spec_similarity

DEFAULTS = {"n_prompts": 50, "shots": 4, "n_select": 20, "n_test": 50, "few": 2, "repeats": 10}
QUICK = {"n_prompts": 8, "shots": 4, "n_select": 8, "n_test": 10, "few": 2, "repeats": 2}


def _acc(logits: torch.Tensor, target: np.ndarray) -> float:
    return float((logits.argmax(-1).numpy() == target).mean())


@torch.no_grad()
def run(vlm: M.DigitVLM, seed: int = 0, **cfg: Any) -> dict[str, Any]:
    """The experiment above; returns plain numbers (accuracies, cosines, the layer, lens curves)."""
    c = {**DEFAULTS, **cfg}
    rng = np.random.default_rng(10_000 + int(seed))
    pools = M.Pools("test")
    n_t, depth = len(M.TASKS), vlm.depth
    states: dict[str, list[torch.Tensor]] = {s: [] for s in M.SPECS}  # per spec: (n_tasks, N, L + 1, D)
    lens_in, lens_ans = [], []
    for t in range(n_t):
        tasks = np.full(c["n_prompts"], t)
        for spec in M.SPECS:
            if spec == "instruction":
                b = M.instruction_prompts(tasks, "text", rng, pools)
            else:
                b = M.make_prompts(tasks, c["shots"], instructed=False, modality=spec, query_modality=spec, rng=rng,
                                   pools=pools)
            ids, pix = M._t(b)
            states[spec].append(M.last_residuals(vlm, ids, pix))
            if spec == "text":
                lens = M.logit_lens(vlm, ids, pix, {"input": b["x"], "answer": b["target"]})
                lens_in.append(lens["input"])
                lens_ans.append(lens["answer"])
    vec = {s: torch.stack([h.mean(0) for h in states[s]]) for s in M.SPECS}  # (n_tasks, L + 1, D)

    def patched_acc(queries: dict[str, np.ndarray], task: np.ndarray, layer: int, vectors: torch.Tensor | None,
                    mode: str = "replace") -> float:
        ids, pix = M._t(queries)
        v = None if vectors is None else (vectors if vectors.ndim == 1 else vectors[torch.as_tensor(task)])
        return _acc(M.patched_logits(vlm, ids, pix, layer, v, mode), queries["target"])

    def centred(v: torch.Tensor) -> torch.Tensor:  # (n_tasks, ...) minus its mean over tasks
        return v - v.mean(0, keepdim=True)

    # layer choice on text queries (for each patch mode)
    sel_task = np.repeat(np.arange(n_t), c["n_select"])
    sel = M.zero_shot_queries(sel_task, "text", rng, pools)
    per_layer = [patched_acc(sel, sel_task, ly, vec["text"][:, ly]) for ly in range(1, depth)]
    layer = 1 + int(np.argmax(per_layer))
    per_layer_add = [patched_acc(sel, sel_task, ly, centred(vec["text"][:, ly]), "add") for ly in range(1, depth)]
    layer_add = 1 + int(np.argmax(per_layer_add))

    # cross-modal patching on image queries
    q_task = np.repeat(np.arange(n_t), c["n_test"])
    q = M.zero_shot_queries(q_task, "image", rng, pools)
    out: dict[str, Any] = {"layer": layer, "select_text_acc": per_layer, "layer_add": layer_add,
                           "select_text_acc_add": per_layer_add}
    out["none"] = patched_acc(q, q_task, layer, None)
    out["mean_vector"] = patched_acc(q, q_task, layer, vec["text"][:, layer].mean(0))
    for spec in M.SPECS:
        out[f"{spec}_to_image"] = patched_acc(q, q_task, layer, vec[spec][:, layer])
        out[f"{spec}_to_image_add"] = patched_acc(q, q_task, layer_add, centred(vec[spec][:, layer_add]), "add")
    full = M.make_prompts(q_task, c["shots"], instructed=False, modality="text", query_modality="image", rng=rng,
                          pools=pools, queries=q["x"])
    out["icl_text_to_image"] = _acc(vlm(*M._t(full))[:, -1], full["target"])

    # ensembling with few examples
    acc_ex, acc_in, acc_en, add_ex, add_en = [], [], [], [], []
    for _ in range(c["repeats"]):
        ex, ins, ex_a, ins_a = [], [], [], []
        for t in range(n_t):
            tasks = np.full(c["few"], t)
            b = M.make_prompts(tasks, 1, instructed=False, modality="text", query_modality="text", rng=rng,
                               pools=pools)
            e_full = M.task_vector(vlm, *M._t(b))
            i_full = M.task_vector(vlm, *M._t(M.instruction_prompts(tasks, "text", rng, pools)))
            ex.append(e_full[layer])
            ins.append(i_full[layer])
            ex_a.append(e_full[layer_add])
            ins_a.append(i_full[layer_add])
        ex_v, in_v = torch.stack(ex), torch.stack(ins)
        ex_c, in_c = centred(torch.stack(ex_a)), centred(torch.stack(ins_a))
        add_ex.append(patched_acc(q, q_task, layer_add, ex_c, "add"))
        add_en.append(patched_acc(q, q_task, layer_add, (ex_c + in_c) / 2, "add"))
        acc_ex.append(patched_acc(q, q_task, layer, ex_v))
        acc_in.append(patched_acc(q, q_task, layer, in_v))
        acc_en.append(patched_acc(q, q_task, layer, (ex_v + in_v) / 2))
    out.update(exemplar_few=float(np.mean(acc_ex)), instruction_few=float(np.mean(acc_in)),
               ensemble_few=float(np.mean(acc_en)), exemplar_few_add=float(np.mean(add_ex)),
               ensemble_few_add=float(np.mean(add_en)))

    # similarity of per-prompt states at the layer, grouped by (task, spec)
    x = torch.cat([torch.cat(states[s])[:, layer] for s in M.SPECS]).numpy()
    n = c["n_prompts"]
    task_lab = np.tile(np.repeat(np.arange(n_t), n), len(M.SPECS))
    spec_lab = np.repeat(np.arange(len(M.SPECS)), n_t * n)
    sim = spec_similarity(x, task_lab, spec_lab, center=True)
    out.update(same_task=sim["same_task"], different_task=sim["different_task"],
               nearest_same_task=sim["nearest_same_task"])
    out["lens_input"] = np.mean(lens_in, 0).tolist()
    out["lens_answer"] = np.mean(lens_ans, 0).tolist()
    return out
