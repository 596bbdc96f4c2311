"""Component tests: each component run alone under the recording monitor (mocks)."""

from __future__ import annotations

import json

import pulumi
import pytest

from tests.conftest import ROOT
from tests.fixtures.configs import VLLM, as_engine_config, plan_edited
from tests.fixtures.pools import SA, pool_args
from tpu_serving import (
    BucketGrant,
    Buckets,
    BucketsArgs,
    BucketSpec,
    TpuCluster,
    TpuClusterArgs,
    TpuNodePool,
    WorkloadIdentity,
    WorkloadIdentityArgs,
    catalog,
)
from tpu_serving.common.validation import argument_problems
from tpu_serving.platform.cluster import cluster_args
from tpu_serving.platform.node_identity import NODE_ROLES
from tpu_serving.pools.nodepool import node_pool_args
from tpu_serving_tools.preview.offline import Plan, PreviewMocks, run_program
from tpu_serving_tools.preview.stack_files import load_project


def run(program) -> Plan:
    return run_program(program, {}, project="tpu-serving", stack="test")


def test_nodepool_builder_multi_host_is_compact_with_topology():
    args = node_pool_args(pool_args(), "c-a", SA)
    assert args.node_count == 4
    assert args.placement_policy == {"type": "COMPACT", "tpu_topology": "4x4"}
    assert args.node_locations == ["us-east5-b"]


def test_nodepool_builder_single_host_has_no_placement():
    args = node_pool_args(pool_args(shape=catalog.slice_shape("ct6e-standard-8t", "2x4")), "c-a", SA)
    assert args.node_count == 1 and args.placement_policy is None


def test_nodepool_builder_spot_and_reservation():
    spot = node_pool_args(pool_args(spot=True), "c-a", SA).node_config
    assert spot["spot"] is True and "reservation_affinity" not in spot
    res = node_pool_args(pool_args(reservation="tpu-res"), "c-a", SA).node_config
    assert res["reservation_affinity"] == {
        "consume_reservation_type": "SPECIFIC_RESERVATION",
        "key": "compute.googleapis.com/reservation-name",
        "values": ["tpu-res"],
    }


def test_nodepool_component_one_pool_per_slice():
    def program():
        pool = TpuNodePool("tpu", pool_args(pool_names=("c-a-0", "c-a-1", "c-a-2")))
        assert pool.node_selector == {
            "cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
            "cloud.google.com/gke-tpu-topology": "4x4",
        }

    plan = run(program)
    (component,) = plan.of_type("tpu-serving:index:TpuNodePool")
    pools = plan.of_type("gcp:container/nodePool:NodePool")
    assert sorted(p.inputs["name"] for p in pools) == ["c-a-0", "c-a-1", "c-a-2"]
    assert all(p.parent == component.urn for p in pools)
    assert all(p.inputs["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"} for p in pools)


def cluster_args_for_test(**overrides) -> TpuClusterArgs:
    return TpuClusterArgs(
        **{
            "project": "p-123456",
            "region": "us-east5",
            "zone": "us-east5-b",
            "name": "c",
            **overrides,
        }
    )


def test_cluster_builder_defaults():
    args = cluster_args(cluster_args_for_test(), "nodes@x")
    assert args.remove_default_node_pool is True
    assert args.deletion_protection is True
    assert args.workload_identity_config == {"workload_pool": "p-123456.svc.id.goog"}
    assert args.datapath_provider == "ADVANCED_DATAPATH"
    assert args.node_config["service_account"] == "nodes@x"


def test_cluster_component_children_and_dependencies():
    plan = run(lambda: TpuCluster("c", cluster_args_for_test(deletion_protection=False)))
    (component,) = plan.of_type("tpu-serving:index:TpuCluster")
    children = [r for r in plan.resources if r.parent == component.urn]
    assert {r.type for r in children} == {
        "gcp:serviceaccount/account:Account",
        "gcp:projects/iAMMember:IAMMember",
        "gcp:container/cluster:Cluster",
        "gcp:container/nodePool:NodePool",
        "pulumi:providers:kubernetes",
        "gcp:compute/router:Router",  # private nodes by default, with their Cloud NAT
        "gcp:compute/routerNat:RouterNat",
    }
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert cluster.inputs["deletionProtection"] is False
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}
    assert "masterAuth" not in cluster.inputs  # force-new: declaring GKE's default could replace a cluster
    assert "binaryAuthorization" not in cluster.inputs
    roles = plan.of_type("gcp:projects/iAMMember:IAMMember")
    assert sorted(r.inputs["role"] for r in roles) == sorted(NODE_ROLES)
    # The cluster's nodes start only once their service account may write logs and metrics.
    assert {r.urn for r in roles} <= set(cluster.dependencies)
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert cluster.urn in provider.dependencies
    assert provider.inputs["enableServerSideApply"] == "true"


def test_cluster_private_nodes_get_cloud_nat():
    plan = run(lambda: TpuCluster("c", cluster_args_for_test(private_nodes=True)))
    (router,) = plan.of_type("gcp:compute/router:Router")
    (nat,) = plan.of_type("gcp:compute/routerNat:RouterNat")
    assert router.inputs["network"] == "default" and router.inputs["region"] == "us-east5"
    assert nat.inputs["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert nat.inputs["natIpAllocateOption"] == "AUTO_ONLY"
    assert router.urn in nat.dependencies
    (cpu,) = plan.of_type("gcp:container/nodePool:NodePool")
    assert nat.urn in cpu.dependencies
    public = run(
        lambda: TpuCluster(
            "c", cluster_args_for_test(private_nodes=False, control_plane_endpoint="ip", public_control_plane=True)
        )
    )
    assert not public.of_type("gcp:compute/routerNat:RouterNat")
    existing = {"cloud_nat": "existing", "existing_nat_router": "net-router", "existing_nat": "net-nat"}
    shared = run(lambda: TpuCluster("c", cluster_args_for_test(**existing)))
    assert not shared.of_type("gcp:compute/routerNat:RouterNat") and not shared.of_type("gcp:compute/router:Router")
    (private,) = shared.of_type("gcp:container/cluster:Cluster")
    assert private.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}


def test_cluster_maintenance_exclusion_until_end_of_support():
    from tpu_serving.platform.maintenance import MaintenanceExclusion, MaintenanceSettings, maintenance_policy

    policy = maintenance_policy(
        MaintenanceSettings(exclusions=(MaintenanceExclusion(name="launch", start_time="2026-12-01T00:00:00Z"),))
    )
    assert policy["maintenance_exclusions"] == [
        {
            "exclusion_name": "launch",
            "start_time": "2026-12-01T00:00:00Z",
            "exclusion_options": {"scope": "NO_MINOR_OR_NODE_UPGRADES", "end_time_behavior": "UNTIL_END_OF_SUPPORT"},
        }
    ]


def test_components_pass_their_depends_on_to_children():
    from pulumi_gcp import projects

    def program():
        api = projects.Service("api", service="container.googleapis.com", project="p-123456")
        TpuCluster("c", cluster_args_for_test(), opts=pulumi.ResourceOptions(depends_on=[api]))

    plan = run(program)
    (api,) = plan.of_type("gcp:projects/service:Service")
    for r in plan.resources:
        if r.custom and r.parent and r.type.startswith("gcp:") and r.type != "gcp:projects/service:Service":
            assert api.urn in r.dependencies, r.name


def test_cluster_kubeconfig_uses_auth_plugin():
    import json

    from tpu_serving.platform.cluster import kubeconfig

    cfg = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))
    assert cfg["clusters"][0]["cluster"]["server"] == "https://1.2.3.4"
    assert cfg["users"][0]["user"]["exec"]["command"] == "gke-gcloud-auth-plugin"
    assert "token" not in json.dumps(cfg)


def test_workload_identity_component():
    def program():
        WorkloadIdentity(
            "wi",
            WorkloadIdentityArgs(
                project="p-123456",
                namespace="serve",
                kubernetes_service_account="ksa",
                gcp_service_account_id="serve-wl",
                bucket_grants=[BucketGrant("ckpt", "bucket-a", "read"), BucketGrant("tmp", "bucket-b", "readWrite")],
            ),
        )

    plan = run(program)
    (gsa,) = plan.of_type("gcp:serviceaccount/account:Account")
    assert gsa.inputs["accountId"] == "serve-wl"
    (binding,) = plan.of_type("gcp:serviceaccount/iAMMember:IAMMember")
    assert binding.inputs == {
        "member": "serviceAccount:p-123456.svc.id.goog[serve/ksa]",
        "role": "roles/iam.workloadIdentityUser",
        "serviceAccountId": "<unknown>",
    }
    grants = {g.inputs["bucket"]: g.inputs["role"] for g in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")}
    assert grants == {"bucket-a": "roles/storage.objectViewer", "bucket-b": "roles/storage.objectUser"}
    (ksa,) = plan.of_type("kubernetes:core/v1:ServiceAccount")
    (ns,) = plan.of_type("kubernetes:core/v1:Namespace")
    assert ns.urn in ksa.dependencies and gsa.urn in ksa.dependencies
    assert ksa.inputs["metadata"]["annotations"] == {"iam.gke.io/gcp-service-account": "<unknown>"}


def test_workload_identity_without_namespace():
    def program():
        WorkloadIdentity(
            "wi",
            WorkloadIdentityArgs(
                project="p-123456",
                namespace="shared",
                kubernetes_service_account="k",
                gcp_service_account_id="shared-wl",
                create_namespace=False,
            ),
        )

    plan = run(program)
    assert plan.of_type("kubernetes:core/v1:Namespace") == []
    assert len(plan.of_type("kubernetes:core/v1:ServiceAccount")) == 1


def test_buckets_component_protects_checkpoints_only():
    def program():
        Buckets(
            "b",
            BucketsArgs(
                project="p-123456",
                buckets=[
                    BucketSpec("checkpoints", "p-ckpt", "us-east5"),
                    BucketSpec("scratch", "p-tmp", "us-east5", ttl_days=3),
                ],
            ),
        )

    plan = run(program)
    by_name = {b.inputs["name"]: b for b in plan.of_type("gcp:storage/bucket:Bucket")}
    assert by_name["p-ckpt"].protect and not by_name["p-tmp"].protect
    assert by_name["p-tmp"].inputs["lifecycleRules"] == [{"action": {"type": "Delete"}, "condition": {"age": 3}}]
    assert all(b.inputs["publicAccessPrevention"] == "enforced" for b in by_name.values())


def test_components_reject_resources_inside_apply():
    # House rule: no resource is created inside an apply; the plan would show it only
    # after the apply ran, and a preview with unknowns would hide it.
    import ast

    from tests.conftest import ROOT

    paths = list((ROOT / "components").glob("*.py"))
    assert paths
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "apply":
                for arg in node.args:
                    for inner in ast.walk(arg):
                        if isinstance(inner, ast.Call) and getattr(inner.func, "attr", "") == "apply":
                            pytest.fail(f"nested apply in {path}")
                        name = (
                            getattr(inner.func, "attr", getattr(inner.func, "id", ""))
                            if isinstance(inner, ast.Call)
                            else ""
                        )
                        assert not (name[:1].isupper() and name not in {"Output"}), f"{path}: {name} inside apply"


def serving_args(**overrides):
    from tpu_serving import MaxTextSettings, PathwaysServingArgs
    from tpu_serving.catalog.models import ModelSize, WeightPrecision

    base = dict(
        namespace="ns",
        service_account="ksa",
        shape=catalog.slice_shape("ct5lp-hightpu-4t", "4x8"),
        num_slices=1,
        maxtext=MaxTextSettings(
            config_file="MaxText/configs/base.yml",
            model_name="m",
            max_prefill_predict_length=8,
            max_target_length=16,
            per_device_batch_size=1,
        ),
        checkpoint_uri="gs://b/ckpt",
        scratch_uri="gs://s/tmp",
        model_size=ModelSize(8, WeightPrecision.BF16),  # "m" is no MaxText model the library knows
    )
    return PathwaysServingArgs(**{**base, **overrides})


def test_pathways_builder_maxtext_args_order_and_omissions():
    from tpu_serving.backends.jetstream.pods import maxtext_args
    from tpu_serving.catalog import slice_shape

    v6e8, v5e16 = slice_shape("ct6e-standard-4t", "2x4"), slice_shape("ct5lp-hightpu-4t", "4x4")
    args = maxtext_args(serving_args().maxtext, "gs://b/ckpt", "interleaved", v6e8)
    assert args[:3] == ["MaxText/configs/base.yml", "model_name=m", "load_parameters_path=gs://b/ckpt"]
    assert "scan_layers=false" in args and not any(a.startswith(("quantization=", "inference_server=")) for a in args)
    # MaxText's disaggregated servers hard-code their slices (maxengine_config.py get_server_config).
    assert "inference_server=ExperimentalMaxtextDisaggregatedServer_8" in maxtext_args(
        serving_args().maxtext, "gs://b/ckpt", "disaggregated", v6e8
    )
    assert "inference_server=ExperimentalMaxtextDisaggregatedServer_16" in maxtext_args(
        serving_args().maxtext, "gs://b/ckpt", "disaggregated", v5e16
    )


def test_pathways_disaggregated_on_a_slice_maxtext_has_no_server_for_is_refused():
    from tpu_serving.catalog import slice_shape

    v6e16 = slice_shape("ct6e-standard-4t", "4x4")
    assert argument_problems(serving_args(mode="disaggregated", shape=v6e16, num_slices=2)) == [
        "PathwaysServingArgs.mode = 'disaggregated': MaxText's disaggregated servers run only on v6e-8 or v5e-16 "
        "slices, not v6e-16 (ct6e-standard-4t, topology 4x4)"
    ]
    v6e8 = slice_shape("ct6e-standard-4t", "2x4")
    assert argument_problems(serving_args(mode="disaggregated", shape=v6e8, num_slices=2)) == []


def test_pathways_builder_probe_maths():
    from tpu_serving import ProbeSettings

    p = ProbeSettings(max_startup_seconds=3601, startup_period_seconds=5)
    assert p.startup_failure_threshold == 721  # rounds up: never tolerates less than asked
    assert p.imposed_seconds_to_ready == 15


def test_pathways_component_on_v5e_with_two_groups():
    from tpu_serving import PathwaysServing

    plan = run(lambda: PathwaysServing("s", serving_args(replicas=2)))
    (component,) = plan.of_type("tpu-serving:index:PathwaysServing")
    (lws,) = plan.of_type("kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet")
    (svc,) = plan.of_type("kubernetes:core/v1:Service")
    assert lws.parent == svc.parent == component.urn
    spec = lws.inputs["spec"]
    assert spec["replicas"] == 2 and spec["leaderWorkerTemplate"]["size"] == 9  # 8 VMs + leader
    leader = spec["leaderWorkerTemplate"]["leaderTemplate"]["spec"]
    rm = next(c for c in leader["containers"] if c["name"] == "pathways-rm")
    assert "--instance_type=tpuv5e:4x8" in rm["args"] and "--instance_count=1" in rm["args"]
    assert leader["nodeSelector"] == {
        "cloud.google.com/gke-tpu-accelerator": "tpu-v5-lite-podslice",
        "cloud.google.com/gke-tpu-topology": "4x8",
    }
    assert lws.inputs["metadata"]["annotations"] == {
        "leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"
    }


def test_pathways_component_autoscaled_leaves_replicas_to_the_hpa():
    from tpu_serving.backends.jetstream.pods import leader_worker_set_spec

    assert "replicas" not in leader_worker_set_spec(serving_args(replicas=2, autoscaled=True))
    assert leader_worker_set_spec(serving_args(replicas=2))["replicas"] == 2


def test_components_check_their_own_arguments_and_report_every_problem():
    from tpu_serving.common.validation import ArgumentsError

    def program():
        TpuNodePool("tpu", pool_args(pool_names="c-a-pool", spot="yes", service_account_id="x", disk_size_gb=10))

    with pytest.raises(ArgumentsError) as exc:
        run(program)
    problems = exc.value.problems
    # In field order: the field, the value given and what it must be.
    assert len(problems) == 4
    assert problems[0].startswith("TpuNodePoolArgs.service_account_id = 'x': must be 6 to 30")
    assert problems[1] == (
        "TpuNodePoolArgs.pool_names = 'c-a-pool': must be a sequence (a list or a tuple), not a string"
    )
    assert problems[2] == "TpuNodePoolArgs.spot = 'yes': must be true or false"
    assert problems[3] == "TpuNodePoolArgs.disk_size_gb = 10: must be from 50 to 4000"
    assert isinstance(exc.value, pulumi.RunError)  # the engine prints it without a traceback


def test_components_check_nested_arguments():
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.platform.cluster import CpuPoolArgs

    with pytest.raises(ArgumentsError) as exc:
        run(lambda: TpuCluster("c", cluster_args_for_test(cpu_pool=CpuPoolArgs(min_nodes=4, max_nodes=2))))
    assert exc.value.problems == ["TpuClusterArgs.cpu_pool.min_nodes (4) must not exceed max_nodes (2)"]


def test_components_check_the_bounds_declared_with_the_setting():
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.config import CpuPoolConfig
    from tpu_serving.platform.cluster import CpuPoolArgs

    with pytest.raises(ArgumentsError) as exc:
        run(lambda: TpuCluster("c", cluster_args_for_test(cpu_pool=CpuPoolArgs(disk_size_gb=10, max_nodes=101))))
    assert exc.value.problems == [
        "TpuClusterArgs.cpu_pool.max_nodes = 101: must be from 1 to 100",
        "TpuClusterArgs.cpu_pool.disk_size_gb = 10: must be from 30 to 2000",
    ]
    # The stack file's cluster.cpuPool is the same declaration: same defaults, bounds and descriptions.
    field = CpuPoolConfig.model_fields["disk_size_gb"]
    assert (field.default, field.description) == (100, "Boot disk size of each CPU node, in GB.")
    assert CpuPoolConfig().model_dump() == vars(CpuPoolArgs())


def test_components_accept_outputs_as_wiring():
    def program():
        cluster = TpuCluster("c", cluster_args_for_test())
        TpuNodePool("tpu", pool_args(cluster=cluster.cluster.id))

    assert run(program).of_type("gcp:container/nodePool:NodePool")


def test_components_take_outputs_only_where_wired_and_integral_floats_as_integers():
    from tpu_serving.catalog.capacity import Capacity
    from tpu_serving.common.validation import OUTPUT_REFUSED, check_arguments
    from tpu_serving.pools.nodepool import TpuNodePoolArgs

    def program():
        cluster = TpuCluster("c", cluster_args_for_test())
        assert argument_problems(pool_args(project=cluster.cluster.id, disk_size_gb=200.5, spot=1)) == [
            f"TpuNodePoolArgs.project is a pulumi Output: {OUTPUT_REFUSED}",
            "TpuNodePoolArgs.spot = 1: must be true or false",
            "TpuNodePoolArgs.disk_size_gb = 200.5: must be an integer",
        ]
        # The component provider sends numbers as floats, choices as their values and nested arguments as mappings.
        args = check_arguments("TpuNodePool", pool_args(disk_size_gb=300.0, capacity="spot"), TpuNodePoolArgs)
        assert args.disk_size_gb == 300 and isinstance(args.disk_size_gb, int) and args.capacity is Capacity.SPOT

    run(program)


def test_nodepool_builder_image_cache_disk_is_a_container_image_secondary_boot_disk():
    plain = node_pool_args(pool_args(), "c-a", SA).node_config
    assert "secondary_boot_disks" not in plain
    cfg = node_pool_args(pool_args(image_cache_disk="global/images/vllm-tpu-v0-21-0"), "c-a", SA).node_config
    assert cfg["secondary_boot_disks"] == [
        {"disk_image": "global/images/vllm-tpu-v0-21-0", "mode": "CONTAINER_IMAGE_CACHE"}
    ]
    assert cfg["gcfs_config"] == {"enabled": True}


def test_nodepool_component_refuses_an_image_cache_disk_without_image_streaming():
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        TpuNodePool("tpu", pool_args(image_cache_disk="global/images/cache", image_streaming=False))
    assert "image_cache_disk" in str(err.value) and "image_streaming" in str(err.value)
    with pytest.raises(ArgumentsError) as err:
        TpuNodePool("tpu", pool_args(image_cache_disk="cache"))
    assert "image_cache_disk" in str(err.value)


def test_components_refuse_a_cpu_pool_zone_outside_the_region():
    from tpu_serving import CpuNodePool, CpuNodePoolArgs
    from tpu_serving.common.validation import ArgumentsError
    from tpu_serving.platform.cluster import CpuPoolArgs

    def program():
        CpuNodePool(
            "head",
            CpuNodePoolArgs(
                project="p-123456",
                region="us-east5",
                zone="us-central1-a",
                cluster="cluster-id",
                pool_name="head",
                service_account_id="head-nodes",
                pool=CpuPoolArgs(),
            ),
        )

    with pytest.raises(ArgumentsError) as exc:
        run(program)
    assert exc.value.problems == [
        "CpuNodePoolArgs.zone = 'us-central1-a': zone is outside the region 'us-east5'; valid: us-east5-a, "
        "us-east5-b, us-east5-c"
    ]


def test_workload_identity_refuses_a_namespace_kubernetes_would_refuse():
    from tpu_serving.common.validation import ArgumentsError, check_arguments

    args = WorkloadIdentityArgs(
        project="p-123456", namespace="Serving_NS", kubernetes_service_account="k", gcp_service_account_id="gsa-123"
    )
    with pytest.raises(ArgumentsError) as err:
        check_arguments("WorkloadIdentity", args, WorkloadIdentityArgs)
    assert "WorkloadIdentityArgs.namespace = 'Serving_NS': must consist of lower-case letters" in str(err.value)


def _run_ps(program):
    return run_program(program, {}, project="p", stack="s")


def test_cluster_kubeconfig_exec_speaks_the_client_authentication_api():
    """cluster.kubeconfig (mutmut_46): kubectl runs the exec plugin only for an apiVersion it knows; GKE's plugin
    speaks client.authentication.k8s.io/v1beta1 (client-go pkg/apis/clientauthentication/v1beta1)."""
    from tpu_serving.platform.cluster import kubeconfig

    exec_ = json.loads(kubeconfig("ctx", "1.2.3.4", "Q0E="))["users"][0]["user"]["exec"]
    assert exec_["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    assert exec_["command"] == "gke-gcloud-auth-plugin"


def test_buckets_name_rule_is_spelled_out():
    """buckets.bucket_name_problem (mutmut_5): the message states Cloud Storage's naming rule."""
    from tpu_serving.platform.buckets import bucket_name_problem

    assert bucket_name_problem("ok-bucket") == ""
    assert bucket_name_problem("Bad_Bucket").endswith("starting and ending with a letter or digit")


def test_buckets_a_bucket_without_workload_access_gets_no_grant():
    """phases.build_identity (mutmut_34): `workloadAccess: none` means no grant to the workload identity."""
    plan = plan_edited(
        "llama31-405b-v6e16",
        buckets=lambda b: b.append({"purpose": "state", "workloadAccess": "none"}),
    )
    (state,) = [r for r in plan.resources if r.type == "gcp:storage/bucket:Bucket" and r.name.endswith("-state")]
    grants = [r for r in plan.resources if r.type.startswith("gcp:storage/bucketIAM") and "-wi-" in r.name]
    assert grants, "the workload identity has grants on the other buckets"
    assert not [g for g in grants if "state" in g.name], [g.name for g in grants]
    assert state.inputs["name"]


def test_cluster_subnetwork_reaches_the_cluster():
    """cluster.cluster_args (mutmut_5): TpuClusterArgs.subnetwork is the GKE cluster's subnetwork."""
    plan = _run_ps(lambda: TpuCluster("c", cluster_args_for_test(network="vpc-a", subnetwork="sub-a")))
    (cluster,) = plan.of_type("gcp:container/cluster:Cluster")
    assert (cluster.inputs["network"], cluster.inputs["subnetwork"]) == ("vpc-a", "sub-a")


def test_cluster_an_existing_nat_is_read_through_the_clusters_provider(monkeypatch):
    """cloud_nat.look_up_existing_nat (mutmut_10): the lookup of an existing Cloud NAT is the component's child, so
    it uses the provider the component was given (another project's credentials), not the default one."""
    from pulumi_gcp import Provider

    calls: list[tuple[str, str]] = []
    answer = PreviewMocks.call

    def call(self, args):
        calls.append((args.token, args.provider))
        return answer(self, args)

    monkeypatch.setattr(PreviewMocks, "call", call)
    existing = {"cloud_nat": "existing", "existing_nat_router": "net-router", "existing_nat": "net-nat"}

    def program():
        gcp = Provider("other-project", project="p-654321")
        TpuCluster("c", cluster_args_for_test(**existing), opts=pulumi.ResourceOptions(providers=[gcp]))

    _run_ps(program)
    (provider,) = [p for token, p in calls if token == "gcp:compute/getRouterNat:getRouterNat"]
    assert "pulumi:providers:gcp::other-project" in provider, provider


def test_deployment_exposes_its_controller_installs():
    """deployment.TpuServingDeployment.__init__ (mutmut_89): `installs` holds the controllers the stack installs."""
    from tpu_serving import TpuServingDeployment, TpuServingDeploymentArgs
    from tpu_serving.config.loading import load_stack_config

    built = []
    project = load_project(ROOT)

    def program():
        settings = load_stack_config(as_engine_config(VLLM))
        built.append(TpuServingDeployment("d", TpuServingDeploymentArgs(settings)))

    plan = run_program(program, as_engine_config(VLLM), project=project.name, stack="s")
    (deployment,) = built
    installs = [r.name for r in plan.resources if r.type == "tpu-serving:index:ControllerInstall"]
    assert installs == ["d-lws"], installs
    assert [(type(i).__name__, i._name) for i in deployment.installs] == [("ControllerInstall", "d-lws")]


@pytest.mark.parametrize("component", ["Buckets", "ServingAutoscaler"])
def test_components_name_themselves_in_their_refusals(component):
    """buckets.Buckets.__init__ (mutmut_9), autoscaling.ServingAutoscaler.__init__ (mutmut_10): the refusal names
    the component as Python spells it."""
    import tpu_serving
    from tpu_serving.common.validation import ArgumentsError

    with pytest.raises(ArgumentsError) as err:
        _run_ps(lambda: getattr(tpu_serving, component)("x", {"no_such_argument": 1}))
    assert str(err.value).startswith(f"invalid arguments of {component} 'x': ")  # and its resource name


def test_components_one_problem_is_one_problem():
    """validation.ArgumentsError.__init__ (mutmut_6): "1 problem", not "1 problems"."""
    from tpu_serving.common.validation import ArgumentsError

    assert str(ArgumentsError("C", ["a"])).splitlines()[0] == "invalid arguments of C: 1 problem"
    assert str(ArgumentsError("C", ["a", "b"])).splitlines()[0] == "invalid arguments of C: 2 problems"
