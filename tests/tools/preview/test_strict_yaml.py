"""Stack files read as the Pulumi CLI reads them: UTF-8, every key once, aliases bounded (issue "A platform team
adopts it", item 9: "YAML is strict")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.preview import strict_yaml
from tpu_serving_tools.preview.stack_files import StackConfigError, load_project, stack_config

STACK = "vllm-llama33-70b-v5e16"


def test_strict_yaml_every_shipped_stack_reads_as_before():
    import yaml

    project = load_project(ROOT)
    for stack in project.stacks():
        path = project.stack_file(stack)
        assert strict_yaml.load(path) == yaml.safe_load(path.read_text())


def test_strict_yaml_refuses_a_repeated_key_naming_both_lines(tmp_path: Path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  zone: us-west4-a\n  labels: {}\n  zone: us-west4-b\n")
    with pytest.raises(strict_yaml.StrictYamlError) as err:
        strict_yaml.load(path, "Pulumi.x.yaml")
    assert "key 'zone' appears twice (lines 2 and 4)" in str(err.value)


def test_strict_yaml_a_text_read_again_gives_a_copy_and_a_changed_file_is_read_afresh(tmp_path: Path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  labels: {team: a}\n  zones: [us-west4-a]\n")
    first = strict_yaml.load(path, "Pulumi.x.yaml")
    first["config"]["zones"].append("us-west4-b")  # a caller's change reaches no later reader
    first["config"]["labels"]["team"] = "b"
    assert strict_yaml.load(path, "Pulumi.x.yaml") == {"config": {"labels": {"team": "a"}, "zones": ["us-west4-a"]}}
    path.write_text("config:\n  zones: [us-west4-b]\n  zones: [us-west4-a]\n")
    for _ in range(2):  # a refused text is refused, with its message, each time it is read
        with pytest.raises(strict_yaml.StrictYamlError) as err:
            strict_yaml.load(path, "Pulumi.x.yaml")
        assert "key 'zones' appears twice (lines 2 and 3)" in str(err.value)
    path.write_text("config:\n  zones: [us-west4-c]\n")
    assert strict_yaml.load(path, "Pulumi.x.yaml") == {"config": {"zones": ["us-west4-c"]}}


def test_strict_yaml_refuses_text_that_is_not_utf8(tmp_path: Path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_bytes("config:\n  labels:\n    team: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(strict_yaml.StrictYamlError) as err:
        strict_yaml.load(path, "Pulumi.x.yaml")
    assert str(err.value) == "Pulumi.x.yaml: not UTF-8 text (byte 0xe9 on line 3)"


def test_strict_yaml_refuses_a_billion_laughs(tmp_path: Path):
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(strict_yaml.StrictYamlError) as err:
        strict_yaml.load(path)
    assert "more than 100000 values, aliases followed" in str(err.value)


def test_strict_yaml_a_stack_file_with_a_repeated_key_is_one_message(tmp_path: Path):
    root = tmp_path / "project"
    shutil.copytree(ROOT / "stacks", root / "stacks")
    shutil.copy(ROOT / "Pulumi.yaml", root / "Pulumi.yaml")
    path = root / "stacks" / f"Pulumi.{STACK}.yaml"
    path.write_text(path.read_text() + "  zone: us-west4-b\n")
    with pytest.raises(StackConfigError) as err:
        stack_config(load_project(root), STACK)
    assert str(err.value).startswith(f"stacks/Pulumi.{STACK}.yaml is not valid YAML:")
    assert "key 'zone' appears twice" in str(err.value)


def test_strict_yaml_merge_keys_are_yaml_not_repeats(tmp_path: Path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("base: &b\n  a: 1\n  b: 2\nx:\n  <<: *b\n  b: 3\n")
    assert strict_yaml.load(path)["x"] == {"a": 1, "b": 3}


def test_strict_yaml_reads_a_timestamp_as_text_and_refuses_a_mapping_key(tmp_path: Path):
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text("config:\n  start: 2026-12-01T00:00:00Z\n")
    assert strict_yaml.load(path) == {"config": {"start": "2026-12-01T00:00:00Z"}}
    path.write_text("config:\n  ? [a, b]\n  : 1\n")
    with pytest.raises(strict_yaml.StrictYamlError) as err:
        strict_yaml.load(path)
    assert "a mapping key must be a scalar, not list" in str(err.value)


def tiny_project(tmp_path: Path, stack_text: str, project_config: str = "") -> Path:
    """A project root with a Pulumi.yaml (and ``project_config`` as its ``config:``) and one stack file ``lst``."""
    root = tmp_path / "project"
    (root / "stacks").mkdir(parents=True)
    (root / "Pulumi.yaml").write_text(f"name: mine\nruntime: python\nstackConfigDir: stacks\n{project_config}")
    (root / "stacks" / "Pulumi.lst.yaml").write_text(stack_text)
    return root


@pytest.mark.parametrize(
    ("text", "kind"),
    [("config:\n  - a\n  - b\n", "a list"), ("config: hello\n", "a string"), ("config: 3\n", "a number")],
    ids=["list", "string", "number"],
)
def test_strict_yaml_a_config_that_is_no_mapping_is_one_message(tmp_path: Path, capsys, monkeypatch, text, kind):
    from tpu_serving_tools.preview import stack as preview

    monkeypatch.setattr(preview, "close_event_loop", lambda: None)  # this worker's loop runs further programs
    root = tiny_project(tmp_path, text)
    with pytest.raises(StackConfigError) as err:
        stack_config(load_project(root), "lst")
    assert str(err.value).startswith(f"stacks/Pulumi.lst.yaml: `config` is {kind}; it must be a mapping of keys")
    assert preview.main(["lst", "--root", str(root)]) == 2
    printed = capsys.readouterr().err
    assert printed.startswith("error: stacks/Pulumi.lst.yaml: `config` is") and "AttributeError" not in printed


def test_strict_yaml_settings_outside_config_say_where_they_go(tmp_path: Path):
    """A stack file without its `config:` line: the message says the settings belong under it, and how."""
    root = tiny_project(tmp_path, "gcp:project: my-project\ntpu-serving:cluster:\n  name: serving\n")
    with pytest.raises(StackConfigError) as err:
        stack_config(load_project(root), "lst")
    assert str(err.value) == (
        "Pulumi.lst.yaml: unknown top-level keys ['gcp:project', 'tpu-serving:cluster']; the settings go under "
        "`config:`, indented beneath it (`config:`, then `  gcp:project: ...` on the next line); the top level holds "
        "only config, secretsprovider, encryptedkey, encryptionsalt, environment"
    )


def test_strict_yaml_the_projects_config_must_be_a_mapping_too(tmp_path: Path):
    root = tiny_project(tmp_path, "config: {}\n", "config:\n  - a\n")
    with pytest.raises(StackConfigError) as err:
        load_project(root)
    assert str(err.value).startswith("Pulumi.yaml: `config` is a list; it must be a mapping")
    (root / "Pulumi.yaml").write_text("- name: mine\n")
    with pytest.raises(StackConfigError, match="Pulumi.yaml: expected a mapping with the project's `name:`"):
        load_project(root)


def test_strict_yaml_a_syntax_error_names_the_stack_file_at_each_mark(tmp_path: Path):
    root = tiny_project(tmp_path, "config:\n  a: [\n  b: 1\n")
    with pytest.raises(StackConfigError) as err:
        stack_config(load_project(root), "lst")
    text = str(err.value)
    assert text.startswith("stacks/Pulumi.lst.yaml is not valid YAML: while parsing a flow sequence")
    assert 'in "stacks/Pulumi.lst.yaml", line 2, column 6' in text
    assert "<unicode string>" not in text


def test_strict_yaml_plain_scalars_mean_what_the_pulumi_cli_reads(tmp_path: Path):
    """yaml.v3, the CLI's reader, resolves YAML 1.2's core schema: only true/false are booleans."""
    path = tmp_path / "Pulumi.x.yaml"
    path.write_text(
        "config:\n  a: yes\n  b: no\n  c: on\n  d: off\n  e: y\n  f: true\n  g: FALSE\n  h: 1:30\n  i: 1e3\n"
        "  j: 0o17\n  k: ~\n  l: 1_000\n  m: 010\n  n: 0x1F\n"
    )
    assert strict_yaml.load(path)["config"] == {
        "a": "yes",
        "b": "no",
        "c": "on",
        "d": "off",
        "e": "y",
        "f": True,
        "g": False,
        "h": "1:30",
        "i": 1000.0,
        "j": 15,
        "k": None,
        "l": 1000,
        "m": 8,
        "n": 31,
    }


def test_strict_yaml_a_yes_in_a_stack_file_reaches_the_program_as_text(tmp_path: Path):
    root = tiny_project(tmp_path, "config:\n  labels:\n    sandbox: yes\n  zone: no\n")
    config = stack_config(load_project(root), "lst")
    assert config["mine:labels"] == '{"sandbox": "yes"}'
    assert config["mine:zone"] == "no"
