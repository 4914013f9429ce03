"""Plugin discovery: entry points of group ``zoo``, loaded one at a time, each in its own try.

pluggy's ``load_setuptools_entrypoints`` stops at the first plugin that fails to import and
leaves the rest unloaded; here a failing plugin is recorded as ``broken`` with its error and
contributes nothing (registration is atomic per plugin), while every other plugin still works.

Environment:
    ZOO_STRICT_PLUGINS=1    raise ``PluginBroken`` instead of recording the failure
    ZOO_PLUGINS=a,b         load only these plugins (an empty value loads none)
    ZOO_DISABLE_PLUGINS=a,b never load these
"""
from __future__ import annotations

import importlib
import logging
import os
import traceback
from dataclasses import dataclass, field
from importlib import metadata

import pluggy

from . import discovery_cache, hookspecs
from .errors import PluginBroken, PluginCollision
from .specs import ClaimSpec, ModelSpec, PluginStatus, TaskSpec

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "zoo"
_HOOKS = (("zoo_models", ModelSpec), ("zoo_tasks", TaskSpec), ("zoo_claims", ClaimSpec))


@dataclass
class Catalog:
    """Everything the installed plugins registered, keyed by name, with who registered it."""

    models: dict[str, tuple[ModelSpec, str]] = field(default_factory=dict)  # name -> (spec, plugin id)
    tasks: dict[str, tuple[TaskSpec, str]] = field(default_factory=dict)
    claims: dict[str, ClaimSpec] = field(default_factory=dict)  # plugin id -> claim
    statuses: dict[str, PluginStatus] = field(default_factory=dict)


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
    for hook_name, kind in _HOOKS:
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
        error = f"{type(exc).__name__}: {exc}"
        log.warning("zoo plugin %s (%s) is broken: %s", plugin_id, dist, error)
        log.debug("%s", traceback.format_exc())
        if _strict():
            cls = PluginCollision if isinstance(exc, PluginCollision) else PluginBroken
            raise cls(f"plugin {plugin_id!r} ({dist}) failed to load: {error}") from exc
        return PluginStatus(plugin_id, dist, version, "broken", error=error, module=module_name)
    return PluginStatus(plugin_id, dist, version, "ok", models=models, tasks=tasks, module=module_name)


def discover() -> Catalog:
    """Load every installed plugin (task distributions included) allowed by the environment."""
    catalog = Catalog()
    pm = pluggy.PluginManager("zoo")
    pm.add_hookspecs(hookspecs)
    allow = _env_list("ZOO_PLUGINS")
    deny = _env_list("ZOO_DISABLE_PLUGINS") or set()
    use_cache = os.environ.get("ZOO_NO_PLUGIN_CACHE", "") in ("", "0")
    cache = discovery_cache.load() if use_cache else {}
    fresh: dict[tuple, dict] = {}
    for ep in sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
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
        key = discovery_cache.fingerprint(ep) if use_cache else None
        cached = discovery_cache.decode_entry(cache[key]) if key in cache else None
        if cached is not None:
            fresh[key] = cache[key]
        loaded: dict = {}
        catalog.statuses[ep.name] = _load_one(catalog, pm, ep.name, dist, version, ep.value, ep.load,
                                              cached=cached, loaded=loaded)
        if key is not None and cached is None and ep.name in loaded:
            encoded = discovery_cache.encode_entry(loaded[ep.name])
            if encoded is not None:
                fresh[key] = encoded
    if use_cache and not set(fresh) <= set(cache):
        # keep other environments' entries (another PYTHONPATH) while their dist-info still exists
        kept = {k: v for k, v in cache.items() if k not in fresh and os.path.exists(k[2])}
        discovery_cache.save({**kept, **fresh})
    return catalog

