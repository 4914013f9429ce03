"""g-ssnn: the conformance kit, and the G-SSNN module's exact pieces: chunk assignment, the fixed sin-cos table with
the original's layout, one GINE step computed by hand, and outputs that depend on the injected graph."""
from __future__ import annotations

import pytest
import torch

from zoo.testing import check_plugin
from zoo_g_ssnn.model import GSSNN, PAPER, g_ssnn, sincos_table

TRIANGLE = [[[0, 0], [1, 2]], [[2, 0], [3, 4]], [[4, 1], [5, 0]]]  # nodes 0, 2, 4; edges 1, 3, 5


def test_conformance(hub):
    check_plugin("g-ssnn", overrides={"g_ssnn": {"dim": 8, "depth": 1}})


def test_sincos_table_keeps_the_original_layout():
    h, w, d = 5, 3, 8
    t = sincos_table(h, w, d)
    omega = 1.0 / 10000 ** (torch.arange(d // 4) / (d // 4 - 1))
    for a in range(h):
        for b in range(w):
            k = a * w + b  # the flat index of an (n_cols, n_rows) xy-meshgrid, read back as (row, col)
            x, y = (k % h) * omega, (k // h) * omega
            assert torch.allclose(t[a, b], torch.cat([x.sin(), x.cos(), y.sin(), y.cos()]), atol=1e-6)
    with pytest.raises(ValueError, match="multiple of 4"):
        sincos_table(3, 2, 6)


def test_chunks_follow_order_ids_and_tile():
    m = GSSNN(edges=TRIANGLE, dim=16, depth=1)  # 6 elements: chunks of 2, the first 2 + 16 - 12 = 6 long
    assert m.bounds[0] == (0, 6) and m.bounds[1:] == [(6, 8), (8, 10), (10, 12), (12, 14), (14, 16)]
    x = torch.arange(16.0)[None]
    ch = m.chunks(x)
    assert ch[0, 0].tolist() == [0, 1, 2, 3, 4, 5] * 2 + [0, 1, 2, 3] and ch[0, 3].tolist() == [10, 11] * 8


def test_one_gine_step_by_hand():
    edges = [[[0, 1], [1, 2]]]  # two nodes (ids 0, 2), one edge (id 1) on port 1
    m = GSSNN(edges=edges, dim=4, depth=1, output_dim=4, max_conn=2)
    with torch.no_grad():
        m.convs[0].weight.copy_(torch.eye(4)), m.convs[0].bias.zero_()
        m.out.weight.copy_(torch.eye(4)), m.out.bias.zero_()
    x = torch.tensor([[0.5, -1.0, 2.0, 3.0]])
    ch = m.chunks(x)[0]  # 3 elements: chunk sizes 2, 1, 1
    table = sincos_table(3, 3, 4)
    h0, h2 = table[0, 0] + ch[0], table[2, 0] + ch[2]
    e = table[1, 2] + ch[1]  # edge id 1 at port 1 + 1
    expect = ((h0 + torch.relu(h2 + e)) + (h2 + torch.relu(h0 + e))) / 2  # GINE (eps 0), identity Linear, mean pool
    assert torch.allclose(m(x)[0], expect, atol=1e-6)


def test_the_injected_graph_changes_the_function():
    torch.manual_seed(0)
    a = GSSNN(edges=TRIANGLE, dim=16, depth=2)
    torch.manual_seed(0)
    path = [[[0, 0], [1, 2]], [[2, 0], [3, 4]], [[4, 0], [5, 6]]]  # same number of elements, a different graph
    b = GSSNN(edges=path[:2] + [[[4, 0], [5, 6]]], dim=16, depth=2)
    assert sum(p.numel() for p in a.parameters()) == sum(p.numel() for p in b.parameters())
    x = torch.randn(4, 16)
    assert not torch.allclose(a(x), b(x), atol=1e-4)


def test_presets_and_errors():
    assert g_ssnn(preset="paper").dim == PAPER["dim"] == 512 and len(g_ssnn(preset="paper").convs) == 3
    with pytest.raises(ValueError, match="elements"):
        GSSNN(edges=TRIANGLE, dim=4)
    with pytest.raises(ValueError, match="once each"):
        GSSNN(edges=[[[0, 0], [0, 2]]], dim=8)
    with pytest.raises(ValueError, match="port"):
        GSSNN(edges=[[[0, 5], [1, 2]]], dim=8, max_conn=3)
    with pytest.raises(ValueError, match="preset"):
        g_ssnn(preset="huge")
    with pytest.raises(ValueError, match=r"\(B, 32\)"):
        g_ssnn()(torch.randn(2, 8))


def test_the_claim_is_declared_not_measured_with_the_reason():
    import zoo
    from zoo import registry

    spec = registry.claim("g-ssnn")
    assert spec.not_measured and "program search" in spec.not_measured and not spec.reproduce
    with pytest.raises(zoo.errors.ClaimNotFound, match="ships part of its method and measures no claim"):
        zoo.reproduce("g-ssnn")
