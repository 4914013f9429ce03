"""registry.yaml: every catalogued paper, its status, and for plugins what they ship and measured.

``build`` regenerates the file from three sources: the paper fields already in the file (or
imported once from ``CATALOG.md`` with ``--catalog``), the installed plugins and the plugin folders
of the checkout, and the measurements recorded by ``zoo reproduce`` / ``zoo train`` (kept across
builds). ``check`` fails when the file differs from a fresh build.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml

from . import registry
from .fileio import atomic_write_text

CLASS_NAMES = {"A": "model", "B": "method", "C": "tool", "D": "theory"}
_ENTRY_RE = re.compile(r"^### (\d+)\. `([a-z0-9\-]+)` — (.+)$")
_CLASS_RE = re.compile(r"\*\*Class:\*\*\s*([ABCD])\s*·\s*\*\*Family:\*\*\s*([^·]+?)\s*·")
_KEEP = ("reproduction", "pretrained")  # measurements recorded by commands, carried over by build


def parse_catalog(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The paper fields of CATALOG.md: catalog number, id, title, subtitle, class, family."""
    papers: list[dict[str, Any]] = []
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        m = _ENTRY_RE.match(line)
        if not m:
            continue
        entry: dict[str, Any] = {"catalog": int(m[1]), "id": m[2], "title": m[3].strip()}
        for follow in lines[i + 1:i + 8]:
            if follow.startswith("### "):
                break
            if follow.startswith("- **Why D:**"):
                entry["reason"] = follow.split("**Why D:**", 1)[1].strip()
            if follow.startswith("*") and follow.endswith("*") and not follow.startswith("**"):
                entry["summary"] = follow.strip("*").strip()
            c = _CLASS_RE.search(follow)
            if c:
                entry["class"] = CLASS_NAMES[c[1]]
                entry["family"] = c[2].split("(")[0].strip()
        papers.append(entry)
    if not papers:
        raise ValueError(f"{path}: no catalog entries found (expected '### N. `id` — Title' headings)")
    return papers


def _plugin_dirs(root: Path) -> dict[str, Path]:
    out = {}
    for pyproject in sorted((root / "plugins").glob("*/pyproject.toml")):
        out[pyproject.parent.name] = pyproject.parent
    return out


def _plugin_per_paper(base: list[dict], dirs: dict[str, Path], cat) -> dict[str, str]:
    """Paper id -> plugin id: the same id, or a plugin whose models cite the paper's catalog number."""
    by_number = {p["catalog"]: p["id"] for p in base}
    out = {pid: pid for pid in dirs if pid in {p["id"] for p in base}}
    for pid in dirs:
        if pid in out.values():
            continue
        status = cat.statuses.get(pid)
        specs = [cat.models[n][0] for n in (status.models if status else ()) if n in cat.models]
        specs += [cat.tools[n][0] for n in (getattr(status, "tools", ()) if status else ()) if n in cat.tools]
        for spec in specs:
            paper = spec.paper
            if paper is not None and paper.catalog in by_number:
                out[by_number[paper.catalog]] = pid
                break
    return out


def build(path: str | os.PathLike = "registry.yaml", catalog_md: str | os.PathLike | None = None) -> dict[str, Any]:
    """The registry as data (not written): paper fields + installed plugins + recorded results."""
    path = Path(path)
    root = path.resolve().parent
    old = load(path) if path.exists() else {"papers": []}
    old_by_id = {p["id"]: p for p in old.get("papers", [])}
    base = parse_catalog(catalog_md) if catalog_md else [
        {k: p[k] for k in ("catalog", "id", "title", "summary", "class", "family", "reason") if k in p}
        for p in old.get("papers", [])
    ]
    cat = registry.catalog()
    dirs = _plugin_dirs(root)
    plugin_of = _plugin_per_paper(base, dirs, cat)
    papers = []
    for paper in sorted(base, key=lambda p: p["catalog"]):
        entry = dict(paper)
        prev = old_by_id.get(entry["id"], {})
        pid = plugin_of.get(entry["id"], entry["id"])
        status = cat.statuses.get(pid)
        if pid in dirs:
            if pid != entry["id"]:
                entry["plugin"] = pid
            models = {}
            if status is not None and status.state == "ok":
                for name in status.models:
                    spec = cat.models[name][0]
                    models[name] = {"task": spec.task, "tags": list(spec.weights)}
            entry.update({
                "status": "plugin",
                "distribution": f"zoo-{pid}",
                "path": f"plugins/{pid}",
                "models": models,
                "tasks": sorted({m["task"] for m in models.values() if m["task"]}),
            })
            if status is not None and status.state == "ok" and status.tools:
                entry["tools"] = list(status.tools)  # analysis tools (zoo analyze TOOL MODEL)
            if status is None or status.state != "ok":
                entry["install_state"] = "not installed" if status is None else f"{status.state}: {status.error}"
            for key in _KEEP:
                if prev.get(key):
                    entry[key] = prev[key]
            repro = entry.get("reproduction")
            claim = cat.claims.get(pid)
            if status is not None and status.state == "ok" and claim is not None and claim.not_measured is not None:
                # a method that could be pinned down only in part: what ships is exact, the claim is not measured
                entry.pop("reproduction", None)
                entry["status"] = "partial"
                entry["reason"] = claim.not_measured
            elif status is not None and status.state == "ok" and pid not in cat.claims:
                # a catalogue (a survey's functions, say): it ships models or tools but states no claim: no verdict
                entry.pop("reproduction", None)
                entry["status"] = "catalogue"
            elif repro and repro.get("verdict"):  # decided by the claims harness (seeds, intervals, margin)
                entry["status"] = repro["verdict"].replace(" ", "-")
        elif entry.get("class") == "theory":
            entry["status"] = "theory"
            entry.setdefault("reason", "theory, survey or benchmark protocol: no model or method to ship")
        else:
            entry.pop("reason", None)
            entry["status"] = "planned"
        papers.append(entry)
    return {"version": 1, "papers": papers}


def load(path: str | os.PathLike) -> dict[str, Any]:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}


def dump(data: dict[str, Any]) -> str:
    header = ("# Generated by `zoo registry build`; `zoo registry check` fails when it is stale.\n"
              "# Measurements come from `zoo reproduce ID` and `zoo train NAME.TAG` on this project's machines.\n")
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110)


def write(path: str | os.PathLike, data: dict[str, Any]) -> None:
    """Write atomically: a crash never leaves a half-written registry."""
    atomic_write_text(path, dump(data))


README_START, README_END = "<!-- plugins:start -->", "<!-- plugins:end -->"


def plugin_table(data: dict[str, Any]) -> str:
    """The README's plugin list, made from the registry (so the README cannot drift from it)."""
    rows = ["| plugin | paper | models | task | status | last reproduction |", "|---|---|---|---|---|---|"]
    for p in data["papers"]:
        if "path" not in p:
            continue
        models = ", ".join([f"`{m}`" + "".join(f" `.{t}`" for t in v["tags"]) for m, v in p.get("models", {}).items()]
                           + [f"tool `{t}`" for t in p.get("tools", [])])
        repro = p.get("reproduction") or {}
        outcome = _outcome(repro) if repro else ("not measured: the method ships in part (registry.yaml says what is "
                                                 "missing)" if p["status"] == "partial" else "not run")
        outcome = outcome.replace("|", "/").replace("\n", " ")
        plugin = p.get("plugin", p["id"])
        rows.append(f"| [`{plugin}`]({p['path']}) | #{p['catalog']} {p['title']} | {models} | "
                    f"{', '.join(p.get('tasks', [])) or '-'} | {p['status']} | {outcome} |")
    counts: dict[str, int] = {}
    for p in data["papers"]:
        counts[p["status"]] = counts.get(p["status"], 0) + 1
    summary = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    return "\n".join(rows) + f"\n\nAll {len(data['papers'])} catalogued papers: {summary} (see `registry.yaml`).\n"


def _outcome(repro: dict[str, Any]) -> str:
    """One README cell: the harness's verdict and checks, or a record made before the harness."""
    if "verdict" not in repro:
        legacy = "pass" if repro.get("passed") else "fail"
        return f"{legacy}, one run before the claims harness ({repro.get('date')}): {repro.get('summary', '')}"
    checks = "; ".join(f"{c['check']}: {c['mean']:+.3g} [{c['ci95'][0]:.3g}, {c['ci95'][1]:.3g}] {c['verdict']}"
                       for c in repro.get("checks", []))
    return f"{repro['verdict']} ({repro.get('date')}, seeds {repro.get('seeds')}): {checks}"


def task_table() -> str:
    """The README's task list, made from the registered TaskSpecs."""
    rows = ["| task | distribution | what it measures | baselines |", "|---|---|---|---|"]
    cat = registry.catalog()
    for name, (spec, plugin_id) in sorted(cat.tasks.items()):
        status = cat.statuses.get(plugin_id)
        dist = f"`{status.dist}`" if status is not None and status.dist else f"plugin {plugin_id}"
        rows.append(f"| `{name}` | {dist} | {spec.description.replace('|', '/')} | {', '.join(spec.baselines) or '-'} |")
    return "\n".join(rows) + "\n"


def _replace_between(text: str, start: str, end: str, body: str) -> str:
    if start not in text or end not in text:
        return text
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{start}\n{body}{end}{tail}"


def readme_with_table(readme: str, data: dict[str, Any]) -> str:
    readme = _replace_between(readme, README_START, README_END, plugin_table(data))
    return _replace_between(readme, "<!-- tasks:start -->", "<!-- tasks:end -->", task_table())


REPRO_START, REPRO_END = "<!-- reproduction:start -->", "<!-- reproduction:end -->"


def _fmt(x: float) -> str:
    return f"{x:.4g}" if abs(x) != float("inf") else ("inf" if x > 0 else "-inf")


def reproduction_block(repro: dict[str, Any] | None) -> str:
    """A plugin README's section on its latest reproduction, made from its registry.yaml record."""
    head = "### Latest reproduction (generated from registry.yaml by `zoo registry build`)\n\n"
    if not repro:
        return head + "Not run yet: `zoo reproduce <id>`.\n"
    if "verdict" not in repro:
        legacy = "passed" if repro.get("passed") else "failed"
        return head + (f"Not yet rerun on the claims harness. The last record is one run from {repro.get('date')} "
                       f"under the earlier pass/fail rule ({legacy}): {repro.get('summary', '')}\n")
    seeds = repro.get("seeds", [])
    lines = [head + f"**{repro['verdict']}** ({repro.get('date')}, {len(seeds)} seeds {seeds}, "
             f"{repro.get('seconds', 0):.0f} s wall). Each check compares per-seed values (paired by seed) and is "
             "decided by its 95% interval against the margin fixed before the run.", "",
             "| check | mean | 95% interval | verdict |", "|---|---|---|---|"]
    for c in repro.get("checks", []):
        lo, hi = c["ci95"]
        lines.append(f"| `{c['check']}` | {_fmt(c['mean'])} | [{_fmt(lo)}, {_fmt(hi)}] | {c['verdict']} |")
    statements = " ".join(c["check"] for c in repro.get("checks", []))
    rows = repro.get("rows", {})
    metrics = sorted({m for ms in rows.values() for m in ms if m in statements})
    if metrics:
        lines += ["", "Rows, mean ± 95% half-interval over the seeds, for the metrics the checks use:", "",
                  "| row | " + " | ".join(metrics) + " |", "|---|" + "---|" * len(metrics)]
        for row, ms in rows.items():
            cells = []
            for m in metrics:
                s = ms.get(m)
                if s is None:
                    cells.append("")
                    continue
                lo, hi = s["ci95"]
                half = (hi - lo) / 2 if abs(lo) != float("inf") else None
                cells.append(_fmt(s["mean"]) + (f" ± {_fmt(half)}" if half else ""))
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
    if repro.get("notes"):
        lines += ["", f"Notes: {repro['notes']}"]
    return "\n".join(lines) + "\n"


def plugin_readmes(root: Path, data: dict[str, Any]) -> dict[Path, tuple[str, str]]:
    """Each plugin README (path -> (current, with its reproduction section regenerated))."""
    out = {}
    for paper in data["papers"]:
        folder = paper.get("path")
        readme = root / folder / "README.md" if folder else None
        if readme is None or not readme.exists():
            continue
        text = readme.read_text(encoding="utf-8")
        body = reproduction_block(paper.get("reproduction"))
        if REPRO_START in text and REPRO_END in text:
            new = _replace_between(text, REPRO_START, REPRO_END, body)
        else:
            new = text.rstrip("\n") + f"\n\n{REPRO_START}\n{body}{REPRO_END}\n"
        out[readme] = (text, new)
    return out


def sync_readme(path: str | os.PathLike, data: dict[str, Any]) -> None:
    """Regenerate the README's plugin and task tables and each plugin README's reproduction section."""
    root = Path(path).resolve().parent
    readme = root / "README.md"
    if readme.exists():
        text = readme.read_text(encoding="utf-8")
        new = readme_with_table(text, data)
        if new != text:
            readme.write_text(new, encoding="utf-8")
    for plugin_readme, (text, new) in plugin_readmes(root, data).items():
        if new != text:
            atomic_write_text(plugin_readme, new)


def check(path: str | os.PathLike = "registry.yaml") -> list[str]:
    """Differences between the file (and the README's plugin table) and a fresh build (empty when up to date)."""
    import difflib

    path = Path(path)
    if not path.exists():
        return [f"{path} does not exist: run `zoo registry build`"]
    current = path.read_text(encoding="utf-8")
    data = build(path)
    fresh = dump(data)
    diff = list(difflib.unified_diff(current.splitlines(), fresh.splitlines(), "registry.yaml", "fresh build",
                                     lineterm="", n=1))[:60]
    readme = path.resolve().parent / "README.md"
    if readme.exists():
        text = readme.read_text(encoding="utf-8")
        diff += list(difflib.unified_diff(text.splitlines(), readme_with_table(text, data).splitlines(),
                                          "README.md", "fresh plugin table", lineterm="", n=0))[:30]
    for plugin_readme, (text, new) in plugin_readmes(path.resolve().parent, data).items():
        diff += list(difflib.unified_diff(text.splitlines(), new.splitlines(), str(plugin_readme),
                                          "fresh reproduction section", lineterm="", n=0))[:10]
    return diff


def record(path: str | os.PathLike, plugin_id: str, key: str, value: Any) -> None:
    """Store a measurement (``reproduction``, or ``pretrained`` per tag) for a plugin and rebuild.

    Several ``zoo reproduce`` runs may record at once: a lock file serialises the read-modify-write.
    """
    if key not in _KEEP:
        raise ValueError(f"unknown record {key!r}")
    import fcntl

    path = Path(path)
    with open(path.with_name(f".{path.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _record_locked(path, plugin_id, key, value)


def check_recordable(path: str | os.PathLike, plugin_id: str) -> None:
    """Raise ``KeyError`` unless ``path`` has a paper entry for ``plugin_id`` (checked before long runs)."""
    data = load(path)
    if not any(plugin_id in (p["id"], p.get("plugin")) for p in data.get("papers", [])):
        raise KeyError(f"{plugin_id!r} is not a paper in {path}: nothing to record its measurement in")


def _record_locked(path: Path, plugin_id: str, key: str, value: Any) -> None:
    data = load(path)
    for paper in data.get("papers", []):
        if plugin_id in (paper["id"], paper.get("plugin")):
            if key == "pretrained":
                paper.setdefault("pretrained", {}).update(value)
            else:
                paper[key] = value
            break
    else:
        raise KeyError(f"{plugin_id!r} is not a paper in {path}")
    write(path, data)
    fresh = build(path)
    write(path, fresh)
    sync_readme(path, fresh)
