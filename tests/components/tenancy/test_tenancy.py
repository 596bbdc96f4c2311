"""Multi-tenancy: every stack's namespace gets its quota, network policies, priorities and RBAC."""

from __future__ import annotations

import copy

import pytest

from tests.components.common.test_settings import tenancy_args
from tests.conftest import STACKS, plan_of, waits_for
from tests.fixtures.configs import GOOD, VLLM, load, stack_problems, with_change
from tpu_serving.common.validation import argument_problems
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import kubernetes_objects


def objects(stack: str, kind: str) -> list[dict]:
    return [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == kind]


@pytest.mark.parametrize("stack", STACKS)
def test_tenancy_quota_sized_to_slices(stack):
    (quota,) = objects(stack, "ResourceQuota")
    chips = sum(s["chips"] for s in plan_of(stack).outputs["slices"])
    # Headroom: a stack's serving unit restarts as a whole (one LWS group holding every slice, a
    # JobSet, a PathwaysJob), so the quota holds the slices' chips twice; an autoscaled vLLM stack's
    # unit is one group on one slice of its maxReplicas (and of a surge rollout's spare slice, one per role in the
    # disaggregated mode).
    outputs = plan_of(stack).outputs
    # a disaggregated stack's autoscaling output is per role: its groups are both roles' maxima
    auto = outputs.get("autoscaling", {})
    roles = [r for r in auto.values() if isinstance(r, dict)]
    groups = auto.get("maxReplicas") or sum(r["maxReplicas"] for r in roles) or 1
    groups += outputs.get("rollout", {}).get("strategy") == "surge"
    groups += len(roles)  # each role of the disaggregated mode keeps a spare slice for its surge group
    assert quota["spec"]["hard"]["requests.google.com/tpu"] == str(chips + chips // groups)
    assert {"requests.cpu", "requests.memory"} <= set(quota["spec"]["hard"])
    assert quota["metadata"]["namespace"] == plan_of(stack).outputs["namespace"]
    (limits,) = objects(stack, "LimitRange")
    assert limits["spec"]["limits"][0]["defaultRequest"].keys() == {"cpu", "memory"}


@pytest.mark.parametrize("stack", STACKS)
def test_tenancy_priority_classes_serving_above_batch(stack):
    classes = {o["metadata"]["name"]: o for o in objects(stack, "PriorityClass")}
    assert classes["tpu-serving-online"]["value"] > classes["tpu-serving-batch"]["value"]
    assert classes["tpu-serving-batch"]["preemptionPolicy"] == "Never"


def pod_specs(obj: dict) -> list[dict]:
    """Pod specs inside a workload object, whatever its kind."""
    found = []

    def walk(v):
        if isinstance(v, dict):
            if "containers" in v:
                found.append(v)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    walk(obj.get("spec", {}))
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_tenancy_workloads_use_the_priority_classes(stack):
    serving = [
        o for o in kubernetes_objects(plan_of(stack)) if o["kind"] in ("LeaderWorkerSet", "JobSet", "Deployment")
    ]
    for obj in serving:
        for pod in pod_specs(obj):
            assert pod.get("priorityClassName") == "tpu-serving-online", obj["metadata"]["name"]
    for job in objects(stack, "PathwaysJob"):
        assert job["spec"]["workers"][0]["priorityClassName"] == "tpu-serving-batch"
    plan = plan_of(stack)
    (tenancy,) = plan.of_type("tpu-serving:index:Tenancy")
    pcs = {
        r.urn
        for k in ("PriorityClass", "PriorityClassPatch")
        for r in plan.of_type(f"kubernetes:scheduling.k8s.io/v1:{k}")
    }
    assert len(pcs) == 2
    for r in plan.resources:
        if r.type.split(":")[1].split("/")[0] in (
            "leaderworkerset.x-k8s.io",
            "jobset.x-k8s.io",
            "pathways-job.pathways.domain",
        ):
            assert pcs <= set(r.dependencies), r.name


def test_tenancy_network_policy_keeps_group_traffic_and_guards_serving_port():
    policies = {o["metadata"]["name"]: o for o in objects("llama31-405b-v6e16", "NetworkPolicy")}
    same = policies["same-namespace"]["spec"]
    assert same["podSelector"] == {} and same["ingress"] == [{"from": [{"podSelector": {}}]}]
    serving = policies["serving-ingress"]["spec"]
    assert serving["podSelector"] == {"matchLabels": {"app": "jetstream-pathways"}}
    (rule,) = serving["ingress"]
    assert rule["ports"] == [{"port": 8000, "protocol": "TCP"}]
    assert {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "llm-gateway"}}} in rule["from"]


def test_tenancy_saxml_serving_port_from_cidrs():
    policies = {o["metadata"]["name"]: o for o in objects("saxml-175b-v5e32x2", "NetworkPolicy")}
    (rule,) = policies["serving-ingress"]["spec"]["ingress"]
    assert rule["ports"] == [{"port": 8888, "protocol": "TCP"}]
    assert any("ipBlock" in peer for peer in rule["from"])


def test_tenancy_operator_rbac():
    (role,) = objects("llama31-405b-v6e16", "Role")
    verbs = {(g, r): set(rule["verbs"]) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    assert verbs[("", "pods/portforward")] == {"create"}
    assert "create" not in verbs[("leaderworkerset.x-k8s.io", "leaderworkersets")]
    assert not any(r == "secrets" for (_, r) in verbs)
    (binding,) = [
        o for o in objects("llama31-405b-v6e16", "RoleBinding") if o["metadata"]["name"] == "tpu-serving-operator"
    ]
    assert binding["subjects"][0]["kind"] == "Group"
    assert binding["roleRef"]["name"] == role["metadata"]["name"]


@pytest.mark.parametrize(
    "path, value, key",
    [
        ("tpu-serving:tenancy", {"allowedCidrs": ["10.0.0.0/33"]}, "tpu-serving:tenancy.allowedCidrs[0]"),
        ("tpu-serving:tenancy", {"allowedCidrs": ["10.0.0.1/8"]}, "tpu-serving:tenancy.allowedCidrs[0]"),
        ("tpu-serving:tenancy", {"allowedNamespaces": ["Gateway"]}, "tpu-serving:tenancy.allowedNamespaces[0]"),
        ("tpu-serving:tenancy", {"quota": {"cpu": "lots"}}, "tpu-serving:tenancy.quota.cpu"),
        (
            "tpu-serving:cluster",
            {"name": "c1", "masterAuthorizedNetworks": ["10.0.0.0/8", "office"]},
            'tpu-serving:cluster.masterAuthorizedNetworks = ["10.0.0.0/8", "office"]: \'office\' is not a CIDR block',
        ),
    ],
)
def test_tenancy_bad_input(path, value, key):
    with pytest.raises(ConfigError) as exc:
        load(with_change(path, value, GOOD))
    assert any(p.startswith(key) for p in exc.value.problems), exc.value.problems


@pytest.mark.parametrize("stack", STACKS)
def test_tenancy_every_namespaced_object_waits_for_its_namespace(stack):
    plan = plan_of(stack)
    namespaces = {r.inputs["metadata"]["name"]: r.urn for r in plan.of_type("kubernetes:core/v1:Namespace")}
    assert namespaces
    namespaced = [
        r
        for r in plan.resources
        if r.custom and r.type.startswith("kubernetes:") and r.inputs.get("metadata", {}).get("namespace") in namespaces
    ]
    assert namespaced
    late = [r.name for r in namespaced if namespaces[r.inputs["metadata"]["namespace"]] not in waits_for(plan, r)]
    assert late == []


def test_tenancy_serving_priority_never_preempts_on_an_existing_cluster():
    """On an existing cluster the serving class must not evict the other tenants' pods (GKE review G2); a created
    cluster's serving class still preempts (batch work below it)."""
    existing = {o["metadata"]["name"]: o for o in objects("vllm-llama33-70b-existing", "PriorityClass")}
    created = {o["metadata"]["name"]: o for o in objects("vllm-llama33-70b-v5e16", "PriorityClass")}
    assert existing["tpu-serving-online"]["preemptionPolicy"] == "Never"
    assert created["tpu-serving-online"]["preemptionPolicy"] == "PreemptLowerPriority"
    assert existing["tpu-serving-online"]["value"] > existing["tpu-serving-batch"]["value"]


def test_tenancy_priority_classes_are_shared_patches_retained_on_delete_on_an_existing_cluster():
    """On an existing cluster every tenant stack applies the same two cluster-scoped PriorityClasses: as plain
    resources the second tenant's create fails with AlreadyExists (pulumi-kubernetes >= 4.29 creates with a
    client-side create), so they are PriorityClassPatch resources there (a server-side apply each, created when
    absent), and one tenant's destroy must not delete the class the other tenants' pods name (SRE review M5): they
    are retainOnDelete; a cluster the stack creates still has plain ones, retained too (new-user review 17, M1: a
    program grown to a second namespace moves them to Patch resources, and the old ones' delete would delete the
    objects the Patches applied) (tests/e2e/test_e2e_shared_tenancy.py shows it on a real API server)."""
    for stack, kind, retained in (
        ("vllm-llama33-70b-existing", "PriorityClassPatch", True),
        ("vllm-llama33-70b-v5e16", "PriorityClass", True),
    ):
        plan = plan_of(stack)
        classes = plan.of_type(f"kubernetes:scheduling.k8s.io/v1:{kind}")
        assert len(classes) == 2 and len([r for r in plan.resources if "PriorityClass" in r.type]) == 2, stack
        assert {r.inputs["metadata"]["name"] for r in classes} == {"tpu-serving-online", "tpu-serving-batch"}
        assert {r.inputs["kind"] for r in classes} == {"PriorityClass"}
        assert all(r.retain_on_delete is retained for r in classes), stack


def test_tenancy_args_refuse_what_the_api_server_refuses():
    from tpu_serving.common.validation import argument_problems
    from tpu_serving.tenancy.tenant import TenancyArgs

    args = TenancyArgs(
        namespace="chat",
        tpu_chips=-8,
        tpu_headroom_chips=-1,
        serving_ports=(8000, 70000),
        allowed_cidrs=("10.0.0.0/33",),
        load_balancer_cidrs=("35.191.0.0/16", "x"),
    )
    assert argument_problems(args) == [
        "TenancyArgs.tpu_chips = -8: must be at least 0",
        "TenancyArgs.tpu_headroom_chips = -1: must be at least 0",
        "TenancyArgs.serving_ports = (8000, 70000): 70000 is not a port: a port is 1 to 65535",
        "TenancyArgs.allowed_cidrs = ('10.0.0.0/33',): '10.0.0.0/33' is not a CIDR block "
        "('10.0.0.0/33' does not appear to be an IPv4 or IPv6 network)",
        "TenancyArgs.load_balancer_cidrs = ('35.191.0.0/16', 'x'): 'x' is not a CIDR block "
        "('x' does not appear to be an IPv4 or IPv6 network)",
    ]


def test_tenancy_args_take_ports_and_ranges_the_api_server_takes():
    from tpu_serving.common.validation import argument_problems
    from tpu_serving.tenancy.tenant import TenancyArgs

    args = TenancyArgs(
        namespace="chat", tpu_chips=0, serving_ports=(1, 65535), allowed_cidrs=("10.0.0.0/8", "2001:db8::/32")
    )
    assert argument_problems(args) == []


@pytest.mark.parametrize("shared", [True, False])
def test_tenancy_two_namespaces_of_one_program_pass_the_check_only_when_shared(shared):
    """docs/library-api.md's several namespaces on one cluster: two Tenancy of one provider declare the two classes
    twice. With shared_cluster they are PriorityClassPatch resources, which the check passes (and the real engine
    applies: tests/e2e/test_e2e_shared_tenancy.py); without, plain ones, whose second create pulumi-kubernetes >= 4.29
    has refused with AlreadyExists."""
    import pulumi
    import pulumi_kubernetes as k8s

    from tpu_serving import Tenancy, TenancyArgs
    from tpu_serving_tools.preview.offline import run_program
    from tpu_serving_tools.runtime import objects as runtime_objects
    from tpu_serving_tools.runtime.planview import PlanView

    def program() -> None:
        provider = k8s.Provider("k8s", kubeconfig="{}", enable_server_side_apply=True)
        for ns in ("team-a", "team-b"):
            Tenancy(
                ns,
                TenancyArgs(namespace=ns, tpu_chips=4, serving_preempts=not shared, shared_cluster=shared),
                opts=pulumi.ResourceOptions(providers=[provider]),
            )

    plan = run_program(program, {}, project="p", stack="s").as_json()
    found = {f.subject: f for f in runtime_objects.check(PlanView(plan)).findings if "declared twice" in f.subject}
    assert set(found) == {
        "declared twice PriorityClass tpu-serving-online",
        "declared twice PriorityClass tpu-serving-batch",
    }
    assert all(f.ok is shared for f in found.values()), found
    reason = found["declared twice PriorityClass tpu-serving-online"].reason
    if shared:
        assert "each a Patch resource" in reason and "retained on delete" in reason, reason
    else:
        assert "the second create fails with AlreadyExists" in reason, reason


@pytest.mark.parametrize(
    ("key", "field", "value"),
    [
        ("users", "operator_users", ["alice"]),
        ("users", "operator_users", ["alice@example.com", "bob@"]),
        ("groups", "operator_groups", ["ml-platform-oncall"]),
    ],
)
def test_tenancy_operators_are_email_addresses_for_both(key, field, value):
    """GKE names a Google account or a Google Group in an RBAC subject by its email address
    (https://cloud.google.com/kubernetes-engine/docs/how-to/role-based-access-control,
    https://cloud.google.com/kubernetes-engine/docs/how-to/google-groups-rbac)."""
    bad = value[-1]
    refused = stack_problems(with_change("tpu-serving:tenancy", {"operators": {key: value}}, copy.deepcopy(VLLM)))
    assert any(p.startswith(f"tpu-serving:tenancy.operators.{key}") and repr(bad) in p for p in refused), refused
    assert any("email address" in p for p in refused), refused
    python = argument_problems(tenancy_args(**{field: value}))
    assert any(p.startswith(f"TenancyArgs.{field}[{len(value) - 1}] = {bad!r}") for p in python), python
    assert not argument_problems(tenancy_args(**{field: ["alice@example.com"]}))
