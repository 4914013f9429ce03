"""Plugin discovery: entry points of group ``zoo``, loaded one at a time, each in its own try.

pluggy's ``load_setuptools_entrypoints`` stops at the first plugin that fails to import and
leaves the rest unloaded; here a failing plugin is recorded as ``broken`` with its error and
contributes nothing (registration is atomic per plugin), while every other plugin still works.

Two paths give the same catalog. The fast one serves ``zoo list``: when every entry point found by
``discovery_cache.scan()`` (a direct read of the dist-info folders on ``sys.path``) has an entry in the
listing cache, the catalog comes from the cache alone, with no import of importlib.metadata, pluggy,
the spec classes or any plugin, and its specs are decoded only when something asks for them. Anything
else (a new, changed, editable or broken plugin, two plugins claiming one name or id, an environment
the scan cannot read exactly, a cache written by another core) takes the slow path: importlib.metadata,
each plugin imported and its hooks called, and the cache rewritten.

What a plugin may do, whichever path: its import and hooks run in a loader thread under a time limit, with
``sys.stdout`` sent to stderr, and anything they raise (``sys.exit()`` and ``KeyboardInterrupt`` included) makes
it broken; only a Ctrl-C received by the main thread while it waits is the user's, and propagates. Its entry
point and every ``"module:attr"`` its specs name (builders, recipes, converters, task functions, reproductions)
must lie in the top-level packages its own distribution installs (its RECORD; ``zoo`` for zoo-core alone), for
cached specs as for fresh ones. A model or task name registered by two plugins, and a plugin id declared by two
distributions, belong to none of them: all sides are broken, whatever the order of the entry points.

Environment:
    ZOO_STRICT_PLUGINS=1    raise ``PluginBroken`` instead of recording the failure
    ZOO_PLUGIN_TIMEOUT=S    seconds one plugin may take to import and answer its hooks (default 5; 0: no limit)
    ZOO_PLUGINS=a,b         load only these plugins (an empty value loads none)
    ZOO_DISABLE_PLUGINS=a,b never load these
    ZOO_NO_PLUGIN_CACHE=1   neither read nor write the listing cache (always the slow path)
"""
from __future__ import annotations

import os

from . import discovery_cache, plugin_guard, plugin_ownership

TYPE_CHECKING = False  # `zoo list` imports this module: no typing import at run time
if TYPE_CHECKING:
    import pluggy

    from .specs import PluginStatus

ENTRY_POINT_GROUP = "zoo"
_HOOK_NAMES = ("zoo_models", "zoo_tasks", "zoo_claims", "zoo_tools")


def _log():
    import logging  # only when there is something to say: listing from the cache never logs

    return logging.getLogger(__name__)


class Catalog:
    """Everything the installed plugins registered, keyed by name, with who registered it.

    ``models`` and ``tasks`` map a name to ``(spec, plugin id)``, ``claims`` a plugin id to its claim, and
    ``statuses`` a plugin id to its ``PluginStatus``. A catalog from the fast path holds only what the cache's
    index says (names, tasks, tags: ``model_index()``, all ``zoo list`` needs) and reads and decodes the cached
    specs on first access to one of these.
    """

    def __init__(self) -> None:
        self._models: dict[str, tuple] = {}
        self._tasks: dict[str, tuple] = {}
        self._claims: dict[str, object] = {}
        self._tools: dict[str, tuple] = {}
        self._statuses: dict[str, PluginStatus] = {}
        self._packages: dict[str, frozenset[str]] = {}
        # fast path: (plugin id, dist, version, module, state, cache key, index summary), built on first access
        self._pending: list[tuple] | None = None

    @property
    def models(self) -> dict[str, tuple]:
        """Model name -> (ModelSpec, plugin id)."""
        if self._pending is not None:
            self._build()
        return self._models

    @property
    def tasks(self) -> dict[str, tuple]:
        """Task name -> (TaskSpec, plugin id)."""
        if self._pending is not None:
            self._build()
        return self._tasks

    @property
    def claims(self) -> dict[str, object]:
        """Plugin id -> ClaimSpec."""
        if self._pending is not None:
            self._build()
        return self._claims

    @property
    def tools(self) -> dict[str, tuple]:
        """Tool name -> (ToolSpec, plugin id)."""
        if self._pending is not None:
            self._build()
        return self._tools

    @property
    def statuses(self) -> dict[str, PluginStatus]:
        """Plugin id -> PluginStatus, in discovery order."""
        if self._pending is not None:
            self._build()
        return self._statuses

    @property
    def packages(self) -> dict[str, frozenset[str]]:
        """Plugin id -> the top-level packages its distribution installs (where its code targets may point)."""
        if self._pending is not None:
            self._build()
        return self._packages

    def owns(self, plugin_id: str, obj: object) -> bool:
        """Whether ``obj`` (a resolved builder, recipe...) is defined in ``plugin_id``'s own packages.

        ``"pkg.mod:attr.path"`` is checked on ``pkg`` at discovery; the attribute path could still reach an object
        imported into that module from elsewhere (``pkg.mod:os.system``): a caller resolving a target asks here.
        """
        module = getattr(obj, "__module__", None)
        return isinstance(module, str) and module.split(".", 1)[0] in self.packages.get(plugin_id, ())

    def model_index(self) -> dict[str, tuple[str, str | None, tuple[str, ...]]]:
        """Model name -> (plugin id, task, weight tags), without decoding specs that are still cached JSON."""
        if self._pending is None:
            return {name: (pid, spec.task, tuple(spec.weights)) for name, (spec, pid) in self._models.items()}
        out = {}
        for plugin_id, _dist, _version, _module, state, _key, summary in self._pending:
            if state == "ok":
                for name, task, tags in summary[0]:
                    out[name] = (plugin_id, task, tuple(tags))
        return out

    def _build(self) -> None:
        """Decode the cached specs (fast path) and check them as fresh ones; on any surprise, discover the slow way."""
        from .specs import PluginStatus

        pending, self._pending = self._pending, None
        try:
            cache = discovery_cache.load() if any(p[4] == "ok" for p in pending) else {}
            loaded = []
            for plugin_id, dist, version, module, state, key, summary in pending:
                self._statuses[plugin_id] = PluginStatus(plugin_id, dist, version, state, module=module)
                if state != "ok":
                    continue
                found = discovery_cache.decode_entry(cache[key]) if key in cache else None
                if found is None:
                    raise ValueError(f"cached specs of plugin {plugin_id} do not decode")
                # the cache is a file: what it says is checked as a fresh plugin's specs are (builders in the
                # plugin's own distribution) and must be what the listing showed
                own = plugin_ownership.own_packages(key[2], dist, module)
                plugin_ownership.check_found(found, own, plugin_id, dist)
                listed = [[[s.name, s.task, list(s.weights)] for s in found["zoo_models"]],
                          [s.name for s in found["zoo_tasks"]]]
                if listed != [[list(m) for m in summary[0]], list(summary[1])]:
                    raise ValueError(f"cached specs of plugin {plugin_id} disagree with the listing index")
                loaded.append((plugin_id, dist, version, module, found, own))
            _settle(self, loaded)
        except Exception as exc:  # noqa: BLE001 - a damaged (or forged) cache only costs the slow path
            _log().debug("listing cache unusable (%s): discovering again", exc)
            fresh = discover(fast=False)
            self._models, self._tasks = fresh._models, fresh._tasks
            self._claims, self._statuses, self._packages = fresh._claims, fresh._statuses, fresh._packages
            self._tools = fresh._tools


def _env_list(name: str) -> set[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return {p.strip() for p in value.split(",") if p.strip()}


def _strict() -> bool:
    return os.environ.get("ZOO_STRICT_PLUGINS", "").lower() in ("1", "true", "yes")


def _import_and_collect(plugin_id: str, load) -> dict[str, list]:
    """Import one plugin and call its hooks, with a plugin manager of its own (run in the loader thread)."""
    import pluggy

    from . import hookspecs

    pm = pluggy.PluginManager("zoo")
    pm.add_hookspecs(hookspecs)
    plugin = load()
    pm.register(plugin, name=plugin_id)
    return _collect(pm, plugin, plugin_id)


def _collect(pm: pluggy.PluginManager, plugin: object, plugin_id: str) -> dict[str, list]:
    """Call this one plugin's hooks and check what they return; raise on anything malformed."""
    out: dict[str, list] = {}
    for hook_name, kind in plugin_ownership.hook_kinds():
        items: list = []
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            if impl.plugin is not plugin:
                continue
            result = impl.function()
            if not isinstance(result, (list, tuple)):
                raise TypeError(f"hook {hook_name} returned {type(result).__name__}, expected a list of {kind.__name__}")
            items.extend(result)
        out[hook_name] = items
    return out


def _names(found: dict) -> list[tuple[str, str]]:
    return ([("model", s.name) for s in found["zoo_models"]] + [("task", s.name) for s in found["zoo_tasks"]]
            + [("tool", s.name) for s in found.get("zoo_tools", ())])


def _register(catalog: Catalog, plugin_id: str, found: dict[str, list]) -> tuple[tuple, tuple, tuple]:
    """Add one plugin's specs (``_settle`` has checked that no other plugin registers any of its names)."""
    models = tuple(s.name for s in found["zoo_models"])
    tasks = tuple(s.name for s in found["zoo_tasks"])
    tools = tuple(s.name for s in found["zoo_tools"])
    for spec in found["zoo_tools"]:
        catalog._tools[spec.name] = (spec, plugin_id)
    for spec in found["zoo_models"]:
        catalog._models[spec.name] = (spec, plugin_id)
    for spec in found["zoo_tasks"]:
        catalog._tasks[spec.name] = (spec, plugin_id)
    for claim in found["zoo_claims"]:
        catalog._claims[claim.plugin] = claim
    return models, tasks, tools


def _broken(plugin_id: str, dist: str | None, version: str | None, module: str | None, exc: BaseException,
            found: dict | None = None):
    """A broken plugin's status (or, under ZOO_STRICT_PLUGINS, its error raised); ``found``: the names it claimed."""
    import traceback

    from .errors import PluginBroken, PluginCollision
    from .specs import PluginStatus

    error = f"{type(exc).__name__}: {exc}"
    _log().warning("zoo plugin %s (%s) is broken: %s", plugin_id, dist, error)
    _log().debug("%s", "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    if _strict():
        cls = PluginCollision if isinstance(exc, PluginCollision) else PluginBroken
        raise cls(f"plugin {plugin_id!r} ({dist}) failed to load: {error}") from exc
    # the names it tried to register, so that asking for one says "broken" and why, not "unknown"
    found = found if isinstance(found, dict) else {}
    models = tuple(n for n in (getattr(s, "name", None) for s in found.get("zoo_models") or ()) if isinstance(n, str))
    tasks = tuple(n for n in (getattr(s, "name", None) for s in found.get("zoo_tasks") or ()) if isinstance(n, str))
    tools = tuple(n for n in (getattr(s, "name", None) for s in found.get("zoo_tools") or ()) if isinstance(n, str))
    return PluginStatus(plugin_id, dist, version, "broken", error=error, module=module, models=models, tasks=tasks,
                        tools=tools)


def _settle(catalog: Catalog, loaded: list[tuple]) -> None:
    """Register every loaded plugin whose names no other plugin registers; refuse all sides of a collision.

    ``loaded`` holds ``(plugin id, dist, version, module, found, own packages)``. A model or task name registered by two
    plugins belongs to neither, whatever the order of their entry points: an unrelated distribution can
    make a name unavailable (with an error naming both), never take it over.
    """
    from .errors import PluginCollision
    from .specs import PluginStatus

    owners: dict[tuple[str, str], list[str]] = {}
    for plugin_id, _dist, _version, _module, found, _own in loaded:
        for name in _names(found):
            owners.setdefault(name, []).append(plugin_id)
    for plugin_id, dist, version, module, found, own in loaded:
        clashes = sorted({name for name in _names(found) if len(owners[name]) > 1})
        if clashes:
            others = sorted({o for name in clashes for o in owners[name] if o != plugin_id})
            who = ", ".join(catalog._statuses[o].dist or o for o in others)
            names = ", ".join(f"{kind} name {name!r}" for kind, name in clashes[:3]) + (" ..." if len(clashes) > 3 else "")
            exc = PluginCollision(f"{names} is registered by both {who} and {dist or plugin_id}; a name two "
                                  f"distributions register belongs to neither: uninstall one, or disable one with "
                                  f"ZOO_DISABLE_PLUGINS={others[0]} or ZOO_DISABLE_PLUGINS={plugin_id}")
            catalog._statuses[plugin_id] = _broken(plugin_id, dist, version, module, exc, found)
            continue
        models, tasks, tools = _register(catalog, plugin_id, found)
        catalog._packages[plugin_id] = own
        catalog._statuses[plugin_id] = PluginStatus(plugin_id, dist, version, "ok", models=models, tasks=tasks,
                                                    module=module, tools=tools)


def _load_one(plugin_id: str, dist: str | None, version: str | None, module_name: str, load,
              own: frozenset[str], cached: dict | None = None) -> tuple[PluginStatus, dict | None]:
    """One plugin's specs (from the cache, already checked, or by importing it under ``plugin_guard.guarded``), not registered.

    Returns its status (``ok`` until ``_settle`` looks for collisions, or ``broken`` with the error) and its specs.
    """
    from .specs import PluginStatus

    found = None
    try:
        if cached is not None:
            found = cached
        else:
            top = plugin_ownership.top_package(module_name)
            if top not in own:
                from .errors import PluginBroken

                raise PluginBroken(
                    f"entry point {plugin_id} = {module_name} points into package {top!r}, which "
                    f"{dist or 'its distribution'} does not install (it installs {', '.join(sorted(own)) or 'nothing'}): "
                    f"an entry point may load only its own distribution's code")
            found = plugin_guard.guarded(plugin_id, dist, lambda: _import_and_collect(plugin_id, load))
            plugin_ownership.check_found(found, own, plugin_id, dist)
    except Exception as exc:  # noqa: BLE001 - isolation is the point: any plugin error is recorded
        return _broken(plugin_id, dist, version, module_name, exc, found), None
    return PluginStatus(plugin_id, dist, version, "ok", module=module_name), found


def _core_mismatch(ep) -> str | None:
    """Why this plugin cannot run on this zoo-core (its ``zoo-core`` requirement excludes it), or None.

    Read from the plugin's METADATA, so only when the listing cache has no entry for its dist-info:
    ``zoo list`` from the cache never pays for it.
    """
    from . import __version__

    dist = getattr(ep, "dist", None)
    try:
        text = dist.read_text("METADATA") if dist is not None else None
    except OSError:
        text = None
    for line in (text or "").split("\n\n", 1)[0].splitlines():
        if not line.lower().startswith("requires-dist:"):
            continue
        value = line.split(":", 1)[1].strip()
        if not value.lower().replace("_", "-").startswith("zoo-core"):
            continue
        from packaging.requirements import InvalidRequirement, Requirement

        try:
            req = Requirement(value)
        except InvalidRequirement:
            return f"unreadable zoo-core requirement {value!r} in its METADATA"
        if req.name.lower().replace("_", "-") != "zoo-core" or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        if not req.specifier.contains(__version__, prereleases=True):
            wanted = ",".join(sorted(map(str, req.specifier), key=lambda s: (s[0] != ">", s)))
            name = getattr(dist, "name", None) or ep.name
            return (f"built for zoo-core {wanted}, this is {__version__}: install a release of {name} built for "
                    f"this core (pip install -U {name}), or a zoo-core it accepts (pip install 'zoo-core{wanted}')")
    return None


def _load_compatible(ep):
    """``ep.load()``, after refusing a plugin built for another zoo-core (recorded as broken, like any failure)."""
    problem = _core_mismatch(ep)
    if problem is not None:
        from .errors import PluginBroken

        raise PluginBroken(problem)
    return ep.load()


def _fast(index: dict, allow: set[str] | None, deny: set[str]) -> Catalog | None:
    """The catalog from the listing cache alone, or None when any plugin needs the slow path."""
    scanned = discovery_cache.scan(ENTRY_POINT_GROUP, index)
    if scanned is None:
        return None
    pending = []
    ids: set[str] = set()
    names: set[tuple[str, str]] = set()
    for name, value, path, mtime, summary in sorted(scanned[0], key=lambda e: e[0]):
        if name in ids:
            return None  # one id from two distributions: the slow path reports it
        ids.add(name)
        dist, version = discovery_cache.name_version(path)
        if (allow is not None and name not in allow) or name in deny:
            pending.append((name, dist, version, value, "disabled", None, None))
            continue
        if summary is None:
            return None  # not cached: a new, reinstalled, editable or broken plugin
        mine = [("model", m[0]) for m in summary[0]] + [("task", t) for t in summary[1]]
        if len(set(mine)) != len(mine) or names.intersection(mine):
            return None  # a name registered twice: the slow path records which plugin is broken
        names.update(mine)
        pending.append((name, dist, version, value, "ok", (name, value, path, mtime), summary))
    catalog = Catalog()
    catalog._pending = pending
    return catalog


def discover(*, fast: bool = True) -> Catalog:
    """Load every installed plugin (task distributions included) allowed by the environment.

    With ``fast`` (the default), take the catalog from the listing cache alone when it covers every plugin.
    """
    allow = _env_list("ZOO_PLUGINS")
    deny = _env_list("ZOO_DISABLE_PLUGINS") or set()
    use_cache = os.environ.get("ZOO_NO_PLUGIN_CACHE", "") in ("", "0")
    index = discovery_cache.load_index() if use_cache else {}
    if fast and index:
        try:
            catalog = _fast(index, allow, deny)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            catalog = None  # an index of the wrong shape (damaged, or hand-edited): rebuilt by the slow path
        if catalog is not None:
            return catalog
    return _slow(index, allow, deny, use_cache)


def _slow(index: dict, allow: set[str] | None, deny: set[str], use_cache: bool) -> Catalog:
    """importlib.metadata's entry points, each plugin loaded (or taken from the cache), the cache rewritten."""
    from importlib import metadata

    import pluggy  # noqa: F401 - imported here, in the main thread, rather than first in a loader thread

    from . import hookspecs  # noqa: F401
    from .specs import PluginStatus

    catalog = Catalog()
    cache = discovery_cache.load() if use_cache else {}
    eps = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    fresh: dict[tuple, dict] = {}
    loaded: dict[str, tuple] = {}
    declared: dict[str, list[str]] = {}
    refused: set[tuple] = set()
    with plugin_guard.Divert():
        for ep in eps:
            dist, version = discovery_cache.dist_name_version(ep)
            declared.setdefault(ep.name, []).append(dist or ep.value)
            if len(declared[ep.name]) > 1:
                # one id, two distributions: neither is loaded, so neither's models can be credited to the other
                loaded.pop(ep.name, None)
                from .errors import PluginCollision

                first = catalog._statuses[ep.name]
                exc = PluginCollision(f"plugin id {ep.name!r} is declared by two distributions "
                                      f"({' and '.join(declared[ep.name])}); uninstall one")
                catalog._statuses[ep.name] = _broken(ep.name, first.dist, first.version, first.module, exc)
                continue
            if (allow is not None and ep.name not in allow) or ep.name in deny:
                catalog._statuses[ep.name] = PluginStatus(ep.name, dist, version, "disabled", module=ep.value)
                continue
            path = getattr(ep.dist, "_path", None)
            own = plugin_ownership.own_packages(str(path) if path is not None else None, dist, ep.value)
            # the cache file is stamped with the core that wrote it (discovery_cache.core_stamp), so under another
            # zoo-core no entry matches and every plugin's zoo-core requirement is checked again
            key = discovery_cache.fingerprint(ep) if use_cache else None
            cached = discovery_cache.decode_entry(cache[key]) if key in cache else None
            if cached is not None:
                try:
                    plugin_ownership.check_found(cached, own, ep.name, dist)
                    fresh[key] = cache[key]
                except (TypeError, ValueError, AttributeError) as exc:
                    _log().debug("cached specs of plugin %s refused (%s): loading it again", ep.name, exc)
                    cached = None
                    refused.add(key)
            status, found = _load_one(ep.name, dist, version, ep.value, lambda ep=ep: _load_compatible(ep), own,
                                      cached=cached)
            catalog._statuses[ep.name] = status
            if found is None:
                continue
            loaded[ep.name] = (ep.name, dist, version, ep.value, found, own)
            if key is not None and cached is None:
                encoded = discovery_cache.encode_entry(found)
                if encoded is not None:
                    fresh[key] = encoded
    _settle(catalog, list(loaded.values()))
    if use_cache:
        entries = cache
        if refused or not set(fresh) <= set(cache) or any(cache[k] is not v for k, v in fresh.items()):
            # keep other environments' entries (another PYTHONPATH) while their dist-info still exists
            kept = {k: v for k, v in cache.items() if k not in fresh and k not in refused and os.path.exists(k[2])}
            entries = {**kept, **fresh}
            discovery_cache.save(entries)
        _save_index(index, entries, eps)
    return catalog


def _save_index(index: dict, entries: dict[tuple, dict], eps: list) -> None:
    """Write the fast path's index, if the scan finds exactly the entry points importlib.metadata found."""
    scanned = discovery_cache.scan(ENTRY_POINT_GROUP, index)
    if scanned is None:
        return
    found, folders = scanned
    expected = sorted((ep.name, ep.value, os.path.abspath(str(getattr(ep.dist, "_path", "")))) for ep in eps)
    if sorted((name, value, path) for name, value, path, _mtime, _summary in found) != expected:
        _log().debug("the dist-info scan disagrees with importlib.metadata: no fast path in this environment")
        return
    # other sys.path folders' records stay while the folder exists (another PYTHONPATH, another test's site)
    merged = {root: records for root, records in index.items() if root not in folders and os.path.isdir(root)}
    merged.update(discovery_cache.index_content(folders, entries))
    if merged != index:
        discovery_cache.save_index(merged)
