"""compositional-geometry: conformance, known answers (a planted orthogonal linear factorisation gives R^2 ~ 1, angles
~ 90 degrees, k95 = n_i - 1; an entangled (one vector per combination) code does not factorise), Spearman, validation,
and the tool through zoo.analyze on raw arrays and on a model."""
from __future__ import annotations

import numpy as np
import pytest

import zoo
from zoo.testing import check_plugin
from zoo_compositional_geometry import geometry as G


def _planted(sizes=(3, 4, 2), d=24, n=1200, noise=0.05, orthogonal=True, seed=0):
    rng = np.random.default_rng(seed)
    c = np.column_stack([rng.integers(0, s, n) for s in sizes])
    q = np.linalg.qr(rng.standard_normal((d, d)))[0]
    factors, col = [], 0
    for s in sizes:
        basis = q[:, col:col + s - 1] if orthogonal else q[:, : s - 1]
        col += s - 1
        simplex = np.eye(s) - 1.0 / s  # s centred values spanning s - 1 directions
        factors.append(simplex[:, : s - 1] @ basis.T * 2.0)
    x = sum(f[c[:, i]] for i, f in enumerate(factors)) + noise * rng.standard_normal((n, d)) + 5.0
    return x, c


def test_conformance(hub):
    check_plugin("compositional-geometry")


def test_planted_orthogonal_factorisation():
    x, c = _planted()
    res = G.analyse(x, c)
    assert res["r2"] > 0.98 and res["r2_lstsq"] > 0.98
    assert res["min_angle"] > 80 and res["cross_abs_cos"] < 0.1
    assert res["k95"] == [2, 3, 1] and res["max_rank"] == [2, 3, 1]


def test_entangled_code_and_shared_subspace_differ():
    rng = np.random.default_rng(1)
    c = np.column_stack([rng.integers(0, 4, 1000), rng.integers(0, 4, 1000)])
    table = rng.standard_normal((16, 32))  # one random vector per combination: no additive structure
    x = table[c[:, 0] * 4 + c[:, 1]] + 0.05 * rng.standard_normal((1000, 32))
    assert G.analyse(x, c)["r2"] < 0.55
    xs, cs = _planted(sizes=(3, 3), orthogonal=False)  # both concepts in the same 2-d plane
    assert G.analyse(xs, cs)["min_angle"] < 5 and G.analyse(xs, cs)["r2"] > 0.9


def test_rank_correlation():
    assert G.rank_correlation([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert G.rank_correlation([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert G.rank_correlation([1, 2, 2, 3], [1, 2, 3, 4]) == pytest.approx(0.9486832980505138)
    with pytest.raises(ValueError, match="equal length >= 3"):
        G.rank_correlation([1, 2], [1, 2])


def test_validation_names_the_requirement():
    x, c = _planted(n=50)
    with pytest.raises(ValueError, match=r"\(N, k\)"):
        G.analyse(x, c[:10])
    with pytest.raises(ValueError, match="NaN"):
        G.analyse(np.where(np.arange(50)[:, None] == 3, np.nan, x), c)
    with pytest.raises(ValueError, match="single value"):
        G.analyse(x, np.column_stack([c[:, 0], np.zeros(50, int)]))
    with pytest.raises(ValueError, match="sizes="):
        zoo.analyze("linear-factorization", {"h": x}, labels=np.arange(50) % 6)
    with pytest.raises(ValueError, match="concept labels"):
        zoo.analyze("linear-factorization", {"h": x})


def test_tool_on_raw_arrays_and_through_a_model(tmp_path, capsys):
    x, c = _planted()
    res = zoo.analyze("linear-factorization", {"h": x}, labels=c, out_dir=str(tmp_path))
    assert res["layers"]["h"]["r2"] > 0.98 and (tmp_path / "factor_spectra.png").exists()
    lab = c[:, 0] * 8 + c[:, 1] * 2 + c[:, 2]  # mixed radix (3, 4, 2)
    res2 = zoo.analyze("linear-factorization", {"h": x}, labels=lab, sizes="3,4,2")["layers"]["h"]
    assert res2["r2"] == pytest.approx(res["layers"]["h"]["r2"])
    from zoo_task_digits.task import probe_data

    xd, yd = probe_data(200)
    out = zoo.analyze("linear-factorization", zoo.create("gelu_mlp_digits"), inputs=xd, labels=yd,
                      layers=["output"], sizes=[2, 5])["layers"]["output"]
    assert out["n_concepts"] == 2 and 0 <= out["r2"] <= 1
    import json

    from zoo.cli import main

    capsys.readouterr()
    assert main(["analyze", "linear-factorization", "gelu_mlp_digits", "--layers", "output", "--n", "100",
                 "--tool-arg", "sizes=2,5"]) == 0
    cli = json.loads(capsys.readouterr().out)["result"]["layers"]["output"]
    assert cli["n"] == 100 and cli["max_rank"] == [1, 4]


def test_quick_reproduction_runs_and_beats_shuffled():
    from zoo.claims import run_claim
    from zoo_compositional_geometry.reproduce import REPRODUCTION

    rows = run_claim(REPRODUCTION, quick=True).rows
    assert rows["geometry"]["r2"]["mean"] > rows["shuffled"]["r2"]["mean"] + 0.3
    assert -1 <= rows["correlation"]["spearman_r2"]["mean"] <= 1
