"""``tpu-serving scan``'s own parts, without Checkov: the Terraform plan conversion, the pod templates taken
out of the controllers' objects, and the baseline."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import ALL_STACKS, plan_of
from tpu_serving_tools.scan import baseline as bl
from tpu_serving_tools.scan.generate_shapes import TOKENS
from tpu_serving_tools.scan.pods import extracted_pods
from tpu_serving_tools.scan.tfplan import SHAPES, UnknownResourceType, snake, terraform_name, terraform_plan

VLLM = "vllm-llama33-70b-v5e16"


def values(doc: dict, tf_type: str) -> dict:
    return next(r["values"] for r in doc["planned_values"]["root_module"]["resources"] if r["type"] == tf_type)


def test_scan_shapes_cover_every_gcp_type_of_every_stack():
    types = {r.type for s in ALL_STACKS for r in plan_of(s).resources if r.type.startswith("gcp:")}
    assert types <= set(SHAPES) == set(TOKENS)
    provenance = json.loads(
        (SHAPES_FILE := __import__("tpu_serving_tools.scan.tfplan").scan.tfplan.SHAPES_FILE).read_text()
    )
    assert provenance["provenance"]["repository"] == "pulumi/pulumi-gcp" and SHAPES_FILE.name == "tf_shapes.json"
    assert SHAPES["gcp:container/cluster:Cluster"]["terraform"] == "google_container_cluster"
    assert SHAPES["gcp:storage/bucketIAMMember:BucketIAMMember"]["terraform"] == "google_storage_bucket_iam_member"


def test_scan_names_undo_the_bridge_renames():
    assert snake("enablePrivateNodes") == "enable_private_nodes" and snake("ipv4CidrBlock") == "ipv4_cidr_block"
    policy = SHAPES["gcp:container/cluster:Cluster"]["fields"]["maintenance_policy"]["fields"]
    # a list block takes a plural name in Pulumi: maintenance_exclusion -> maintenanceExclusions
    assert terraform_name("maintenanceExclusions", policy)[0] == "maintenance_exclusion"
    # a one-item block keeps its name; an attribute is not a block
    fields = SHAPES["gcp:container/cluster:Cluster"]["fields"]
    assert terraform_name("privateClusterConfig", fields) == (
        "private_cluster_config",
        fields["private_cluster_config"],
    )
    assert terraform_name("resourceLabels", fields) == ("resource_labels", None)


def test_scan_terraform_plan_of_a_stack_has_blocks_as_lists_and_maps_as_maps():
    doc = terraform_plan(plan_of(VLLM).as_json())
    assert doc["format_version"] and doc["resource_changes"]
    cluster = values(doc, "google_container_cluster")
    assert cluster["private_cluster_config"] == [{"enable_private_nodes": True, "enable_private_endpoint": True}]
    assert cluster["master_authorized_networks_config"] == [{"gcp_public_cidrs_access_enabled": False}]
    assert cluster["control_plane_endpoints_config"] == [{"dns_endpoint_config": [{"allow_external_traffic": True}]}]
    assert cluster["resource_labels"]["app"] == "tpu-serving"  # a map stays a map
    assert cluster["node_config"][0]["workload_metadata_config"] == [{"mode": "GKE_METADATA"}]
    bucket = values(doc, "google_storage_bucket")
    assert bucket["uniform_bucket_level_access"] is True and bucket["public_access_prevention"] == "enforced"
    addresses = [r["address"] for r in doc["resource_changes"]]
    assert len(addresses) == len(set(addresses)) == sum(1 for r in plan_of(VLLM).resources if r.type.startswith("gcp:"))


def test_scan_unknown_values_are_left_out_and_marked():
    plan = copy.deepcopy(plan_of(VLLM).as_json())
    doc = terraform_plan(plan)
    pool = next(c for c in doc["resource_changes"] if c["type"] == "google_container_node_pool")
    assert "cluster" not in pool["change"]["after"] and pool["change"]["after_unknown"]["cluster"] is True
    assert pool["change"]["after_unknown"]["node_config"] == [{"service_account": True}]


def test_scan_refuses_a_type_it_cannot_name():
    plan = copy.deepcopy(plan_of(VLLM).as_json())
    plan["resources"].append({"type": "gcp:compute/firewall:Firewall", "name": "fw", "custom": True, "inputs": {}})
    with pytest.raises(UnknownResourceType, match="gcp:compute/firewall:Firewall"):
        terraform_plan(plan)


def test_scan_takes_each_pod_template_out_of_the_controllers_objects():
    def objects(stack: str) -> list[dict]:
        return [r.inputs for r in plan_of(stack).resources if r.custom and "kind" in r.inputs]

    names = lambda stack: sorted(p["metadata"]["name"] for p in extracted_pods(objects(stack)))  # noqa: E731
    assert names("llama31-405b-v6e16") == [
        "LeaderWorkerSet/jetstream-pathways/leader",
        "LeaderWorkerSet/jetstream-pathways/worker",
    ]
    assert names("saxml-175b-v5e32x2") == ["JobSet/sax-model-server-set/sax-model-server"]
    assert names("pathwaysjob-batch-v6e16") == ["PathwaysJob/pathways-device-check/main"]
    assert names("pathwaysjob-interactive-v5e16") == []  # no user container
    (leader, worker) = extracted_pods(objects("vllm-llama31-405b-v6e16"))
    assert leader["kind"] == "Pod" and leader["metadata"]["namespace"] == "vllm-llama405b"
    assert (
        leader["spec"]["containers"][0]["name"] == "vllm-leader"
        and worker["spec"]["containers"][0]["name"] == "vllm-worker"
    )


def test_scan_baseline_entries_need_a_check_a_pattern_and_a_reason(tmp_path):
    entries = bl.load()
    assert entries and all(e.reason and e.check.startswith("CKV_") for e in entries)
    bad = tmp_path / "b.yaml"
    bad.write_text("accepted:\n  - {check: CKV_K8S_1, resource: '*', reason: ' '}\n  - {check: CKV_K8S_2}\n")
    with pytest.raises(bl.BaselineError) as err:
        bl.load(bad)
    assert "accepted[0]" in str(err.value) and "reason is empty" in str(err.value) and "accepted[1]" in str(err.value)
    bad.write_text("[]\n")
    with pytest.raises(bl.BaselineError, match="a list `accepted`"):
        bl.load(bad)


def test_scan_baseline_splits_and_names_stale_entries():
    entries = [
        bl.Entry("CKV_K8S_20", "Pod.*.LeaderWorkerSet/*", "r"),
        bl.Entry("CKV_GCP_25", "google_container_cluster.x", "r"),
    ]
    inside = bl.Finding("s", "CKV_K8S_20", "Pod.ns.LeaderWorkerSet/vllm/leader", "t")
    other_check = bl.Finding("s", "CKV_K8S_28", "Pod.ns.LeaderWorkerSet/vllm/leader", "t")
    other_resource = bl.Finding("s", "CKV_K8S_20", "Deployment.ns.epp", "t")
    accepted, refused = bl.split([inside, other_check, other_resource], entries)
    assert accepted == [inside] and refused == [other_check, other_resource]
    assert bl.stale([inside], entries) == [entries[1]]


def test_scan_checkov_release_is_the_pinned_one_and_the_missing_message_names_it(capsys, tmp_path, monkeypatch):
    """New-user review 11, m15: a program of its own has no Makefile; without Checkov the scan said only `make
    scan`. It now names the pinned release, which both scan pin files hold."""
    from tests.conftest import ROOT
    from tpu_serving_tools.scan import run

    for name in ("requirements-scan.txt", "constraints-scan.txt"):
        assert f"\ncheckov=={run.CHECKOV}\n" in "\n" + (ROOT / name).read_text(), name
    monkeypatch.setattr(run, "find_checkov", lambda given, root: None)
    assert run.main(["--root", str(tmp_path)]) == 2
    assert f"pip install checkov=={run.CHECKOV}`" in capsys.readouterr().err
