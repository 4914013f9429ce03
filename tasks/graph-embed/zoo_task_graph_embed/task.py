"""``graph_embed``: node embeddings of real graphs and hierarchies that ship offline.

Contract: ``model(node_ids: (B,) long) -> (B, d)`` embeddings; ``model.fit(graph, *, epochs, seed)``
trains on a :class:`GraphData` and returns figures; ``model.embeddings() -> (N, d)``; a model with
``distance(i, j) -> (B,)`` (hyperbolic models) is ranked with it instead of Euclidean distance.

Two protocols (``evaluate(protocol=...)``; default: ``model.graph_protocol``, else "reconstruction"
for models with ``distance`` and "link" otherwise):

* **link** (node2vec, Grover & Leskovec 2016, §4.4): a networkx graph (:data:`GRAPHS`); a seeded
  split removes ``test_frac`` of the edges at random while a random spanning tree keeps the residual
  graph connected; negatives are as many non-adjacent pairs. The model is fit on the residual graph;
  edge features are the Hadamard product of the endpoints' embeddings, a logistic regression is
  trained on residual edges vs train negatives, and ``auc`` is its ROC-AUC on held-out edges vs test
  negatives (``auc_inner``: the plain inner product). Baselines: common neighbours, Jaccard,
  Adamic-Adar, preferential attachment (scores on the residual graph: :func:`heuristic_auc`) and a
  spectral embedding (``build_baseline("spectral")``: eigenvectors of the normalized Laplacian, same
  features and classifier) of the model's dimension, at most N // 4: on these small graphs the
  higher eigenvectors are noise.
* **reconstruction** (Poincaré embeddings, Nickel & Kiela 2017, §4.1): the transitive closure of a
  hierarchy (:func:`load_hierarchy`); the model is fit on every closure pair (u, v); each v is ranked
  by d(u, v) among all v' with (u, v') not in the closure (u itself excluded): ``mean_rank`` and
  ``map``. Baseline: the spectral embedding of the undirected closure at the same dimension.

:func:`describe` lists these settings as :func:`evaluate` runs them.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch
from torch import nn

from zoo.task import Result

log = logging.getLogger(__name__)

NAME = "graph_embed"
GRAPHS = ("karate", "les_miserables", "florentine", "davis")
HIERARCHIES = ("mammal", "synthetic")
PROTOCOLS = ("link", "reconstruction")
HEURISTICS = ("common_neighbours", "jaccard", "adamic_adar", "preferential_attachment")
LINK_BASELINES = (*HEURISTICS, "spectral")
LINK_SPECTRAL_CAP = 4  # link protocol: the spectral baseline gets at most N // 4 eigenvectors
CLASSIFIER_MAX_ITER = 2000  # link_auc's logistic regression
WORDNET_PACKAGE = "wordnet-base"  # Debian: apt-get install -y --no-install-recommends wordnet-base
# The authors' mammal filter (poincare-embeddings wordnet/mammals_filter.txt) is applied with
# pandas str.match, i.e. anchored at the start of "id1 id2": only its two "^" entries ever match.
MAMMAL_DROP_HYPONYMS = ("tusker.n.01", "female_mammal.n.01")


@dataclass(frozen=True)
class GraphData:
    """What a model is fit on: ``edges`` (E, 2) int64 node ids in [0, num_nodes)."""

    edges: np.ndarray
    num_nodes: int
    names: tuple[str, ...]
    directed: bool = False
    name: str = ""


@dataclass(frozen=True)
class LinkSplit:
    """A seeded link-prediction split: residual (train) edges, held-out edges and negatives."""

    train_pos: np.ndarray
    train_neg: np.ndarray
    test_pos: np.ndarray
    test_neg: np.ndarray
    num_nodes: int


def load_graph(name: str = "les_miserables") -> tuple[np.ndarray, int, list[str]]:
    """A real graph bundled with networkx, as unique undirected edges ``(u < v)``.

    ``karate`` (34 nodes, 78 edges), ``les_miserables`` (77, 254), ``florentine`` (15, 20),
    ``davis`` (32, 89, bipartite women/events). Edge weights are dropped.

    >>> edges, n, names = load_graph("karate")
    >>> edges.shape, n
    ((78, 2), 34)
    """
    import networkx as nx

    makers = {"karate": nx.karate_club_graph, "les_miserables": nx.les_miserables_graph,
              "florentine": nx.florentine_families_graph, "davis": nx.davis_southern_women_graph}
    if name not in makers:
        raise ValueError(f"unknown graph {name!r}; choose from {', '.join(GRAPHS)}")
    g = makers[name]()
    names = [str(v) for v in g.nodes()]
    index = {v: i for i, v in enumerate(g.nodes())}
    pairs = {tuple(sorted((index[a], index[b]))) for a, b in g.edges() if a != b}
    return np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2), len(names), names


def load_hierarchy(name: str = "mammal", *, branching: int = 4, depth: int = 5) -> tuple[np.ndarray, int, list[str]]:
    """Transitive closure of a hierarchy as directed ``(hyponym, ancestor)`` edges.

    ``mammal``: the WordNet 3.0 noun closure under ``mammal.n.01`` built as in the Poincaré paper's
    code (hypernym and instance-hypernym closure, both ends under mammal, the authors' filter), read
    from the Debian ``wordnet-base`` files (``$WNSEARCHDIR`` or ``/usr/share/wordnet``). When they are
    missing it logs a warning and falls back to ``synthetic``: a balanced tree with ``branching``
    children per node and ``depth`` levels below the root (4, 5: 1365 nodes, 6372 pairs).

    >>> edges, n, names = load_hierarchy("synthetic", branching=2, depth=2)
    >>> n, len(edges)
    (7, 10)
    """
    if name not in HIERARCHIES:
        raise ValueError(f"unknown hierarchy {name!r}; choose from {', '.join(HIERARCHIES)}")
    if name == "mammal":
        folder = wordnet_dir()
        if folder is not None:
            return _mammal_closure(str(folder))
        log.warning("WordNet files not found (install the Debian package %s); using the synthetic tree "
                    "(branching %d, depth %d) instead of the mammal closure", WORDNET_PACKAGE, branching, depth)
    return _tree_closure(branching, depth)


def wordnet_dir() -> Path | None:
    """The folder holding WordNet's ``data.noun`` and ``index.noun``, or None."""
    for cand in (os.environ.get("WNSEARCHDIR"), "/usr/share/wordnet"):
        if cand and (Path(cand) / "data.noun").is_file() and (Path(cand) / "index.noun").is_file():
            return Path(cand)
    return None


def _tree_closure(branching: int, depth: int) -> tuple[np.ndarray, int, list[str]]:
    parent = [-1]
    level = [0]
    for d in range(1, depth + 1):
        first = len(parent) - branching ** (d - 1)
        for p in range(first, first + branching ** (d - 1)):
            parent += [p] * branching
            level += [d] * branching
    edges = []
    for v in range(len(parent)):
        a = parent[v]
        while a >= 0:
            edges.append((v, a))
            a = parent[a]
    return np.array(edges, dtype=np.int64).reshape(-1, 2), len(parent), [f"t{i}" for i in range(len(parent))]


@functools.lru_cache(maxsize=2)
def _mammal_closure(folder: str) -> tuple[np.ndarray, int, list[str]]:
    parents: dict[str, list[str]] = {}
    first_word: dict[str, str] = {}
    with open(Path(folder) / "data.noun", encoding="latin-1") as f:
        for line in f:
            if line.startswith(" "):  # licence header
                continue
            fields = line.split(" | ")[0].split()
            n_words = int(fields[3], 16)
            first_word[fields[0]] = fields[4].lower()
            at = 4 + 2 * n_words
            ptrs = fields[at + 1: at + 1 + 4 * int(fields[at])]
            parents[fields[0]] = [ptrs[i + 1] for i in range(0, len(ptrs), 4)
                                  if ptrs[i] in ("@", "@i") and ptrs[i + 2] == "n"]
    sense: dict[tuple[str, str], int] = {}
    with open(Path(folder) / "index.noun", encoding="latin-1") as f:
        for line in f:
            if line.startswith(" "):
                continue
            fields = line.split()
            offsets = fields[-int(fields[2]):]
            for k, off in enumerate(offsets):
                sense[(fields[0], off)] = k + 1

    def name(off: str) -> str:
        return f"{first_word[off]}.n.{sense.get((first_word[off], off), 1):02d}"

    root = next(off for off, w in first_word.items() if w == "mammal" and name(off) == "mammal.n.01")

    @functools.lru_cache(maxsize=None)
    def ancestors(off: str) -> frozenset:
        out: set[str] = set()
        for p in parents.get(off, ()):
            out.add(p)
            out |= ancestors(p)
        return frozenset(out)

    below = {off for off in parents if root in ancestors(off)}
    keep = below | {root}
    pairs = {(name(u), name(a)) for u in below for a in ancestors(u) if a in keep}
    pairs = {(u, a) for u, a in pairs if u not in MAMMAL_DROP_HYPONYMS}
    names = sorted({x for pair in pairs for x in pair})
    index = {x: i for i, x in enumerate(names)}
    edges = np.array(sorted((index[u], index[a]) for u, a in pairs), dtype=np.int64)
    return edges, len(names), names


def link_split(edges: np.ndarray, test_frac: float = 0.5, seed: int = 0, *, num_nodes: int | None = None) -> LinkSplit:
    """Hold out ``test_frac`` of the edges at random, keeping the residual graph connected.

    A random spanning forest (minimum spanning tree under seeded random weights) is never removed;
    negatives are sampled without replacement from non-adjacent pairs: as many as residual edges
    for training, as many as held-out edges for testing, disjoint.

    >>> s = link_split(load_graph("karate")[0], 0.5, seed=0)
    >>> len(s.test_pos), len(s.train_pos), len(s.test_neg)
    (39, 39, 39)
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import minimum_spanning_tree

    edges = np.asarray(edges, dtype=np.int64)
    n = int(num_nodes if num_nodes is not None else edges.max() + 1)
    rng = np.random.default_rng(seed)
    w = rng.random(len(edges)) + 1e-3
    tree = minimum_spanning_tree(coo_matrix((w, (edges[:, 0], edges[:, 1])), shape=(n, n))).tocoo()
    key = np.minimum(edges[:, 0], edges[:, 1]) * n + np.maximum(edges[:, 0], edges[:, 1])
    tr, tc = tree.row.astype(np.int64), tree.col.astype(np.int64)
    free = np.flatnonzero(~np.isin(key, np.minimum(tr, tc) * n + np.maximum(tr, tc)))
    n_test = int(round(test_frac * len(edges)))
    if n_test > len(free):
        log.warning("only %d edges can be held out without disconnecting the graph (asked %d)", len(free), n_test)
        n_test = len(free)
    test = np.sort(rng.choice(free, size=n_test, replace=False)) if n_test else np.zeros(0, dtype=np.int64)
    mask = np.ones(len(edges), dtype=bool)
    mask[test] = False
    iu, ju = np.triu_indices(n, k=1)
    non_edge = ~np.isin(iu * n + ju, key)
    cand = np.stack([iu[non_edge], ju[non_edge]], 1)
    n_neg = int(mask.sum()) + n_test
    if n_neg > len(cand):
        raise ValueError(f"the graph has {len(cand)} non-adjacent pairs, fewer than the {n_neg} negatives needed")
    neg = cand[rng.choice(len(cand), size=n_neg, replace=False)]
    return LinkSplit(train_pos=edges[mask], train_neg=neg[n_test:], test_pos=edges[test], test_neg=neg[:n_test],
                     num_nodes=n)


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
    ``ValueError`` pointing to :func:`heuristic_auc`, which scores them on a ``LinkSplit`` (and
    ``evaluate`` reports them in ``Result.baselines``). A pair-scoring object was the alternative;
    it would have had to fake the model contract for the one number ``heuristic_auc`` returns.

    >>> s = build_baseline("spectral", data=GraphData(load_graph("karate")[0], 34, ()), dim=4)
    >>> tuple(s.embeddings().shape)
    (34, 4)
    """
    if name in HEURISTICS:
        raise ValueError(f"{NAME}: {name!r} is a link heuristic that scores node pairs, not a model; score it "
                         f"with heuristic_auc(link_split(...), [{name!r}]) (evaluate reports it in Result.baselines)")
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
    return rebuild(num_nodes=num_nodes)


def _fit(model: nn.Module, data: GraphData, train_model: bool, seed: int, fit_kw: dict) -> dict[str, float]:
    if not train_model:
        return {}
    return model.fit(data, seed=seed, **fit_kw)


def _link(model: nn.Module, graph: str, test_frac: float, seed: int, baselines: list[str], train_model: bool,
          fit_kw: dict, rebuild: Callable[..., nn.Module] | None) -> tuple[nn.Module, dict, dict, dict, int]:
    edges, n, names = load_graph(graph)
    split = link_split(edges, test_frac, seed, num_nodes=n)
    model = _sized(model, n, rebuild)
    residual = GraphData(split.train_pos, n, tuple(names), False, graph)
    fig = _fit(model, residual, train_model, seed, fit_kw)
    emb = model.embeddings()
    train = {"train_pos": split.train_pos, "train_neg": split.train_neg}
    metrics = {**fig, "auc": link_auc(emb, split.test_pos, split.test_neg, **train),
               "auc_inner": link_auc(emb, split.test_pos, split.test_neg)}
    base = {k: {"auc": v} for k, v in heuristic_auc(split, [h for h in HEURISTICS if h in baselines]).items()}
    if "spectral" in baselines:
        dim = min(int(emb.shape[1]), max(2, n // LINK_SPECTRAL_CAP))
        s = build_baseline("spectral", data=residual, seed=seed, dim=dim).embeddings()
        base["spectral"] = {"auc": link_auc(s, split.test_pos, split.test_neg, **train),
                            "auc_inner": link_auc(s, split.test_pos, split.test_neg)}
    config = {"graph": graph, "test_frac": test_frac, "test_edges": len(split.test_pos)}
    return model, metrics, base, config, len(split.test_pos) + len(split.test_neg)


def evaluate(model: nn.Module, *, steps: int | None = None, budget_s: float | None = None, seed: int = 0,
             protocol: str | None = None, graph: str = "les_miserables", hierarchy: str = "mammal",
             test_frac: float = 0.5, baselines: list[str] | None = None, train_model: bool | None = None,
             rebuild: Callable[..., nn.Module] | None = None, **fit_kw: Any) -> Result:
    """Fit ``model`` (``steps`` = epochs) and score it next to the task's baselines (module docstring).

    ``train_model`` defaults to True unless the model carries pretrained weights (then they must
    have been trained on this protocol's training graph).

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
        model, metrics, base, config, count = _link(model, graph, test_frac, seed, baselines, train_model, fit_kw, rebuild)
    elif protocol == "reconstruction":
        edges, n, names = load_hierarchy(hierarchy)
        closure = GraphData(edges, n, tuple(names), True, hierarchy)
        model = _sized(model, n, rebuild)
        fig = _fit(model, closure, train_model, seed, fit_kw)
        dist = getattr(model, "distance", None)
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
    link = {"graph": opt["graph"], "graphs": list(GRAPHS), "test_frac": opt["test_frac"],
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
