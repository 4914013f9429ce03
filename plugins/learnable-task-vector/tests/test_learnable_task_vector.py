"""learnable-task-vector: the conformance kit, LTV's closed form, and that only alpha is learned."""
from __future__ import annotations

import pytest
import torch

from zoo.task import torch_threads
from zoo_learnable_task_vector.model import LearnableTaskVector, learnable_task_vector
from zoo_task_icl_toy import task as T
from zoo_task_icl_toy.gpt import HookedGPT, head_vectors, mean_head_outputs
from zoo_task_icl_toy.interventions import NoVector

SIZES = {"n_tasks": 8, "depth": 3, "dim": 16, "heads": 4}


@pytest.fixture(autouse=True)
def one_thread():
    with torch_threads(1):  # tiny models on a shared machine: one thread is the fast setting
        yield


def tiny():
    torch.manual_seed(0)
    gpt = HookedGPT(vocab_size=T.D.VOCAB.size, dim=16, depth=3, heads=4, block_size=32).eval()
    for p in gpt.parameters():
        p.requires_grad_(False)
    return gpt, T.icl_data("token", n=6, shots=3)


def test_conformance(check_plugin):
    check_plugin("learnable-task-vector")


def test_layer_vectors_are_alpha_weighted_head_means_added_after_each_layer():
    gpt, data = tiny()
    ltv = LearnableTaskVector(**SIZES, steps=0)
    ltv.fit(gpt, data, seed=3)
    means = head_vectors(gpt, mean_head_outputs(gpt, data.clean.of_task(2).inputs))  # (depth, heads, dim)
    add = ltv.additions(torch.tensor([2]))[0]
    assert add.shape == (4, 16) and add[0].abs().max() == 0  # nothing before block 0
    for layer in range(3):
        assert torch.allclose(add[layer + 1], (ltv.alpha[2, layer, :, None] * means[layer]).sum(0), atol=1e-5)
    again = LearnableTaskVector(**SIZES, steps=0)
    again.fit(gpt, data, seed=3)
    assert torch.equal(again.alpha, ltv.alpha)  # alpha ~ N(0, 1) drawn from fit's seed


def test_fit_learns_alpha_only_and_lowers_the_task_loss():
    gpt, data = tiny()
    before = {k: v.clone() for k, v in gpt.state_dict().items()}
    ltv = LearnableTaskVector(**SIZES, steps=40, lr=2.0)  # an untrained GPT: the head means are tiny
    start = LearnableTaskVector(**SIZES, steps=0)
    start.fit(gpt, data, seed=0)  # the same initial alpha, not optimised
    ltv.fit(gpt, data, seed=0)
    assert all(torch.equal(v, gpt.state_dict()[k]) for k, v in before.items())

    def loss(m):
        with torch.no_grad():
            out = m(gpt, data.zero.inputs, data.zero.task)[:, -1]
        return torch.nn.functional.cross_entropy(out, data.zero.targets)
    assert loss(ltv) < loss(start) - 0.05 and loss(ltv) < loss(NoVector(n_tasks=8, depth=3, dim=16))


def test_errors():
    gpt, data = tiny()
    with pytest.raises(ValueError, match="steps"):
        learnable_task_vector(steps=-1)
    with pytest.raises(ValueError, match="heads=2"):
        LearnableTaskVector(n_tasks=8, depth=3, dim=16, heads=2).fit(gpt, data)
    with pytest.raises(ValueError, match="n_tasks=8"):
        LearnableTaskVector(n_tasks=4, depth=3, dim=16, heads=4).fit(gpt, data)
