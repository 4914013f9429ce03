"""cross-modal-task-vectors: conformance, known answers (patching a prompt's own residual reproduces its prediction,
patching before the final norm fixes the output, the cosine matrix is symmetric with a unit diagonal, planted
task-shared vectors give a positive same-task gap and planted spec-shared ones a negative one), the prompts and the
image embedding, validation, the tool through zoo.analyze on arrays and on a model, and the quick experiment on the
cached digit VLM."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import zoo
from zoo.testing import check_plugin
from zoo_cross_modal_task_vectors import model as M
from zoo_cross_modal_task_vectors.similarity import cosine_matrix, group_means, spec_similarity


def test_conformance(hub):
    check_plugin("cross-modal-task-vectors")


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return M.DigitVLM(dim=32, depth=3, heads=4).eval()


@pytest.fixture(scope="module")
def pools():
    return M.Pools("test")


def test_answers():
    x = np.arange(10)
    assert M.answer(M.TASKS.index("next"), x).tolist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 0]
    assert M.answer(M.TASKS.index("prev"), x)[0] == 9 and M.answer(M.TASKS.index("double"), x)[7] == 4
    assert M.answer(M.TASKS.index("plus5"), x)[8] == 3 and (M.answer(M.TASKS.index("copy"), x) == x).all()
    assert M.answer(M.TASKS.index("parity"), x).tolist() == [M.EVEN, M.ODD] * 5


def test_prompt_layout(pools):
    rng = np.random.default_rng(0)
    b = M.make_prompts(np.array([1, 3]), 2, instructed=np.array([True, False]), modality="image",
                       query_modality="text", rng=rng, pools=pools, train_targets=True)
    ids = b["ids"]
    assert ids.shape == (2, 1 + 4 * 2 + 2) and ids[0, 0] == M.INSTR0 + 1 and ids[1, 0] == M.NONE
    assert (ids[:, [1, 5]] == M.IMG).all() and (ids[:, [2, 6, 10]] == M.ARROW).all() and (ids[:, [4, 8]] == M.COMMA).all()
    assert (ids[:, 9] == b["x"]).all() and (b["tg"][:, -1] == b["target"]).all()
    # exemplar answers follow the task; image positions carry the pixels of an image of that digit
    assert (ids[0, 3] - 0) == b["tg"][0, 2] and b["pix"][:, [1, 5]].sum() > 0 and b["pix"][:, 9].sum() == 0
    x, y = M.digit_images("test")
    assert (y == 0).any() and x.shape[1] == 64


def test_image_embedding_reads_pixels_only_at_image_positions(tiny):
    ids = torch.tensor([[M.NONE, M.IMG, M.ARROW]])
    pix = torch.zeros(1, 3, 64)
    a = tiny(ids, pix)[:, -1]
    pix2 = pix.clone()
    pix2[0, 1] = 1.0
    assert not torch.allclose(tiny(ids, pix2)[:, -1], a)
    pix3 = pix.clone()
    pix3[0, 2] = 1.0  # pixels at a word position are ignored
    assert torch.allclose(tiny(ids, pix3)[:, -1], a)
    with pytest.raises(ValueError, match="pix must be"):
        tiny(ids, torch.zeros(1, 3, 63))


def test_patching_a_prompts_own_residual_reproduces_its_prediction(tiny, pools):
    b = M.make_prompts(np.arange(6), 3, instructed=False, modality="mixed", query_modality="image",
                       rng=np.random.default_rng(1), pools=pools)
    ids, pix = M._t(b)
    clean = tiny(ids, pix)[:, -1]
    h = M.last_residuals(tiny, ids, pix)  # (B, depth + 1, dim)
    for layer in range(tiny.depth + 1):
        assert torch.allclose(M.patched_logits(tiny, ids, pix, layer, h[:, layer]), clean, atol=1e-5)
    # entering the final norm, the patched state alone decides the output, whatever the query
    q = M.zero_shot_queries(np.arange(6), "text", np.random.default_rng(2), pools)
    out = M.patched_logits(tiny, *M._t(q), tiny.depth, h[:, tiny.depth])
    assert torch.allclose(out, clean, atol=1e-5)
    # a vector patched earlier is not a constant output: the query still matters
    mid = M.patched_logits(tiny, *M._t(q), 1, h[0, 1])
    assert not torch.allclose(mid[0], mid[1])
    with pytest.raises(ValueError, match="out of range"):
        M.patched_logits(tiny, ids, pix, tiny.depth + 1, h[:, 0])
    # "add" mode: adding zero is the clean run, adding the difference to another prompt's state is replacing it
    assert torch.allclose(M.patched_logits(tiny, ids, pix, 1, torch.zeros(tiny.dim), "add"), clean, atol=1e-5)
    h_q = M.last_residuals(tiny, *M._t(q))
    rep = M.patched_logits(tiny, *M._t(q), 2, h[:, 2])
    assert torch.allclose(M.patched_logits(tiny, *M._t(q), 2, h[:, 2] - h_q[:, 2], "add"), rep, atol=1e-4)
    with pytest.raises(ValueError, match="patch mode"):
        M.patched_logits(tiny, ids, pix, 1, h[:, 1], "swap")


def test_task_vector_is_the_mean_last_token_residual(tiny, pools):
    b = M.make_prompts(np.zeros(5, int), 2, instructed=False, modality="text", query_modality="text",
                       rng=np.random.default_rng(3), pools=pools)
    ids, pix = M._t(b)
    v = M.task_vector(tiny, ids, pix)
    assert v.shape == (tiny.depth + 1, tiny.dim)
    assert torch.allclose(v, torch.stack([M.last_residuals(tiny, ids[i:i + 1], pix[i:i + 1])[0] for i in range(5)]).mean(0),
                          atol=1e-5)
    lens = M.logit_lens(tiny, ids, pix, {"answer": b["target"]})
    assert lens["answer"].shape == (tiny.depth + 1,) and (lens["answer"] > 0).all()


def test_cosine_matrix_symmetric_unit_diagonal():
    v = np.random.default_rng(0).standard_normal((7, 5))
    for center in (True, False):
        c = cosine_matrix(v, center=center)
        assert np.allclose(c, c.T) and np.allclose(np.diag(c), 1.0) and (np.abs(c) <= 1).all()
    c = cosine_matrix(v, center=False)
    u = v / np.linalg.norm(v, axis=1, keepdims=True)
    assert np.allclose(c, u @ u.T)
    with pytest.raises(ValueError, match="K >= 2"):
        cosine_matrix(v[:1])


def _planted(shared_by: str, seed: int = 0):
    rng = np.random.default_rng(seed)
    n_task, n_spec, n, d = 4, 3, 20, 32
    task_dir, spec_dir = rng.standard_normal((n_task, d)) * 3, rng.standard_normal((n_spec, d)) * 3
    task = np.repeat(np.arange(n_task), n_spec * n)
    spec = np.tile(np.repeat(np.arange(n_spec), n), n_task)
    base = task_dir[task] + 0.3 * spec_dir[spec] if shared_by == "task" else spec_dir[spec] + 0.3 * task_dir[task]
    return base + 0.5 * rng.standard_normal((len(task), d)) + 10.0, task, spec


def test_planted_task_vectors_known_answer():
    x, task, spec = _planted("task")
    r = spec_similarity(x, task, spec)
    assert r["gap"] > 0.8 and r["nearest_same_task"] == 1.0 and len(r["groups"]) == 12
    x, task, spec = _planted("spec")  # vectors that follow the specification, not the task: the opposite sign
    r = spec_similarity(x, task, spec)
    assert r["gap"] < 0 and r["nearest_same_task"] == 0.0
    means, gt, gs = group_means(x, task, spec)
    assert means.shape == (12, 32) and np.allclose(means[0], x[(task == 0) & (spec == 0)].mean(0))


def test_tool_on_raw_arrays(tmp_path):
    x, task, spec = _planted("task")
    res = zoo.analyze("task-vector-similarity", {"h": x, "h2": x[:, :8]}, labels=task, spec=spec, out_dir=str(tmp_path))
    h = res["layers"]["h"]
    assert h["gap"] > 0.8 and np.allclose(np.diag(np.array(h["cosine"])), 1.0)
    assert res["artifacts"]["cosine"].endswith(".png")
    no_spec = zoo.analyze("task-vector-similarity", {"h": x}, labels=task)["layers"]["h"]
    assert no_spec["same_task"] is None and len(no_spec["groups"]) == 4


def test_tool_validation():
    x, task, spec = _planted("task")
    with pytest.raises(ValueError, match="needs labels"):
        zoo.analyze("task-vector-similarity", {"h": x})
    with pytest.raises(ValueError, match="one specification label per input"):
        zoo.analyze("task-vector-similarity", {"h": x}, labels=task, spec=spec[:5])
    with pytest.raises(ValueError, match="names no concept"):
        zoo.analyze("task-vector-similarity", {"h": x}, labels=task, spec="modality")
    bad = x.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        zoo.analyze("task-vector-similarity", {"h": bad}, labels=task, spec=spec)
    with pytest.raises(ValueError, match="at least two tasks"):
        zoo.analyze("task-vector-similarity", {"h": x}, labels=np.zeros(len(x), int))
    from zoo.activations import ActivationSet
    from zoo_cross_modal_task_vectors.tool import similarity_tool

    with pytest.raises(ValueError, match="no layer"):
        similarity_tool(ActivationSet({"h": x}, task), layers="g")


def test_tool_on_a_model():
    from zoo_task_digits.task import probe_data

    xs, ys = probe_data(n=60)
    out = zoo.analyze("task-vector-similarity", zoo.create("gelu_mlp_digits"), inputs=xs, labels=ys, layers=["output"])
    r = out["layers"]["output"]
    assert len(r["groups"]) == len(set(ys.tolist())) and r["different_task"] is not None


def _cached_vlm() -> M.DigitVLM:
    """The digit VLM from the user's zoo cache (the tests' hermetic cache is empty and training takes minutes):
    skipped when it was never trained (``zoo reproduce cross-modal-task-vectors`` trains and caches it)."""
    import os
    from pathlib import Path

    from safetensors.torch import load_file

    rel = M.cache_path().relative_to(M.cache_path().parents[1])
    roots = [Path(os.path.expanduser("~/.cache")) / "zoo", Path(os.environ.get("XDG_CACHE_HOME") or "~") / "zoo"]
    path = next((r / rel for r in roots if (r / rel).exists()), None)
    if path is None:
        pytest.skip(f"digit VLM not cached ({rel}); run `zoo reproduce cross-modal-task-vectors` once")
    vlm = M.DigitVLM(**M.CPU_ARCH)
    vlm.load_state_dict(load_file(str(path)))
    return vlm.eval().requires_grad_(False)


def test_quick_experiment_on_the_cached_vlm():
    from zoo_cross_modal_task_vectors.experiment import QUICK, run

    torch.set_num_threads(1)
    r = run(_cached_vlm(), seed=0, **QUICK)
    # the model does the task from text exemplars on an image query (cross-modal in-context learning)
    assert r["icl_text_to_image"] > 0.8
    # the text-derived, task-centred vector added to image queries makes them do the task more often than no vector
    # (which cannot know which of six tasks is asked); the all-task mean is no task at all
    assert r["text_to_image_add"] > r["none"] + 0.15 and r["none"] < 0.4 and r["mean_vector"] < 0.4
    # same task given by text, images or an instruction: more similar than different tasks
    assert r["same_task"] > r["different_task"] + 0.1
