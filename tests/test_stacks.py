"""Every stack previews cleanly, and the plans hold what the stacks promise."""

import copy
import json
import re
from typing import Any

import pytest

from tests.conftest import STACKS, STACKS_ROOT, plan_of, resource, waits_for
from tests.tools.preview.test_security_notes import DNS_REACH
from tpu_serving_policy.rules import pod_specs
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.preview.security_notes import cluster_notes
from tpu_serving_tools.runtime import scope
from tpu_serving_tools.runtime.planview import PlanView

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


# The hardened defaults in every stack's plan, and the Cloud NAT the stacks of one region share.


API_CALLERS = {"epp", "publish"}
"""The containers whose pods keep a service account token: the endpoint picker and the Sax publisher."""


def workloads(stack: str):
    return [
        r.inputs
        for r in plan_of(stack).resources
        if r.custom and r.inputs.get("kind") in {"Deployment", "Job", "LeaderWorkerSet", "JobSet", "PathwaysJob"}
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_security_every_serving_pod_template_is_hardened(stack):
    pods = [p for w in workloads(stack) for p in pod_specs(w)]
    # an interactive PathwaysJob declares no pod: its controller builds them all from its own code
    assert bool(pods) is (stack != "pathwaysjob-interactive-v5e16")
    for pod in pods:
        names = {c["name"] for c in pod["containers"]}
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is bool(names & API_CALLERS), names
        for c in pod["containers"]:
            sc = c["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["capabilities"]["drop"] == ["ALL"], c["name"]


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_security_every_cluster_has_private_nodes_and_a_named_control_plane_choice(stack):
    clusters = [r for r in plan_of(stack).resources if r.type == "gcp:container/cluster:Cluster"]
    if not clusters:  # an existing cluster or a platform's: its owner's choices, which the stack never changes
        owner = ("tpu-serving:index:ExistingCluster", "tpu-serving:index:PlatformCluster")
        assert [r for r in plan_of(stack).resources if r.type in owner]
        return
    (cluster,) = clusters
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}
    assert cluster.inputs["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert not any("publicControlPlane" in line for line in cluster_notes(plan_of(stack).resources))


def test_stacks_security_only_the_engines_documented_capabilities_come_back():
    added = {
        (c["name"], cap)
        for s in STACKS
        for w in workloads(s)
        for p in pod_specs(w)
        for c in p["containers"]
        for cap in c["securityContext"]["capabilities"].get("add", [])
    }
    # the disaggregated JetStream server of seed 001b, nothing else
    assert added == {("jax-tpu", "SYS_PTRACE")}


def test_stacks_security_cpu_pool_pods_have_memory_limits_and_known_users():
    sax = {w["metadata"]["name"]: w for w in workloads("saxml-175b-v5e32x2")}
    admin = sax["sax-admin-server"]["spec"]["template"]["spec"]["containers"][0]
    assert admin["resources"]["limits"] == {"memory": "1Gi"} and admin["securityContext"]["runAsUser"] == 65534
    http = sax["sax-http"]["spec"]["template"]["spec"]["containers"][0]
    assert http["resources"]["limits"] == {"memory": "1Gi"} and "runAsUser" not in http["securityContext"]
    deployments = {w["metadata"]["name"]: w for w in workloads("vllm-llama33-70b-v5e16") if w["kind"] == "Deployment"}
    assert set(deployments) == {"vllm-api-gateway-epp", "vllm-api-prober"}
    for name, user in (("vllm-api-gateway-epp", 65532), ("vllm-api-prober", 65534)):
        c = deployments[name]["spec"]["template"]["spec"]["containers"][0]
        assert c["securityContext"]["runAsUser"] == user and c["securityContext"]["readOnlyRootFilesystem"] is True
        assert c["resources"]["limits"]["memory"] == c["resources"]["requests"]["memory"]


def test_stacks_security_example_stacks_reach_the_control_plane_by_dns():
    """Every example stack that creates a cluster leaves it no external IP endpoint: authorized networks on with no
    external range, and the DNS-based endpoint for pulumi up (issue 36, item 3)."""
    clusters = 0
    for stack in STACKS:
        for cluster in plan_of(stack).of_type("gcp:container/cluster:Cluster"):
            clusters += 1
            assert cluster.inputs["masterAuthorizedNetworksConfig"] == {"gcpPublicCidrsAccessEnabled": False}, stack
            name = cluster.inputs["name"]
            assert cluster_notes(plan_of(stack).resources) == [f"cluster {name}: {DNS_REACH}"], stack
    assert clusters >= 8


def test_stacks_security_every_container_pulls_if_not_present():
    """No pod of any stack re-pulls its tag-only image on every start (the JetStream pods' ``Always``, from the seeds:
    SRE review M3, GKE review m4): each container gives ``IfNotPresent`` or leaves the field to Kubernetes' default,
    which is ``IfNotPresent`` for a tagged image that is not ``latest``."""
    for stack in sorted(STACKS):
        for r in plan_of(stack).resources:
            if not (r.custom and r.type.startswith("kubernetes:")):
                continue
            for pod in pod_specs(r.inputs):
                for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]:
                    assert c.get("imagePullPolicy", "IfNotPresent") == "IfNotPresent", (stack, c["name"])
                    assert not str(c["image"]).endswith(":latest"), (stack, c["name"])


def test_stacks_security_stacks_sharing_a_region_share_one_nat_and_two_nats_clash():
    views = [(s, PlanView(plan_of(s).as_json())) for s in STACKS]
    assert scope.check(views).failures() == []
    nats = [(s, len(v.of_type("gcp:compute/routerNat:RouterNat"))) for s, v in views]
    assert {"llama31-405b-v6e16", "saxml-175b-v5e32x2"} <= {s for s, n in nats if n}
    # a second stack in us-east5 that makes its own NAT for every subnet range of `default`
    twin = copy.deepcopy(dict(views)["llama31-405b-v6e16"])
    for r in twin.resources:
        if r["type"] in ("gcp:compute/router:Router", "gcp:compute/routerNat:RouterNat"):
            r["inputs"]["name"] = "another-" + r["inputs"]["name"]
            if "router" in r["inputs"]:
                r["inputs"]["router"] = "another-" + r["inputs"]["router"]
    (failure,) = [f for f in scope.check([*views, ("another", twin)]).failures() if "Cloud NAT" in f.subject]
    assert "tpu-serving-demo/us-east5/default" in failure.subject and "created by 2 stacks" in failure.reason
    # new-user review 16, m4: the finding says how to share one
    assert (
        failure.reason.endswith("(docs/add-your-own-model.md, step 2)")
        and "cluster.cloudNat: existing" in failure.reason
    )


def test_stacks_security_a_stack_naming_the_wrong_existing_nat_is_refused_across_the_stacks():
    views = [(s, PlanView(copy.deepcopy(plan_of(s).as_json()))) for s in STACKS]
    named = {f.subject.split(": ")[0]: f for f in scope.existing_nat_findings(views)}
    existing = [s for s, v in views if (v.setting("cluster") or {}).get("cloudNat") == "existing"]
    assert len(named) == len(existing) >= 5 and all(f.ok for f in named.values())
    # a stack whose project and region hold a stack making a NAT is told to deploy that one first; a stack of a
    # project of its own (a user's new stack) needs its NAT to exist already
    makers = {(v.setting("project"), v.setting("region")) for s, v in views if s not in existing}
    for s, v in views:
        if s in existing:
            first = (v.setting("project"), v.setting("region")) in makers
            (f,) = [f for key, f in named.items() if key.endswith(f" of {s}")]
            assert ("deploy it first" if first else "must exist already") in f.reason, (s, f.reason)
    assert sum("deploy it first" in f.reason for f in named.values()) >= 5
    vllm = dict(views)["vllm-llama31-405b-v6e16"]
    key = next(k for k in vllm.plan["config"] if k.endswith(":cluster"))
    cluster = json.loads(vllm.plan["config"][key])
    vllm.plan["config"][key] = json.dumps({**cluster, "existingNat": "typo-nat"})
    (wrong,) = [f for f in scope.existing_nat_findings(views) if not f.ok]
    assert (
        "vllm-llama31-405b-v6e16" in wrong.subject
        and "llama31-405b-v6e16 makes llama405b-nat-router/llama405b-nat" in wrong.reason
    )
    # without the stack that makes it, the NAT must exist already (pulumi up looks it up)
    alone = [(s, v) for s, v in views if s == "pathwaysjob-batch-v6e16"]
    (f,) = scope.existing_nat_findings(alone)
    assert f.ok and "must exist already" in f.reason


# What a first `pulumi up` does in order, as the plan records it: workloads wait for the grants their identity needs
# at start, and Services in front of slow model servers do not make the update wait for them.


WORKLOAD_KINDS = {"LeaderWorkerSet", "DisaggregatedSet", "JobSet", "PathwaysJob", "Deployment", "StatefulSet", "Job"}
WI_USER = "roles/iam.workloadIdentityUser"
SERVICE_AWAIT_SECONDS = 600
"""pulumi-kubernetes waits on a new Service with a selector until its endpoints have settled with no not-ready
address, for 10 minutes by default (v4.32.0 provider/pkg/await/service.go ``DefaultServiceTimeoutMins = 10``,
``checkAndLogStatus``), then fails the update; ``pulumi.com/skipAwait: "true"`` bypasses it
(provider/pkg/metadata/overrides.go)."""


def _k8s(plan, kinds: set[str]) -> list[Any]:
    return [
        r for r in plan.resources if r.custom and r.type.startswith("kubernetes:") and r.inputs.get("kind") in kinds
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_apply_order_workloads_wait_for_their_identity_and_its_bucket_grants(stack):
    plan = plan_of(stack)
    wi_users = {
        r.inputs["member"].rsplit("[", 1)[-1].rstrip("]"): r
        for r in plan.of_type("gcp:serviceaccount/iAMMember:IAMMember")
        if r.inputs.get("role") == WI_USER
    }
    checked = 0
    for w in _k8s(plan, WORKLOAD_KINDS):
        namespace = w.inputs["metadata"].get("namespace", "default")
        accounts = {p.get("serviceAccountName") for p in pod_specs(w.inputs)} - {None}
        for ksa in accounts:
            binding = wi_users.get(f"{namespace}/{ksa}")
            if binding is None:
                continue  # an account without a GCP identity (the endpoint picker's, the Sax publisher's)
            (gsa,) = binding.property_dependencies["serviceAccountId"]
            grants = [
                g.urn
                for g in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
                if gsa in g.property_dependencies.get("member", [])
            ]
            missing = {binding.urn, *grants} - waits_for(plan, w)
            assert not missing, f"{w.name} ({namespace}/{ksa}) starts before {sorted(missing)}"
            checked += 1
    if _k8s(plan, {"LeaderWorkerSet", "JobSet"}):  # a PathwaysJob's pods are its controller's, not the plan's
        assert checked, f"{stack}: no workload runs as a service account with a GCP identity"


def _slow_to_ready(pod: Any) -> bool:
    """Whether a pod may stay not ready for longer than the Service await: its startup probes' window."""
    for c in pod.get("containers", []):
        probe = c.get("startupProbe")
        if (
            probe
            and int(probe.get("failureThreshold", 3)) * int(probe.get("periodSeconds", 10)) > SERVICE_AWAIT_SECONDS
        ):
            return True
    return False


def _fronted(plan) -> list[tuple[dict[str, str], bool]]:
    """Each pod template a Service could select: the labels its pods carry, and whether they are slow to ready.
    A LeaderWorkerSet's pods also carry the labels its controller adds (the set's name; lws v0.10.0
    api/leaderworkerset/v1/leaderworkerset_types.go SetNameLabelKey)."""
    out = []
    for w in _k8s(plan, WORKLOAD_KINDS):
        spec = w.inputs.get("spec", {})
        if w.inputs["kind"] == "LeaderWorkerSet":
            lwt = spec["leaderWorkerTemplate"]
            extra = {"leaderworkerset.sigs.k8s.io/name": w.inputs["metadata"]["name"]}
            templates = [t for t in (lwt.get("leaderTemplate"), lwt.get("workerTemplate")) if t]
        elif w.inputs["kind"] == "DisaggregatedSet":
            # each role an inline LeaderWorkerSet spec, whose pods carry the set's and the role's labels (lws
            # v0.10.0 pkg/utils/disaggregatedset/utils.go l.93-111, l.144-169; the templates carry them too)
            extra = {}
            templates = [
                t
                for r in spec["roles"]
                for t in (r["spec"]["leaderWorkerTemplate"].get(k) for k in ("leaderTemplate", "workerTemplate"))
                if t
            ]
        else:
            extra, templates = {}, [spec["template"]] if "template" in spec else []
        out += [({**t["metadata"].get("labels", {}), **extra}, _slow_to_ready(t["spec"])) for t in templates]
    return out


@pytest.mark.parametrize("stack", STACKS)
def test_stacks_apply_order_services_of_slow_model_servers_skip_pulumis_await(stack):
    plan = plan_of(stack)
    templates = _fronted(plan)
    for svc in _k8s(plan, {"Service"}):
        selector = svc.inputs["spec"].get("selector") or {}
        slow = [s for labels, s in templates if selector and all(labels.get(k) == v for k, v in selector.items())]
        annotations = svc.inputs["metadata"].get("annotations") or {}
        if any(slow):
            assert annotations.get("pulumi.com/skipAwait") == "true", f"{stack}: {svc.name} waits for model servers"
        else:  # a Service of quick pods keeps the await: the update then knows it serves
            assert "pulumi.com/skipAwait" not in annotations, f"{stack}: {svc.name}"


# What the recording monitor adds to a plan beyond the resources: each component's registered outputs.


@pytest.mark.parametrize("stack", STACKS)
def test_every_library_component_registers_its_outputs(stack: str):
    components = [r for r in plan_of(stack).resources if r.type.startswith("tpu-serving:index:")]
    assert components, "no library component in the plan"
    missing = [r.urn for r in components if r.registered_outputs is None]
    assert not missing, f"components whose outputs were never registered: {missing}"
