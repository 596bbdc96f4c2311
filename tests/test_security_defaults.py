"""The hardened defaults in every stack's plan, the shared NAT and shared buckets, and what the preview says."""

from __future__ import annotations

import copy
import json

import pytest

from tests.conftest import ROOT, STACKS, plan_of
from tests.fixtures.configs import VLLM, load, plan_edited
from tpu_serving_policy.rules import pod_specs
from tpu_serving_tools.preview.offline import main_program, run_program
from tpu_serving_tools.preview.security_notes import cluster_notes, security_summary, tag_only_images
from tpu_serving_tools.preview.stack_files import load_project, stack_config
from tpu_serving_tools.runtime import prereqs, scope
from tpu_serving_tools.runtime.planview import PlanView

API_CALLERS = {"epp", "publish"}
"""The containers whose pods keep a service account token: the endpoint picker and the Sax publisher."""


def workloads(stack: str):
    return [
        r.inputs
        for r in plan_of(stack).resources
        if r.custom and r.inputs.get("kind") in {"Deployment", "Job", "LeaderWorkerSet", "JobSet", "PathwaysJob"}
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_security_every_serving_pod_template_is_hardened(stack):
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
def test_security_every_cluster_has_private_nodes_and_a_named_control_plane_choice(stack):
    clusters = [r for r in plan_of(stack).resources if r.type == "gcp:container/cluster:Cluster"]
    if not clusters:  # an existing cluster or a platform's: its owner's choices, which the stack never changes
        owner = ("tpu-serving:index:ExistingCluster", "tpu-serving:index:PlatformCluster")
        assert [r for r in plan_of(stack).resources if r.type in owner]
        return
    (cluster,) = clusters
    assert cluster.inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True}
    assert cluster.inputs["controlPlaneEndpointsConfig"] == {"dnsEndpointConfig": {"allowExternalTraffic": True}}
    assert not any("publicControlPlane" in line for line in cluster_notes(plan_of(stack).resources))


def test_security_only_the_engines_documented_capabilities_come_back():
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


def test_security_cpu_pool_pods_have_memory_limits_and_known_users():
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


DNS_REACH = (
    "pulumi up and kubectl reach the control plane at its DNS-based endpoint, each call authorised by IAM (the caller "
    "needs container.clusters.connect, and gke-gcloud-auth-plugin); it has no external IP endpoint"
)


def test_security_example_stacks_reach_the_control_plane_by_dns():
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


def _opted_out(cluster: dict) -> None:
    cluster["controlPlaneEndpoint"] = "ip"
    cluster["publicControlPlane"] = True


def _authorized(cluster: dict) -> None:
    cluster["controlPlaneEndpoint"] = "ip"
    cluster["masterAuthorizedNetworks"] = ["203.0.113.0/24"]


def test_security_preview_names_the_opt_outs_and_the_tag_only_images():
    sax = plan_edited("saxml-175b-v5e32x2", cluster=_opted_out).resources
    assert cluster_notes(sax) == [
        "cluster saxml175b: pulumi up and kubectl reach the control plane at its external IP endpoint, from any "
        "source address (controlPlaneEndpoint: ip, the opt-out from the DNS-based endpoint)",
        "cluster saxml175b: control plane open to any source address (opt-out: publicControlPlane)",
    ]
    assert cluster_notes(plan_edited("saxml-175b-v5e32x2", cluster=_authorized).resources) == [
        "cluster saxml175b: pulumi up and kubectl reach the control plane at its external IP endpoint, from "
        "203.0.113.0/24 (controlPlaneEndpoint: ip, the opt-out from the DNS-based endpoint)"
    ]
    assert "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0" in tag_only_images(sax)
    assert cluster_notes(plan_of("vllm-llama33-70b-v5e16").resources) == [f"cluster vllm70b: {DNS_REACH}"]
    lines = security_summary(plan_of("vllm-llama33-70b-v5e16").resources)
    assert lines == [
        f"cluster vllm70b: {DNS_REACH}",
        "images pinned by tag only, no digest (4): gcr.io/distroless/python3-debian13:nonroot, "
        "quay.io/prometheus/blackbox-exporter:v0.28.0, "
        "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-dockerhub/vllm/vllm-tpu:v0.29.0, "
        "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0; "
        "a tag moved upstream does not reach a node that already "
        "holds the image (imagePullPolicy IfNotPresent), but a new or recreated node pulls the moved tag, so groups "
        "can run different builds: pin a digest",
    ]


def test_security_every_container_pulls_if_not_present():
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


def test_security_a_digest_pinned_image_is_not_listed():
    resources = copy.deepcopy(plan_of("vllm-llama33-70b-v5e16").resources)
    lws = next(r for r in resources if r.inputs.get("kind") == "LeaderWorkerSet")
    digest = "docker.io/vllm/vllm-tpu:v0.29.0@sha256:" + "a" * 64
    for pod in pod_specs(lws.inputs):
        for c in [*pod["containers"], *(pod.get("initContainers") or [])]:  # the leader's weights wait too
            c["image"] = digest
    assert tag_only_images(resources) == [
        "gcr.io/distroless/python3-debian13:nonroot",  # the host-maintenance gate's
        "quay.io/prometheus/blackbox-exporter:v0.28.0",
        "us-west4-docker.pkg.dev/tpu-serving-demo/vllm70b-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0",
    ]


def test_security_stacks_sharing_a_region_share_one_nat_and_two_nats_clash():
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


def test_security_a_declared_existing_nat_satisfies_the_prerequisite_and_nothing_else_does():
    view = PlanView(plan_of("vllm-llama31-405b-v6e16").as_json())
    (nat,) = [f for f in prereqs.check(view).findings if f.subject.startswith("cloud nat")]
    assert nat.ok and "cloudNat: existing" in nat.reason
    plan = copy.deepcopy(view.plan)
    plan["config"] = {k: v for k, v in plan["config"].items() if not k.endswith(":cluster")}
    (nat,) = [f for f in prereqs.check(PlanView(plan)).findings if f.subject.startswith("cloud nat")]
    assert not nat.ok and "private nodes without a RouterNat" in nat.reason


def test_security_shared_buckets_are_read_at_bucket_scope():
    project = load_project(ROOT)
    config = stack_config(project, "vllm-llama33-70b-v5e16")
    config["tpu-serving:sharedBuckets"] = json.dumps([{"name": "team-llama-weights", "key": "weights"}])
    plan = run_program(main_program(project), config, project=project.name, stack="vllm-llama33-70b-v5e16")
    (shared,) = plan.of_type("tpu-serving:index:SharedBuckets")
    assert shared.inputs == {"bucketNames": ["team-llama-weights"]}
    grants = [
        r
        for r in plan.of_type("gcp:storage/bucketIAMMember:BucketIAMMember")
        if r.inputs["bucket"] == "team-llama-weights"
    ]
    (grant,) = grants
    assert grant.inputs["role"] == "roles/storage.objectViewer" and "shared-weights" in grant.name


@pytest.mark.parametrize(
    "shared, problem",
    [
        ([{"name": "Bad_Bucket", "key": "w"}], "sharedBuckets[0].name"),
        ([{"name": "b1x", "key": "w"}, {"name": "b2x", "key": "w"}], "key 'w' is declared twice"),
    ],
)
def test_security_shared_buckets_refuse_bad_names_and_twice_declared_keys(shared, problem):
    from tpu_serving.config import ConfigError

    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:sharedBuckets": shared})
    assert problem in str(err.value)


def test_security_host_network_pods_read_shared_buckets_as_their_nodes():
    from tpu_serving_tools.runtime import identity

    project = load_project(ROOT)
    config = stack_config(project, "saxml-175b-v5e32x2")
    config["tpu-serving:sharedBuckets"] = json.dumps([{"name": "team-weights", "key": "weights"}])
    plan = run_program(main_program(project), config, project=project.name, stack="saxml-175b-v5e32x2").as_json()
    grants = [
        r
        for r in plan["resources"]
        if r["type"] == "gcp:storage/bucketIAMMember:BucketIAMMember" and r["inputs"]["bucket"] == "team-weights"
    ]
    # the workload identity's account, and the node account of the model servers' slices (host network)
    assert len(grants) == 2 and all(r["inputs"]["role"] == "roles/storage.objectViewer" for r in grants)
    assert len({r["parent"] for r in grants}) == 2
    (need,) = [f for f in identity.check(PlanView(plan)).findings if "team-weights" in f.subject]
    assert need.ok and "sax-model-server" in need.subject
    # without the node account's grant the model servers could not read it, and make check says so
    node_grant = next(r for r in grants if "-wi-" not in r["name"])
    plan["resources"].remove(node_grant)
    (need,) = [f for f in identity.check(PlanView(plan)).findings if "team-weights" in f.subject]
    assert not need.ok and "no storage role" in need.reason


def test_security_a_stack_naming_the_wrong_existing_nat_is_refused_across_the_stacks():
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


@pytest.mark.parametrize(
    "cluster, problem",
    [
        ({"cloudNat": "existing"}, "name the NAT's Cloud Router and the NAT"),
        ({"existingNat": "n", "existingNatRouter": "r"}, "they need cloudNat = existing"),
    ],
)
def test_security_an_existing_nat_is_named_exactly_when_used(cluster, problem):
    from tpu_serving.config import ConfigError

    with pytest.raises(ConfigError) as err:
        load({**VLLM, "tpu-serving:cluster": {"name": "vllm", **cluster}})
    assert problem in str(err.value)
