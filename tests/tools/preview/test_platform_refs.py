"""platform_refs and offline.PreviewMocks: the offline preview answers a model stack's StackReference with the
outputs of its platform stack file's own preview."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, plan_of
from tpu_serving_tools.preview.offline import STACK_REFERENCE, Plan, preview_stack, preview_stacks
from tpu_serving_tools.preview.stack_files import StackConfigError

PLATFORM, MODEL = "platform-us-east5", "vllm-llama31-8b-platform"


def project_with(tmp_path: Path, *stacks: str) -> Path:
    """A copy of the project's program with only ``stacks``' files (the library is the installed one)."""
    (tmp_path / "stacks").mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    for stack in stacks:
        shutil.copy(ROOT / "stacks" / f"Pulumi.{stack}.yaml", tmp_path / "stacks")
    return tmp_path


def test_platform_refs_answer_the_reference_with_the_platform_preview():
    platform = plan_of(PLATFORM).outputs["platform"]
    model = plan_of(MODEL)
    (pool,) = model.of_type("gcp:container/nodePool:NodePool")
    assert pool.inputs["cluster"] == platform["controlPlane"]["clusterIdentifier"]
    assert pool.inputs["nodeConfig"]["serviceAccount"] == platform["nodeServiceAccount"]
    (provider,) = model.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["clusterIdentifier"] == platform["controlPlane"]["clusterIdentifier"]
    assert STACK_REFERENCE in model.invokes  # read, as the engine reads it: not a resource of the plan
    assert not model.of_type(STACK_REFERENCE)


def test_platform_refs_follow_the_platform_stack_file(tmp_path):
    """Not hand-written values: another Gateway name in the platform's file reaches the model stack's route."""
    root = project_with(tmp_path, PLATFORM, MODEL)
    platform_file = root / "stacks" / f"Pulumi.{PLATFORM}.yaml"
    platform_file.write_text(platform_file.read_text().replace("gatewayName: internal", "gatewayName: shared-lb"))
    (route,) = preview_stack(root, MODEL).of_type("kubernetes:gateway.networking.k8s.io/v1:HTTPRoute")
    assert route.inputs["spec"]["parentRefs"] == [{"name": "shared-lb", "namespace": "tpu-serving-gateway"}]


@pytest.mark.slow
def test_platform_refs_a_platform_that_contradicts_the_model_stack_fails_its_preview(tmp_path):
    """In a process of its own: a program that fails while its resources register leaves the SDK's tasks behind."""
    root = project_with(tmp_path, PLATFORM, MODEL)
    platform_file = root / "stacks" / f"Pulumi.{PLATFORM}.yaml"
    platform_file.write_text(platform_file.read_text().replace("name: tpu-platform", "name: other-platform"))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tpu_serving_tools.preview.stack",
            "--root",
            str(root),
            "--out",
            str(tmp_path / "out"),
            MODEL,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    assert "platform.cluster = 'tpu-platform', but the platform stack my-org/tpu-serving/platform-us-east5 has " in (
        run.stderr
    )
    assert "'other-platform'" in run.stderr


@pytest.mark.slow
def test_platform_refs_a_platform_on_another_controller_release_fails_the_model_preview(tmp_path):
    """The model's LeaderWorkerSet is v0.10.0's (the version set's); a platform pinned to the older v0.9.0 cannot serve it."""
    root = project_with(tmp_path, PLATFORM, MODEL)
    platform_file = root / "stacks" / f"Pulumi.{PLATFORM}.yaml"
    text = platform_file.read_text()
    assert text.count("    lwsVersion: v0.10.0\n") == 1
    platform_file.write_text(text.replace("    lwsVersion: v0.10.0\n", "    lwsVersion: v0.9.0\n"))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tpu_serving_tools.preview.stack",
            "--root",
            str(root),
            "--out",
            str(tmp_path / "out"),
            MODEL,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    assert (
        "the serving expects lws v0.10.0 or newer, but the platform stack platform-us-east5 runs v0.9.0" in run.stderr
    )


def test_platform_refs_name_a_missing_platform_stack_file(tmp_path, capsys):
    root = project_with(tmp_path, MODEL)
    with pytest.raises(StackConfigError, match=r"no stack file Pulumi.platform-us-east5.yaml in .*stacks, so the"):
        preview_stack(root, MODEL)
    assert preview_stacks(root, [MODEL]) is None
    err = capsys.readouterr().err
    assert "cannot answer its StackReference; stacks there: vllm-llama31-8b-platform" in err
    assert "Traceback" not in err


def test_platform_refs_refuse_another_projects_stack(tmp_path):
    root = project_with(tmp_path, PLATFORM, MODEL)
    model_file = root / "stacks" / f"Pulumi.{MODEL}.yaml"
    model_file.write_text(model_file.read_text().replace("my-org/tpu-serving/", "my-org/elsewhere/"))
    with pytest.raises(StackConfigError, match=r"is a stack of project 'elsewhere'; the offline preview answers"):
        preview_stack(root, MODEL)


def model_preview_with(tmp_path: Path, after: str, added: str) -> Plan:
    """The offline preview of the model stack with the lines ``added`` after its line ``after`` (beside its
    platform's stack file)."""
    root = project_with(tmp_path, PLATFORM, MODEL)
    model_file = root / "stacks" / f"Pulumi.{MODEL}.yaml"
    text = model_file.read_text()
    assert text.count(after) == 1
    model_file.write_text(text.replace(after, after + added))
    return preview_stack(root, MODEL)


def test_platform_cluster_with_platform_kubeconfig_reads_no_cluster_and_keeps_its_identifier(tmp_path):
    """``platform.kubeconfig``: the provider reads the file (and context) given, where the shipped stack's gets the
    kubeconfig built from the cluster it reads, and keeps the platform's cluster identifier (a change of route
    replaces nothing)."""
    added = "    kubeconfig: ~/.kube/platform\n    context: gw\n"
    plan, shipped = model_preview_with(tmp_path, "    cluster: tpu-platform\n", added), plan_of(MODEL)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "~/.kube/platform" and provider.inputs["context"] == "gw"
    (before,) = shipped.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["clusterIdentifier"] == before.inputs["clusterIdentifier"]
    assert before.inputs.get("kubeconfig") != "~/.kube/platform" and "context" not in before.inputs
    (cluster,) = plan.of_type("tpu-serving:index:PlatformCluster")
    assert cluster.inputs["kubeconfig"] == "~/.kube/platform" and cluster.inputs["context"] == "gw"


def test_pool_phase_takes_a_model_stacks_named_pools_as_existing(tmp_path):
    """``tpuSlices[].existingNodePools`` on a model stack: no GKE node pool (nor its account) is created for the
    slice, and the serving's groups are pinned to the pools named."""
    plan = model_preview_with(tmp_path, "      diskSizeGb: 200\n", "      existingNodePools: [team-v6e4]\n")
    assert plan_of(MODEL).of_type("gcp:container/nodePool:NodePool")
    assert not plan.of_type("gcp:container/nodePool:NodePool")
    (pool,) = plan.of_type("tpu-serving:index:ExistingTpuNodePool")
    assert "team-v6e4" in str(pool.inputs)
    (lws,) = plan.of_type("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")
    assert "team-v6e4" in str(lws.inputs["spec"]["leaderWorkerTemplate"])
