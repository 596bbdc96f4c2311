"""Every stack previews cleanly, and the plans hold what the stacks promise."""

import pytest

from tests.conftest import STACKS, plan_of, resource

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
GSA = "gcp:serviceaccount/account:Account"
PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
SA_IAM = "gcp:serviceaccount/iAMMember:IAMMember"
KSA = "kubernetes:core/v1:ServiceAccount"

FORBIDDEN_PROJECT_ROLES = {"roles/owner", "roles/editor", "roles/viewer", "roles/storage.admin", "roles/storage.objectAdmin"}


def test_stacks_are_the_expected_ones():
    assert {"llama31-405b-v6e16", "saxml-175b-v5e32x2"} <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_preview_cleanly(stack):
    plan = plan_of(stack)
    assert plan.of_type(CLUSTER) and plan.of_type(NODE_POOL)
    root = f"urn:pulumi:{stack}::tpu-serving::pulumi:pulumi:Stack::tpu-serving-{stack}"
    urns = {r.urn for r in plan.resources}
    for r in plan.resources:
        assert r.parent in urns | {root}, f"{r.name} has an undeclared parent {r.parent}"
        assert set(r.dependencies) <= urns, f"{r.name} depends on an undeclared resource"


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_least_privilege_iam(stack):
    plan = plan_of(stack)
    roles = {r.inputs["role"] for r in plan.of_type(PROJECT_IAM)}
    assert not roles & FORBIDDEN_PROJECT_ROLES
    assert not any(r.startswith("roles/storage.") for r in roles)
    bucket_names = {b.inputs["name"] for b in plan.of_type(BUCKET)}
    grants = plan.of_type(BUCKET_IAM)
    assert grants
    for grant in grants:
        assert grant.inputs["role"] in {"roles/storage.objectViewer", "roles/storage.objectUser"}
        assert grant.inputs["bucket"] in bucket_names


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_buckets_are_private_and_checkpoints_protected(stack):
    plan = plan_of(stack)
    for b in plan.of_type(BUCKET):
        assert b.inputs["uniformBucketLevelAccess"] is True
        assert b.inputs["publicAccessPrevention"] == "enforced"
        assert b.dependencies == [], "buckets must not wait for the cluster"
        assert b.protect == (b.inputs["labels"]["purpose"] == "checkpoints")


def test_stacks_llama405b_infrastructure():
    plan = plan_of("llama31-405b-v6e16")
    (cluster,) = plan.of_type(CLUSTER)
    ci = cluster.inputs
    assert ci["location"] == "us-east5"  # a region: a regional cluster
    assert ci["workloadIdentityConfig"] == {"workloadPool": "tpu-serving-demo.svc.id.goog"}
    assert ci["removeDefaultNodePool"] is True and ci["deletionProtection"] is True
    assert ci["releaseChannel"] == {"channel": "RAPID"}
    assert ci["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert ci["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert ci["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"] == {"enabled": True}

    tpu = resource(plan, NODE_POOL, "llama405b-v6e16-pool")
    ti = tpu.inputs
    assert ti["nodeConfig"]["machineType"] == "ct6e-standard-4t"
    assert ti["nodeCount"] == 4
    assert ti["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x4"}
    assert ti["nodeLocations"] == ["us-east5-b"]
    assert ti["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert cluster.urn in tpu.dependencies

    cpu = resource(plan, NODE_POOL, "llama405b-cpu")
    assert cpu.inputs["nodeConfig"]["machineType"].startswith("n2-")
    assert cluster.urn in cpu.dependencies

    for gsa in plan.of_type(GSA):
        assert gsa.dependencies == [], "GCP service accounts must not wait for the cluster"

    (wi,) = [r for r in plan.of_type(SA_IAM) if r.inputs["role"] == "roles/iam.workloadIdentityUser"]
    assert wi.inputs["member"] == "serviceAccount:tpu-serving-demo.svc.id.goog[llama405b/jetstream]"
    ksa = resource(plan, KSA, "llama405b-wi-ksa")
    assert "iam.gke.io/gcp-service-account" in ksa.inputs["metadata"]["annotations"]
    assert ksa.inputs["metadata"]["namespace"] == "llama405b"
    gsa = resource(plan, GSA, "llama405b-wi-gsa")
    assert gsa.urn in ksa.dependencies  # the annotation is the GSA's email


def test_stacks_saxml_two_v5e_4x8_slices():
    plan = plan_of("saxml-175b-v5e32x2")
    tpu_pools = [p for p in plan.of_type(NODE_POOL) if "placementPolicy" in p.inputs]
    assert len(tpu_pools) == 2
    for p in tpu_pools:
        assert p.inputs["nodeConfig"]["machineType"] == "ct5lp-hightpu-4t"
        assert p.inputs["nodeCount"] == 8
        assert p.inputs["placementPolicy"] == {"type": "COMPACT", "tpuTopology": "4x8"}
    assert sorted(p.inputs["name"] for p in tpu_pools) == ["saxml175b-v5e32-0", "saxml175b-v5e32-1"]


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_outputs_summarise_slices(stack):
    plan = plan_of(stack)
    slices = plan.outputs["slices"]
    assert slices and all(s["vms"] * 4 == s["chips"] for s in slices)
    assert plan.outputs["getCredentials"].startswith("gcloud container clusters get-credentials")
