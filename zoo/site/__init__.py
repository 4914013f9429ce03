"""The static catalogue site: ``zoo site build DIR`` renders registry.yaml and the leaderboards as HTML.

Pages: ``index.html`` (paper families, status counts, a filter and search over every paper),
``papers/<id>.html`` (one per paper of registry.yaml, planned and theory ones included),
``tasks/<name>.html`` (protocol, leaderboard, plots) and ``models/<name>.html`` (defaults, weights, the
``zoo.create`` line). Every link is relative and nothing is fetched at view time, so the folder works from
``file://`` and from ``python -m http.server``. The builder reads data only: registry.yaml, the leaderboard
files and the installed plugins' torch-free specs (``plugin.py``); it never imports torch or model code.

A leaderboard file, ``leaderboards/<task>.yaml`` next to registry.yaml (written by ``zoo bench TASK``)::

    task: image_fit                      # the task's name (defaults to the file's stem)
    protocol: {steps: 300, seeds: [0, 1, 2]}   # the settings every model ran under (free-form mapping)
    command: zoo bench image_fit          # the command line that produced it
    versions: {zoo-core: 0.3.0, torch: 2.14.1}
    date: 2026-12-02
    primary: psnr                         # optional: the metric plotted (default: the first one of the rows)
    higher_is_better: {psnr: true}        # optional: per metric, for the plot titles
    rows:
    - model: siren                        # a model name (linked to its page when it has one)
      params: 66049
      seconds: 12.5                       # wall time of the model's runs
      metrics:
        psnr: {mean: 30.1, std: 0.4, interval: [29.4, 30.8], n: 3}   # or a plain number

A task without a leaderboard file shows the reproduction rows recorded in registry.yaml by the plugins that
use it. Example::

    from zoo.site import build_site
    pages = build_site("site")   # from ./registry.yaml; open site/index.html
"""
from __future__ import annotations

import logging
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from .source import builder_arguments

log = logging.getLogger(__name__)

__all__ = ["build_site", "load_leaderboards", "slug"]

HERE = Path(__file__).resolve().parent
MARKER = ".zoo-site"  # written into every built folder: a rebuild only ever clears a folder that has it
STATUS_ORDER = ("reproduced", "inconclusive", "not-reproduced", "plugin", "catalogue", "partial", "planned", "theory")


def slug(name: str) -> str:
    """A file name for an id (ids are already kebab- or snake-case; anything else is made safe).

    >>> slug("poly-inr"), slug("../a b")
    ('poly-inr', 'a-b-3f08b214')
    """
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "x"
    if safe == name:
        return name
    import hashlib

    return f"{safe}-{hashlib.sha1(name.encode()).hexdigest()[:8]}"


def load_leaderboards(folder: str | Path | None) -> dict[str, dict[str, Any]]:
    """Task name -> leaderboard (the schema in this module's docstring); a missing folder gives ``{}``."""
    out: dict[str, dict[str, Any]] = {}
    if folder is None or not Path(folder).is_dir():
        return out
    for path in sorted(Path(folder).glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if not isinstance(data, dict) or not isinstance(data.get("rows", []), list):
            raise ValueError(f"{path}: a leaderboard is a mapping with a 'rows' list (see `zoo.site`'s docstring)")
        data.setdefault("task", path.stem)
        data["rows"] = [_leaderboard_row(r, path) for r in data.get("rows") or []]
        data["source"] = path.name
        out[str(data["task"])] = data
    return out


def _stat(value: Any) -> dict[str, Any]:
    """A metric cell: mean, std, interval (lo, hi) or None, n, from a mapping or a plain number."""
    if isinstance(value, dict):
        interval = value.get("interval", value.get("ci95"))
        return {"mean": value.get("mean"), "std": value.get("std"), "n": value.get("n"),
                "interval": tuple(interval) if interval else None}
    return {"mean": value, "std": None, "n": None, "interval": None}


def _leaderboard_row(row: Any, path: Path) -> dict[str, Any]:
    if not isinstance(row, dict) or "model" not in row:
        raise ValueError(f"{path}: each row needs a 'model' (got {row!r})")
    metrics = {str(k): _stat(v) for k, v in (row.get("metrics") or {}).items()}
    return {"model": str(row["model"]), "params": row.get("params"), "seconds": row.get("seconds"), "metrics": metrics}


def _spec_data(name: str, cat: Any) -> dict[str, Any] | None:
    """What the installed plugin's (torch-free) ModelSpec says about a model, or None when not installed."""
    if cat is None or name not in cat.models:
        return None
    spec, plugin_id = cat.models[name]
    paper = spec.paper
    return {
        "plugin_id": plugin_id, "builder": spec.builder, "description": spec.description, "license": spec.license,
        "defaults": dict(spec.defaults), "default_tag": spec.pretrained_tag, "arguments": builder_arguments(spec.builder),
        "paper": None if paper is None else {"title": paper.title, "year": paper.year, "arxiv": paper.arxiv,
                                             "url": paper.url, "code": paper.code},
        "weights": {tag: {"repo": w.repo, "revision": w.revision, "pinned": w.pinned, "files": dict(w.files),
                          "source": w.source, "recipe": w.recipe, "metrics": dict(w.metrics),
                          "description": w.description, "snapshot": w.snapshot}
                    for tag, w in spec.weights.items()},
    }


def _check_metrics(repro: dict[str, Any]) -> list[str]:
    """The row metrics a claim's checks compare (the others are diagnostics)."""
    statements = " ".join(c.get("check", "") for c in repro.get("checks", []))
    rows = repro.get("rows") or {}
    names = sorted({m for ms in rows.values() for m in ms if m in statements})
    return names or sorted({m for ms in rows.values() for m in ms})


def _collect(data: dict[str, Any], leaderboards: dict[str, dict[str, Any]], cat: Any) -> dict[str, Any]:
    """Every page's data, from the registry, the leaderboards and the installed specs."""
    papers = data.get("papers") or []
    models: dict[str, dict[str, Any]] = {}
    tasks: dict[str, dict[str, Any]] = {}
    for p in papers:
        p["slug"] = slug(str(p["id"]))
        p["plugin_id"] = p.get("plugin", p["id"])
        p["check_metrics"] = _check_metrics(p["reproduction"]) if p.get("reproduction") else []
        for name, m in (p.get("models") or {}).items():
            pretrained = {k.partition(".")[2]: v for k, v in (p.get("pretrained") or {}).items()
                          if k.partition(".")[0] == name and "." in k}
            models[name] = {"name": name, "slug": slug(name), "task": m.get("task"), "tags": m.get("tags") or [],
                            "paper": p, "spec": _spec_data(name, cat), "pretrained": pretrained}
    task_names = {t for p in papers for t in p.get("tasks") or []} | set(leaderboards)
    task_names |= {m["task"] for m in models.values() if m["task"]}
    if cat is not None:
        task_names |= set(cat.tasks)
    for name in sorted(task_names):
        spec = cat.tasks[name][0] if cat is not None and name in cat.tasks else None
        status = cat.statuses.get(cat.tasks[name][1]) if spec is not None else None
        users = [p for p in papers if name in (p.get("tasks") or [])]
        tasks[name] = {
            "name": name, "slug": slug(name), "papers": users,
            "description": spec.description if spec else "", "contract": spec.contract if spec else None,
            "baselines": list(spec.baselines) if spec else [],
            "distribution": status.dist if status is not None else None,
            "models": sorted(m for m, v in models.items() if v["task"] == name),
            "leaderboard": leaderboards.get(name),
            "recorded": _recorded_rows(name, users),
            "recorded_protocol": _recorded_protocol(name, users),
        }
    return {"papers": papers, "models": models, "tasks": tasks}


def _recorded_rows(task: str, users: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The reproduction rows of the task's plugins, one line per (plugin, row, metric a check uses)."""
    out = []
    for p in users:
        repro = p.get("reproduction") or {}
        for row, ms in (repro.get("rows") or {}).items():
            for metric in p["check_metrics"]:
                if metric in ms:
                    out.append({"paper": p, "row": row, "metric": metric, **_stat(ms[metric])})
    return out


def _recorded_protocol(task: str, users: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The settings of the latest recorded reproduction run on the task (its data, optimiser, budget, metrics)."""
    runs = [p for p in users if ((p.get("reproduction") or {}).get("settings") or {}).get("task") == task]
    if not runs:
        return None
    latest = max(runs, key=lambda p: str(p["reproduction"].get("date", "")))
    return {"paper": latest, "date": latest["reproduction"].get("date"), "settings": latest["reproduction"]["settings"]}


def _plots(task: dict[str, Any], folder: Path) -> list[dict[str, str]]:
    """SVG plots of a leaderboard's primary metric against parameters and against time (matplotlib, at build)."""
    board = task["leaderboard"]
    if not board or not board["rows"]:
        return []
    metric = board.get("primary") or next((m for r in board["rows"] for m in r["metrics"]), None)
    if metric is None:
        return []
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # the site extra brings matplotlib; without it the page has the table only
        log.warning("matplotlib is not installed: no plots for %s (pip install 'zoo-core[site]')", task["name"])
        return []
    plots = []
    for axis, label in (("params", "parameters"), ("seconds", "seconds")):
        points = [(r[axis], r["metrics"][metric], r["model"]) for r in board["rows"]
                  if isinstance(r.get(axis), (int, float)) and metric in r["metrics"]
                  and isinstance(r["metrics"][metric]["mean"], (int, float))]
        if not points:
            continue
        fig, ax = plt.subplots(figsize=(5.5, 3.6))
        for x, s, model in points:
            lo, hi = s["interval"] or (s["mean"], s["mean"])
            ax.errorbar([x], [s["mean"]], yerr=[[s["mean"] - lo], [hi - s["mean"]]], fmt="o", capsize=3)
            ax.annotate(model, (x, s["mean"]), textcoords="offset points", xytext=(4, 4), fontsize=8)
        ax.set_xscale("log" if min(p[0] for p in points) > 0 else "linear")
        ax.set_xlabel(label)
        better = (board.get("higher_is_better") or {}).get(metric)
        ax.set_ylabel(metric + ("" if better is None else (" (higher is better)" if better else " (lower is better)")))
        ax.grid(alpha=0.3)
        fig.tight_layout()
        name = f"{task['slug']}-{axis}.svg"
        fig.savefig(folder / name, format="svg", metadata={"Date": None})  # no timestamp: rebuilds are identical
        plt.close(fig)
        plots.append({"file": name, "title": f"{metric} vs {label}"})
    return plots


def _prepare(out: Path) -> None:
    """Create ``out``, or clear a previous build in it; never clear a folder the builder did not make."""
    if out.exists() and any(out.iterdir()) and not (out / MARKER).exists():
        raise FileExistsError(f"{out} is not empty and is not a zoo site: pass a new or empty folder to `zoo site build`")
    for sub in ("papers", "tasks", "models", "static", "plots"):
        shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("built by `zoo site build`; the next build clears this folder's pages\n", encoding="utf-8")


def _env() -> Any:
    import jinja2

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = _num
    env.filters["yaml"] = lambda v: yaml.safe_dump(v, sort_keys=False, allow_unicode=True, width=100).strip()
    env.filters["status_slug"] = lambda s: str(s).replace(" ", "-")
    return env


def _num(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return "" if x is None else str(x)
    if x != x or abs(x) == float("inf"):
        return str(x)
    if float(x).is_integer() and abs(x) < 1e12:  # counts (parameters, steps) in full, not as 2.026e+05
        return str(int(x))
    return f"{x:.4g}"


def build_site(out_dir: str | Path, registry: str | Path = "registry.yaml", leaderboards: str | Path | None = None,
               installed: bool = True) -> list[Path]:
    """Render the catalogue into ``out_dir``; returns the HTML pages written.

    Args:
        out_dir: a new or empty folder, or one a previous build made (its pages are replaced).
        registry: the registry.yaml to render.
        leaderboards: the folder of ``<task>.yaml`` leaderboards (default: ``leaderboards/`` next to the registry).
        installed: enrich pages with the installed plugins' specs (defaults, weights, task protocols).
    """
    registry = Path(registry)
    data = yaml.safe_load(registry.read_text(encoding="utf-8")) or {}
    boards = load_leaderboards(registry.resolve().parent / "leaderboards" if leaderboards is None else leaderboards)
    cat = None
    if installed:
        from .. import registry as zoo_registry

        cat = zoo_registry.catalog()
    site = _collect(data, boards, cat)
    out = Path(out_dir)
    _prepare(out)
    for sub in ("papers", "tasks", "models", "plots"):
        (out / sub).mkdir()
    shutil.copytree(HERE / "static", out / "static")
    env = _env()
    counts = Counter(str(p["status"]) for p in site["papers"])
    statuses = [s for s in STATUS_ORDER if s in counts] + sorted(set(counts) - set(STATUS_ORDER))
    families: dict[str, Counter] = {}
    for p in site["papers"]:
        families.setdefault(str(p.get("family", "OTHER")), Counter())[str(p["status"])] += 1
    common = {"site": site, "statuses": statuses, "counts": counts}
    written = []

    def render(template: str, path: str, root: str, **kw: Any) -> None:
        target = out / path
        target.write_text(env.get_template(template).render(root=root, **common, **kw), encoding="utf-8")
        written.append(target)

    render("index.html", "index.html", "", families=dict(sorted(families.items())),
           tasks_of_papers=sorted({t for p in site["papers"] for t in p.get("tasks") or []}))
    for p in site["papers"]:
        peers = {t: [q for q in site["tasks"][t]["papers"] if q is not p] for t in p.get("tasks") or []}
        render("paper.html", f"papers/{p['slug']}.html", "../", paper=p, peers=peers)
    for t in site["tasks"].values():
        render("task.html", f"tasks/{t['slug']}.html", "../", task=t, plots=_plots(t, out / "plots"))
    for m in site["models"].values():
        render("model.html", f"models/{m['slug']}.html", "../", model=m)
    return written
