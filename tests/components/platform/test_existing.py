"""Existing-cluster mode (``cluster.existing``) and the other ways a stack names a cloud resource existing.

The stack file is refused at the key to change when it mixes the modes; on an existing cluster every cloud resource
the in-cluster half needs is created or named existing by one key, and the preview lists which; the components take
the same choices from Python. Release manifests are read from a named source.
"""

from __future__ import annotations

import copy
import functools

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import VLLM, load, plan_of_config, plan_of_config_once, with_change
from tpu_serving.config import ConfigError

EXISTING = {
    **VLLM,
    "tpu-serving:cluster": {"name": "vllm", "existing": {"kubeconfig": "~/.kube/platform.yaml"}},
    "tpu-serving:serving": {
        **VLLM["tpu-serving:serving"],
        "autoscaling": {"maxReplicas": 2, "adapterIam": "existing"},
    },
    "tpu-serving:tpuSlices": [{"name": "v5e16", "slice": "v5litepod-16", "count": 2}],
}
"""A vLLM stack on an existing cluster reached through a kubeconfig file: two TPU pools, autoscaled."""


@functools.cache
def existing_plan():
    """The plan of :data:`EXISTING` (once per test process)."""
    return plan_of_config(EXISTING)


def problems(cfg: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


def gcp(plan) -> list[str]:
    return sorted(f"{r.type} {r.name}" for r in plan.resources if r.type.startswith("gcp:"))


# --------------------------------------------------------------------------- the stack file


def test_existing_create_only_cluster_keys_are_refused_at_their_keys_all_at_once():
    cfg = with_change(
        "tpu-serving:cluster",
        {
            "name": "vllm",
            "existing": {"kubeconfig": "/etc/kube/config"},
            "masterAuthorizedNetworks": ["203.0.113.0/24"],
            "releaseChannel": "RAPID",
            "existingNat": "nat",
        },
        EXISTING,
    )
    found = problems(cfg)
    assert found == [
        'tpu-serving:cluster.releaseChannel = "RAPID": shapes a cluster the stack creates; with '
        "tpu-serving:cluster.existing the cluster is its owner's and the stack never changes it: remove this key",
        'tpu-serving:cluster.masterAuthorizedNetworks = ["203.0.113.0/24"]: shapes a cluster the stack creates; with '
        "tpu-serving:cluster.existing the cluster is its owner's and the stack never changes it: remove this key",
        "tpu-serving:cluster.existingNatRouter, tpu-serving:cluster.existingNat: name the network's Cloud NAT to look "
        "it up; give both, with tpu-serving:cluster.cloudNat: existing (or leave all three out: the cluster's NAT is "
        "then its owner's, not looked up)",
    ]


def test_existing_cpu_pool_zones_are_refused_the_pools_are_the_owners():
    cfg = with_change(
        "tpu-serving:cluster",
        {"name": "vllm", "existing": {"kubeconfig": "/etc/kube/config"}, "cpuPoolZones": ["us-west4-b"]},
        EXISTING,
    )
    assert problems(cfg) == [
        'tpu-serving:cluster.cpuPoolZones = ["us-west4-b"]: shapes a cluster the stack creates; with '
        "tpu-serving:cluster.existing the cluster is its owner's and the stack never changes it: remove this key"
    ]


def test_existing_a_cluster_without_a_control_plane_choice_is_fine_when_it_exists():
    """The control plane is the owner's: its IP endpoint's settings are not asked for, while a created cluster's
    stack that names them beside the DNS endpoint (the default) is refused."""
    assert load(EXISTING).existing
    created = with_change("tpu-serving:cluster/existing", ..., EXISTING)
    named = with_change("tpu-serving:cluster/masterAuthorizedNetworks", ["203.0.113.0/24"], created)
    assert "controlPlaneEndpoint = 'ip'" in " ".join(problems(named))
    assert "masterAuthorizedNetworks" not in " ".join(problems(created))


@pytest.mark.parametrize(
    ("existing", "expected"),
    [
        (
            {"kubeconfig": "/k", "gke": {}},
            "tpu-serving:cluster.existing: give either kubeconfig (a file path) or gke (the cluster's name and "
            "location), not both or neither",
        ),
        ({}, "not both or neither"),
        ({"gke": {"name": "c"}, "context": "x"}, "context names a context of the kubeconfig file: it needs kubeconfig"),
        ({"kubeconfig": "~alice/k"}, "expands a leading ~/ only"),
        ({"kubeconfig": "apiVersion: v1\nkind: Config"}, "must be the path of a kubeconfig file (not its contents)"),
        ({"gke": {"location": "us-east"}}, "must be a GCP region (us-east5) or zone (us-east5-b)"),
        ({"gke": {"name": "Bad_Name"}}, "lower-case letters"),
        ({"kubeconfig": "/k", "token": "x"}, "tpu-serving:cluster.existing.token: unknown key"),
    ],
)
def test_existing_cluster_access_is_one_of_a_kubeconfig_and_a_gke_cluster(existing, expected):
    (found,) = problems(with_change("tpu-serving:cluster/existing", existing, EXISTING))
    assert expected in found


def test_existing_node_pools_need_an_existing_cluster_one_per_slice_each_once():
    normal = with_change("tpu-serving:tpuSlices/0/existingNodePools", ["a"], VLLM)
    (found,) = problems(normal)
    assert found.startswith('tpu-serving:tpuSlices[0].existingNodePools = ["a"]: names node pools of an existing')
    assert "set tpu-serving:cluster.existing" in found
    (count,) = problems(with_change("tpu-serving:tpuSlices/0/existingNodePools", ["a"], EXISTING))
    assert count == (
        'tpu-serving:tpuSlices[0].existingNodePools = ["a"]: 1 pool(s) for count = 2 slice(s); name one pool per slice'
    )
    (twice,) = problems(with_change("tpu-serving:tpuSlices/0/existingNodePools", ["a", "a"], EXISTING))
    assert "node pool 'a' is also a pool of tpuSlices[0]" in twice
    assert load(with_change("tpu-serving:tpuSlices/0/existingNodePools", ["tpu-a", "tpu-b"], EXISTING)).existing


def test_existing_bucket_keeps_its_settings_and_one_workload_account():
    cfg = with_change(
        "tpu-serving:buckets/0", {"purpose": "checkpoints", "existing": True, "versioning": True}, EXISTING
    )
    cfg["tpu-serving:workloadIdentity"] = {
        "namespace": "vllm",
        "gcpServiceAccount": "vllm-workloads",
        "existingGcpServiceAccount": "serving@tpu-serving-demo.iam.gserviceaccount.com",
    }
    assert problems(cfg) == [
        "tpu-serving:buckets[0].versioning = true: shapes a bucket the stack creates; an existing bucket (existing: "
        "true) keeps its own settings: remove this key",
        'tpu-serving:workloadIdentity.gcpServiceAccount = "vllm-workloads": names the account the stack would create; '
        "with workloadIdentity.existingGcpServiceAccount it creates none: remove one of the two",
    ]
    (email,) = problems(with_change("tpu-serving:workloadIdentity/existingGcpServiceAccount", "someone@gmail.com"))
    assert email == (
        'tpu-serving:workloadIdentity.existingGcpServiceAccount = "someone@gmail.com": must be a GCP service account\'s '
        "email, <account id>@<project>.iam.gserviceaccount.com"
    )


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("http://mirror.example.com/lws.yaml", "a URL must be https://"),
        ("~/manifests/lws.yaml", "~ is not expanded here"),
        ("/srv/manifests/*.yaml", "glob character"),
    ],
)
def test_existing_controller_manifest_sources_are_https_or_a_plain_file(source, expected):
    (found,) = problems(with_change("tpu-serving:controllerManifests", {"lws": source}))
    assert found.startswith(f'tpu-serving:controllerManifests.lws = "{source}": ') and expected in found


# --------------------------------------------------------------------------- the plan


def test_existing_cluster_through_a_kubeconfig_makes_no_gcp_resource_but_those_left_to_create():
    plan = existing_plan()
    assert plan.invokes == []
    # the APIs, the buckets, the workload account and its roles, the Cloud Monitoring resources: still created
    assert "gcp:projects/service:Service vllm-apis-container" in gcp(plan)
    assert not any(t.startswith(("gcp:container/", "gcp:compute/")) for t in gcp(plan))
    assert not any("adapter-viewer" in t for t in gcp(plan))  # adapterIam: existing
    (provider,) = [r for r in plan.resources if r.type == "pulumi:providers:kubernetes"]
    assert provider.inputs["kubeconfig"] == "~/.kube/platform.yaml"  # the provider expands ~/ when it deploys
    assert "context" not in provider.inputs
    pools = plan.of_type("tpu-serving:index:ExistingTpuNodePool")
    assert [p.inputs["poolNames"] for p in pools] == [["vllm-v5e16-0", "vllm-v5e16-1"]]
    assert pools[0].inputs["scaleFromZero"] == ["vllm-v5e16-1"]
    assert plan.outputs["kubeconfigFile"] == "~/.kube/platform.yaml" and "getCredentials" not in plan.outputs
    statuses = {(e["kind"], e["status"]) for e in plan.outputs["cloudResources"]}
    assert ("cluster", "existing") in statuses and ("project APIs", "created") in statuses
    assert ("IAM grant", "existing") in statuses and ("TPU node pools", "existing") in statuses


def test_existing_gke_cluster_is_read_by_name_and_location():
    cfg = with_change("tpu-serving:cluster/existing", {"gke": {"name": "platform", "location": "us-west4-a"}}, EXISTING)
    plan = plan_of_config(cfg)
    assert plan.invokes == ["gcp:container/getCluster:getCluster"]
    (provider,) = [r for r in plan.resources if r.type == "pulumi:providers:kubernetes"]
    assert "gke-gcloud-auth-plugin" in provider.inputs["kubeconfig"]
    assert "gke_tpu-serving-demo_us-west4-a_platform" in provider.inputs["kubeconfig"]
    assert plan.outputs["getCredentials"] == (
        "gcloud container clusters get-credentials platform --zone us-west4-a --project tpu-serving-demo"
    )
    (cluster,) = plan.of_type("tpu-serving:index:ExistingCluster")
    assert cluster.inputs["clusterName"] == "platform" and cluster.inputs["location"] == "us-west4-a"


def test_existing_cluster_nat_is_its_owners_unless_named():
    created = plan_of_config(with_change("tpu-serving:cluster/cloudNat", "create", EXISTING))
    assert {"gcp:compute/router:Router vllm-router", "gcp:compute/routerNat:RouterNat vllm-nat"} <= set(gcp(created))
    named = copy.deepcopy(EXISTING)
    named["tpu-serving:cluster"].update(cloudNat="existing", existingNatRouter="r", existingNat="n")
    assert plan_of_config(named).invokes == ["gcp:compute/getRouterNat:getRouterNat"]


def test_existing_every_named_resource_leaves_the_plan_without_gcp():
    cfg = copy.deepcopy(EXISTING)
    cfg["tpu-serving:buckets"] = [{**b, "existing": True} for b in cfg["tpu-serving:buckets"]]
    cfg["tpu-serving:workloadIdentity"] = {
        "namespace": "vllm",
        "existingGcpServiceAccount": "serving@tpu-serving-demo.iam.gserviceaccount.com",
    }
    cfg["tpu-serving:projectApis"] = "existing"
    cfg["tpu-serving:observability"] = {"cloudResources": "existing"}
    plan = plan_of_config(cfg)
    assert gcp(plan) == [] and plan.invokes == []
    (ksa,) = plan.of_type("kubernetes:core/v1:ServiceAccount")
    assert ksa.inputs["metadata"]["annotations"] == {
        "iam.gke.io/gcp-service-account": "serving@tpu-serving-demo.iam.gserviceaccount.com"
    }
    (account,) = [e for e in plan.outputs["cloudResources"] if e["kind"] == "GCP service account"]
    assert account["needs"] == [
        "roles/iam.workloadIdentityUser on serving@tpu-serving-demo.iam.gserviceaccount.com for "
        "serviceAccount:tpu-serving-demo.svc.id.goog[vllm/tpu-serving]",
        "roles/storage.objectViewer on gs://tpu-serving-demo-vllm-checkpoints",
        "roles/storage.objectUser on gs://tpu-serving-demo-vllm-scratch",
    ]
    (buckets,) = plan.of_type("tpu-serving:index:Buckets")
    assert buckets.inputs == {
        "existingBucketNames": ["tpu-serving-demo-vllm-checkpoints", "tpu-serving-demo-vllm-scratch"]
    }
    assert "dashboard" not in plan.outputs and plan.of_type("kubernetes:monitoring.googleapis.com/v1:PodMonitoring")


def test_existing_workload_account_must_hold_its_roles_on_created_buckets_too():
    cfg = with_change(
        "tpu-serving:workloadIdentity",
        {"namespace": "vllm", "existingGcpServiceAccount": "serving@tpu-serving-demo.iam.gserviceaccount.com"},
        EXISTING,
    )
    plan = plan_of_config(cfg)
    assert not plan.of_type("gcp:serviceaccount/account:Account") and plan.of_type("gcp:storage/bucket:Bucket")
    (account,) = [e for e in plan.outputs["cloudResources"] if e["kind"] == "GCP service account"]
    assert account["status"] == "existing" and account["needs"][1:] == [
        "roles/storage.objectViewer on gs://tpu-serving-demo-vllm-checkpoints",
        "roles/storage.objectUser on gs://tpu-serving-demo-vllm-scratch",
    ]


def test_existing_choices_hold_on_a_created_cluster_too():
    """An existing bucket or workload account on a cluster the stack creates: granted on by name, or not created."""
    cfg = with_change(
        "tpu-serving:buckets/0", {"purpose": "checkpoints", "existing": True, "workloadAccess": "read"}, VLLM
    )
    plan = plan_of_config(cfg)
    assert [b.inputs["name"] for b in plan.of_type("gcp:storage/bucket:Bucket")] == ["tpu-serving-demo-vllm-scratch"]
    (grant,) = [g for g in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember") if "checkpoints" in g.name]
    assert (
        grant.inputs["bucket"] == "tpu-serving-demo-vllm-checkpoints"
        and grant.property_dependencies.get("bucket") is None
    )
    assert "cloudResources" not in plan.outputs  # the list is the existing-cluster mode's


def test_existing_controller_manifest_from_a_local_file_and_the_preview_says_so():
    from tpu_serving_tools.preview.existing_notes import manifest_lines

    plan = plan_of_config_once(with_change("tpu-serving:controllerManifests", {"lws": "/srv/manifests/lws.yaml"}, VLLM))
    (group,) = plan.of_type("kubernetes:yaml/v2:ConfigGroup")
    assert group.inputs["files"] == ["/srv/manifests/lws.yaml"]
    (install,) = plan.of_type("tpu-serving:index:ControllerInstall")
    assert install.registered_outputs == {
        "version": "v0.10.0",
        "url": "/srv/manifests/lws.yaml",
        "source": "local file",
        "upstream": "https://github.com/kubernetes-sigs/lws/releases/download/v0.10.0/manifests.yaml",
        "readyWhenServing": "/validate-disaggregatedset-x-k8s-io-v1-disaggregatedset",
    }
    assert manifest_lines(plan.resources) == [
        "Controller manifests:",
        "  vllm-lws v0.10.0: local file, /srv/manifests/lws.yaml",
    ]


# --------------------------------------------------------------------------- the components from Python


def test_existing_components_take_the_choice_from_python():
    from tpu_serving.common.validation import argument_problems
    from tpu_serving.platform.existing import ExistingClusterArgs, GkeCluster
    from tpu_serving.platform.node_identity import Access, BucketGrant
    from tpu_serving.tenancy.identity import WorkloadIdentityArgs, required_grants

    both = WorkloadIdentityArgs(
        project="tpu-serving-demo",
        namespace="serving",
        kubernetes_service_account="vllm",
        gcp_service_account_id="serving-wl",
        existing_gcp_service_account="serving@tpu-serving-demo.iam.gserviceaccount.com",
    )
    assert argument_problems(both) == [
        "WorkloadIdentityArgs.give either gcp_service_account_id (an account created here) or "
        "existing_gcp_service_account (an existing account's email), not both or neither"
    ]
    existing = WorkloadIdentityArgs(
        project="tpu-serving-demo",
        namespace="serving",
        kubernetes_service_account="vllm",
        existing_gcp_service_account="serving@tpu-serving-demo.iam.gserviceaccount.com",
        bucket_grants=(BucketGrant("weights", "team-weights", Access.READ),),
    )
    assert argument_problems(existing) == []
    assert required_grants(existing)[1] == "roles/storage.objectViewer on gs://team-weights"
    neither = ExistingClusterArgs(project="tpu-serving-demo", name="platform", region="us-east5")
    assert argument_problems(neither) == [
        "ExistingClusterArgs.give either kubeconfig (a file path) or gke (the cluster's name and location), "
        "not both or neither"
    ]
    gke = ExistingClusterArgs(project="tpu-serving-demo", name="platform", region="us-east5", gke=GkeCluster())
    assert (gke.gke_name, gke.location, gke.workload_pool) == ("platform", "us-east5", "tpu-serving-demo.svc.id.goog")


# --------------------------------------------------------------------------- make check on an existing cluster


def test_existing_make_check_places_pods_on_the_existing_pools_and_takes_their_declared_roles():
    """Sax model servers run on the host network as their node's account: on an existing pool, the roles the stack
    declares for it (listed in the preview) are what the model checks against."""
    from tests.e2e.test_e2e_overlay import converted_plan
    from tpu_serving_tools.runtime import identity, scheduling, scheduling_check
    from tpu_serving_tools.runtime.planview import PlanView

    view = PlanView(converted_plan("saxml-175b-v5e32x2").as_json())
    placed = scheduling_check.check(view)
    assert placed.findings and not placed.failures()
    found = identity.check(view)
    assert found.findings and not found.failures()
    assert any("existing pool saxml175b-v5e32-0" in f.reason for f in found.findings)
    pools = {p.name: p for p in scheduling.node_pools(view)}
    assert pools["saxml175b-v5e32-0"].declared_grants == {"tpu-serving-demo-saxml175b-state": ("read",)}


def test_existing_make_check_recognises_a_mirrored_release_by_its_upstream_address():
    from tpu_serving_tools.runtime import k8s_prereqs
    from tpu_serving_tools.runtime.planview import PlanView

    plan = plan_of_config_once(with_change("tpu-serving:controllerManifests", {"lws": "/srv/manifests/lws.yaml"}, VLLM))
    view = PlanView(plan.as_json())
    assert {g: v for g, (_, v, _) in k8s_prereqs.installs(view).items()}["leaderworkerset.x-k8s.io"] == "v0.10.0"
    assert all(f.ok for f in k8s_prereqs.kind_findings(view))


def test_existing_cost_leaves_out_the_clusters_fee_and_cpu_nodes():
    """The existing cluster's management fee and CPU nodes are its owner's; its TPU slices run the stack's work."""
    from tpu_serving_tools.preview.cost_summary import cost_summary

    existing, created = existing_plan().outputs["cost"], plan_of_config_once(VLLM).outputs["cost"]
    assert existing["perHour"]["cluster"] == 0 and existing["perHour"]["cpu"] == 0
    assert created["perHour"]["cluster"] > 0 and created["perHour"]["cpu"] > 0
    assert existing["perHour"]["tpu"] > 0
    lines = cost_summary(existing_plan().outputs)
    assert lines[-1] == "  nor, on an existing cluster, its management fee and CPU nodes (its owner's)"


# --------------------------------------------------------------------------- the metrics adapter


def _installs(plan) -> list[str]:
    return sorted(r.name for r in plan.of_type("tpu-serving:index:ControllerInstall"))


def test_adapter_install_on_an_existing_cluster_is_the_platforms_unless_told_to():
    """The adapter's APIServices are cluster-wide: a tenant stack installs none by default (GKE review M5), and
    ``adapterInstall: create`` opts in to owning it."""
    plan = existing_plan()
    assert "vllm-metrics-adapter" not in _installs(plan)
    assert plan.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler"), "the HPA stays"
    serving = EXISTING["tpu-serving:serving"]
    auto = {**serving["autoscaling"], "adapterInstall": "create"}
    plan = plan_of_config({**EXISTING, "tpu-serving:serving": {**serving, "autoscaling": auto}})
    assert "vllm-metrics-adapter" in _installs(plan)


# --------------------------------------------------------------------------- controllers on a shared cluster


def test_existing_cluster_installs_no_controller_unless_told_to():
    """On an existing cluster the LWS controller is the platform's by default: the stack installs none of it (its
    destroy would delete the CRD, and every tenant's LeaderWorkerSets with it) and the preview says what it expects
    (SRE review B2); ``controllerInstalls.lws: create`` opts in to owning it."""
    from tpu_serving_tools.preview.existing_notes import manifest_lines

    plan = existing_plan()
    assert not [g for g in plan.of_type("kubernetes:yaml/v2:ConfigGroup") if g.name.startswith("vllm-lws")]
    (lws,) = [r for r in plan.of_type("tpu-serving:index:ControllerInstall") if r.name == "vllm-lws"]
    assert lws.registered_outputs["owned"] is False
    assert "v0.10.0" in lws.registered_outputs["expects"]
    assert "  vllm-lws v0.10.0: existing, not installed: expects the cluster to run lws v0.10.0" in " ".join(
        manifest_lines(plan.resources)
    )
    opted = plan_of_config({**EXISTING, "tpu-serving:controllerInstalls": {"lws": "create"}})
    assert [g for g in opted.of_type("kubernetes:yaml/v2:ConfigGroup") if g.name.startswith("vllm-lws")]


def test_created_cluster_installs_its_controllers():
    plan = plan_of_config_once(VLLM)
    (lws,) = [r for r in plan.of_type("tpu-serving:index:ControllerInstall") if r.name == "vllm-lws"]
    assert "owned" not in lws.registered_outputs
    assert [g for g in plan.of_type("kubernetes:yaml/v2:ConfigGroup") if g.name.startswith("vllm-lws")]
    assert (
        plan_of_config(with_change("tpu-serving:controllerInstalls", {"lws": "existing"}, VLLM)).of_type(
            "kubernetes:yaml/v2:ConfigGroup"
        )
        == []
    )


def test_controller_installs_bad_input():
    assert problems(with_change("tpu-serving:controllerInstalls", {"lws": "own"}, VLLM)) == [
        "tpu-serving:controllerInstalls.lws = \"own\": must be one of 'create' or 'existing'"
    ]


def test_existing_cluster_pools_capacity_is_no_production_gap_of_the_stack():
    """New-user review 10, m5: the existing stack's Production line said a stockout fails the creation of a pool it
    does not create; the pools' capacity is their owner's."""
    gaps = plan_of("vllm-llama33-70b-existing").outputs["production"]["gaps"]
    assert gaps and not [g for g in gaps if ".capacity " in g]
    created = plan_of("vllm-llama33-70b-v5e16").outputs["production"]["gaps"]
    # its first slice is created whole, and may go down to zero (capacity.TO_ZERO, as its capacity.obtained says)
    why = "no reservation holds its slice (capacity: reservation would); meanwhile "
    assert [
        g for g in created if g.startswith(f"tpuSlices[0].capacity on-demand: {why}the pool is created with its whole")
    ]


def test_existing_cluster_needs_name_the_metrics_packages_and_the_fuse_driver():
    """GKE review 65, M1, m2: the alerts read the kube state metrics packages, and the serving pods mount through the
    Cloud Storage FUSE CSI driver; an existing cluster without either breaks them, so its needs say so."""
    (cluster,) = [e for e in existing_plan().outputs["cloudResources"] if e["kind"] == "cluster"]
    assert any("SYSTEM_COMPONENTS, POD, DEPLOYMENT, HPA monitoring components" in n for n in cluster["needs"])
    assert any(n.startswith("the Cloud Storage FUSE CSI driver add-on") for n in cluster["needs"])
    off = with_change("tpu-serving:cluster", {**EXISTING["tpu-serving:cluster"], "gcsFuseCsiDriver": False}, EXISTING)
    (cluster,) = [e for e in plan_of_config(off).outputs["cloudResources"] if e["kind"] == "cluster"]
    assert not any("Cloud Storage FUSE" in n for n in cluster["needs"])


def test_existing_cluster_needs_name_workload_logging_where_the_gate_runs():
    """SRE review 31, M4: the host-maintenance gate's run metric and pages read its container's log lines, which a
    cluster sends only with the WORKLOADS logging component; the needs said nothing, and the silence page fired for
    good on a cluster with system logging only."""
    plan = plan_of("vllm-llama33-70b-existing")
    (cluster,) = [e for e in plan.outputs["cloudResources"] if e["kind"] == "cluster"]
    assert [n for n in cluster["needs"] if n.startswith("the SYSTEM_COMPONENTS, WORKLOADS logging components")]
    page = next(
        r for r in plan.resources if r.type.endswith(":AlertPolicy") and r.name.endswith("-maintenance-gate-silent")
    )
    assert "loggingConfig without WORKLOADS" in str(page.inputs["documentation"]["content"])


def test_existing_network_policy_problem_names_what_enforces_them():
    """GKE review 67, M1: an existing cluster without Dataplane V2 or network policy enforces no NetworkPolicy."""
    from tpu_serving.platform.existing import network_policy_problem

    for legacy in (None, "", "LEGACY_DATAPATH", "DATAPATH_PROVIDER_UNSPECIFIED"):
        problem = network_policy_problem(legacy, False)
        assert "network policy enforcement (GKE Dataplane V2, or the NetworkPolicy add-on" in problem, legacy
    assert network_policy_problem("LEGACY_DATAPATH", True) == ""  # Calico: network policy enabled
    assert network_policy_problem("ADVANCED_DATAPATH", False) == ""
    assert network_policy_problem("<unknown>", False) == ""  # not read yet (a preview): not judged


def test_existing_cluster_lists_network_policy_enforcement_among_its_needs():
    plan = plan_of("vllm-llama33-70b-existing")
    (cluster,) = [e for e in plan.outputs["cloudResources"] if e["kind"] == "cluster"]
    assert any(str(n).startswith("network policy enforcement (GKE Dataplane V2") for n in cluster["needs"]), cluster


def test_existing_gke_cluster_without_enforcement_warns_on_up():
    """The cluster read with getCluster: a legacy datapath without network policy warns; the offline answer, whose
    datapath is not known, does not."""
    from tpu_serving.platform.existing import ExistingCluster, ExistingClusterArgs, GkeCluster
    from tpu_serving_tools.preview import offline
    from tpu_serving_tools.preview.offline import run_program

    def program() -> None:
        args = ExistingClusterArgs(project="my-project", name="c", region="us-east5", gke=GkeCluster())
        ExistingCluster("e", args)

    assert run_program(program, {}, project="x", stack="s").warnings == []
    answer = offline.PreviewMocks.call

    def legacy(self, args):  # type: ignore[no-untyped-def]
        found, failures = answer(self, args)
        return {**found, "datapathProvider": "LEGACY_DATAPATH"}, failures

    offline.PreviewMocks.call = legacy  # type: ignore[method-assign]
    try:
        (warning,) = run_program(program, {}, project="x", stack="s").warnings
    finally:
        offline.PreviewMocks.call = answer  # type: ignore[method-assign]
    assert warning.startswith("ExistingCluster c: the cluster's datapathProvider is LEGACY_DATAPATH"), warning
