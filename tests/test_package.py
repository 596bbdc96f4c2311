"""The installed package: import name, typing marker, console script on a user's own program."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import ROOT

TOOL = Path(sys.executable).with_name("tpu-serving")

USER_PROGRAM = """
import pulumi
from tpu_serving import TpuCluster, TpuClusterArgs, TpuNodePool, TpuNodePoolArgs, catalog

config = pulumi.Config()
cluster = TpuCluster("mine", TpuClusterArgs(project="my-project-1", region="us-east5", zone="us-east5-b", name="mine"))
pool = TpuNodePool(
    "mine-v6e16",
    TpuNodePoolArgs(
        project="my-project-1", region="us-east5", zone="us-east5-b", cluster=cluster.cluster.id,
        service_account_id="mine-v6e16", shape=catalog.resolve_slice_name(config.require("slice")),
        pool_names=("mine-v6e16",),
    ),
)
pulumi.export("nodeSelector", pool.node_selector)
"""


DEPLOYMENT_PROGRAM = """
import pulumi
from tpu_serving import TpuServingDeployment, TpuServingDeploymentArgs
from tpu_serving.config import validate_stack

config = pulumi.Config()
settings = validate_stack({
    "project": "my-project-1",
    "region": "us-east5",
    "zone": "us-east5-b",
    "cluster": {"name": "mine"},
    "tpuSlices": [{"name": "v6e16", "slice": config.require("slice")}],
    "buckets": [{"purpose": "checkpoints", "workloadAccess": "read"}, {"purpose": "scratch"}],
    "workloadIdentity": {"namespace": "serving"},
    "serving": {"backend": "jetstream-pathways", "slices": ["v6e16"], "checkpointPath": "llama/int8",
                "maxtext": {"configFile": "MaxText/configs/base.yml", "modelName": "llama3.1-405b",
                            "quantization": "int8", "maxPrefillPredictLength": 1024, "maxTargetLength": 2048,
                            "perDeviceBatchSize": 1, "iciAutoregressiveParallelism": 2, "iciTensorParallelism": 8},
                "singleGroup": "accepted"},
    "observability": {"unpaged": True}, "production": False,
})
deployment = TpuServingDeployment("mine", TpuServingDeploymentArgs(settings))
pulumi.export("service", deployment.outputs["service"])
"""


def users_project(where: Path, name: str, program: str, stack: str) -> Path:
    """A Pulumi project of a user's own in ``where/name`` with ``program`` and one stack setting ``slice``."""
    project = where / name
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text(f"name: {name}\nruntime: python\nstackConfigDir: stacks\n")
    (project / "__main__.py").write_text(textwrap.dedent(program))
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(f"config:\n  {name}:slice: v6e-16\n")
    return project


def test_package_import_name_and_typing_marker():
    import tpu_serving

    assert Path(tpu_serving.__file__).parent == ROOT / "components"
    assert (Path(tpu_serving.__file__).parent / "py.typed").is_file()


@pytest.mark.slow
def test_package_console_script_previews_a_users_own_program(tmp_path):
    project = users_project(tmp_path, "users-project", USER_PROGRAM, "dev")
    proc = subprocess.run(
        [str(TOOL), "preview", "dev", "--root", str(project)], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    plan = json.loads((project / "build" / "dev" / "plan.json").read_text())
    assert plan["outputs"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == "4x4"
    assert "TPU: 1 slice(s), 16 chips" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("command", ["check", "policy"])
def test_package_console_script_runs_each_tool(command):
    proc = subprocess.run(
        [str(TOOL), command, "--stack", "llama31-405b-v6e16", "--root", str(ROOT)],
        cwd=ROOT.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "llama31-405b-v6e16" in proc.stdout


@pytest.mark.slow
def test_package_console_script_usage_lists_the_commands():
    proc = subprocess.run([str(TOOL)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert all(c in proc.stderr for c in ("preview", "check", "policy", "diff"))
    helped = subprocess.run([str(TOOL), "--help"], capture_output=True, text=True, timeout=60)
    assert helped.returncode == 0 and helped.stderr == ""
    assert all(c in helped.stdout for c in ("preview", "check", "policy", "diff"))
    version = subprocess.run([str(TOOL), "--version"], capture_output=True, text=True, timeout=60)
    assert version.returncode == 0 and version.stdout.startswith("tpu-serving 0.")


@pytest.mark.slow
def test_package_wheel_install_is_self_contained(tmp_path):
    """``pip install .`` (not editable) into a fresh environment, then, in another folder, a
    20-line program using TpuServingDeployment previews offline with the installed console
    script; the wheel carries every module, the typing marker and the publisher script."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python*/site-packages"))
    # --target: a plain install into that folder (pip would otherwise replace this environment's
    # own editable install of the same distribution); its console script lands in <site>/bin.
    build = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(ROOT),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert build.returncode == 0, build.stderr
    # Its dependencies come from this environment's site-packages, added as a plain path: the
    # editable install's path hook there is not loaded, so tpu_serving can only be the wheel's.
    deps = next(p for p in sys.path if p.endswith("site-packages"))
    (site / "deps.pth").write_text(deps + "\n")
    user = users_project(tmp_path, "platform-team", DEPLOYMENT_PROGRAM, "prod")
    run = subprocess.run(
        # The installed console script, run by the fresh environment's interpreter.
        [
            str(venv / "bin" / "python"),
            str(site / "bin" / "tpu-serving"),
            "preview",
            "prod",
            "--root",
            str(user),
            "--quiet",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    assert "TPU: 1 slice(s), 16 chips" in run.stdout
    where = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-c",
            "import tpu_serving, tpu_serving.backends.saxml.pods as s; s.publisher_script(); print(tpu_serving.__file__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    assert (site / "tpu_serving" / "py.typed").is_file()
    licenses = [p.read_text() for p in site.glob("tpu_serving-*.dist-info/licenses/LICENSE")]
    assert len(licenses) == 1 and licenses[0] == (ROOT / "LICENSE").read_text()


def test_package_license_is_apache_2():
    """A fork, a wheel and the README say one licence: the Apache License 2.0 text in LICENSE (as
    kubernetes-sigs/lws ships it), its SPDX id in pyproject's metadata with the file named for the wheel."""
    import tomllib

    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert (
        "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text and "END OF TERMS AND CONDITIONS" in text
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    assert "## License\n\nApache License 2.0: [LICENSE](LICENSE)." in (ROOT / "README.md").read_text()


def test_package_lists_every_subpackage():
    """A subpackage missing from pyproject's `packages` would be left out of the wheel."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    roots = {
        "tpu_serving": ROOT / "components",
        "tpu_serving_tools": ROOT / "tools",
        "tpu_serving_policy": ROOT / "policy",
    }
    found = {
        ".".join([name, *init.parent.relative_to(root).parts])
        for name, root in roots.items()
        for init in root.rglob("__init__.py")
        if ".venv" not in init.parts
    }
    assert found == listed


@pytest.mark.slow
def test_package_deployment_component_in_a_users_program(tmp_path):
    project = users_project(tmp_path, "platform-team", DEPLOYMENT_PROGRAM, "prod")
    assert len(DEPLOYMENT_PROGRAM.strip().splitlines()) <= 22
    proc = subprocess.run(
        [str(TOOL), "preview", "prod", "--root", str(project), "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "TPU: 1 slice(s), 16 chips" in proc.stdout
    plan = json.loads((project / "build" / "prod" / "plan.json").read_text())
    assert plan["outputs"]["service"] == "jetstream-svc"
    kinds = {r["inputs"].get("kind") for r in plan["resources"]}
    assert {"LeaderWorkerSet", "Service", "ResourceQuota", "NetworkPolicy"} <= kinds
    (deployment,) = [r for r in plan["resources"] if r["type"] == "tpu-serving:index:TpuServingDeployment"]
    assert all(
        r["parent"] == deployment["urn"] for r in plan["resources"] if r["type"] == "tpu-serving:index:TpuCluster"
    )


def test_package_stack_program_is_short():
    lines = [line for line in (ROOT / "__main__.py").read_text().splitlines() if line.strip()]
    assert len(lines) < 40


def test_package_backends_are_registered_in_one_place():
    import typing

    from tpu_serving.backends import BACKENDS, Serving

    assert set(BACKENDS) == {"jetstream-pathways", "saxml", "pathways-job", "vllm"}
    union = typing.get_args(typing.get_args(Serving)[0])
    assert {b.settings for b in BACKENDS.values()} == set(union)
    for name, backend in BACKENDS.items():
        assert typing.get_args(backend.settings.model_fields["backend"].annotation) == (name,)


@pytest.mark.slow
def test_package_build_leaves_the_previews_folder_alone(tmp_path):
    """``pip install .`` builds under .setuptools-build/ (setup.cfg): build/ holds only the previews'
    build/<stack>/, and a package build put build/lib and build/bdist.<platform> there."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.split("\0")
    copy = tmp_path / "checkout"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            (copy / name).write_bytes((ROOT / name).read_bytes())
    install = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index"]
        + ["--target", str(tmp_path / "site"), str(copy)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert install.returncode == 0, install.stderr
    assert (tmp_path / "site" / "tpu_serving" / "py.typed").is_file()
    assert not (copy / "build").exists()
    assert (copy / ".setuptools-build" / "lib" / "tpu_serving" / "catalog" / "__init__.py").is_file()


def test_package_exports_the_size_and_error_types_a_program_names():
    """A program imports what it constructs and catches from the package itself (user review round 41, m1)."""
    import tpu_serving
    from tpu_serving.catalog import CatalogError
    from tpu_serving.catalog.models import ModelSize, WeightPrecision
    from tpu_serving.common.validation import ArgumentsError

    exported = {n: getattr(tpu_serving, n) for n in ("ModelSize", "WeightPrecision", "ArgumentsError", "CatalogError")}
    assert exported == {
        "ModelSize": ModelSize,
        "WeightPrecision": WeightPrecision,
        "ArgumentsError": ArgumentsError,
        "CatalogError": CatalogError,
    }
    assert set(exported) <= set(tpu_serving.__all__)


def test_package_exports_the_host_maintenance_gate_and_the_image_mirror():
    """A program of its own adds the gate and the mirror from the package itself, as the stack file's program does
    (new-user review: neither was exported, so a library program lost both)."""
    import tpu_serving
    from tpu_serving.operations.maintenance.host_maintenance_job import HostMaintenanceGate, HostMaintenanceGateArgs
    from tpu_serving.platform.image_mirror import ImageMirror, ImageMirrorArgs

    names = ("HostMaintenanceGate", "HostMaintenanceGateArgs", "ImageMirror", "ImageMirrorArgs")
    exported = {n: getattr(tpu_serving, n, None) for n in names}
    assert exported == {
        "HostMaintenanceGate": HostMaintenanceGate,
        "HostMaintenanceGateArgs": HostMaintenanceGateArgs,
        "ImageMirror": ImageMirror,
        "ImageMirrorArgs": ImageMirrorArgs,
    }
    assert set(names) <= set(tpu_serving.__all__)


def test_package_exports_every_argument_and_settings_type_its_components_take():
    """Library review 8, m1: docs/library-api.md says every argument and settings class imports from tpu_serving, and
    MaintenanceSettings, MaintenanceExclusion, Capacity and others did not."""
    import dataclasses
    import typing

    import tpu_serving
    from tpu_serving.common.validation import type_hints

    def types_in(annotation: object) -> set[type]:
        found = {annotation} if isinstance(annotation, type) else set()
        for arg in typing.get_args(annotation):
            found |= types_in(arg)
        return found

    exported = {getattr(tpu_serving, n) for n in tpu_serving.__all__}
    missing = set()
    entry = [c for c in exported if isinstance(c, type) and c.__name__.endswith(("Args", "Settings"))]
    for cls in [c for c in entry if dataclasses.is_dataclass(c)]:  # the components' arguments and settings
        for hint in type_hints(cls).values():
            for t in types_in(hint):
                ours = t.__module__.startswith("tpu_serving")
                # a nested settings class a program must build (a choice takes its plain string too)
                if ours and dataclasses.is_dataclass(t) and t not in exported:
                    missing.add(f"{cls.__name__} -> {t.__module__}.{t.__name__}")
    assert not missing, sorted(missing)
