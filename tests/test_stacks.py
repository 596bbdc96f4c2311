"""Every stack previews cleanly, and the plans hold what the stacks promise."""

import json
import re
from typing import Any

import pytest

from tests.conftest import STACKS, STACKS_ROOT, plan_of, resource
from tpu_serving_tools.preview.offline import kubernetes_objects

CLUSTER = "gcp:container/cluster:Cluster"
NODE_POOL = "gcp:container/nodePool:NodePool"
BUCKET = "gcp:storage/bucket:Bucket"
GSA = "gcp:serviceaccount/account:Account"
PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
SA_IAM = "gcp:serviceaccount/iAMMember:IAMMember"
KSA = "kubernetes:core/v1:ServiceAccount"
EXISTING_CLUSTER = "tpu-serving:index:ExistingCluster"
PLATFORM_CLUSTER = "tpu-serving:index:PlatformCluster"
EXISTING_TPU_POOLS = "tpu-serving:index:ExistingTpuNodePool"
SERVICE = "gcp:projects/service:Service"


def on_existing_cluster(plan) -> bool:
    """Whether the stack deploys on an existing cluster (``cluster.existing``): no cluster, no node pool of its own."""
    return bool(plan.of_type(EXISTING_CLUSTER))


def on_platform(plan) -> bool:
    """Whether the stack is a model stack on a platform stack's cluster (``platform``): its own TPU pools there."""
    return bool(plan.of_type(PLATFORM_CLUSTER))


FORBIDDEN_PROJECT_ROLES = {
    "roles/owner",
    "roles/editor",
    "roles/viewer",
    "roles/storage.admin",
    "roles/storage.objectAdmin",
}


def test_stacks_are_the_expected_ones():
    assert {"llama31-405b-v6e16", "saxml-175b-v5e32x2"} <= set(STACKS)


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_preview_cleanly(stack):
    plan = plan_of(stack)
    if on_existing_cluster(plan):
        assert plan.of_type(EXISTING_TPU_POOLS) and not plan.of_type(CLUSTER) and not plan.of_type(NODE_POOL)
    elif on_platform(plan):
        assert plan.of_type(NODE_POOL) and not plan.of_type(CLUSTER)
    else:
        assert plan.of_type(CLUSTER) and plan.of_type(NODE_POOL)
    root = f"urn:pulumi:{stack}::tpu-serving::pulumi:pulumi:Stack::tpu-serving-{stack}"
    urns = {r.urn for r in plan.resources}
    read = {u for r in plan.resources for u in r.dependencies if "pulumi:pulumi:StackReference::" in u}
    assert len(read) <= 1 and (not read or on_platform(plan))  # a model stack's platform, read (not declared)
    for r in plan.resources:
        assert r.parent in urns | {root}, f"{r.name} has an undeclared parent {r.parent}"
        assert set(r.dependencies) <= urns | read, f"{r.name} depends on an undeclared resource"


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_least_privilege_iam(stack):
    plan = plan_of(stack)
    roles = {r.inputs["role"] for r in plan.of_type(PROJECT_IAM)}
    assert not roles & FORBIDDEN_PROJECT_ROLES
    assert not any(r.startswith("roles/storage.") for r in roles)
    bucket_names = {b.inputs["name"] for b in plan.of_type(BUCKET)} | {
        name for b in plan.of_type("tpu-serving:index:Buckets") for name in b.inputs.get("existingBucketNames", ())
    }
    grants = plan.of_type(BUCKET_IAM)
    assert grants
    for grant in grants:
        assert grant.inputs["role"] in {"roles/storage.objectViewer", "roles/storage.objectUser"}
        assert grant.inputs["bucket"] in bucket_names


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_buckets_are_private_and_checkpoints_protected(stack):
    plan = plan_of(stack)
    apis = {"tpu-serving:index:ProjectServices$gcp:projects/service:Service"} if plan.of_type(SERVICE) else set()
    for b in plan.of_type(BUCKET):
        assert b.inputs["uniformBucketLevelAccess"] is True
        assert b.inputs["publicAccessPrevention"] == "enforced"
        waits_for = {d.split("::")[-2] for d in b.dependencies}
        assert waits_for == apis, "buckets wait for the project's APIs only (when the stack enables them)"
        assert b.protect == (b.inputs["labels"]["purpose"] == "checkpoints")


def test_stacks_llama405b_infrastructure():
    plan = plan_of("llama31-405b-v6e16")
    (cluster,) = plan.of_type(CLUSTER)
    ci = cluster.inputs
    assert ci["location"] == "us-east5"  # a region: a regional cluster
    assert ci["workloadIdentityConfig"] == {"workloadPool": "tpu-serving-demo.svc.id.goog"}
    assert ci["removeDefaultNodePool"] is True and ci["deletionProtection"] is True
    assert ci["releaseChannel"] == {"channel": "REGULAR"}
    assert ci["monitoringConfig"]["managedPrometheus"] == {"enabled": True}
    assert ci["addonsConfig"]["gcsFuseCsiDriverConfig"] == {"enabled": True}
    assert ci["nodePoolDefaults"]["nodeConfigDefaults"]["gcfsConfig"] == {"enabled": True}

    tpu = resource(plan, NODE_POOL, "llama405b-v6e16")
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
        waits_for = {d.split("::")[-2] for d in gsa.dependencies}
        assert waits_for == {"tpu-serving:index:ProjectServices$gcp:projects/service:Service"}, (
            "GCP service accounts wait for the project's APIs only, never for the cluster"
        )

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
    # chips = VMs x the chips of the machine type, which GKE names `...-<chips>t` (ct6e-standard-8t: 8 per VM)
    assert slices and all(s["vms"] * int(re.search(r"-(\d+)t$", s["machineType"])[1]) == s["chips"] for s in slices)
    if "kubeconfigFile" in plan.outputs:  # an existing cluster reached through a kubeconfig file of the user's
        assert "getCredentials" not in plan.outputs and on_existing_cluster(plan)
    else:
        assert plan.outputs["getCredentials"].startswith("gcloud container clusters get-credentials")


def _bucket_roles_of(plan, account_name: str) -> dict[str, str]:
    """Bucket name -> role granted to the service account resource ``account_name``."""
    (account,) = [a for a in plan.of_type(GSA) if a.name == account_name]
    return {
        g.inputs["bucket"]: g.inputs["role"]
        for g in plan.of_type(BUCKET_IAM)
        if g.property_dependencies.get("member") == [account.urn]
    }


def test_stacks_host_network_nodes_hold_exactly_their_bucket_roles():
    # Sax model servers (host network) read SAX_ROOT in the state bucket as their TPU nodes' account.
    sax = plan_of("saxml-175b-v5e32x2")
    state = sax.outputs["buckets"]["state"]
    assert _bucket_roles_of(sax, "saxml175b-v5e32-nodes") == {state: "roles/storage.objectViewer"}
    assert _bucket_roles_of(sax, "saxml175b-nodes") == {}  # the CPU pool runs no host-network pod
    # PathwaysJob head and workers (host network) write pathwaysDir as their nodes' accounts.
    for stack, cluster, tpu in (
        ("pathwaysjob-batch-v6e16", "pwbatch", "v6e16"),
        ("pathwaysjob-interactive-v5e16", "pwinteractive", "v5e16"),
    ):
        plan = plan_of(stack)
        scratch = plan.outputs["buckets"]["scratch"]
        assert _bucket_roles_of(plan, f"{cluster}-{tpu}-nodes") == {scratch: "roles/storage.objectUser"}
        assert _bucket_roles_of(plan, f"{cluster}-head-nodes") == {scratch: "roles/storage.objectUser"}
        assert _bucket_roles_of(plan, f"{cluster}-nodes") == {}
    # JetStream pods are not on the host network: their TPU nodes' account holds no bucket role.
    jet = plan_of("llama31-405b-v6e16")
    assert _bucket_roles_of(jet, "llama405b-v6e16-nodes") == {}


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_each_tpu_pool_runs_as_its_own_account(stack):
    plan = plan_of(stack)
    if on_platform(plan):  # the platform's node account, which it exports for its model stacks' pools
        platform = plan_of(json.loads(plan.config["tpu-serving:platform"])["stack"].rsplit("/", 1)[1])
        email = platform.outputs["platform"]["nodeServiceAccount"]
        assert {p.inputs["nodeConfig"]["serviceAccount"] for p in plan.of_type(NODE_POOL)} == {email}
        assert not [a for a in plan.of_type(GSA) if a.inputs["accountId"].endswith("-nodes")]
        return
    for pool in plan.of_type(NODE_POOL):
        (account_urn,) = pool.property_dependencies["nodeConfig"]
        account = next(r for r in plan.resources if r.urn == account_urn)
        users = [p.name for p in plan.of_type(NODE_POOL) if p.property_dependencies["nodeConfig"] == [account_urn]]
        machine = pool.inputs["nodeConfig"]["machineType"]
        if machine.startswith("ct"):  # TPU pools: one account per slice kind, shared only by its own pools
            assert all(u.rsplit("-", 1)[0] == pool.name.rsplit("-", 1)[0] or u == pool.name for u in users), users
            assert account.name != f"{plan.outputs['clusterName']}-nodes"


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_enable_their_apis_first_and_keep_them_on(stack):
    plan = plan_of(stack)
    services = plan.of_type("gcp:projects/service:Service")
    if not services and plan.of_type(PLATFORM_CLUSTER):  # a model stack: its platform enables them (GKE review m3)
        from tpu_serving.config import load_stack_config
        from tpu_serving.derived import stack_apis
        from tpu_serving_tools.preview.stack_files import load_project, stack_config

        cfg = load_stack_config(stack_config(load_project(STACKS_ROOT), stack))
        assert cfg.platform is not None
        platform = plan_of(cfg.platform.stack_name).of_type(SERVICE)
        assert set(stack_apis(cfg)) <= {s.inputs["service"] for s in platform}
        assert all(s.inputs["disableOnDestroy"] is False for s in platform)
        return
    if not services:  # the stack names its APIs existing (projectApis): the preview lists them, each one it uses
        (named,) = [e for e in plan.outputs["cloudResources"] if e["kind"] == "project APIs"]
        assert named["status"] == "existing" and "container.googleapis.com" in named["name"]
        return
    apis = {s.inputs["service"] for s in services}
    assert {
        "container.googleapis.com",
        "compute.googleapis.com",
        "iam.googleapis.com",
        "storage.googleapis.com",
    } <= apis
    assert "containerfilesystem.googleapis.com" in apis  # image streaming is on in every stack
    assert all(s.inputs["disableOnDestroy"] is False for s in services)
    service_urns = {s.urn for s in services}
    for r in plan.resources:
        if r.custom and r.type.startswith("gcp:") and r.type != "gcp:projects/service:Service":
            # Directly, or through a dependency that waits for them (e.g. a node pool through its cluster).
            seen, todo = set(), list(r.dependencies)
            while todo and not service_urns <= seen:
                urn = todo.pop()
                if urn not in seen:
                    seen.add(urn)
                    todo += next((d.dependencies for d in plan.resources if d.urn == urn), [])
            assert service_urns <= seen, f"{r.type} {r.name} does not wait for the APIs"


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_cluster_ignores_its_removed_default_pool(stack):
    if on_existing_cluster(plan_of(stack)) or on_platform(plan_of(stack)):
        pytest.skip("an existing or a platform's cluster: the stack creates no cluster")
    (cluster,) = plan_of(stack).of_type(CLUSTER)
    assert cluster.ignore_changes == ["nodeConfig", "initialNodeCount"]
    assert cluster.inputs["removeDefaultNodePool"] is True
    for pool in plan_of(stack).of_type(NODE_POOL):
        if "autoscaling" in pool.inputs:  # a changed minNodes must not replace an autoscaled pool
            # one created whole leaves its node count to the autoscaler (it may take the slice down to zero)
            owned = "nodeCount" if "nodeCount" in pool.inputs else "initialNodeCount"
            assert pool.ignore_changes == [owned], pool.name


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_maintenance_window_and_group_rbac(stack):
    """The cluster's maintenance window and Google Groups security group are the stack file's (the defaults
    where it sets none), so a stack of your own domain or window passes too."""
    from tpu_serving.config import load_stack_config
    from tpu_serving_tools.preview.stack_files import load_project, stack_config

    cfg = load_stack_config(stack_config(load_project(STACKS_ROOT), stack))
    m = cfg.cluster.maintenance
    if cfg.existing:  # the cluster's maintenance is its owner's; the plan records its Google Groups security group
        (existing,) = plan_of(stack).of_type(EXISTING_CLUSTER) or plan_of(stack).of_type(PLATFORM_CLUSTER)
        assert existing.inputs.get("securityGroup") == cfg.cluster.security_group
        return
    (cluster,) = plan_of(stack).of_type(CLUSTER)
    assert cluster.inputs["maintenancePolicy"]["recurringWindow"] == {
        "startTime": m.window_start,
        "endTime": m.window_end,
        "recurrence": m.recurrence,
    }
    groups = cluster.inputs.get("authenticatorGroupsConfig")
    assert groups == ({"securityGroup": cfg.cluster.security_group} if cfg.cluster.security_group else None)


def test_stacks_maintenance_defaults_are_weekend_nights():
    from tpu_serving.platform.maintenance import MaintenanceSettings

    m = MaintenanceSettings()
    assert (m.window_start, m.window_end, m.recurrence) == (
        "2026-01-03T02:00:00Z",
        "2026-01-03T08:00:00Z",
        "FREQ=WEEKLY;BYDAY=SA,SU",
    )


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_default_images_are_pinned(stack):
    from tpu_serving.catalog.images import image_problem
    from tpu_serving_tools.preview.offline import kubernetes_objects

    objects = kubernetes_objects(plan_of(stack))
    images = {c["image"] for o in objects for c in _containers(o)}
    # The PathwaysJob controller picks the server and proxy images itself, tagged with
    # spec.pathwaysVersion, or `latest` when it is unset (pathwaysjob_controller.go v0.1.4).
    images |= {
        f"us-docker.pkg.dev/cloud-tpu-v2-images/pathways/{image}:{o['spec'].get('pathwaysVersion') or 'latest'}"
        for o in objects
        if o["kind"] == "PathwaysJob"
        for image in ("server", "proxy_server")
    }
    assert images
    assert {i: image_problem(i, pinned=True) for i in images if image_problem(i, pinned=True)} == {}


# Probes that run a command: Kubernetes gives an exec probe 1 s unless timeoutSeconds says otherwise (core/v1
# Probe.timeoutSeconds, "Defaults to 1 second"), too short for a command-line tool that starts an interpreter
# (`ray health-check` took up to about 1 s against an idle Ray head). Every exec probe of every stack sets a timeout of
# a few seconds, at most its period.


PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def _containers(obj: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        if isinstance(obj.get("containers"), list):
            found += [c for c in obj["containers"] if isinstance(c, dict)]
        for v in obj.values():
            found += _containers(v)
    elif isinstance(obj, list):
        for v in obj:
            found += _containers(v)
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_every_exec_probe_has_time_to_run(stack: str):
    probes = [
        (c["name"], kind, c[kind])
        for o in kubernetes_objects(plan_of(stack))
        for c in _containers(o)
        for kind in PROBES
        if isinstance(c.get(kind), dict) and "exec" in c[kind]
    ]
    short = [(n, k, p.get("timeoutSeconds", 1)) for n, k, p in probes if p.get("timeoutSeconds", 1) < 5]
    assert not short, f"exec probes with too short a timeout: {short}"
    overlapping = [(n, k) for n, k, p in probes if p["timeoutSeconds"] > p.get("periodSeconds", 10)]
    assert not overlapping, overlapping


def _multi_host_groups(stack: str) -> bool:
    """Whether a LeaderWorkerSet of ``stack`` spans more than one host (a group with Ray workers)."""
    return any(
        o.get("kind") == "LeaderWorkerSet" and o["spec"]["leaderWorkerTemplate"].get("size", 1) > 1
        for o in kubernetes_objects(plan_of(stack))
    )


def test_the_multi_host_vllm_stacks_have_exec_probes():
    """The rule above is not vacuous: the vLLM workers' Ray check is an exec probe. A single-host vLLM stack (one
    of a user's own, docs/add-your-own-model.md) has no Ray workers and so no such probe."""
    stacks = [s for s in STACKS if s.startswith("vllm-") and _multi_host_groups(s)]
    assert stacks
    for stack in stacks:
        assert any(
            "exec" in c.get("readinessProbe", {}) for o in kubernetes_objects(plan_of(stack)) for c in _containers(o)
        ), stack
