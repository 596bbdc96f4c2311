"""``make e2e``'s choice of stacks (tools/e2e/run.py): every stack but those it names, with the reason, as not
runnable here; a name that matches no stack fails, so the list cannot hide a renamed stack."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import ROOT
from tpu_serving_tools.e2e.coverage import MODEL_WITHOUT_PLATFORM, NOT_RUNNABLE, left_out, model_platforms
from tpu_serving_tools.e2e.run import default_stacks
from tpu_serving_tools.e2e.stack_run import engine_errors


def test_not_runnable_names_stacks_that_exist_with_a_reason():
    stacks = {p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (ROOT / "stacks").glob("Pulumi.*.yaml")}
    assert set(NOT_RUNNABLE) <= stacks
    assert all(len(why) > 40 for why in NOT_RUNNABLE.values())


def test_default_stacks_are_every_stack_but_those_left_out_and_the_model_stacks():
    chosen, left, models = default_stacks(ROOT), left_out(ROOT), model_platforms(ROOT)
    assert chosen and not set(chosen) & set(left) and set(NOT_RUNNABLE) <= set(left)
    assert not set(chosen) & set(models) and len(models) >= 2
    assert len(chosen) + len(left) + len(models) == len(list((ROOT / "stacks").glob("Pulumi.*.yaml")))
    assert "platform-us-east5" in chosen


def test_run_units_run_a_model_stack_in_its_platform_stacks_run_once():
    from tpu_serving_tools.e2e.run import run_units

    both = ["vllm-llama31-8b-platform", "saxml-175b-v5e32x2", "vllm-llama33-70b-platform", "platform-us-east5"]
    assert run_units(ROOT, both) == ["platform-us-east5", "saxml-175b-v5e32x2"]


def _stacks_dir(tmp_path, stacks):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    for stack, as_name in stacks.items():
        text = (ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text()
        (tmp_path / "stacks" / f"Pulumi.{as_name}.yaml").write_text(text)


def test_model_platforms_takes_every_model_stack_by_its_platform_key(tmp_path):
    """A model stack a user adds to ``stacks/`` runs with its platform stack, as the shipped ones do."""
    _stacks_dir(tmp_path, {s: s.replace("vllm-llama31-8b-platform", "team-b") for s in STACKS_OF_A_PLATFORM})
    assert model_platforms(tmp_path) == {"team-b": "platform-us-east5"}
    assert left_out(tmp_path) == {}
    assert default_stacks(tmp_path) == ["platform-us-east5", "saxml-175b-v5e32x2"]


def test_left_out_takes_a_model_stack_whose_platform_stack_file_is_absent(tmp_path):
    _stacks_dir(tmp_path, {"vllm-llama31-8b-platform": "team-b", "saxml-175b-v5e32x2": "saxml-175b-v5e32x2"})
    assert left_out(tmp_path) == {"team-b": MODEL_WITHOUT_PLATFORM.format(platform="platform-us-east5")}


STACKS_OF_A_PLATFORM = ("vllm-llama31-8b-platform", "platform-us-east5", "saxml-175b-v5e32x2")


def test_engine_errors_keep_the_engine_diagnostics_without_warnings():
    text = (
        " +  progress line\nDiagnostics:\n  kubernetes:x (y):\n    error: refused: errors:\n"
        "      .spec.a: field not declared in schema\n  pulumi:pulumi:Stack (s):\n    warning: plugin\n"
        "    error: update failed\n\nResources:\n    + 3 created\n"
    )
    assert engine_errors(text).splitlines() == [
        "  kubernetes:x (y):",
        "    error: refused: errors:",
        "      .spec.a: field not declared in schema",
        "  pulumi:pulumi:Stack (s):",
        "    error: update failed",
    ]


def test_installed_controllers_counts_those_the_cluster_runs():
    """A controller the stack expects the cluster to run (``controllerInstalls: existing``, a ControllerInstall with
    ``owned: false`` and no ConfigGroup) is one the run must start and the overlay has the stack install."""
    from tpu_serving_tools.e2e.run import installed_controllers

    plan = {
        "resources": [
            {
                "type": "tpu-serving:index:ControllerInstall",
                "registeredOutputs": {"controller": "lws", "version": "v0.10.0", "owned": False},
            },
            {
                "type": "kubernetes:yaml/v2:ConfigGroup",
                "inputs": {
                    "files": ["https://github.com/kubernetes-sigs/jobset/releases/download/v0.12.0/manifests.yaml"]
                },
            },
        ]
    }
    assert installed_controllers(plan) == ["jobset", "lws"]


def test_main_without_a_toolchain_says_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """New-user review round 46, M1: make e2e on a fresh checkout ended in a FileNotFoundError traceback."""
    from tpu_serving_tools.e2e import command as e2e_command

    monkeypatch.setenv("TPU_SERVING_E2E_TOOLCHAIN", str(tmp_path / "toolchain.json"))
    assert e2e_command.main(["--root", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "run make e2e-tools first" in err and str(tmp_path / "toolchain.json") in err


def test_main_refuses_fewer_than_one_job(capsys):
    from tpu_serving_tools.e2e import command as e2e_command

    with pytest.raises(SystemExit) as exit_:
        e2e_command.main(["--jobs", "0", "some-stack"])
    assert exit_.value.code == 2
    assert "--jobs must be at least 1, not 0" in capsys.readouterr().err


def test_child_argv_runs_one_stack_in_the_same_folders(tmp_path):
    import argparse
    import sys

    from tpu_serving_tools.e2e import command as e2e_command

    args = argparse.Namespace(root=tmp_path, work=tmp_path / "w", verbose=True)
    argv = e2e_command._child_argv(args, "s1")
    assert argv[:3] == [sys.executable, "-m", "tpu_serving_tools.e2e.command"]
    assert argv[3:] == ["--root", str(tmp_path.resolve()), "--work", str((tmp_path / "w").resolve()), "--verbose", "s1"]
