"""task-vector-bases: the conformance kit, exact special cases of the basis, storage, and the merge/negate contract."""
from __future__ import annotations

import pytest
import torch

from zoo.task import torch_threads
from zoo.testing import check_plugin
from zoo_task_vector_bases.model import PAPER, BasisMerger, TaskVectorBasis, task_vector_bases


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):  # tiny tensors on a shared machine: more threads only contend
        yield


def _vectors(T: int = 8, seed: int = 0, rank: int | None = None) -> list[dict[str, torch.Tensor]]:
    g = torch.Generator().manual_seed(seed)
    if rank is None:
        return [{"w": torch.randn(6, 5, generator=g), "b": torch.randn(5, generator=g)} for _ in range(T)]
    factors = torch.randn(35, rank, generator=g)  # T vectors in a rank-`rank` subspace
    flat = factors @ torch.randn(rank, T, generator=g)
    return [{"w": flat[:30, t].reshape(6, 5), "b": flat[30:, t]} for t in range(T)]


def _err(basis: TaskVectorBasis, tvs: list[dict[str, torch.Tensor]], t: int) -> float:
    rec = basis.reconstruct(t)
    return float(sum((rec[k] - tvs[t][k]).pow(2).sum() for k in rec).sqrt())


def test_conformance(hub):
    check_plugin("task-vector-bases", overrides={"task_vector_bases": {"steps": 10}})


@pytest.mark.parametrize("method", ["autoencoder", "pca", "random_sample"])
def test_m_equal_t_reconstructs_exactly(method):
    tvs = _vectors(T=5)
    basis = TaskVectorBasis(M=5, method=method, steps=300).fit(tvs)
    assert max(_err(basis, tvs, t) for t in range(5)) < 1e-4
    assert basis.loss < 1e-9


def test_atoms_are_convex_combinations_and_storage_formula():
    tvs = _vectors(T=8)
    basis = TaskVectorBasis(M=2, steps=500).fit(tvs)
    B = basis.encoder
    assert B.shape == (8, 2) and (B > 0).all() and torch.allclose(B.sum(0), torch.ones(2))  # softmax over the tasks
    atom0 = sum(float(B[j, 0]) * tvs[j]["w"] for j in range(8))
    assert torch.allclose(basis.atoms[0]["w"], atom0, atol=1e-5)
    P = 6 * 5 + 5
    assert basis.stored_floats() == 2 * P + 2 * 8  # M atoms + the M x T coefficients
    assert TaskVectorBasis(M=2, method="pca").fit(tvs).stored_floats() == 2 * P + 2 * 8
    assert basis.addition_mass() == pytest.approx(2.0)
    add = basis.add()  # the paper's addition: the sum of the atoms
    assert torch.allclose(add["b"], basis.atoms[0]["b"] + basis.atoms[1]["b"])
    neg = basis.negate(3)
    assert torch.allclose(neg["w"], -basis.reconstruct(3)["w"])
    both = basis.add([1, 4])
    assert torch.allclose(both["w"], basis.reconstruct(1)["w"] + basis.reconstruct(4)["w"], atol=1e-6)


def test_learned_basis_finds_a_low_rank_collection_and_beats_random_sample():
    # 8 task vectors spanning a 2-d subspace: M = 2 learned atoms reconstruct them; keeping 2 of the vectors at
    # random also spans it here, but on a generic (full-rank) collection the learned basis has the lower error
    tvs = _vectors(T=8, rank=2, seed=1)
    basis = TaskVectorBasis(M=2, steps=800).fit(tvs)
    assert basis.loss < 1e-6
    full = _vectors(T=8, seed=2)
    learned = TaskVectorBasis(M=2, steps=800).fit(full).loss
    rand = min(TaskVectorBasis(M=2, method="random_sample", seed=s).fit(full).loss for s in range(3))
    pca = TaskVectorBasis(M=2, method="pca").fit(full).loss
    assert learned < rand and pca <= learned + 1e-9  # PCA is the least-squares optimum without the convexity


def test_paper_recipe_without_solve_w_trains_the_decoder():
    tvs = _vectors(T=4)
    basis = TaskVectorBasis(M=4, steps=3000, solve_w=False).fit(tvs)  # Adam alone
    assert basis.loss < 1e-3
    assert task_vector_bases("paper").options["steps"] == PAPER["steps"] == 20_000


def test_input_validation():
    with pytest.raises(ValueError, match="method"):
        TaskVectorBasis(method="kmeans")
    with pytest.raises(ValueError, match="M"):
        TaskVectorBasis(M=0)
    with pytest.raises(ValueError, match="M must be in"):
        TaskVectorBasis(M=9).fit(_vectors(T=8))
    with pytest.raises(ValueError, match="names and shapes"):
        TaskVectorBasis(M=1).fit([{"w": torch.zeros(2)}, {"w": torch.zeros(3)}])
    with pytest.raises(RuntimeError, match="fit"):
        TaskVectorBasis().reconstruct(0)
    with pytest.raises(ValueError, match="task index"):
        TaskVectorBasis(M=2, steps=5).fit(_vectors(T=3)).reconstruct(3)
    with pytest.raises(ValueError, match="preset"):
        task_vector_bases("huge")
    with pytest.raises(TypeError, match="atoms"):
        task_vector_bases(atoms=3)
    with pytest.raises(TypeError, match="merge"):
        BasisMerger()(torch.zeros(1, 64))


def test_merge_and_negate_on_a_small_suite():
    from zoo_task_task_merge import baselines as TB
    from zoo_task_task_merge.suite import build_suite

    suite = build_suite(seed=0, tasks=("flip_h", "invert", "rotate90"), pre_steps=100, ft_steps=30, hidden=16)
    P = suite.n_params()
    model = task_vector_bases(M=2, steps=100)
    state = model.merge(suite)
    assert set(state) == set(suite.base_state) and model.chosen["lambda"] >= 0
    assert model.stored_floats(suite) == 2 * P + 2 * 3  # 2 atoms instead of the 3 task vectors' 3 P floats
    # M = T: every task vector is reconstructed exactly, so negating through the basis IS task arithmetic's negation
    exact = task_vector_bases(M=3, steps=100)
    ours = exact.negate(suite, "invert", control="control")
    theirs = TB.TaskArithmetic().negate(suite, "invert")
    assert all(torch.allclose(ours[k], theirs[k], atol=1e-4) for k in theirs)
