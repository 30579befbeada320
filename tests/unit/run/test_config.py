"""okstra config (DESIGN §11): precedence, validation, YAML coercions, atomic writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import tree_snapshot
from okstra.commands import okstra_config as config_cmd
from okstra.core.errors import InputError, RefusedError
from okstra.run import catalog, config


def test_precedence_env_then_project_then_global_then_default(isolated_env, project, monkeypatch):
    assert config.effective("backend", project).to_dict() == {"key": "backend", "value": "cli-wrapper", "source": "default"}
    config.set_value("global", "backend", "tmux-pane", project, catalog=lambda: catalog.load(project))
    assert config.effective("backend", project).source == f"global {isolated_env / '.okstra' / 'config.yaml'}"
    config.set_value("project", "backend", "cmux-pane", project, catalog=lambda: catalog.load(project))
    assert config.effective("backend", project).value == "cmux-pane"
    monkeypatch.setenv("OKSTRA_DEFAULT_BACKEND", "cli-wrapper")
    assert config.effective("backend", project).to_dict() == {
        "key": "backend",
        "value": "cli-wrapper",
        "source": "env OKSTRA_DEFAULT_BACKEND",
    }


def test_a_bad_environment_value_is_refused_naming_the_variable(project, monkeypatch):
    monkeypatch.setenv("OKSTRA_DEFAULT_BACKEND", "screen")
    with pytest.raises(InputError, match="environment OKSTRA_DEFAULT_BACKEND: backend 'screen' is not a backend"):
        config.effective("backend", project)


@pytest.mark.parametrize("text", ["no", "yes", "on", "1.10", "2024-01-02", "0x1F", "null-ish"])
def test_yaml_1_1_coercions_keep_strings(project, text):
    path = project / ".okstra" / "config.yaml"
    path.parent.mkdir()
    path.write_text(f"pr-template-path: {text}\n")
    assert config.read_file(path) == {"pr-template-path": text}


def test_set_writes_a_value_that_reads_back_as_the_same_string(project):
    config.set_value("project", "report-language", "no", project, catalog=lambda: catalog.load(project))
    assert (project / ".okstra" / "config.yaml").read_text() == "report-language: 'no'\n"
    assert config.effective("report-language", project).value == "no"


def test_set_keeps_other_keys_and_the_providers_block(project):
    path = project / ".okstra" / "config.yaml"
    path.parent.mkdir()
    path.write_text("providers:\n  codex:\n    display: My Codex\nbackend: tmux-pane\n")
    config.set_value("project", "default-executor", "codex", project, catalog=lambda: catalog.load(project))
    assert config.read_file(path) == {
        "providers": {"codex": {"display": "My Codex"}},
        "backend": "tmux-pane",
        "default-executor": "codex",
    }


def test_unset_removes_only_that_key(project):
    config.set_value("project", "backend", "tmux-pane", project, catalog=lambda: catalog.load(project))
    config.set_value("project", "report-language", "ko", project, catalog=lambda: catalog.load(project))
    assert config.unset_value("project", "backend", project) is True
    assert config.unset_value("project", "backend", project) is False
    assert config.read_file(project / ".okstra" / "config.yaml") == {"report-language": "ko"}


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        (
            "colour",
            "blue",
            "unknown config key 'colour'; known keys: default-workers, default-executor, backend, report-language, pr-template-path, providers, budget-usd, failover",
        ),
        ("backend", "screen", "allowed: cli-wrapper, tmux-pane, cmux-pane"),
        ("default-workers", "claude,,codex", "not a provider id"),
        ("default-workers", "claude,claude", "names a provider twice"),
        ("default-workers", "claude,nope", "unknown provider 'nope'; known providers: claude, codex"),
        ("default-executor", "Codex", "is not a provider id"),
        ("report-language", "korean language", "is not a language tag"),
        ("pr-template-path", "/etc/passwd", "must be a path inside the project"),
        ("pr-template-path", "docs/../../x", "must be a path inside the project"),
        ("backend", "   ", "must be a non-empty string"),
    ],
)
def test_bad_keys_and_values_are_refused_and_nothing_is_written(project, key, value, fragment):
    before = tree_snapshot(project)
    with pytest.raises((InputError, RefusedError)) as err:
        config.set_value("project", key, value, project, catalog=lambda: catalog.load(project))
    assert fragment in str(err.value)
    assert tree_snapshot(project) == before


def test_providers_is_edited_in_the_file(project):
    with pytest.raises(RefusedError, match="providers is edited in the file, not with okstra config set"):
        config.set_value("project", "providers", "{}", project, catalog=lambda: catalog.load(project))


def test_a_file_with_an_unknown_key_or_a_non_mapping_is_refused(project):
    path = project / ".okstra" / "config.yaml"
    path.parent.mkdir()
    path.write_text("colour: blue\n")
    with pytest.raises(InputError, match=f"{path}: unknown config key 'colour'"):
        config.read_file(path)
    path.write_text("- a\n- b\n")
    with pytest.raises(InputError, match="must be a mapping"):
        config.read_file(path)


def test_bad_yaml_names_the_file_and_line(project):
    path = project / ".okstra" / "config.yaml"
    path.parent.mkdir()
    path.write_text("backend: tmux-pane\nreport-language: [ko\n")
    with pytest.raises(InputError, match=rf"{path}: not valid YAML at line \d+ column \d+"):
        config.read_file(path)


def test_python_tags_are_refused(project, tmp_path):
    path = project / ".okstra" / "config.yaml"
    path.parent.mkdir()
    path.write_text(f"backend: !!python/object/apply:os.system ['touch {tmp_path}/pwned']\n")
    with pytest.raises(InputError):
        config.read_file(path)
    assert not (tmp_path / "pwned").exists()


def test_project_scope_outside_a_project_is_refused_with_a_hint(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config_cmd.main(["set", "backend", "tmux-pane"]) == 2


def test_main_get_outside_a_project_reads_the_global_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert config_cmd.main(["set", "backend", "tmux-pane", "--scope", "global"]) == 0
    capsys.readouterr()
    assert config_cmd.main(["get", "backend", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == "tmux-pane"


def test_main_get_of_an_unset_key_exits_1(project, capsys):
    assert config_cmd.main(["get", "default-executor"]) == 1
    assert capsys.readouterr().err == "okstra-config: default-executor is not set\n"


def test_main_usage_errors_exit_2(project, capsys):
    assert config_cmd.main(["set", "backend"]) == 2
    assert config_cmd.main(["frob"]) == 2
    assert config_cmd.main(["get", "nope"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "okstra-config: config set takes KEY VALUE; see 'okstra-config --help'"
    assert err[2].startswith("okstra-config: config get: unknown config key 'nope'; known keys: ")


def test_yaml_aliases_are_refused_so_a_billion_laughs_cannot_eat_memory():
    laughs = "a: &a [x, x, x]\nb: [*a, *a, *a]\n"
    with pytest.raises(InputError, match="aliases"):
        config.parse_yaml(laughs, "config.yaml")


@pytest.mark.parametrize("libyaml", [True, False], ids=["libyaml", "pure-python"])
def test_the_c_and_the_pure_python_loader_read_the_same_and_refuse_the_same(libyaml, monkeypatch):
    """PyYAML built without libyaml has no CSafeLoader: okstra then uses the pure-Python one."""
    import yaml

    if not libyaml:
        monkeypatch.delattr(yaml, "CSafeLoader")
    config._loader.cache_clear()
    try:
        base = config._loader().__mro__[1]
        assert base is (yaml.CSafeLoader if libyaml else yaml.SafeLoader)
        doc = config._parse_yaml("a: yes\nb: 1\nc: 2026-01-01\nd: ~\ne: [1.5, off]\nf: 'x*y'\n", "c.yaml")
        assert doc == {"a": "yes", "b": "1", "c": "2026-01-01", "d": None, "e": ["1.5", "off"], "f": "x*y"}
        assert catalog.builtin_document()["providers"]["claude"]["binary"] == "claude"
        with pytest.raises(InputError, match=r"c.yaml: not valid YAML at line 2 column 5: aliases"):
            config._parse_yaml("a: &a [x, x, x]\nb: [*a, *a, *a]\n", "c.yaml")
        with pytest.raises(InputError, match=r"c.yaml: not valid YAML at line 1 column 5"):
            config._parse_yaml("a: b: c\n", "c.yaml")
    finally:
        config._loader.cache_clear()


def test_allowed_commands_are_a_list_or_per_stage_groups(tmp_path):
    assert config.check_value("allowed-commands", ["make test", "npm run build:*"], source="s") == {
        "all": ["make test", "npm run build:*"]
    }
    assert config.check_value("allowed-commands", {"stage-2": ["pytest:*"]}, source="s") == {"stage-2": ["pytest:*"]}
    for bad in ("make test", ["a\nb"], {"stage-x": ["a"]}, ["a:* b"]):
        with pytest.raises(InputError):
            config.check_value("allowed-commands", bad, source="s")


def test_a_catalog_read_again_unchanged_imports_neither_pyyaml_nor_jsonschema(tmp_path):
    """Every run command reads the catalog; the second read finds the parse and the verdict remembered."""
    lib = Path(config.__file__).resolve().parents[2]
    code = (
        "import sys; from okstra.run import catalog; c = catalog.load(None); "
        "print(c.ids()[0], 'yaml' in sys.modules, 'jsonschema' in sys.modules)"
    )
    env = {"PYTHONPATH": str(lib), "OKSTRA_ROOT": str(tmp_path / "root"), "HOME": str(tmp_path)}
    runs = [
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
        for _ in range(2)
    ]
    assert runs == [["claude", "True", "True"], ["claude", "False", "False"]]


def test_a_remembered_parse_changed_by_hand_is_not_believed_and_the_file_is_read_again():
    text = "backend: tmux-pane\n"
    assert config.parse_yaml(text, "c.yaml") == {"backend": "tmux-pane"}
    (kept,) = (Path(os.environ["OKSTRA_ROOT"]) / "cache" / "yaml").iterdir()
    doc = json.loads(kept.read_text())
    doc["value"]["backend"] = "cli-wrapper"
    kept.write_text(json.dumps(doc))
    assert config.parse_yaml(text, "c.yaml") == {"backend": "tmux-pane"}


def test_a_parse_json_cannot_hold_exactly_is_not_remembered():
    assert config.parse_yaml("~: x\n", "c.yaml") == {None: "x"}
    assert config.parse_yaml("~: x\n", "c.yaml") == {None: "x"}
    assert not (Path(os.environ["OKSTRA_ROOT"]) / "cache" / "yaml").exists()
