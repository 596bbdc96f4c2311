"""The offline preview as a user runs it: ``python -m tpu_serving_tools.preview.stack <stack>``."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, run_module


def run_preview(*args: str) -> subprocess.CompletedProcess[str]:
    return run_module("tpu_serving_tools.preview.stack", *args)


@pytest.mark.slow
def test_preview_cli_writes_plan_and_manifests(tmp_path):
    out = tmp_path / "out"
    proc = run_preview("llama31-405b-v6e16", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "tpu-serving:index:TpuCluster  llama405b" in proc.stdout
    assert "TPU: 1 slice(s), 16 chips, 512 GiB HBM" in proc.stdout
    plan = json.loads((out / "plan.json").read_text())
    assert set(plan) == {"stack", "project", "config", "resources", "outputs"}
    assert plan["config"]["gcp:region"] == "us-east5"
    keys = {"urn", "type", "name", "custom", "parent", "provider", "dependencies", "inputs"}
    assert all(keys <= set(r) for r in plan["resources"])
    pool = next(r for r in plan["resources"] if r["name"] == "llama405b-v6e16" and r["type"].endswith(":NodePool"))
    assert pool["inputs"]["nodeCount"] == 4 and isinstance(pool["inputs"]["nodeCount"], int)
    docs = [d for d in yaml.safe_load_all((out / "manifests.yaml").read_text()) if d]
    assert {d["kind"] for d in docs} >= {"Namespace", "ServiceAccount"}


@pytest.mark.slow
def test_preview_cli_plan_only_writes_the_plan_and_no_summary(tmp_path):
    """A diff previews its base with ``--plan-only``: the base's library may predate the modules the summary's notes
    read (a base from before the library's folders failed on ``tpu_serving.catalog.tpu_zones``)."""
    out = tmp_path / "out"
    proc = run_preview("llama31-405b-v6e16", "--out", str(out), "--plan-only")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"wrote {out / 'plan.json'}, {out / 'manifests.yaml'}"]
    assert json.loads((out / "plan.json").read_text())["resources"]


def test_preview_cli_records_resource_options_and_property_dependencies():
    from tests.conftest import plan_of, resource

    plan = plan_of("saxml-175b-v5e32x2")
    state = resource(plan, "kubernetes:core/v1:ConfigMap", "saxml175b-saxml-publisher-state").as_json()
    assert state["ignoreChanges"] == ["data"]
    job = resource(plan, "kubernetes:batch/v1:Job", "saxml175b-saxml-publish").as_json()
    assert job["customTimeouts"] == {"create": "40m"}
    ckpt_free = resource(plan, "gcp:storage/bucket:Bucket", "saxml175b-state").as_json()
    assert ckpt_free["protect"] is False and ckpt_free["retainOnDelete"] is False
    options = {
        "ignoreChanges",
        "replaceOnChanges",
        "deleteBeforeReplace",
        "customTimeouts",
        "retainOnDelete",
        "protect",
    }
    assert all(options <= set(r.as_json()) for r in plan.resources)
    ksa = resource(plan, "kubernetes:core/v1:ServiceAccount", "saxml175b-wi-ksa").as_json()
    (gsa,) = ksa["propertyDependencies"]["metadata"]
    assert gsa.endswith("gcp:serviceaccount/account:Account::saxml175b-wi-gsa")


@pytest.fixture
def project_copy(tmp_path: Path) -> Path:
    """A copy of the project whose stacks/ the test can fill with bad stack files."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "components").symlink_to(ROOT / "components")
    (tmp_path / "stacks").mkdir()
    return tmp_path


def write_stack(root: Path, name: str, edit) -> None:
    doc = yaml.safe_load((ROOT / "stacks" / "Pulumi.llama31-405b-v6e16.yaml").read_text())
    edit(doc["config"])
    (root / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(doc))


@pytest.mark.slow
def test_preview_cli_yaml_syntax_error_is_reported_without_traceback(project_copy):
    (project_copy / "stacks" / "Pulumi.broken.yaml").write_text("config:\n  tpuSlices: [a, b\n")
    proc = run_preview("broken", "--root", str(project_copy))
    assert proc.returncode == 2
    assert "Pulumi.broken.yaml is not valid YAML" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_preview_cli_failure_removes_a_stale_plan(project_copy):
    write_stack(project_copy, "s", lambda cfg: None)
    assert run_preview("s", "--root", str(project_copy)).returncode == 0
    assert (project_copy / "build" / "s" / "plan.json").exists()
    write_stack(project_copy, "s", bad_topology)
    assert run_preview("s", "--root", str(project_copy)).returncode == 2
    assert not (project_copy / "build" / "s" / "plan.json").exists()


def misspell_cluster(cfg):
    cfg["clustr"] = cfg.pop("cluster")


def bad_topology(cfg):
    cfg["tpuSlices"] = [{"name": "v6e", "machineType": "ct6e-standard-4t", "topology": "4x5"}]


@pytest.mark.parametrize(
    "edit, expected",
    [
        (misspell_cluster, ["tpu-serving:clustr: unknown key", "tpu-serving:cluster: required key is missing"]),
        (bad_topology, ["tpu-serving:tpuSlices[0].topology", "'4x5'", "valid: 2x2, 2x4, 4x4"]),
    ],
    ids=["misspelt-key", "invalid-topology"],
)
@pytest.mark.slow
def test_preview_cli_bad_stack_fails_cleanly(project_copy, edit, expected):
    write_stack(project_copy, "bad", edit)
    proc = run_preview("bad", "--root", str(project_copy))
    assert proc.returncode == 2
    for fragment in expected:
        assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert not (project_copy / "build").exists()


@pytest.mark.slow
def test_preview_cli_unknown_stack_lists_stacks():
    proc = run_preview("no-such-stack", "--out", "/nonexistent")
    assert proc.returncode == 2
    assert "llama31-405b-v6e16" in proc.stderr and "Traceback" not in proc.stderr


USER_PROGRAM = """
import pulumi
from tpu_serving import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, catalog

cluster = TpuCluster("c", TpuClusterArgs(project="my-project-123", region="us-east5", zone="{cluster_zone}", name="c"))
TpuNodePool(
    "s",
    TpuNodePoolArgs(
        project="my-project-123", region="us-east5", zone="{pool_zone}", cluster=cluster.cluster.id,
        service_account_id="s-nodes", shape=catalog.resolve_slice_name("{slice}"), pool_names=("s",),
    ),
)
"""


def user_program(
    tmp_path: Path, *, slice_: str = "v6e-16", cluster_zone: str = "us-east5-b", pool_zone: str = "us-east5-b"
):
    """A user's own Pulumi program in its own folder, using the library's building blocks."""
    (tmp_path / "Pulumi.yaml").write_text("name: myinfra\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text(
        USER_PROGRAM.format(slice=slice_, cluster_zone=cluster_zone, pool_zone=pool_zone)
    )
    return run_preview("dev", "--root", str(tmp_path), "--quiet")


@pytest.mark.slow
def test_preview_cli_user_program_runs(tmp_path):
    proc = user_program(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "build" / "dev" / "plan.json").exists()
    assert proc.stdout.startswith("== dev\n")  # --quiet: the summary under a line naming the stack


@pytest.mark.slow
@pytest.mark.parametrize(
    "edit, expected",
    [
        (dict(slice_="v6e-15"), "no v6e slice has 15 chips ('v6e-15'); valid: v6e-1, v6e-4, v6e-8, v6e-16"),
        (
            dict(pool_zone="europe-west4-a"),
            "TpuNodePoolArgs.zone = 'europe-west4-a': zone is outside the region 'us-east5'",
        ),
        (dict(cluster_zone="us-west4-a"), "TpuClusterArgs.zone = 'us-west4-a': zone is outside the region 'us-east5'"),
    ],
    ids=["unknown-slice", "pool-zone-outside-region", "cluster-zone-outside-region"],
)
def test_preview_cli_user_program_mistakes_fail_without_traceback(tmp_path, edit, expected):
    """A user's program that asks for a slice that does not exist, or puts a pool outside the cluster's
    region, stops with one message naming the value and the valid choices: no traceback."""
    proc = user_program(tmp_path, **edit)
    assert proc.returncode != 0
    assert expected in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr + proc.stdout


@pytest.mark.slow
def test_preview_cli_user_program_python_mistake_names_the_users_line(tmp_path):
    """A misspelled keyword in a user's program: one line with its file and line, no traceback (the
    `--traceback` option shows it)."""
    (tmp_path / "Pulumi.yaml").write_text("name: myinfra\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    program = USER_PROGRAM.format(slice="v6e-16", cluster_zone="us-east5-b", pool_zone="us-east5-b")
    (tmp_path / "__main__.py").write_text(program.replace('name="c")', 'nme="c")'))
    proc = run_preview("dev", "--root", str(tmp_path), "--quiet")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (
        "error: __main__.py:5: TypeError: TpuClusterArgs.__init__() got an unexpected keyword argument 'nme'"
    )
    assert "Traceback" in run_preview("dev", "--root", str(tmp_path), "--traceback").stderr
