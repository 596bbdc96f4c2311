"""The components for other languages: the analyzer accepts every public component, offline."""

from __future__ import annotations

import pulumi
import pytest
import yaml

import tpu_serving
from tests.conftest import ROOT
from tpu_serving import catalog
from tpu_serving.provider import COMPONENTS, schema
from tpu_serving_tools.preview.offline import run_program


@pytest.fixture(scope="module")
def package() -> dict:
    return schema()


def test_provider_serves_every_public_component():
    public = {
        getattr(tpu_serving, n)
        for n in tpu_serving.__all__
        if isinstance(getattr(tpu_serving, n), type) and issubclass(getattr(tpu_serving, n), pulumi.ComponentResource)
    }
    assert set(COMPONENTS) == public


def test_provider_schema_lists_each_component_with_inputs_and_outputs(package):
    resources = package["resources"]
    assert set(resources) == {f"tpu-serving:index:{c.__name__}" for c in COMPONENTS}
    for token, spec in resources.items():
        assert spec["isComponent"] is True, token
        assert spec["inputProperties"], f"{token} has no inputs"
        assert spec["properties"], f"{token} has no outputs"
    deployment = resources["tpu-serving:index:TpuServingDeployment"]
    assert deployment["requiredInputs"] == ["settings"] and "outputs" in deployment["properties"]
    cluster = resources["tpu-serving:index:TpuCluster"]
    assert sorted(cluster["requiredInputs"]) == ["name", "project", "region", "zone"]  # the rest have defaults
    assert {"cluster", "kubeconfig", "provider", "nodeServiceAccount"} <= set(cluster["properties"])
    assert cluster["properties"]["cluster"]["$ref"].endswith("gcp:container%2Fcluster:Cluster")
    pool = resources["tpu-serving:index:TpuNodePool"]
    assert set(pool["requiredInputs"]) == {
        "project",
        "region",
        "zone",
        "cluster",
        "serviceAccountId",
        "shape",
        "poolNames",
    }


def test_provider_serves_the_host_maintenance_gate_and_the_image_mirror(package):
    """Both are public components (new-user review: a library program lost them): served, with their arguments
    (``starts`` and ``reload_seconds`` defaulted, so optional) and outputs in the schema."""
    from tpu_serving.operations.maintenance.host_maintenance_job import HostMaintenanceGate
    from tpu_serving.platform.image_mirror import ImageMirror

    assert {HostMaintenanceGate, ImageMirror} <= set(COMPONENTS)
    gate = package["resources"]["tpu-serving:index:HostMaintenanceGate"]
    assert gate["requiredInputs"] == ["namespace"]
    assert {"pools", "leaderWorkerSets", "fewestGroups", "starts", "reloadSeconds"} <= set(gate["inputProperties"])
    assert "cronJob" in gate["properties"]
    mirror = package["resources"]["tpu-serving:index:ImageMirror"]
    assert sorted(mirror["requiredInputs"]) == ["cluster", "location", "project"]
    assert {"dockerHub", "ghcr"} <= set(mirror["inputProperties"]) and "paths" in mirror["properties"]


def test_provider_schema_types_and_enums(package):
    types = package["types"]
    mode = types["tpu-serving:index:Mode"]
    assert [e["value"] for e in mode["enum"]] == ["interleaved", "disaggregated"]
    shape = types["tpu-serving:index:SliceShape"]["properties"]
    assert shape["machineType"]["$ref"] == "#/types/tpu-serving:index:MachineType"
    # Outputs that are provider resources refer to the gcp and kubernetes packages.
    assert {d["name"] for d in package["dependencies"]} == {"gcp", "kubernetes"}


def test_provider_plugin_manifest_runs_the_provider():
    manifest = yaml.safe_load((ROOT / "provider" / "PulumiPlugin.yaml").read_text())
    assert manifest["runtime"]["name"] == "python"
    assert "from tpu_serving.provider import main" in (ROOT / "provider" / "__main__.py").read_text()
    assert "-e .." in (ROOT / "provider" / "requirements.txt").read_text().splitlines()


def test_provider_components_accept_arguments_as_the_provider_passes_them():
    """Through the provider, arguments arrive as mappings with numbers as floats."""
    shape = catalog.slice_shape("ct6e-standard-4t", "4x4")
    wire = {
        "project": "p-123456",
        "region": "us-east5",
        "zone": "us-east5-b",
        "cluster": "cluster-id",
        "service_account_id": "c-a-nodes",
        "shape": {
            "machine_type": {
                "name": "ct6e-standard-4t",
                "generation": vars(shape.machine_type.generation),
                "chips_per_vm": 4.0,
                "topologies": list(shape.machine_type.topologies),
            },
            "topology": "4x4",
        },
        "pool_names": ["c-a-0", "c-a-1"],
        "disk_size_gb": 200.0,
    }

    def program():
        pool = tpu_serving.TpuNodePool("tpu", wire)  # type: ignore[arg-type]
        assert pool.shape.vms == 4
        assert pool.shape == shape and hash(pool.shape) == hash(shape)  # the lists arrive as tuples

    plan = run_program(program, {}, project="tpu-serving", stack="test")
    pools = plan.of_type("gcp:container/nodePool:NodePool")
    assert [p.inputs["nodeCount"] for p in pools] == [4, 4]
    assert {p.inputs["nodeConfig"]["diskSizeGb"] for p in pools} == {200}
