from pathlib import Path

import pytest

import zoo
from zoo.registry import parse_model_name

from .helpers import run_py, run_zoo


@pytest.mark.parametrize("name, expected", [
    ("mrl_digits_cnn", ("zoo", "mrl_digits_cnn", None)),
    ("mrl_digits_cnn.digits", ("zoo", "mrl_digits_cnn", "digits")),
    ("hf-hub:org/repo", ("hf-hub", "org/repo", None)),
    ("hf-hub:org/repo@v1.0", ("hf-hub", "org/repo", "v1.0")),
    ("local-dir:/tmp/x", ("local-dir", "/tmp/x", None)),
    ("local-dir:C:\\models\\x", ("local-dir", "C:\\models\\x", None)),
])
def test_parse_model_name(name, expected):
    assert parse_model_name(name) == expected


@pytest.mark.parametrize("name, message", [
    ("", "non-empty"),
    ("org/repo", "hf-hub:org/repo"),
    ("hf-hub:justname", "hf-hub:org/name"),
    ("hf-hub:../etc/passwd", "hf-hub:org/name"),
    ("s3:bucket/x", "unknown source prefix"),
])
def test_parse_model_name_errors(name, message):
    with pytest.raises(zoo.ModelNotFound, match=message.replace("(", r"\(")):
        parse_model_name(name)


def test_unknown_name_suggests():
    with pytest.raises(zoo.ModelNotFound, match="did you mean 'fixture_mlp'"):
        zoo.create("fixture_mpl")


def test_unknown_tag_lists_tags():
    with pytest.raises(zoo.ModelNotFound, match="its tags: digits"):
        zoo.create("fixture_mlp.imagenet")


def test_catalogued_but_not_installed_gives_pip_line(monkeypatch):
    import zoo.registry as reg

    entry = {"id": "ghost", "title": "Ghost nets", "distribution": "zoo-ghost", "path": "plugins/ghost",
             "status": "plugin", "models": {"ghost_net": {}}}
    monkeypatch.setattr(reg, "_known_papers", lambda: {"ghost_net": entry, "ghost": entry})
    with pytest.raises(zoo.PluginNotInstalled, match=r"pip install zoo-ghost .*pip install ./plugins/ghost"):
        zoo.create("ghost_net")


def test_planned_paper_says_no_plugin_yet():
    import yaml

    papers = yaml.safe_load((Path(__file__).parents[1] / "registry.yaml").read_text())["papers"]
    planned = [p["id"] for p in papers if p["status"] == "planned"]
    if not planned:
        pytest.skip("every paper has a plugin or a theory entry")
    with pytest.raises(zoo.ModelNotFound, match="no plugin ships it yet"):
        zoo.create(planned[0])


def test_overrides_checked_against_signature():
    with pytest.raises(TypeError, match="unknown argument.*'hiden'.*valid arguments: hidden, act, extra"):
        zoo.create("fixture_mlp", hiden=3)
    assert zoo.create("fixture_mlp", hidden=3).zoo.model_args["hidden"] == 3


def test_list_models_filters():
    assert "fixture_mlp" in zoo.list_models("fixture_*")
    assert zoo.list_models("fixture_*", pretrained=True) == ["fixture_mlp.digits"]
    assert set(zoo.list_models(plugin="fixture")) == {"fixture_fixed_projection", "fixture_mlp", "fixture_tied"}
    assert "fixture_tied" in zoo.list_models(task="digits_classify")
    assert zoo.list_models(task="no_such_task") == []


def test_info_is_data():
    info = zoo.info("fixture_mlp")
    assert info["plugin"] == "fixture" and info["distribution"] == "zoo-fixture"
    assert info["weights"]["digits"]["pinned"] is False


def test_import_and_list_do_not_import_torch():
    r = run_py("import zoo, sys; zoo.list_models(); zoo.info('fixture_mlp'); zoo.plugins(); "
               "assert 'torch' not in sys.modules, 'torch imported'; "
               "bad = [m for m in sys.modules if m.startswith('zoo_') and m.split('.')[-1] in ('model', 'reproduce', 'train')]; "
               "assert not bad, f'plugin model code imported: {bad}'")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("command", [["list"], ["list", "--json"], ["info", "fixture_mlp"], ["plugins"]])
def test_cli_listing_does_not_import_torch(command):
    r = run_py(f"import sys; from zoo.cli import main; rc = main({command!r}); "
               "assert 'torch' not in sys.modules; sys.exit(rc)")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()


def test_registry_yaml_is_fresh():
    r = run_zoo("registry", "check")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]


def test_registry_lists_all_papers():
    import yaml

    from zoo.registry import registry_path

    data = yaml.safe_load(registry_path().read_text())
    papers = data["papers"]
    assert len(papers) == 120
    assert {p["status"] for p in papers} <= {"planned", "plugin", "reproduced", "not-reproduced", "inconclusive", "theory",
                                                "catalogue", "partial"}
    assert all(p.get("reason") for p in papers if p["status"] in ("theory", "partial"))


def test_a_plugin_that_states_no_claim_is_a_catalogue_without_a_verdict():
    """A survey's plugin (activation-catalog) ships functions but no claim: no 'reproduced' status can stand."""
    from pathlib import Path

    from zoo import registry_file

    data = registry_file.build(Path(__file__).resolve().parent.parent / "registry.yaml")
    entry = next(p for p in data["papers"] if p.get("plugin", p["id"]) == "activation-catalog")
    assert entry["status"] == "catalogue" and "reproduction" not in entry


def test_a_claim_is_measured_or_says_why_not():
    from zoo.specs import ClaimSpec

    assert ClaimSpec(plugin="p", claim="c", not_measured="the graphs come from an unpinned search").reproduce == ""
    with pytest.raises(ValueError, match="not_measured takes the reason"):
        ClaimSpec(plugin="p", claim="c", reproduce="pkg.mod:CLAIM", not_measured="why")
    with pytest.raises(ValueError, match="not_measured takes the reason"):
        ClaimSpec(plugin="p", claim="c", not_measured="  ")
    with pytest.raises(ValueError):
        ClaimSpec(plugin="p", claim="c")  # neither a reproduce entry point nor a reason
