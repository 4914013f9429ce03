"""Scale with plugin count: ``zoo list`` and ``zoo.create`` with 1, 10, 100, 300 and 1,000 installed plugins.

The plugins are real installed distributions (``genplugins``: dist-info + package, byte-compiled)
in one folder on PYTHONPATH, on top of whatever the venv already has installed. Each measurement is
a whole process, cold (an empty ZOO_CACHE_DIR per run, so every plugin.py is imported and the
listing cache is written) and warm (the cache filled by an earlier run); plugin counts are
interleaved within each round.

Per process: wall time and peak RSS (``wait4``), plus, reported by the process itself, the time
from its first line to the end of the listing or create (no interpreter start-up) and its RSS at
exit. The growth check uses those two: a transient peak early in start-up hides small growth in
peak RSS, and interpreter start-up adds noise to the wall time.

Discovery alone (``registry.reload()`` with the listing cache warm) is also timed repeatedly inside one
process per count: the warm per-plugin cost is ~0.1-0.4 ms, too small for whole processes to resolve at
300 plugins on a loaded machine.

The generated sites are kept between runs in ``<tmp>/zoo-bench-plugins-<hash of genplugins.py>``:
writing and deleting ~20,000 small files takes minutes on a loaded machine (``run.py --clean`` removes them).
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import shutil
import tempfile
from pathlib import Path

from common import BENCH, DEAD_ENDPOINT, PYTHON, check, hub_env, run_process, summary
from genplugins import make_trivial_plugins, trivial_model_name

log = logging.getLogger("bench.scale")

COUNTS = (1, 10, 100, 300, 1000)
KINDS = ("list_cold", "list_warm", "create_cold", "create_warm")

# The body of the `zoo` console script (`from zoo.cli import main; sys.exit(main())`), timed from inside.
_REPORT = ("t = time.perf_counter() - t0\n"
           "rss = next((int(x.split()[1]) / 1024 for x in open('/proc/self/status') if x.startswith('VmRSS:')), 0.0)\n"
           "print('ZOO_BENCH ' + json.dumps({'inproc_s': t, 'rss_exit_mb': rss}), file=sys.stderr)\n")
_START = "import time; t0 = time.perf_counter()\nimport json, sys\n"
LIST = _START + "from zoo.cli import main\nrc = main(['list'])\n" + _REPORT + "sys.exit(rc)\n"
CREATE = _START + "import zoo\nzoo.create(NAME)\n" + _REPORT
# Discovery alone, repeated in one process with the listing cache warm: the low-noise view of the per-plugin cost.
DISCOVER = ("import json, sys, time\nfrom zoo import registry\nregistry.catalog()\nts = []\n"
            "for _ in range(REPS):\n    t0 = time.perf_counter()\n    registry.reload()\n"
            "    ts.append(time.perf_counter() - t0)\n"
            "print('ZOO_BENCH ' + json.dumps({'times': ts}), file=sys.stderr)\n")


def commands(n: int) -> dict[str, list[str]]:
    create = [PYTHON, "-c", CREATE.replace("NAME", repr(trivial_model_name(n - 1)))]
    return {"list_cold": [PYTHON, "-c", LIST], "list_warm": [PYTHON, "-c", LIST],
            "create_cold": create, "create_warm": create}


def display_commands(n: int) -> dict[str, str]:
    return {"list": "python -c \"from zoo.cli import main; main(['list'])\"",
            "create": f"python -c \"import zoo; zoo.create('{trivial_model_name(n - 1)}')\"",
            "discovery (warm)": "python -c \"from zoo import registry; registry.catalog(); "
                                "[registry.reload() for _ in range(8)]\"  (each reload timed)"}


def generated_root() -> Path:
    tag = hashlib.sha256((BENCH / "genplugins.py").read_bytes()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"zoo-bench-plugins-{tag}"


def sites_for(counts) -> dict[int, Path]:
    """One site folder per count, generated once and reused while genplugins.py is unchanged."""
    root = generated_root()
    sites = {}
    for n in counts:
        site = root / f"site-{n}"
        if not (site / ".complete").exists():
            shutil.rmtree(site, ignore_errors=True)
            make_trivial_plugins(site, n)
            (site / ".complete").write_text(str(n))
        sites[n] = site
    return sites


def clean_generated() -> None:
    for old in Path(tempfile.gettempdir()).glob("zoo-bench-plugins-*"):
        shutil.rmtree(old, ignore_errors=True)


def growth(values: dict[int, float]) -> dict:
    """Growth of the cost above the 1-plugin baseline, d(N) = cost(N) - cost(1).

    ``exponent``: least-squares slope of log d(N) against log(N - 1) over N = 100, 300, 1,000, i.e. k in
    d ~ N^k (1 = linear, 2 = quadratic); points with d <= 0 (below the noise) are left out, and with fewer
    than two points left it is NaN (no measurable growth). ``exponent_a_1000``: the same from two points.
    ``marginal_ratio``: the cost of each plugin from 300 to 1,000 over the cost of each from 1 to 300; the
    verdict, as it uses the two largest increments: 1 for linear growth, ~1.2 for N log N, ~4.3 for N^2.
    Per-plugin slopes are x1000 (s -> ms, MB -> kB).
    """
    base = values[1]
    early, late = (values[300] - base) / 299, (values[1000] - values[300]) / 700
    marginal = late / early if early > 0 else float("nan")
    out = {"per_plugin_10_100_x1000": 1000 * (values[100] - values[10]) / 90,
           "per_plugin_100_1000_x1000": 1000 * (values[1000] - values[100]) / 900, "marginal_ratio": marginal}
    for a in (100, 300):
        da, db = values[a] - base, values[1000] - base
        out[f"exponent_{a}_1000"] = math.log(db / da) / math.log(999 / (a - 1)) if da > 0 and db > 0 else float("nan")
    pts = [(math.log(n - 1), math.log(values[n] - base)) for n in (100, 300, 1000) if values[n] - base > 0]
    if len(pts) >= 2:
        mx = sum(x for x, _ in pts) / len(pts)
        my = sum(y for _, y in pts) / len(pts)
        out["exponent"] = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x, _ in pts)
    else:
        out["exponent"] = float("nan")
    return out


def _inner(res) -> dict:
    for line in reversed(res.stderr.splitlines()):
        if line.startswith("ZOO_BENCH "):
            return json.loads(line[len("ZOO_BENCH "):])
    raise RuntimeError(f"no ZOO_BENCH line from the child:\n{res.stderr[-2000:]}")


def run(work: Path, cold_rounds: int = 4, warm_rounds: int = 9, discovery_rounds: int = 2, discovery_reps: int = 8,
        counts=COUNTS) -> dict:
    sites = sites_for(counts)
    log.info("plugin sites ready in %s", generated_root())

    def env_for(n: int, zoo_cache: str) -> dict:
        return hub_env(work, DEAD_ENDPOINT, zoo_cache=zoo_cache, pythonpath=[sites[n]])

    warm_env = {n: env_for(n, f"scale/zoo-cache-warm-{n}") for n in counts}
    listed = {}
    for n in counts:  # fill the warm caches; also checks that the N plugins are listed
        res = check(run_process(commands(n)["list_warm"], warm_env[n]), f"zoo list with {n} plugins")
        names = set(res.stdout.split())
        missing = [m for m in (trivial_model_name(i) for i in range(n)) if m not in names]
        if missing:
            raise RuntimeError(f"zoo list with {n} plugins misses {missing[:5]}: {res.stderr[-2000:]}")
        listed[n] = len(names)
        check(run_process(commands(n)["create_warm"], warm_env[n]), f"create with {n} plugins")

    metrics = ("wall", "cpu", "peak_rss", "inproc", "rss_exit")
    data = {k: {m: {n: [] for n in counts} for m in metrics} for k in KINDS}
    for r in range(max(cold_rounds, warm_rounds)):
        for n in counts:
            for kind, cmd in commands(n).items():
                cold = kind.endswith("cold")
                if r >= (cold_rounds if cold else warm_rounds):
                    continue
                env = env_for(n, tempfile.mkdtemp(prefix=f"zc-{n}-", dir=work / "scale")) if cold else warm_env[n]
                res = check(run_process(cmd, env), f"{kind} with {n} plugins")
                inner = _inner(res)
                d = data[kind]
                d["wall"][n].append(res.seconds)
                d["cpu"][n].append(res.cpu_s)
                d["peak_rss"][n].append(res.peak_rss_mb)
                d["inproc"][n].append(inner["inproc_s"])
                d["rss_exit"][n].append(inner["rss_exit_mb"])
        log.info("scale round %d done", r + 1)
    disc: dict[int, list[float]] = {n: [] for n in counts}
    for _ in range(discovery_rounds):
        for n in counts:
            res = check(run_process([PYTHON, "-c", DISCOVER.replace("REPS", str(discovery_reps))], warm_env[n]),
                        f"repeated discovery with {n} plugins")
            disc[n] += _inner(res)["times"]
    log.info("repeated discovery done")
    out: dict = {"counts": list(counts), "listed_models": listed, "commands": display_commands(1000),
                 "rounds": {"cold": cold_rounds, "warm": warm_rounds, "discovery": [discovery_rounds, discovery_reps]},
                 "kinds": {}}
    out["discovery_warm"] = {"time": {n: summary(disc[n]) for n in counts}}
    if set(COUNTS) <= set(counts):
        out["discovery_warm"]["time_growth"] = growth({n: out["discovery_warm"]["time"][n]["median"] for n in counts})
    for kind in KINDS:
        entry = {m: {n: summary(data[kind][m][n]) for n in counts} for m in metrics}
        if set(COUNTS) <= set(counts):
            for m in metrics:
                entry[f"{m}_growth"] = growth({n: entry[m][n]["median"] for n in counts})
        out["kinds"][kind] = entry
    return out
