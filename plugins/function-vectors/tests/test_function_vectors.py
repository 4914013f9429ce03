"""function-vectors: the conformance kit, the AIE scan's exact properties, and the FV's construction."""
from __future__ import annotations

import pytest
import torch

from zoo.task import torch_threads
from zoo_function_vectors.model import FunctionVector, average_indirect_effect, function_vector
from zoo_task_icl_toy import task as T
from zoo_task_icl_toy.gpt import HookedGPT, head_vectors, mean_head_outputs, patch_heads
from zoo_task_icl_toy.interventions import answer_score

SIZES = {"n_tasks": 8, "depth": 3, "dim": 16, "heads": 4}


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):  # tiny models on a shared machine: one thread is the fast setting
        yield


def tiny():
    torch.manual_seed(0)
    gpt = HookedGPT(vocab_size=T.D.VOCAB.size, dim=16, depth=3, heads=4, block_size=32).eval()
    return gpt, T.icl_data("token", n=6, shots=3)


def test_conformance(check_plugin):
    check_plugin("function-vectors")


def test_aie_is_the_mean_rise_of_the_answer_probability_and_zero_for_a_silent_head():
    gpt, data = tiny()
    with torch.no_grad():  # silence head (2, 1): its slice of the output projection is zero
        gpt.blocks[2].attn.out.weight[:, 4:8] = 0
    aie = average_indirect_effect(gpt, data)
    assert aie[2, 1] == 0
    # brute force for one head (Eqs. 2-3): patch the clean task mean into corrupted prompts, average over prompts, tasks
    rises = []
    for t in range(8):
        zbar = mean_head_outputs(gpt, data.clean.of_task(t).inputs)[0, 3]
        p = data.corrupt.of_task(t)
        with torch.no_grad():
            base = answer_score(gpt(p.inputs)[:, -1], p.targets, "token")
            with patch_heads(gpt, {(0, 3): zbar}):
                rises.append((answer_score(gpt(p.inputs)[:, -1], p.targets, "token") - base).mean())
    assert torch.allclose(aie[0, 3], torch.stack(rises).mean(), atol=1e-6)


def test_fv_sums_the_task_means_of_the_top_aie_heads_at_one_layer():
    gpt, data = tiny()
    fv = FunctionVector(**SIZES, k=3)
    figures = fv.fit(gpt, data)
    top = fv.aie.flatten().topk(3).indices
    assert fv.chosen.flatten().nonzero().flatten().tolist() == sorted(top.tolist())
    means = head_vectors(gpt, mean_head_outputs(gpt, data.clean.of_task(5).inputs))
    assert torch.allclose(fv.function_vector(5), (means * fv.chosen[:, :, None]).sum((0, 1)), atol=1e-5)
    assert fv.layer == 1 and fv.vectors[:, [0, 2, 3]].abs().max() == 0 and figures["aie_max"] >= figures["aie_top_k"]
    fv5 = fv.function_vector(5)
    fv.at_layer(3)
    assert torch.equal(fv.vectors[5, 3], fv5) and fv.vectors[:, 1].abs().max() == 0
    # the heads differ from the task's random and top-shift baselines in general; the vector is what steers
    out = fv(gpt, data.zero.inputs, data.zero.task)
    assert not torch.allclose(out[:, -1], gpt(data.zero.inputs)[:, -1])


def test_presets_and_errors():
    assert function_vector().k == 4 and function_vector(preset="paper", depth=28, dim=64, heads=16).layer == 9
    with pytest.raises(ValueError, match="preset"):
        function_vector(preset="gptj")
    with pytest.raises(ValueError, match="layer"):
        function_vector(preset="paper")  # layer 9 of a 4-layer GPT
    with pytest.raises(ValueError, match="k must be"):
        FunctionVector(**SIZES, k=13)
    with pytest.raises(ValueError, match="n_scan"):
        FunctionVector(**SIZES, n_scan=0)
    with pytest.raises(ValueError, match="layer must be"):
        FunctionVector(**SIZES).at_layer(4)
