"""Name lookup over what the installed plugins registered: listing, info, did-you-mean.

Nothing here imports torch or a plugin's model code; only the plugins' ``plugin.py`` modules
(specs as data) are imported, once per process.
"""
from __future__ import annotations

import functools
import re

from .discovery import Catalog, discover
from .errors import ModelNotFound, PluginBroken, PluginCollision, PluginNotInstalled, TaskNotFound

TYPE_CHECKING = False  # `zoo list` imports this module: no typing, pathlib or spec classes at run time
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from .specs import ClaimSpec, ModelSpec, PluginStatus, TaskSpec, ToolSpec

__all__ = ["catalog", "reload", "list_models", "lookup", "info", "plugins", "task", "claim", "parse_model_name",
           "list_tools", "tool", "tool_info"]

_catalog: Catalog | None = None

# Source prefixes as timm spells them; two or more letters so that "C:\\x" is never a prefix. Patterns, not
# compiled at import: re compiles (and caches) them on first use, which `zoo list` never reaches.
_PREFIX_RE = r"^(?P<prefix>[a-z][a-z0-9-]+):(?P<rest>.+)$"
_HUB_ID_RE = r"^[A-Za-z0-9][\w.\-]*/[A-Za-z0-9][\w.\-]*$"


class _LazyModule:
    """A module imported on its first attribute access: difflib only words error messages."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        import importlib

        return getattr(importlib.import_module(self._name), attr)


difflib = _LazyModule("difflib")


def catalog() -> Catalog:
    """The plugins discovered in this process (loaded on first use)."""
    global _catalog
    if _catalog is None:
        _catalog = discover()
    return _catalog


def reload() -> Catalog:
    """Discover plugins again (after installing one, or changing ZOO_PLUGINS)."""
    global _catalog
    _catalog = None
    _known_papers.cache_clear()
    return catalog()


def parse_model_name(name: str) -> tuple[str, str, str | None]:
    """Split a model name into its source, its identifier and its tag or revision.

    Args:
        name: ``arch``, ``arch.tag``, ``hf-hub:org/repo[@revision]`` or ``local-dir:PATH``.

    Returns:
        ``("zoo", arch, tag_or_None)``, ``("hf-hub", "org/repo", revision_or_None)`` or
        ``("local-dir", path, None)``.

    Raises:
        ModelNotFound: an unknown prefix, an empty name, or a bare ``org/repo`` (which needs ``hf-hub:``).
    """
    if not isinstance(name, str) or not name.strip():
        raise ModelNotFound(f"model name must be a non-empty string, got {name!r}")
    m = re.match(_PREFIX_RE, name)
    if m:
        prefix, rest = m["prefix"], m["rest"]
        if prefix == "hf-hub":
            repo, _, revision = rest.partition("@")
            if not re.match(_HUB_ID_RE, repo):
                raise ModelNotFound(f"{name!r}: expected hf-hub:org/name[@revision]")
            return "hf-hub", repo, revision or None
        if prefix == "local-dir":
            return "local-dir", rest, None
        raise ModelNotFound(f"unknown source prefix {prefix!r} in {name!r}: use 'hf-hub:' or 'local-dir:'")
    if "/" in name or "\\" in name:
        raise ModelNotFound(
            f"{name!r} looks like a repo id or a path: use 'hf-hub:{name}' for a Hub repo "
            f"or 'local-dir:{name}' for a folder"
        )
    arch, _, tag = name.partition(".")
    return "zoo", arch, tag or None


@functools.lru_cache(maxsize=1)
def _known_papers() -> dict[str, dict]:
    """Model name -> registry.yaml plugin entry, for plugins that exist but may not be installed."""
    path = registry_path()
    if path is None:
        return {}
    import yaml  # only on the error path

    data = yaml.safe_load(path.read_text()) or {}
    out: dict[str, dict] = {}
    for entry in data.get("papers", []):
        for model in (entry.get("models") or {}):
            out[model] = entry
        out.setdefault(entry["id"], entry)
    return out


def registry_path() -> Path | None:
    """registry.yaml: shipped inside the package, or at the root of a source checkout."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    for candidate in (here / "registry.yaml", here.parent / "registry.yaml"):
        if candidate.is_file():
            return candidate
    return None


def _not_found(name: str, arch: str) -> Exception:
    cat = catalog()
    for status in cat.statuses.values():
        if status.state == "broken" and (arch in status.models or arch == status.id):
            if (status.error or "").startswith("PluginCollision"):  # the name is contested: say by whom
                return PluginCollision(f"{name!r} cannot be used: {status.error.partition(': ')[2]}")
            return PluginBroken(f"{name!r} comes from plugin {status.id} ({status.dist}), which is broken: {status.error}")
    plugin = cat.statuses.get(arch)
    if plugin is not None and plugin.state == "ok":  # a plugin id, not a model name
        models = ", ".join(plugin.models) or "none"
        return ModelNotFound(f"{name!r} is a plugin ({plugin.dist} {plugin.version}), not a model; its models: {models}")
    entry = _known_papers().get(arch)
    if entry is not None and entry.get("distribution"):
        status = cat.statuses.get(entry["id"])
        if status is not None and status.state == "disabled":
            return PluginNotInstalled(
                f"{name!r} is provided by plugin {entry['id']}, which is disabled by ZOO_PLUGINS/ZOO_DISABLE_PLUGINS"
            )
        return PluginNotInstalled(
            f"{name!r} is provided by plugin {entry['id']} ({entry.get('title', '')}), which is not installed: "
            f"pip install {entry['distribution']}  (from a clone: pip install ./{entry.get('path', 'plugins/' + entry['id'])})"
        )
    if entry is not None:
        return ModelNotFound(
            f"{name!r} is paper {entry['id']} ({entry.get('title', '')}), status {entry.get('status')}: no plugin ships it yet"
        )
    choices = list(cat.models)
    close = difflib.get_close_matches(arch, choices, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "; see `zoo list`"
    return ModelNotFound(f"unknown model {name!r}{hint}")


def lookup(name: str) -> tuple[ModelSpec, str, str | None]:
    """Return ``(spec, plugin_id, tag)`` for ``arch`` or ``arch.tag``; raise with a suggestion if unknown."""
    source, arch, tag = parse_model_name(name)
    if source != "zoo":
        raise ModelNotFound(f"{name!r} is not a registry name (it is a {source} reference)")
    found = catalog().models.get(arch)
    if found is None:
        raise _not_found(name, arch)
    spec, plugin_id = found
    if tag is not None and tag not in spec.weights:
        tags = ", ".join(spec.weights) or "none"
        raise ModelNotFound(f"{arch!r} has no pretrained tag {tag!r}; its tags: {tags}")
    return spec, plugin_id, tag


def list_models(pattern: str | None = None, pretrained: bool = False, task: str | None = None,
                plugin: str | None = None) -> list[str]:
    """Model names, sorted; with ``pretrained=True``, one ``arch.tag`` per pretrained tag.

    >>> import zoo
    >>> zoo.list_models("mrl*", pretrained=True)  # doctest: +SKIP
    ['mrl_digits_cnn.digits']
    """
    if pattern is not None:
        from fnmatch import fnmatchcase
    out = []
    for name, (plugin_id, model_task, tags) in catalog().model_index().items():
        if task is not None and model_task != task:
            continue
        if plugin is not None and plugin_id != plugin:
            continue
        names = [f"{name}.{t}" for t in tags] if pretrained else [name]
        out.extend(n for n in names if pattern is None or fnmatchcase(n, pattern))
    return sorted(out)


def info(name: str) -> dict[str, Any]:
    """Everything zoo knows about a model name, as plain data (no torch import)."""
    spec, plugin_id, tag = lookup(name)
    status = catalog().statuses[plugin_id]
    weights = {
        t: {"repo": w.repo, "revision": w.revision, "pinned": w.pinned, "files": dict(w.files), "source": w.source,
            "recipe": w.recipe, "metrics": dict(w.metrics), "description": w.description, "snapshot": w.snapshot,
            "shipped": _shipped_bytes(w.snapshot)}
        for t, w in spec.weights.items()
    }
    found = catalog().claims.get(plugin_id)
    claim_info = None if found is None else {"claim": found.claim, "task": found.task, "budget_s": found.budget_s,
                                             "command": f"zoo reproduce {plugin_id}"}
    paper = spec.paper
    return {
        "name": spec.name,
        "tag": tag,
        "plugin": plugin_id,
        "distribution": status.dist,
        "version": status.version,
        "builder": spec.builder,
        "task": spec.task,
        "defaults": dict(spec.defaults),
        "description": spec.description,
        "license": spec.license,
        "paper": None if paper is None else {k: getattr(paper, k) for k in ("title", "year", "arxiv", "url", "code", "catalog")},
        "weights": weights,
        "default_tag": spec.pretrained_tag,
        "arguments": builder_arguments(spec.builder),
        "claim": claim_info,
    }


def _shipped_bytes(snapshot: str | None) -> int | None:
    """Size of the weight file a tag's snapshot ships in its installed package, or None when none ships."""
    if snapshot is None:
        return None
    from .weights import snapshot_folder

    folder = snapshot_folder(snapshot)
    try:
        return (folder / "model.safetensors").stat().st_size if folder is not None else None
    except OSError:
        return None


def builder_arguments(target: str) -> list[dict[str, str | None]] | None:
    """The builder's arguments (name, annotation, default) read from its source, without importing it.

    ``None`` when the source cannot be found or parsed (a compiled or dynamically made builder).
    """
    import ast
    import importlib.util

    module, _, attr = target.partition(":")
    try:
        found = importlib.util.find_spec(module)
        source = open(found.origin, encoding="utf-8").read() if found is not None and found.origin else None
        tree = ast.parse(source) if source else None
    except (ImportError, ValueError, OSError, SyntaxError):
        return None
    node = None
    for item in getattr(tree, "body", []):
        if getattr(item, "name", None) == attr.split(".")[0]:
            node = item
    if isinstance(node, ast.ClassDef):
        node = next((f for f in node.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    a = node.args
    positional = [*a.posonlyargs, *a.args]
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(positional, defaults, strict=True)) + list(zip(a.kwonlyargs, a.kw_defaults, strict=True))
    text = lambda n: None if n is None else ast.unparse(n)  # noqa: E731
    return [{"name": arg.arg, "annotation": text(arg.annotation), "default": text(default)}
            for arg, default in pairs if arg.arg not in ("self", "cls")]


def plugins() -> list[PluginStatus]:
    """Every plugin found (the core first), with its state, version, models and error."""
    return list(catalog().statuses.values())


def task(name: str) -> TaskSpec:
    """The task spec registered under ``name``."""
    found = catalog().tasks.get(name)
    if found is None:
        close = difflib.get_close_matches(name, list(catalog().tasks), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known tasks: {', '.join(sorted(catalog().tasks))}"
        raise TaskNotFound(f"unknown task {name!r}{hint}")
    return found[0]


def list_tools(pattern: str | None = None) -> list[str]:
    """Names of the installed analysis tools (``ToolSpec``), sorted; ``pattern`` is a shell-style filter."""
    import fnmatch

    names = sorted(catalog().tools)
    return [n for n in names if pattern is None or fnmatch.fnmatchcase(n, pattern)]


def tool(name: str) -> tuple[ToolSpec, str]:
    """``(ToolSpec, plugin id)`` of an installed tool.

    Raises:
        ToolNotFound: no installed plugin registers it (did-you-mean among the tools).
        PluginBroken, PluginNotInstalled: the plugin that registers it is broken or disabled.
    """
    from .errors import ToolNotFound

    found = catalog().tools.get(name)
    if found is not None:
        return found
    for status in catalog().statuses.values():
        if name in status.tools:  # a broken or disabled plugin still says which tools it would have
            if status.state == "disabled":
                raise PluginNotInstalled(f"tool {name!r}: plugin {status.id} is disabled by ZOO_PLUGINS/ZOO_DISABLE_PLUGINS")
            raise PluginBroken(f"tool {name!r}: plugin {status.id} is {status.state}: {status.error}")
    close = difflib.get_close_matches(name, list(catalog().tools), n=3, cutoff=0.6)
    hint = (f"; did you mean {', '.join(close)}?" if close else
            f"; installed tools: {', '.join(sorted(catalog().tools)) or 'none'} (`zoo list --tools`)")
    if name in catalog().models:
        hint = f"; {name!r} is a model, not a tool: `zoo analyze TOOL {name}` applies a tool to it"
    raise ToolNotFound(f"unknown tool {name!r}{hint}")


def tool_info(name: str) -> dict[str, Any]:
    """Everything zoo knows about a tool, as plain data (no torch import)."""
    spec, plugin_id = tool(name)
    status = catalog().statuses[plugin_id]
    paper = spec.paper
    return {"name": spec.name, "kind": "tool", "plugin": plugin_id, "distribution": status.dist,
            "version": status.version, "function": spec.function, "inputs": spec.inputs, "outputs": spec.outputs,
            "description": spec.description,
            "paper": None if paper is None else {k: getattr(paper, k) for k in ("title", "year", "arxiv", "url", "code",
                                                                                 "catalog")},
            "usage": [f"zoo analyze {spec.name} MODEL [--layers L1,L2] [--out DIR]",
                      f"zoo.analyze({spec.name!r}, zoo.activations(model, inputs, layers=[...]))"]}


def claim(plugin_id: str) -> ClaimSpec:
    """The claim a plugin measures with ``zoo reproduce``.

    Raises:
        ClaimNotFound: no plugin has this id, or it registers no claim (the message suggests ids that have one).
        PluginNotInstalled, PluginBroken: the plugin exists but is not installed, disabled or broken.
    """
    from .errors import ClaimNotFound

    found = catalog().claims.get(plugin_id)
    if found is not None:
        return found
    status = catalog().statuses.get(plugin_id)
    if status is None:
        error = _not_found(plugin_id, plugin_id)
        if not isinstance(error, ModelNotFound):  # catalogued but not installed, or broken: say so
            raise error
        close = difflib.get_close_matches(plugin_id, list(catalog().claims), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "; `zoo plugins` lists the installed ones"
        paper = _known_papers().get(plugin_id)
        if paper is not None:
            raise ClaimNotFound(f"paper {plugin_id!r} has no plugin yet (status {paper.get('status')}), "
                                f"so there is no claim to reproduce{hint}")
        raise ClaimNotFound(f"no installed plugin is called {plugin_id!r}{hint}")
    if status.state == "disabled":
        raise PluginNotInstalled(f"plugin {plugin_id} is disabled by ZOO_PLUGINS/ZOO_DISABLE_PLUGINS")
    if status.state != "ok":
        raise PluginBroken(f"plugin {plugin_id} is {status.state}: {status.error}")
    raise ClaimNotFound(f"plugin {plugin_id} registers no claim to reproduce")


def resolve_target(target: str, plugin_id: str | None = None) -> object:
    """Import ``"module:attr"`` (only ever called on strings from registered specs) and return the object.

    With ``plugin_id``, the object must not be the core's or the standard library's: discovery checks the
    module a target names, and this catches an attribute path that reaches further (``"pkg.mod:os.system"``,
    ``"pkg.mod:zoo.cli.main"``). A function a plugin imports from a distribution it depends on (a shared
    builder from zoo-nn, say) is allowed: plugins are trusted code (SECURITY.md), this only keeps a name
    from pointing at code that was never a model.
    """
    import importlib
    import sys

    module, _, attr = target.partition(":")
    obj: object = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    if plugin_id is not None:
        home = getattr(obj, "__module__", None)
        top = home.split(".", 1)[0] if isinstance(home, str) else None
        if top is None or top in sys.stdlib_module_names or top == "builtins" or (top == "zoo" and plugin_id != "core"):
            raise PluginBroken(f"{target!r} of plugin {plugin_id} resolves to {home or '?'}."
                               f"{getattr(obj, '__qualname__', type(obj).__name__)}, which is not a plugin's code; "
                               "a plugin may name only functions and classes of its own (or of a plugin library it uses)")
    return obj
