"""Every ``>>>`` example in the core and in each installed plugin package runs (doctest).

The modules are imported by name, as installed (editable here, from site-packages on CI), which is why
this is a test and not pytest's ``--doctest-modules`` over the source folders.
"""
from __future__ import annotations

import doctest
import importlib
import pkgutil
from importlib import metadata

import pytest

from zoo.discovery import ENTRY_POINT_GROUP

SKIP = {"zoo.hubserver.__main__"}  # running it starts a server


def _packages() -> list[str]:
    names = {"zoo"}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        top = ep.value.split(":")[0].split(".")[0]
        if top != "zoo_bench":  # the benchmarks' generated plugins, when installed
            names.add(top)
    return sorted(names)


def _modules() -> list[str]:
    out = []
    for name in _packages():
        pkg = importlib.import_module(name)
        out.append(name)
        for info in pkgutil.walk_packages(pkg.__path__, prefix=name + "."):
            if info.name not in SKIP:
                out.append(info.name)
    return out


@pytest.mark.parametrize("module", _modules())
def test_examples(module: str) -> None:
    mod = importlib.import_module(module)
    finder, runner = doctest.DocTestFinder(exclude_empty=True), doctest.DocTestRunner(verbose=False)
    for test in finder.find(mod, module):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} docstring examples failed in {module} (output above)"
