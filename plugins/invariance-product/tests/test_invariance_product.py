"""invariance-product: the conformance kit, the exact invariance of each subspace, and what cosine alone misses."""
from __future__ import annotations

import pytest
import torch

from zoo.task import torch_threads
from zoo.testing import check_plugin
from zoo_invariance_product.model import SIMILARITIES, InvarianceProduct, invariance_product, relative_projection
from zoo_task_task_merge import stitching as S


@pytest.fixture(autouse=True)
def _one_thread():
    with torch_threads(1):  # tiny models on a shared machine: more threads only contend
        yield


def _orthogonal(d: int, seed: int) -> torch.Tensor:
    q, r = torch.linalg.qr(torch.randn(d, d, generator=torch.Generator().manual_seed(seed), dtype=torch.float64))
    return q * torch.sign(torch.diagonal(r))


@pytest.fixture
def latents() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    z = torch.randn(40, 6, generator=g, dtype=torch.float64)
    return z, z[:9]  # anchors are latents of the same encoder (the first 9 samples)


def _block(proj: torch.Tensor, i: int, k: int) -> torch.Tensor:
    return proj[:, i * k:(i + 1) * k]


def test_conformance(hub):
    check_plugin("invariance-product", overrides={"invariance_product": {"similarities": ["cosine", "l1"]}})


def test_each_subspace_is_exactly_invariant_to_its_transformations(latents):
    z, a = latents
    k, q = len(a), _orthogonal(6, 1)
    shift = torch.randn(6, dtype=torch.float64) * 5
    perm, signs = torch.tensor([3, 0, 5, 1, 4, 2]), torch.tensor([1.0, -1, -1, 1, 1, -1], dtype=torch.float64)
    model = InvarianceProduct()  # blocks in SIMILARITIES order: cosine, euclidean, l1, linf
    ref = model(z, a)
    assert ref.shape == (40, 4 * k)
    maps = {  # transformation -> the blocks it must leave unchanged, exactly
        "scale_rotate": (lambda x: 3.5 * x @ q, ("cosine", "euclidean")),
        "isometry": (lambda x: x @ q + shift, ("euclidean",)),
        "translate_permute_flip": (lambda x: (x[:, perm] * signs) + shift, ("euclidean", "l1", "linf")),
    }
    for name, (f, invariant) in maps.items():
        out = model(f(z), f(a))
        for i, sim in enumerate(SIMILARITIES):
            same = torch.allclose(_block(out, i, k), _block(ref, i, k), atol=1e-9)
            assert same == (sim in invariant), (name, sim)  # invariant where it must be, and only there


def test_cosine_relative_projection_breaks_under_translation_where_the_product_keeps_three_subspaces(latents):
    z, a = latents
    shift = torch.full((6,), 4.0, dtype=torch.float64)
    cos = S.build_baseline("cosine")
    assert torch.allclose(cos(3.0 * z @ _orthogonal(6, 2), 3.0 * a @ _orthogonal(6, 2)), cos(z, a), atol=1e-9)
    assert (cos(z + shift, a + shift) - cos(z, a)).abs().max() > 0.2
    prod = InvarianceProduct()
    moved = prod(z + shift, a + shift) - prod(z, a)
    assert moved[:, len(a):].abs().max() < 1e-9 and moved[:, :len(a)].abs().max() > 0.2


def test_closed_forms_and_aggregations():
    z = torch.tensor([[0.0, 0.0], [3.0, 4.0]])
    assert relative_projection(z, z, "euclidean").tolist() == [[0.0, -5.0], [-5.0, 0.0]]
    assert relative_projection(z, z, "linf").tolist() == [[0.0, -4.0], [-4.0, 0.0]]
    g = torch.Generator().manual_seed(0)
    x, a = torch.randn(7, 5, generator=g), torch.randn(3, 5, generator=g)
    std = InvarianceProduct(norm="standardize")(x, a).view(7, 4, 3)
    assert torch.allclose(std.mean(-1), torch.zeros(7, 4), atol=1e-5)
    assert torch.allclose(std.pow(2).mean(-1), torch.ones(7, 4), atol=1e-4)
    parts = InvarianceProduct().subspaces(x, a)
    assert torch.allclose(InvarianceProduct(aggregation="sum")(x, a), sum(parts))
    assert InvarianceProduct(norm="l2")(x, a).view(7, 4, 3).norm(dim=-1).allclose(torch.ones(7, 4))
    assert invariance_product(similarities="l1")(x, a).shape == (7, 3)
    assert invariance_product("paper").similarities == SIMILARITIES


def test_input_validation():
    with pytest.raises(ValueError, match="similarities"):
        InvarianceProduct(similarities=("cosine", "manhattan"))
    with pytest.raises(ValueError, match="similarities"):
        InvarianceProduct(similarities=())
    with pytest.raises(ValueError, match="norm"):
        InvarianceProduct(norm="batch")
    with pytest.raises(ValueError, match="aggregation"):
        InvarianceProduct(aggregation="attention")
    with pytest.raises(ValueError, match="same D"):
        InvarianceProduct()(torch.randn(4, 3), torch.randn(2, 5))
    with pytest.raises(ValueError, match="preset"):
        invariance_product("huge")
    with pytest.raises(TypeError, match="anchors"):
        invariance_product(anchors=10)


def _clusters(seed: int, n: int = 600, d: int = 12) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(10, d, generator=g) * 3
    y = torch.randint(0, 10, (n,), generator=g)
    return centers[y] + torch.randn(n, d, generator=g), y


def test_quick_stitching_on_a_translated_space_product_beats_cosine():
    # B = A shifted far away: cosine relative representations of B no longer match A's, the product's Euclidean,
    # L1 and L-inf subspaces still do exactly, so its head trained on A transfers
    z, y = _clusters(0)
    zt, yt = _clusters(0, n=900)
    zt, yt = zt[600:], yt[600:]
    shift = torch.full((12,), 10.0)
    sp = {"A": {"train": z, "test": zt}, "B": {"train": z + shift, "test": zt + shift}, "y_train": y, "y_test": yt}
    prod = S.score(InvarianceProduct(), sp, n_anchors=32, steps=80, seed=0)
    cos = S.score(S.build_baseline("cosine"), sp, n_anchors=32, steps=80, seed=0)
    assert prod["stitch_acc"] > cos["stitch_acc"] + 0.2
    assert prod["latent_similarity"] > cos["latent_similarity"]
    assert prod["stitch_acc"] > 0.9 and prod["latent_top1"] > 0.9
