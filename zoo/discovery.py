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

Environment:
    ZOO_STRICT_PLUGINS=1    raise ``PluginBroken`` instead of recording the failure
    ZOO_PLUGINS=a,b         load only these plugins (an empty value loads none)
    ZOO_DISABLE_PLUGINS=a,b never load these
    ZOO_NO_PLUGIN_CACHE=1   neither read nor write the listing cache (always the slow path)
"""
from __future__ import annotations

import os

from . import discovery_cache

TYPE_CHECKING = False  # `zoo list` imports this module: no typing import at run time
if TYPE_CHECKING:
    import pluggy

    from .specs import ModelSpec, PluginStatus, TaskSpec

ENTRY_POINT_GROUP = "zoo"
_HOOK_NAMES = ("zoo_models", "zoo_tasks", "zoo_claims")


def _log():
    import logging  # only when there is something to say: listing from the cache never logs

    return logging.getLogger(__name__)


def _hooks() -> tuple[tuple[str, type], ...]:
    from .specs import ClaimSpec, ModelSpec, TaskSpec

    return (("zoo_models", ModelSpec), ("zoo_tasks", TaskSpec), ("zoo_claims", ClaimSpec))


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
        self._statuses: dict[str, PluginStatus] = {}
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
    def statuses(self) -> dict[str, PluginStatus]:
        """Plugin id -> PluginStatus, in discovery order."""
        if self._pending is not None:
            self._build()
        return self._statuses

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
        """Decode the cached specs (fast path); on any surprise, discover again the slow way."""
        from .specs import PluginStatus

        pending, self._pending = self._pending, None
        try:
            cache = discovery_cache.load() if any(p[4] == "ok" for p in pending) else {}
            for plugin_id, dist, version, module, state, key, _summary in pending:
                if state != "ok":
                    self._statuses[plugin_id] = PluginStatus(plugin_id, dist, version, state, module=module)
                    continue
                found = discovery_cache.decode_entry(cache[key]) if key in cache else None
                if found is None:
                    raise ValueError(f"cached specs of plugin {plugin_id} do not decode")
                models, tasks = _register(self, plugin_id, dist, found)
                self._statuses[plugin_id] = PluginStatus(plugin_id, dist, version, "ok", models=models, tasks=tasks,
                                                         module=module)
        except Exception as exc:  # noqa: BLE001 - a damaged cache only costs the slow path
            _log().debug("listing cache unusable (%s): discovering again", exc)
            fresh = discover(fast=False)
            self._models, self._tasks = fresh._models, fresh._tasks
            self._claims, self._statuses = fresh._claims, fresh._statuses


def _env_list(name: str) -> set[str] | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return {p.strip() for p in value.split(",") if p.strip()}


def _strict() -> bool:
    return os.environ.get("ZOO_STRICT_PLUGINS", "").lower() in ("1", "true", "yes")


def _collect(pm: pluggy.PluginManager, plugin: object, plugin_id: str) -> dict[str, list]:
    """Call this one plugin's hooks and check what they return; raise on anything malformed."""
    out: dict[str, list] = {}
    for hook_name, kind in _hooks():
        items: list = []
        for impl in getattr(pm.hook, hook_name).get_hookimpls():
            if impl.plugin is not plugin:
                continue
            result = impl.function()
            if not isinstance(result, (list, tuple)):
                raise TypeError(f"hook {hook_name} returned {type(result).__name__}, expected a list of {kind.__name__}")
            for item in result:
                if not isinstance(item, kind):
                    raise TypeError(f"hook {hook_name} returned a {type(item).__name__}, expected {kind.__name__}")
            items.extend(result)
        out[hook_name] = items
    return out


def _check_builders(specs: list, package: str, plugin_id: str) -> None:
    """A plugin's builders must live in its own package (or zoo's): a spec cannot point elsewhere."""
    allowed = (package, "zoo")
    for spec in specs:
        targets = [getattr(spec, "builder", None), getattr(spec, "evaluate", None), getattr(spec, "reproduce", None)]
        targets += [w.recipe for w in getattr(spec, "weights", {}).values()]
        targets += [w.converter for w in getattr(spec, "weights", {}).values()]
        for target in filter(None, targets):
            module = target.split(":", 1)[0]
            if module.split(".", 1)[0] not in allowed:
                raise ValueError(
                    f"{type(spec).__name__} {getattr(spec, 'name', plugin_id)!r} points at {target!r}, "
                    f"outside the plugin's package {package!r}"
                )


def _register(catalog: Catalog, plugin_id: str, dist: str | None, found: dict[str, list]) -> tuple[tuple, tuple]:
    """Add one plugin's specs all at once, or nothing if any name collides."""
    models: dict[str, ModelSpec] = {}
    tasks: dict[str, TaskSpec] = {}
    for spec in found["zoo_models"]:
        if spec.name in models:
            raise ValueError(f"model {spec.name!r} is registered twice by the same plugin")
        models[spec.name] = spec
    for spec in found["zoo_tasks"]:
        if spec.name in tasks:
            raise ValueError(f"task {spec.name!r} is registered twice by the same plugin")
        tasks[spec.name] = spec
    for kind, mine, theirs in (("model", models, catalog.models), ("task", tasks, catalog.tasks)):
        for name in mine:
            if name in theirs:
                from .errors import PluginCollision

                other = catalog.statuses[theirs[name][1]]
                raise PluginCollision(
                    f"{kind} name {name!r} is registered by both {other.dist or other.id} and {dist or plugin_id}; "
                    f"uninstall one, or disable it with ZOO_DISABLE_PLUGINS={plugin_id}"
                )
    for name, spec in models.items():
        catalog.models[name] = (spec, plugin_id)
    for name, spec in tasks.items():
        catalog.tasks[name] = (spec, plugin_id)
    for claim in found["zoo_claims"]:
        catalog.claims[claim.plugin] = claim
    return tuple(models), tuple(tasks)


def _load_one(catalog: Catalog, pm: pluggy.PluginManager, plugin_id: str, dist: str | None,
              version: str | None, module_name: str, load, cached: dict | None = None,
              loaded: dict | None = None) -> PluginStatus:
    """Load one plugin (or take its specs from the cache) and register them atomically.

    ``loaded`` receives the specs that were found, for the cache.
    """
    from .specs import PluginStatus

    try:
        if cached is not None:
            found = cached
            models, tasks = _register(catalog, plugin_id, dist, found)
        else:
            plugin = load()
            pm.register(plugin, name=plugin_id)
            try:
                found = _collect(pm, plugin, plugin_id)
                _check_builders([s for items in found.values() for s in items], module_name.split(".")[0], plugin_id)
                models, tasks = _register(catalog, plugin_id, dist, found)
            finally:
                # specs collected: a manager holding every plugin makes each registration scan all earlier ones
                pm.unregister(plugin)
        if loaded is not None:
            loaded[plugin_id] = found
    except Exception as exc:  # noqa: BLE001 - isolation is the point: any plugin error is recorded
        import traceback

        from .errors import PluginBroken, PluginCollision

        error = f"{type(exc).__name__}: {exc}"
        _log().warning("zoo plugin %s (%s) is broken: %s", plugin_id, dist, error)
        _log().debug("%s", traceback.format_exc())
        if _strict():
            cls = PluginCollision if isinstance(exc, PluginCollision) else PluginBroken
            raise cls(f"plugin {plugin_id!r} ({dist}) failed to load: {error}") from exc
        return PluginStatus(plugin_id, dist, version, "broken", error=error, module=module_name)
    return PluginStatus(plugin_id, dist, version, "ok", models=models, tasks=tasks, module=module_name)


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

    import pluggy

    from . import hookspecs
    from .specs import PluginStatus

    catalog = Catalog()
    pm = pluggy.PluginManager("zoo")
    pm.add_hookspecs(hookspecs)
    cache = discovery_cache.load() if use_cache else {}
    eps = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
    fresh: dict[tuple, dict] = {}
    for ep in eps:
        dist, version = discovery_cache.dist_name_version(ep)
        if ep.name in catalog.statuses:
            catalog.statuses[ep.name] = PluginStatus(
                ep.name, dist, version, "broken",
                error=f"plugin id {ep.name!r} is declared by two distributions "
                      f"({catalog.statuses[ep.name].dist} and {dist})", module=ep.value)
            continue
        if (allow is not None and ep.name not in allow) or ep.name in deny:
            catalog.statuses[ep.name] = PluginStatus(ep.name, dist, version, "disabled", module=ep.value)
            continue
        # the cache file is stamped with the core that wrote it (discovery_cache.core_stamp), so under another
        # zoo-core no entry matches and every plugin's zoo-core requirement is checked again
        key = discovery_cache.fingerprint(ep) if use_cache else None
        cached = discovery_cache.decode_entry(cache[key]) if key in cache else None
        if cached is not None:
            fresh[key] = cache[key]
        loaded: dict = {}
        catalog.statuses[ep.name] = _load_one(catalog, pm, ep.name, dist, version, ep.value,
                                              lambda ep=ep: _load_compatible(ep), cached=cached, loaded=loaded)
        if key is not None and cached is None and ep.name in loaded:
            encoded = discovery_cache.encode_entry(loaded[ep.name])
            if encoded is not None:
                fresh[key] = encoded
    if use_cache:
        entries = cache
        if not set(fresh) <= set(cache):
            # keep other environments' entries (another PYTHONPATH) while their dist-info still exists
            kept = {k: v for k, v in cache.items() if k not in fresh and os.path.exists(k[2])}
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
