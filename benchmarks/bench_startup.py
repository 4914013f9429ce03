"""Start-up: ``import zoo`` and ``zoo list`` as whole processes, against a bare interpreter and timm.

Every side is a fresh process (spawn to exit, with its peak RSS and CPU time); the sides are interleaved
round by round in a rotating order so that load changes on the machine hit all of them alike. timm's
listing costs seconds (it imports torch), so it runs in fewer rounds than the others.

Every side runs in the temporary work folder, so that ``python -c`` imports the installed zoo, not the
source checkout. ``console_wrapper`` is what pip's generated ``zoo`` script runs before any zoo code
(``import re`` and one ``re.sub``), so the part of ``zoo list`` that zoo owns is the gap between that side
and ``zoo_list``. One more process, ``python -X importtime zoo list``, records which modules the listing
imported: with the listing cache warm, neither importlib.metadata nor pluggy nor any plugin (the fast path).
"""
from __future__ import annotations

import logging

from common import DEAD_ENDPOINT, PYTHON, ZOO_BIN, check, hub_env, median, paired, run_process, summary

log = logging.getLogger("bench.startup")

SIDES = {
    "bare": [PYTHON, "-c", "pass"],
    "console_wrapper": [PYTHON, "-c", r"import re, sys; sys.argv[0] = re.sub(r'(-script\.pyw|\.exe)?$', '', sys.argv[0])"],
    "import_zoo": [PYTHON, "-c", "import zoo"],
    "zoo_list": [ZOO_BIN, "list"],
    "timm_list": [PYTHON, "-c", "import timm; timm.list_models()"],
}


def run(work, rounds: int = 16, timm_rounds: int = 4) -> dict:
    env = hub_env(work, DEAD_ENDPOINT, zoo_cache="zoo-cache-startup")
    for name, cmd in SIDES.items():  # warm-up: page cache, bytecode, zoo's listing cache (timm: too slow to repeat)
        if name != "timm_list":
            check(run_process(cmd, env, cwd=work), f"warm-up of {name}")
    times: dict[str, list[float]] = {k: [] for k in SIDES}
    timm_pairs: list[tuple[float, float]] = []  # (timm, zoo list) of the rounds that ran timm
    rss: dict[str, list[float]] = {k: [] for k in SIDES}
    cpu: dict[str, list[float]] = {k: [] for k in SIDES}
    every = max(1, rounds // max(1, timm_rounds))
    n_models = None
    for r in range(rounds):
        names = [n for n in SIDES if n != "timm_list" or (r % every == 0 and len(times["timm_list"]) < timm_rounds)]
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            res = check(run_process(SIDES[name], env, cwd=work), name)
            times[name].append(res.seconds)
            rss[name].append(res.peak_rss_mb)
            cpu[name].append(res.cpu_s)
            if name == "zoo_list":
                n_models = len(res.stdout.split())
        if "timm_list" in names:
            timm_pairs.append((times["timm_list"][-1], times["zoo_list"][-1]))
        log.info("startup round %d/%d done", r + 1, rounds)
    out = {"sides": {n: {"cmd": SIDES[n], "time": summary(times[n]), "rss": summary(rss[n]), "cpu": summary(cpu[n])}
                     for n in SIDES},
           "zoo_list_models": n_models}
    med = {n: out["sides"][n]["time"]["median"] for n in SIDES}
    out["import_over_bare_ms"] = 1000 * (med["import_zoo"] - med["bare"])
    out["timm_over_zoo_list"] = med["timm_list"] / med["zoo_list"]
    out["import_over_bare_ms_paired"] = 1000 * paired(times["import_zoo"], times["bare"], lambda x, y: x - y)
    out["timm_over_zoo_list_paired"] = paired([t for t, _ in timm_pairs], [z for _, z in timm_pairs])
    cpu_med = {n: out["sides"][n]["cpu"]["median"] for n in SIDES}
    out["import_over_bare_cpu_ms"] = 1000 * (cpu_med["import_zoo"] - cpu_med["bare"])
    out["timm_over_zoo_list_cpu"] = cpu_med["timm_list"] / cpu_med["zoo_list"]
    # the start-up target: `zoo list` within 2x a bare interpreter's start, in CPU time (paired per round)
    out["zoo_list_over_bare_cpu_paired"] = paired(cpu["zoo_list"], cpu["bare"])
    out["zoo_list_over_bare_cpu"] = cpu_med["zoo_list"] / cpu_med["bare"]
    out["wrapper_over_bare_cpu_paired"] = paired(cpu["console_wrapper"], cpu["bare"])
    out["zoo_own_cpu_ms"] = 1000 * median([z - w for z, w in zip(cpu["zoo_list"], cpu["console_wrapper"], strict=True)])
    out["zoo_list_imports"] = _imports(env, work)
    return out


def _imports(env: dict, work) -> dict:
    """Which costly modules one warm `zoo list` imported (python -X importtime): importlib.metadata, pluggy, email and
    zoo.specs belong to discovery's slow path; json and logging to whatever else imports them (the CLI)."""
    res = check(run_process([PYTHON, "-X", "importtime", ZOO_BIN, "list"], env, cwd=work), "zoo list under -X importtime")
    modules = {line.rsplit("|", 1)[-1].strip() for line in res.stderr.splitlines() if line.startswith("import time:")}
    slow = ("importlib.metadata", "pluggy", "email", "zoo.specs", "json", "logging")
    return {"modules": len(modules), "costly_modules": sorted(m for m in slow if m in modules),
            "plugins_imported": sorted(m for m in modules if m.startswith("zoo_") and m.endswith(".plugin"))}
