"""The CLI's mistakes of a new user print one ``error:`` line naming the file or folder and what to do, and exit
non-zero: no traceback (tools/cli.py dispatching to tools/check.py, tools/policy_check.py, tools/preview/stack.py)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT, plan_of
from tpu_serving_tools.cli import main
from tpu_serving_tools.preview import stack as preview


@pytest.fixture(autouse=True)
def _keep_the_event_loop(monkeypatch):
    """A preview closes its process's event loop when done (as a command ending its process does): not this one."""
    monkeypatch.setattr(preview, "close_event_loop", lambda: None)


def _one_error(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize("command", ["check", "policy", "preview"])
def test_outside_a_project_the_error_names_the_folder_and_root(command, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    args = [command, "--root", str(tmp_path)] + (["llama31-405b-v6e16"] if command == "preview" else [])
    assert main(args) != 0
    _one_error(capsys, "no Pulumi.yaml in", str(tmp_path), "--root")


@pytest.mark.parametrize("command", ["check", "policy"])
@pytest.mark.parametrize(
    ("content", "words"),
    [(None, ["cannot read plan"]), ("not json {", ["is not JSON"]), ("{}", ["no `resources`"])],
    ids=["missing", "not-json", "empty-object"],
)
def test_a_bad_plan_file_is_an_error_naming_it(command, content, words, tmp_path, capsys):
    plan = tmp_path / "plan.json"
    if content is not None:
        plan.write_text(content)
    assert main([command, "--plan", str(plan)]) != 0
    _one_error(capsys, str(plan), "tpu-serving preview", *words)


def test_preview_into_an_unwritable_folder_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(preview, "preview_stack", lambda root, stack: plan_of(stack))
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["preview", "llama31-405b-v6e16", "--root", str(ROOT), "--out", str(blocker / "out")]) != 0
    _one_error(capsys, str(blocker), "--out")
