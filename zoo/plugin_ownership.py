"""Which code a plugin may name: only the top-level packages its own distribution installs.

A plugin's entry point and every ``"module:attr"`` in its specs (builders, recipes, converters, task functions,
reproductions) must lie in the packages its distribution's RECORD lists (``zoo`` for zoo-core alone), for cached
specs as for fresh ones; so an entry point pointing into another distribution cannot take over its names or run
its code. Used by ``zoo.discovery``.
"""
from __future__ import annotations

import os


def hook_kinds() -> tuple[tuple[str, type], ...]:
    """Each hook's name and the spec class its list must hold."""
    from .specs import ClaimSpec, ModelSpec, TaskSpec, ToolSpec

    return (("zoo_models", ModelSpec), ("zoo_tasks", TaskSpec), ("zoo_claims", ClaimSpec), ("zoo_tools", ToolSpec))


def top_package(target: str) -> str:
    """The top-level package of ``"pkg.mod:attr"`` or ``"pkg.mod"``."""
    return target.split(":", 1)[0].split(".", 1)[0].strip()


def _record_packages(dist_path: str) -> set[str]:
    """Top-level packages and modules a distribution installs: from its RECORD, else its top_level.txt."""
    try:
        with open(os.path.join(dist_path, "RECORD"), "rb") as f:
            lines = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        lines = []
    if any(line.startswith('"') for line in lines):  # a path with a comma in it, quoted as csv quotes it
        import csv

        paths = [row[0] for row in csv.reader(lines) if row]
    else:
        paths = [line.partition(",")[0] for line in lines]
    out: set[str] = set()
    # one pass in C over what may be hundreds of lines, then a look at each distinct first component
    for top, sep in {p.replace("\\", "/").partition("/")[:2] for p in paths}:
        if (not top or top in ("..", ".", "__pycache__") or top.startswith("__editable__")
                or top.endswith((".dist-info", ".data", ".egg-info"))):
            continue  # metadata, scripts outside site-packages, an editable install's finder
        if sep:
            out.add(top)
        elif top.endswith((".py", ".so", ".pyd")):
            out.add(top.partition(".")[0])
    if not out:
        try:
            with open(os.path.join(dist_path, "top_level.txt"), encoding="utf-8", errors="replace") as f:
                out = {line.strip() for line in f if line.strip() and "/" not in line}
        except OSError:
            pass
    return out


def own_packages(dist_path: str | None, dist: str | None, module: str) -> frozenset[str]:
    """The packages a plugin's code targets may point into: those its own distribution installs.

    Known from the dist-info's RECORD (or top_level.txt). A distribution that lists none (hand-made metadata, an
    editable install whose RECORD holds only a .pth) owns its entry point's package alone: then two
    distributions pointing into one package register the same names, and both are refused. ``zoo`` belongs to
    zoo-core only.
    """
    found = _record_packages(dist_path) if dist_path else set()
    if not found:
        found = {top_package(module)}
    if (dist or "").lower().replace("_", "-") != "zoo-core":
        found.discard("zoo")
    return frozenset(found)


_TARGETS = ("builder", "evaluate", "describe", "example_input", "check_output", "reproduce")


def check_targets(specs: list, own: frozenset[str], plugin_id: str, dist: str | None) -> None:
    """Every ``"module:attr"`` a spec names lives in its distribution's own packages (never zoo's, another's)."""
    for spec in specs:
        targets = [getattr(spec, f, None) for f in _TARGETS]
        for w in (getattr(spec, "weights", None) or {}).values():
            targets += [w.recipe, w.converter]
        for target in filter(None, targets):
            if not isinstance(target, str) or top_package(target) not in own:
                raise ValueError(
                    f"{type(spec).__name__} {getattr(spec, 'name', plugin_id)!r} points at {target!r}, outside the "
                    f"plugin's packages ({', '.join(sorted(own))} of distribution {dist or plugin_id}): a plugin's "
                    f"builders, recipes, converters and task functions must live in its own distribution"
                )


def check_found(found: dict, own: frozenset[str], plugin_id: str, dist: str | None) -> None:
    """What one plugin registered (fresh, or read from the cache): right types, no name twice, own code only."""
    if not isinstance(found, dict):
        raise TypeError("a plugin's specs must be a dict of hook name -> list")
    for hook_name, kind in hook_kinds():
        items = found.get(hook_name)
        if not isinstance(items, list):
            raise TypeError(f"hook {hook_name}: expected a list of {kind.__name__}")
        for item in items:
            if not isinstance(item, kind):
                raise TypeError(f"hook {hook_name} returned a {type(item).__name__}, expected {kind.__name__}")
    for hook_name, kind in (("zoo_models", "model"), ("zoo_tasks", "task"), ("zoo_tools", "tool")):
        names = [s.name for s in found[hook_name]]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"{kind} {twice[0]!r} is registered twice by the same plugin")
    for claim in found["zoo_claims"]:
        if claim.plugin != plugin_id:
            raise ValueError(f"plugin {plugin_id} registers a claim for plugin {claim.plugin!r}: a plugin registers "
                             f"only its own claim")
    if len(found["zoo_claims"]) > 1:
        raise ValueError(f"plugin {plugin_id} registers {len(found['zoo_claims'])} claims; one at most")
    check_targets([s for hook, _kind in hook_kinds() for s in found[hook]], own, plugin_id, dist)
