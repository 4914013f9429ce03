"""iterative-feature-merging: conformance, the known answer (planted rescaled/duplicated/dead ReLU neurons merge
back exactly with identical outputs, which magnitude pruning at the same width cannot), the rule's edges (negative
multiples never merge, tolerance monotone), validation, and the tool on raw arrays and through a model."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import zoo
from zoo.testing import check_plugin
from zoo_iterative_feature_merging.ifm import ifm_prune, magnitude_prune, merge_groups, merge_layer


def test_conformance(hub):
    check_plugin("iterative-feature-merging")


class Tiny(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2, self.out = nn.Linear(6, 9), nn.Linear(9, 7), nn.Linear(7, 3)

    def forward(self, x):
        return self.out(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def _planted(seed: int = 0) -> Tiny:
    torch.manual_seed(seed)
    m = Tiny().double()
    with torch.no_grad():
        for src, dst, c in ((0, 5, 2.5), (2, 6, 0.3), (4, 7, 1.0)):  # rescaled copies of neurons 0, 2, 4
            m.fc1.weight[dst] = c * m.fc1.weight[src]
            m.fc1.bias[dst] = c * m.fc1.bias[src]
        m.fc1.weight[8], m.fc1.bias[8] = 0.0, 0.0  # a dead neuron: relu(0) = 0 always
        m.fc2.weight[6] = 4.0 * m.fc2.weight[1]  # in layer 2, neuron 6 is 4x neuron 1 (after layer 1 merges too)
        m.fc2.bias[6] = 4.0 * m.fc2.bias[1]
    return m


def test_planted_equivalent_neurons_merge_back_exactly():
    m = _planted()
    merged, rep = ifm_prune(m, 1e-6, linears=("fc1", "fc2", "out"))
    assert [v["after"] for v in rep["layers"].values()] == [5, 6]
    assert rep["layers"]["fc1"]["merges"] == 3 and rep["layers"]["fc1"]["zero"] == 1
    x = torch.randn(500, 6, dtype=torch.float64)
    with torch.no_grad():
        assert torch.allclose(merged(x), m(x), atol=1e-10, rtol=0)
        # magnitude pruning to the same widths deletes real features: the outputs change
        mag = magnitude_prune(m, [5, 6], linears=("fc1", "fc2", "out"))
        assert (mag(x) - m(x)).abs().max() > 1e-3


def test_merge_layer_scales_outgoing_weights_by_the_ratio():
    w_in = np.array([[1.0, 2.0], [3.0, 6.0], [0.0, 1.0]])  # neuron 1 = 3 x neuron 0
    w_out = np.array([[1.0, 10.0, 5.0]])
    r = merge_layer(w_in, np.zeros(3), w_out, 1e-9)
    assert len(r["keep"]) == 2
    # neuron 1 has the larger |v| |w_out| and is kept; neuron 0 = (1/3) neuron 1, its outgoing weight enters / 3
    assert r["keep"].tolist() == [1, 2] and np.allclose(r["w_out"], [[10.0 + 1.0 / 3.0, 5.0]])


def test_negative_multiples_are_not_equivalent_and_tol_is_monotone():
    v = np.array([[1.0, 0.0], [-2.0, 0.0], [1.0, 0.05], [0.0, 1.0]])
    assert len(merge_groups(v, 1e-9)["keep"]) == 4  # relu(-x) != c relu(x)
    counts = [len(merge_groups(v, t)["keep"]) for t in (0.0, 0.1, 1.5, 2.0)]
    assert counts == sorted(counts, reverse=True) and counts[1] == 3 and counts[-1] == 1
    rng = np.random.default_rng(0)
    w = rng.standard_normal((40, 8))
    left = [len(merge_groups(w, t)["keep"]) for t in np.linspace(0, 1.4, 8)]
    assert all(a >= b for a, b in zip(left, left[1:], strict=False))


def test_validation_names_the_requirement():
    with pytest.raises(ValueError, match=r"tol must be in \[0, 2\]"):
        merge_groups(np.ones((3, 2)), 3.0)
    with pytest.raises(ValueError, match="NaN"):
        merge_groups(np.array([[1.0, np.nan]]), 0.1)
    with pytest.raises(ValueError, match="do not chain"):
        merge_layer(np.ones((3, 2)), np.zeros(3), np.ones((1, 4)), 0.1)
    with pytest.raises(ValueError, match="not an nn.Linear"):
        ifm_prune(Tiny(), 0.1, linears=("fc1", "nope"))
    with pytest.raises(ValueError, match="one entry per hidden layer"):
        magnitude_prune(Tiny(), [3], linears=("fc1", "fc2", "out"))
    with pytest.raises(ValueError, match="tol must be"):
        zoo.analyze("feature-merging", {"a": np.ones((4, 3))}, tol=-1)


def test_tool_on_raw_arrays_and_through_a_model(tmp_path):
    rng = np.random.default_rng(1)
    a = rng.random((50, 6))
    a[:, 4] = 3.0 * a[:, 1]  # feature 4 is feature 1 rescaled
    a[:, 5] = 0.0  # a dead feature
    res = zoo.analyze("feature-merging", {"acts": a}, tol=1e-6, out_dir=str(tmp_path))["layers"]["acts"]
    assert res["left"] == 4 and res["zero"] == 1 and res["complexity"]["0"] == 4
    assert list(res["groups"].values()) == [[1]] or list(res["groups"].values()) == [[4]]
    assert (tmp_path / "feature_complexity.png").exists()
    # data-agnostic: the transposed incoming weights of the planted network, columns = neurons
    m = _planted()
    v = torch.cat([m.fc1.weight, m.fc1.bias[:, None]], 1).detach().numpy().T
    assert zoo.analyze("feature-merging", {"fc1": v}, tol=1e-6)["layers"]["fc1"]["left"] == 5
    from zoo_task_digits.task import probe_data

    x, _ = probe_data(40)
    out = zoo.analyze("feature-merging", zoo.create("gelu_mlp_digits"), inputs=x, layers=["output"])
    assert out["layers"]["output"]["features"] == 10 and 1 <= out["layers"]["output"]["left"] <= 10


def test_quick_reproduction_runs():
    from zoo.claims import run_claim
    from zoo_iterative_feature_merging.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    assert rows["ifm"]["hidden"]["mean"] == rows["magnitude"]["hidden"]["mean"] <= rows["dense"]["hidden"]["mean"]
    assert rows["ifm"]["acc_drop"]["mean"] < 5.0
