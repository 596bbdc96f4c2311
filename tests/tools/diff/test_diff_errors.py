"""The preview diff refuses what it cannot compare, instead of saying "No changes." or printing a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.diff.review import DiffError, main, project_stacks, report


def test_diff_finds_stacks_where_pulumi_does(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    assert project_stacks(tmp_path) == {"dev"}  # beside Pulumi.yaml, not in stacks/
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\nstackConfigDir: envs\n")
    (tmp_path / "envs").mkdir()
    (tmp_path / "envs" / "Pulumi.prod.yaml").write_text("config: {}\n")
    assert project_stacks(tmp_path) == {"prod"}
    assert project_stacks(tmp_path / "nothing-here") == set()
    assert len(project_stacks(ROOT)) == len(list((ROOT / "stacks").glob("Pulumi.*.yaml")))


def test_diff_outside_git_and_with_an_unknown_ref_is_an_error(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    assert main(["--base", "main", "--root", str(tmp_path)]) == 2
    assert "not a git repository" in capsys.readouterr().err
    with pytest.raises(DiffError, match="unknown git ref 'no-such-ref'"):
        report(ROOT, "no-such-ref", None, tmp_path / "t")


def test_diff_of_an_unknown_stack_names_the_stacks(tmp_path):
    with pytest.raises(DiffError) as err:
        report(ROOT, "HEAD", "llama31-405b-v6e61", tmp_path)
    assert "no stack 'llama31-405b-v6e61'" in str(err.value) and "llama31-405b-v6e16" in str(err.value)
    listed = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout
    assert str(tmp_path) not in listed  # the base worktree is removed again


@pytest.mark.slow  # git and a worktree: a CLI test (make test-slow)
def test_diff_of_a_project_in_a_subfolder_reads_the_same_folder_at_the_base(tmp_path):
    repo = tmp_path / "repo"
    project = repo / "infra"
    project.mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: mine\nruntime: python\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    for cmd in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "x"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True, capture_output=True)
    with pytest.raises(DiffError, match="preview of dev"):  # it has no program: the preview fails, loudly
        report(project, "HEAD", None, tmp_path / "t")
    assert Path(project / "Pulumi.dev.yaml").is_file()


def test_config_of_a_project_with_another_name_is_read_from_its_namespace():
    import json as _json

    from tests.fixtures.configs import VLLM
    from tpu_serving.config import ConfigError, load_stack_config

    mine = {k.replace("tpu-serving:", "myserving:"): v for k, v in VLLM.items()}
    as_engine = {k: v if isinstance(v, str) else _json.dumps(v) for k, v in mine.items()}
    cfg = load_stack_config(as_engine, namespace="myserving")
    assert cfg.cluster.name == "vllm"
    broken = {k: v for k, v in as_engine.items() if k != "myserving:zone"}
    with pytest.raises(ConfigError) as err:
        load_stack_config(broken, namespace="myserving")
    assert err.value.problems[0].startswith("myserving:zone") and "tpu-serving:" not in str(err.value)
    # the library's own namespace still reads, and the project's overrides it
    both = {**as_engine, "tpu-serving:zone": "us-east5-a"}
    assert load_stack_config(both, namespace="myserving").zone == as_engine["myserving:zone"]


def test_diff_of_two_plan_files_reports_their_changes_and_refuses_what_it_cannot_compare(tmp_path, capsys):
    """A library user's upgrade: the same stack previewed with two releases of the package (two plan.json)."""
    import json

    from tests.conftest import plan_of
    from tpu_serving_tools.diff import review as diff

    head = plan_of("vllm-llama31-405b-v6e16").as_json()
    base = json.loads(json.dumps(head).replace("vllm/vllm-tpu:v0.29.0", "vllm/vllm-tpu:v0.21.0"))
    (tmp_path / "base.json").write_text(json.dumps(base))
    (tmp_path / "head.json").write_text(json.dumps(head))
    assert diff.main(["--plans", str(tmp_path / "base.json"), str(tmp_path / "head.json")]) == 0
    out = capsys.readouterr().out
    assert "v0.21.0" in out and "v0.29.0" in out and "LeaderWorkerSet" in out

    other = plan_of("llama31-405b-v6e16").as_json()
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert diff.main(["--plans", str(tmp_path / "base.json"), str(tmp_path / "other.json")]) == 2
    assert "different stacks" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{")
    assert diff.main(["--plans", str(tmp_path / "bad.json"), str(tmp_path / "head.json")]) == 2
    assert "not a readable plan.json" in capsys.readouterr().err


def test_diff_main_removes_its_worktree_when_terminated(monkeypatch, tmp_path):
    """New-user review 17, m8: a SIGTERM (a CI timeout) mid-diff left the base worktree registered in the checkout."""
    import os
    import signal
    import tempfile

    import tpu_serving_tools.diff.review as diff

    made: list[Path] = []

    def terminated(root: Path, stack: str, out: Path) -> None:
        made.append(out)
        os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(diff, "render_plan", terminated)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = signal.getsignal(signal.SIGTERM)
    try:
        with pytest.raises(SystemExit) as stopped:
            main(["--base", "HEAD", "--stack", "llama31-405b-v6e16", "--root", str(ROOT)])
    finally:
        signal.signal(signal.SIGTERM, before)
    assert stopped.value.code == 128 + signal.SIGTERM and made, made
    listed = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout
    assert str(tmp_path) not in listed, listed
    assert not list(tmp_path.iterdir())  # the temporary folder is gone too
