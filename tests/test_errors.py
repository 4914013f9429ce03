"""The error taxonomy: every error zoo raises on purpose is a ZooError in zoo.errors, catchable as the
built-in a caller would expect; the CLI prints those in one line and keeps tracebacks for the rest."""
from typing import Literal

import pytest
import torch

import zoo
import zoo.errors as errors
from zoo.cli import main
from zoo.factory import _check_kwargs
from zoo.specs import ModelSpec

BUILTIN = {  # what a caller who does not know zoo would catch
    "ModelNotFound": KeyError, "PluginNotInstalled": ImportError, "PluginBroken": ImportError,
    "PluginCollision": ImportError, "UnknownArgument": TypeError, "NotAZooModel": TypeError,
    "WeightsNotFound": FileNotFoundError, "WeightsCorrupt": ValueError, "WeightsMismatch": RuntimeError,
    "DownloadFailed": OSError, "PushFailed": OSError, "UnsafeConfig": ValueError, "NotAZooConfig": ValueError,
    "TaskNotFound": KeyError,
    "ClaimNotFound": LookupError, "DeviceUnavailable": RuntimeError,
    "ToolNotFound": KeyError,
}


def test_every_error_is_a_zoo_error_and_its_builtin():
    assert sorted(set(errors.__all__) - {"ZooError"}) == sorted(BUILTIN)
    for name, builtin in BUILTIN.items():
        cls = getattr(errors, name)
        assert cls.__module__ == "zoo.errors"
        assert issubclass(cls, errors.ZooError) and issubclass(cls, builtin), name


def test_every_error_is_exported_from_zoo():
    for name in errors.__all__:
        assert getattr(zoo, name) is getattr(errors, name), name


def test_old_import_paths_still_work():
    from zoo.weights import DownloadFailed, WeightsMismatch

    assert DownloadFailed is errors.DownloadFailed and WeightsMismatch is errors.WeightsMismatch


# ---- UnknownArgument -------------------------------------------------------------------------------

def test_unknown_argument_lists_the_valid_ones():
    with pytest.raises(errors.UnknownArgument, match=r"unknown argument\(s\) \['hiden'\].*valid arguments: hidden, act, extra"):
        zoo.create("fixture_mlp", hiden=3)


@pytest.mark.parametrize("value, expected", [("two", "int, got str"), (2.5, "int, got float"), ([4], None)])
def test_wrong_type_names_argument_value_and_type(value, expected):
    if expected is None:  # not a plain value: left to the builder (nn.Linear refuses it itself)
        with pytest.raises(TypeError) as info:
            zoo.create("fixture_mlp", hidden=value)
        assert not isinstance(info.value, errors.ZooError)
        return
    with pytest.raises(errors.UnknownArgument, match=f"fixture_mlp: argument hidden={value!r} passed to create\\(\\) "
                                                     f"must be {expected}"):
        zoo.create("fixture_mlp", hidden=value)


def _builder(mode: Literal["a", "b"] = "a", width: "int | None" = 8, scale: float = 1.0, flag=False, n=3,
             act: str = None, hidden: "SomeTypeOnlyKnownToCheckers" = 4):  # noqa: F821
    return None


SPEC = ModelSpec(name="probe", builder="zoo.x:y")


@pytest.mark.parametrize("kwargs", [
    {"mode": "b"}, {"width": None}, {"width": 3}, {"scale": 2}, {"scale": 0.5}, {"flag": True}, {"n": 4.0},
    {"act": None}, {"act": "gelu"}, {"act": torch.nn.GELU}, {"hidden": "anything"}, {"width": True},
])
def test_type_check_accepts(kwargs):
    _check_kwargs(SPEC, _builder, kwargs, "here")


@pytest.mark.parametrize("kwargs, message", [
    ({"mode": "c"}, "mode='c' here must be one of 'a', 'b', got str"),
    ({"width": 2.5}, "width=2.5 here must be int or None, got float"),
    ({"scale": "big"}, "scale='big' here must be float, got str"),
    ({"flag": "yes"}, "flag='yes' here must be bool or int, got str"),
    ({"n": "three"}, "n='three' here must be int or float, got str"),
    ({"act": 3}, "act=3 here must be str, got int"),
])
def test_type_check_refuses(kwargs, message):
    with pytest.raises(errors.UnknownArgument, match=message.replace("(", r"\(").replace(")", r"\)")):
        _check_kwargs(SPEC, _builder, kwargs, "here")


# ---- the other new classes ---------------------------------------------------------------------------

def test_saving_a_module_zoo_did_not_create(tmp_path):
    with pytest.raises(errors.NotAZooModel, match=r"not created by zoo.create\(\)"):
        zoo.save_pretrained(torch.nn.Linear(2, 2), tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_plugin_without_a_claim():
    cat = zoo.registry.catalog()
    no_claim = sorted(s.id for s in zoo.plugins() if s.state == "ok" and s.id not in cat.claims)
    assert no_claim, "expected at least one installed plugin (a task distribution) without a claim"
    with pytest.raises(errors.ClaimNotFound, match=f"plugin {no_claim[0]} registers no claim"):
        zoo.registry.claim(no_claim[0])


def test_unknown_plugin_id_suggests_one_with_a_claim():
    with pytest.raises(errors.ClaimNotFound, match="no installed plugin is called 'fixtur'; did you mean 'fixture'"):
        zoo.reproduce("fixtur")


# ---- the command line ------------------------------------------------------------------------------

def test_cli_prints_zoo_errors_in_one_line(capsys):
    assert main(["create", "fixture_mlp", "--set", "hidden=two"]) == 2
    err = capsys.readouterr().err
    assert err == ("error: UnknownArgument: fixture_mlp: argument hidden='two' passed to create() must be int, "
                   "got str\n")
    assert main(["create", "fixture_mlp", "--set", "hiden=3"]) == 2
    assert capsys.readouterr().err.startswith("error: UnknownArgument: fixture_mlp: unknown argument(s) ['hiden']")
    assert main(["reproduce", "fixtur"]) == 2
    assert capsys.readouterr().err.startswith("error: ClaimNotFound: no installed plugin is called 'fixtur'")


def test_cli_keeps_the_traceback_of_other_errors():
    # a negative width is the builder's (torch's) error, not zoo's: it must reach the user whole
    with pytest.raises(RuntimeError, match="negative dimension"):
        main(["create", "fixture_mlp", "--set", "hidden=-1"])


def test_eval_out_on_a_task_without_figures_is_one_clear_line(capsys):
    """`zoo eval NAME --out DIR` on a task that writes no figures: a zoo error naming the tasks that do."""
    from zoo.cli import main

    assert main(["eval", "fixture_mlp", "--steps", "1", "--out", "figs"]) == 2
    err = capsys.readouterr().err
    assert "digits_classify writes no figures" in err and "image_fit" in err and "Traceback" not in err


def test_a_plugin_id_where_a_model_is_expected_is_not_called_uninstalled():
    """`zoo info mrl`: mrl is an installed plugin, not a model; the error says so and lists its models."""
    with pytest.raises(zoo.ModelNotFound, match=r"'mrl' is a plugin \(zoo-mrl .*\), not a model; its models: .*mrl_digits_cnn"):
        zoo.info("mrl")


def test_reproduce_records_only_when_asked(tmp_path, monkeypatch, capsys):
    """`zoo reproduce` prints; writing registry.yaml is the explicit --record (and never for --quick)."""
    from zoo.cli import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "registry.yaml").write_text("version: 1\npapers: []\n")
    assert main(["reproduce", "fixture", "--quick"]) == 0
    assert "add --record" in capsys.readouterr().out
    assert (tmp_path / "registry.yaml").read_text() == "version: 1\npapers: []\n"
    assert main(["reproduce", "fixture", "--quick", "--record"]) == 2
    assert "never recorded" in capsys.readouterr().err
    (tmp_path / "registry.yaml").unlink()
    assert main(["reproduce", "fixture", "--record", "--seeds", "0"]) == 2
    assert "no registry.yaml here" in capsys.readouterr().err
