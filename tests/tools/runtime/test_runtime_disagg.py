"""The runtime model over a disaggregated prefill/decode deployment (a DisaggregatedSet of two multi-host vLLM TPU
roles), on a small plan built by hand (tests/fixtures/disagg.py): the good one passes; a blocked KV flow, a role that
cannot be scheduled, a broken scale path or picker routing fail, naming what; an empty plan does not pass."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.conftest import plan_of
from tests.fixtures import disagg as F
from tests.fixtures.configs import disagg_multi_host_plan
from tpu_serving_tools.check import run_checks, summary
from tpu_serving_tools.runtime import network, network_kv, objects, pods_ds, ports, scheduling_check
from tpu_serving_tools.runtime.planview import PlanView
from tpu_serving_tools.runtime.pods import pods_of

PREFILL, DECODE = "pd/llama-pd-0-<rev8>-prefill", "pd/llama-pd-0-<rev8>-decode"
CHECKED = (objects.check, scheduling_check.check, network.check, ports.check)


def _failures(plan: dict[str, Any]) -> dict[str, str]:
    view = PlanView(plan)
    return {f"[{r.category}] {f.subject}": f.reason for check in CHECKED for r in [check(view)] for f in r.failures()}


def test_disagg_good_plan_passes_and_examines_each_part():
    view = PlanView(F.plan())
    results = {check.__module__.rsplit(".", 1)[-1]: check(view) for check in CHECKED}
    assert {name: r.failures() for name, r in results.items()} == dict.fromkeys(results, [])
    subjects = {f.subject for r in results.values() for f in r.findings}
    assert {"role pd/llama-pd prefill", "role pd/llama-pd decode"} <= subjects
    assert f"flow {DECODE}-worker -> {PREFILL}-worker:9100/TCP" in subjects
    assert f"flow {DECODE}-leader -> {PREFILL}-worker:9600/TCP" in subjects
    assert f"flow {DECODE}-worker -> {PREFILL}-leader:32768-60999/TCP" in subjects
    assert f"flow {DECODE}-leader -> {PREFILL}-leader:8000/TCP" in subjects  # the sidecar's prefill leg
    assert "scale pd/llama-pd-decode 1 -> 2" in subjects


def test_disagg_children_named_and_labelled_as_the_controller_does():
    (prefill, decode) = pods_ds.children(F.disaggregated_set())
    ds = F.disaggregated_set()
    ds["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["metadata"]["labels"]["app"] = "mine"
    worker = pods_ds.children(ds)[0].lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]
    assert worker["metadata"]["labels"]["app"] == "llama-pd-0-prefill"  # the controller's label wins
    assert (prefill.name, decode.name) == ("llama-pd-0-<rev8>-prefill", "llama-pd-0-<rev8>-decode")
    pods = pods_of(PlanView(F.plan()))
    assert [p.name for p in pods] == [f"{n}{s}" for n in (prefill.name, decode.name) for s in ("-0", "-0-1")]
    labels = pods[3].labels
    assert labels["disaggregatedset.x-k8s.io/role"] == "decode" and labels["app"] == "llama-pd-0-decode"
    assert labels["llm-d.ai/role"] == "decode"  # the template's own labels stay beside the controller's
    assert labels["leaderworkerset.sigs.k8s.io/worker-index"] == "1"
    # an External role runs its scaler's replicas: the HPA's minimum, else the controller's seed of 1
    assert pods_ds.role_replicas(F.disaggregated_set(), F.role("decode"), {}) == 1
    key = ("pd", "DisaggregatedSetRoleScaler", "llama-pd-decode")
    assert pods_ds.role_replicas(F.disaggregated_set(), F.role("decode"), {key: 3}) == 3


def test_disagg_blocked_kv_flow_fails_naming_source_destination_and_port():
    only_transfer = [{"port": 9100, "protocol": "TCP"}, {"port": 32768, "endPort": 60999, "protocol": "TCP"}]
    plan = F.without(F.plan(F.kv_policy(only_transfer)), "NetworkPolicy-kv-decode-to-prefill")
    plan["resources"].append(F.kv_policy(only_transfer))
    failures = _failures(plan)
    blocked = f"[network] flow {DECODE}-worker -> {PREFILL}-leader:9600/TCP"
    assert blocked in failures and "denied" in failures[blocked] and "kv-decode-to-prefill" in failures[blocked]
    assert all(":9600/TCP" in f for f in failures if f.startswith("[network]"))


def test_disagg_bulk_range_admitted_only_in_part_fails_at_the_first_port_denied():
    short = [{"port": 9100}, {"port": 9600}, {"port": 32768, "endPort": 40000}]
    plan = F.without(F.plan(), "NetworkPolicy-kv-decode-to-prefill")
    plan["resources"].append(F.kv_policy(short))
    failures = _failures(plan)
    subject = f"[network] flow {DECODE}-leader -> {PREFILL}-worker:32768-60999/TCP"
    assert failures[subject].startswith("port 40001: denied")


def test_disagg_side_channel_ports_that_differ_fail():
    def decode_side_channel(ds: dict[str, Any]) -> None:
        for tmpl in ("leaderTemplate", "workerTemplate"):
            c = ds["spec"]["roles"][1]["spec"]["leaderWorkerTemplate"][tmpl]["spec"]["containers"][0]
            next(e for e in c["env"] if e["name"] == "TPU_SIDE_CHANNEL_PORT")["value"] = "9601"

    failures = _failures(F.edited_ds(F.plan(), decode_side_channel))
    subject = f"[network] flow {DECODE}-leader -> {PREFILL}-leader:9601/TCP"
    assert "binds 9600: nothing listens" in failures[subject]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("topology", "no node pool has labels"),  # a slice shape no pool has
        ("chips", "do not take all 4 chips"),  # too few chips per VM
        ("selector", "no node pool has labels"),  # a pool label no pool carries
    ],
)
def test_disagg_unschedulable_role_fails_naming_the_role(edit: str, expected: str):
    def change(ds: dict[str, Any]) -> None:
        tmpl = ds["spec"]["roles"][1]["spec"]["leaderWorkerTemplate"]
        for t in (tmpl["leaderTemplate"], tmpl["workerTemplate"]):
            if edit == "topology":
                t["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "2x2"
            elif edit == "selector":
                t["spec"]["nodeSelector"][F.ROLE_NODE_LABEL] = "decoder"
            else:
                t["spec"]["containers"][0]["resources"]["limits"]["google.com/tpu"] = "2"

    failures = _failures(F.edited_ds(F.plan(), change))
    assert expected in failures["[scheduling] role pd/llama-pd decode"]
    assert failures["[scheduling] role pd/llama-pd decode"].startswith("role decode")
    assert "[scheduling] role pd/llama-pd prefill" not in failures


def test_disagg_roles_that_may_take_each_others_slices_fail():
    def unpin(ds: dict[str, Any]) -> None:
        for role in ds["spec"]["roles"]:
            for t in role["spec"]["leaderWorkerTemplate"].values():
                if isinstance(t, dict):
                    t["spec"]["nodeSelector"].pop(F.ROLE_NODE_LABEL)

    failures = _failures(F.edited_ds(F.plan(), unpin))
    reason = failures["[scheduling] role pd/llama-pd prefill"]
    assert (
        "may land on decode-a, decode-b, decode-c, prefill-a, prefill-b, prefill-c, which role decode's pods" in reason
    )
    # when the settings put both roles on one slice kind, sharing its pools is what they ask for
    shared = F.edited_ds(F.plan(), unpin)
    shared["config"]["tpu-serving:serving"] = (
        '{"disaggregation": {"prefill": {"slice": "s"}, "decode": {"slice": "s"}}}'
    )
    assert not [f for f in _failures(shared) if f.startswith("[scheduling] role")]


def test_disagg_roles_pinned_by_node_affinity_keep_to_their_pools():
    def pin(ds: dict[str, Any]) -> None:
        for role in ds["spec"]["roles"]:
            pools = [f"{role['name']}-{x}" for x in "abc"]
            term = {"matchExpressions": [{"key": "cloud.google.com/gke-nodepool", "operator": "In", "values": pools}]}
            for t in (role["spec"]["leaderWorkerTemplate"][k] for k in ("leaderTemplate", "workerTemplate")):
                t["spec"]["nodeSelector"].pop(F.ROLE_NODE_LABEL)
                t["spec"]["affinity"] = {
                    "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}
                }

    assert _failures(F.edited_ds(F.plan(), pin)) == {}
    view = PlanView(F.edited_ds(F.plan(), pin))
    assert {
        f.reason for f in scheduling_check.check(view).findings if f.subject == "scale pd/llama-pd-decode 1 -> 2"
    } == {
        "role decode: group 1 pending; slice decode-b provisioned (0 -> 2 ct6e-standard-4t VMs at once); group "
        "scheduled on decode-b"
    }


def test_disagg_group_on_part_of_a_slice_fails():
    plan = F.plan()
    for r in plan["resources"]:
        if r["name"] == "decode-a":
            r["inputs"]["nodeCount"] = 4
            r["inputs"]["placementPolicy"]["tpuTopology"] = "4x4"
            r["inputs"]["nodeConfig"]["labels"] = {F.ROLE_NODE_LABEL: "decode"}
    for r in plan["resources"]:  # the role asks for the 4x4 slice but runs 2 hosts on it
        if r["inputs"].get("kind") == "DisaggregatedSet":
            tmpl = r["inputs"]["spec"]["roles"][1]["spec"]["leaderWorkerTemplate"]
            for t in (tmpl["leaderTemplate"], tmpl["workerTemplate"]):
                t["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "4x4"
    assert "2 TPU pod(s) on slice decode-a of 4 VMs" in _failures(plan)["[scheduling] role pd/llama-pd decode"]


def test_disagg_empty_plan_does_not_pass():
    results = run_checks(PlanView({"stack": "empty", "resources": []}))
    assert not all(r.ok for r in results)
    assert "coverage resources" in {f.subject for r in results for f in r.failures()}
    # a DisaggregatedSet whose roles all run no group fails too: no pod uses the slices, no role serves
    zero = F.edited_ds(F.plan(), lambda ds: [r.update(scaling={"mode": "Static"}) for r in ds["spec"]["roles"]])
    for r in zero["resources"]:
        if r["inputs"].get("kind") == "DisaggregatedSet":
            for role in r["inputs"]["spec"]["roles"]:
                role["spec"]["replicas"] = 0
    failures = _failures(zero)
    assert "runs no group" in failures["[scheduling] role pd/llama-pd prefill"]


def test_disagg_rollout_at_the_hpas_maximum_needs_a_spare_slice():
    """A role whose slices its groups fill at the HPA's maximum has no slice for a rollout's surge group: the new
    revision never gets ready and the DisaggregatedSet removes no old group (LWS v0.10.0 planner.go:195-215)."""
    failures = _failures(F.without(F.plan(), "decode-c"))
    assert list(failures) == ["[scheduling] scale pd/llama-pd-decode rollout surge 1 at 2"], failures
    reason = failures["[scheduling] scale pd/llama-pd-decode rollout surge 1 at 2"]
    assert reason.startswith("role decode: a rollout at the HPA's maximum, the new revision's surge group: group 2")
    assert reason.endswith("the new revision never gets ready, so no old group goes: every role's rollout stops")
    no_surge = F.edited_ds(
        F.without(F.plan(), "decode-c"),
        lambda ds: ds["spec"]["roles"][1]["spec"].update(
            rolloutStrategy={"rollingUpdateConfiguration": {"maxSurge": 0, "maxUnavailable": 1}}
        ),
    )
    assert not [k for k in _failures(no_surge) if "rollout surge" in k]


def test_disagg_scale_paths_fail_without_a_slice_from_zero_or_a_scaler_or_the_adapter():
    failures = _failures(F.without(F.without(F.plan(), "decode-b"), "decode-c"))
    assert "no node pool that scales from zero" in failures["[scheduling] scale pd/llama-pd-decode 1 -> 2"]
    static = F.edited_ds(F.plan(), lambda ds: ds["spec"]["roles"][0].update(scaling={"mode": "Static"}))
    assert "no /scale target" in _failures(static)["[scheduling] scale pd/llama-pd-prefill"]
    no_adapter = _failures(F.without(F.plan(), "metrics-adapter-manifests"))
    assert "no Custom Metrics Stackdriver Adapter" in no_adapter["[scheduling] scale pd/llama-pd-prefill metric"]
    unscraped = _failures(F.without(F.plan(), "NetworkPolicy-scrape-leaders"))  # the roles' policies isolate them
    assert "the collectors cannot scrape" in unscraped["[scheduling] scale pd/llama-pd-decode metric"]


def test_disagg_objects_the_controller_makes_and_what_its_webhooks_refuse():
    scaler = F.k8s({"kind": "DisaggregatedSetRoleScaler", "metadata": {"name": "llama-pd-decode", "namespace": "pd"}})
    failures = _failures(F.plan(scaler))
    assert (
        "0 replicas"
        in failures["[objects] object DisaggregatedSetRoleScaler pd/llama-pd-decode of DisaggregatedSet/llama-pd"]
    )
    sliced = _failures(F.edited_ds(F.plan(), lambda ds: ds["spec"].update(slices=2)))
    assert (
        "slices > 1 with a scaling.mode External" in sliced["[objects] object DisaggregatedSet pd/llama-pd admission"]
    )

    def rename(ds: dict[str, Any]) -> None:
        ds["metadata"]["name"] = "a-disaggregated-llama-deployment-of-llama"

    long_name = _failures(F.edited_ds(F.plan(), rename))
    child = "[objects] object LeaderWorkerSet pd/a-disaggregated-llama-deployment-of-llama-0-<rev8>-prefill"
    assert "over 52" in long_name[f"{child} of DisaggregatedSet/a-disaggregated-llama-deployment-of-llama"]


def test_disagg_picker_routing_needs_role_labels_and_the_decode_sidecar():
    def unlabel_prefill(ds: dict[str, Any]) -> None:
        ds["spec"]["roles"][0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"] = {}

    failures = _failures(F.edited_ds(F.plan(), unlabel_prefill))
    assert "take it for decode" in failures[f"[network] flow picker pd/pd-pool sees {PREFILL[3:]}-leader as prefill"]

    def drop_sidecar(ds: dict[str, Any]) -> None:
        del ds["spec"]["roles"][1]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["initContainers"]

    failures = _failures(F.edited_ds(F.plan(), drop_sidecar))
    assert "no P/D sidecar" in failures[f"[ports] ports sidecar {DECODE}-leader (pool pd-pool)"]
    blocked = _failures(F.without(F.plan(), "NetworkPolicy-sidecar-to-prefill"))
    assert f"[network] flow {DECODE}-leader -> {PREFILL}-leader:8000/TCP" in blocked


def test_disagg_a_rule_opening_kv_ports_from_prefill_to_decode_is_reported():
    back = F.policy(
        "kv-both-ways",
        {"matchLabels": {"disaggregatedset.x-k8s.io/role": "decode"}},
        [{"podSelector": {"matchLabels": {"disaggregatedset.x-k8s.io/role": "prefill"}}}],
        [{"port": 9100, "protocol": "TCP"}],
    )
    failures = _failures(F.plan(back))
    assert failures == {
        f"[network] excess flow {PREFILL[3:]}-{a} -> {DECODE[3:]}-{b} (KV ports)": (
            "admitted by kv-both-ways (port 9100), but only the consumer connects (tpu_connector.py:795-810, :882-899)"
        )
        for a in ("leader", "worker")
        for b in ("leader", "worker")
    }
    inside = F.policy(
        "bulk-back",
        back["inputs"]["spec"]["podSelector"],
        back["inputs"]["spec"]["ingress"][0]["from"],
        [{"port": 40000, "endPort": 40100, "protocol": "TCP"}],
    )
    assert (
        "admitted by bulk-back (port 40000)"
        in _failures(F.plan(inside))[f"[network] excess flow {PREFILL[3:]}-leader -> {DECODE[3:]}-worker (KV ports)"]
    )


def test_disagg_kv_config_read_from_the_shell_script_and_from_argv():
    c = network_kv.Container(
        "v", command=("vllm", "serve"), args=("--kv-transfer-config", '{"kv_role": "kv_consumer"}')
    )
    assert network_kv.kv_config(c) == {"kv_role": "kv_consumer"}
    script = 'exec vllm serve /m --kv-transfer-config \'{"kv_connector":"TPUConnector"}\' --port=8000'
    assert network_kv.kv_config(network_kv.Container("v", args=(script,))) == {"kv_connector": "TPUConnector"}
    assert network_kv.kv_config(network_kv.Container("v", args=("vllm serve /m",))) is None


def test_disagg_summary_line_counts_roles_and_scale_steps():
    line = summary("pd", run_checks(PlanView(F.plan())))[0]
    assert "roles on whole slices 2/2" in line and "scale steps 8/8" in line
    assert "KV flows not opened the other way 4/4" in line


STACK = "vllm-llama33-70b-disagg-v6e8x2"


def _stack_failures(edit: Any = None, multi_host: bool = False) -> dict[str, str]:
    """The model's failures on the disaggregated stack's plan (with ``multi_host``, its roles over two VMs each:
    :func:`~tests.fixtures.configs.disagg_multi_host_plan`), once ``edit`` changed each of its objects."""
    plan = copy.deepcopy((disagg_multi_host_plan() if multi_host else plan_of(STACK)).as_json())
    for r in plan["resources"] if edit else ():
        edit(r["inputs"])
    return _failures(plan)


def test_disagg_stack_fails_when_a_kv_flow_is_blocked():
    """On roles over two VMs, whose decode workers pull from prefill's leader too (a flow only multi-host roles
    have), and on the stack's roles of one pod each."""

    def drop_side_channel(obj: dict[str, Any]) -> None:
        if obj.get("kind") == "NetworkPolicy" and obj["metadata"]["name"] == "vllm-kv-from-decode":
            obj["spec"]["ingress"][0]["ports"] = [p for p in obj["spec"]["ingress"][0]["ports"] if p["port"] != 9600]

    before = _stack_failures(multi_host=True)
    failures = {k: v for k, v in _stack_failures(drop_side_channel, multi_host=True).items() if k not in before}
    assert failures and all(":9600/TCP" in k and "denied" in v for k, v in failures.items()), failures
    worker = "[network] flow vllm-pd70b/vllm-0-<rev8>-decode-worker -> vllm-pd70b/vllm-0-<rev8>-prefill-leader:9600/TCP"
    assert worker in failures
    # the stack's roles on one VM: decode's one pod pulls from prefill's
    before = _stack_failures()
    failures = {k: v for k, v in _stack_failures(drop_side_channel).items() if k not in before}
    leader = "[network] flow vllm-pd70b/vllm-0-<rev8>-decode-leader -> vllm-pd70b/vllm-0-<rev8>-prefill-leader:9600/TCP"
    assert failures and all(":9600/TCP" in k and "denied" in v for k, v in failures.items()), failures
    assert leader in failures


def test_disagg_stack_fails_when_a_role_cannot_be_scheduled():
    def decode_on_4x4(obj: dict[str, Any]) -> None:
        if obj.get("kind") == "DisaggregatedSet":
            tmpl = next(r for r in obj["spec"]["roles"] if r["name"] == "decode")["spec"]["leaderWorkerTemplate"]
            # a single-host role's groups are one pod, from workerTemplate (no leaderTemplate: vllm.pods)
            for t in [tmpl[k] for k in ("leaderTemplate", "workerTemplate") if k in tmpl]:
                t["spec"]["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "4x4"

    reason = _stack_failures(decode_on_4x4)["[scheduling] role vllm-pd70b/vllm decode"]
    assert reason.startswith("role decode cannot be scheduled: pod vllm-0-<rev8>-decode-0: no node pool has labels")


def test_runtime_single_host_roles_take_whole_slices():
    """Roles on single-host slices (one ct6e-standard-8t VM each, the layout upstream shows working) passed the
    preview and failed make check ('no multi-host slice', 'adds its VMs one by one'): user review."""
    import copy

    from tests.components.backends.test_disagg import DISAGG
    from tests.fixtures.configs import plan_of_config
    from tpu_serving_tools.check import run_checks

    cfg = copy.deepcopy(DISAGG)
    for s in cfg["tpu-serving:tpuSlices"]:
        s["machineType"] = "ct6e-standard-8t"
    cfg["tpu-serving:serving"]["disaggregation"]["decode"]["autoscaling"] = {"maxReplicas": 1, "target": 0.8}
    results = run_checks(PlanView(plan_of_config(cfg).as_json()))
    failures = [f"[{r.category}] {f.subject}: {f.reason}" for r in results for f in r.failures()]
    assert failures == []
    (scheduling,) = [r for r in results if r.category == "scheduling"]
    roles = [f for f in scheduling.findings if f.subject.startswith("role ")]
    assert len(roles) == 2 and all(f.ok for f in roles), [f.subject for f in scheduling.findings]


def test_disagg_refusals_of_the_role_count_static_replicas_and_placement_policy():
    def role(name: str, replicas: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
        return {"name": name, "metadata": {"annotations": annotations or {}}, "spec": {"replicas": replicas}}

    assert pods_ds.refusals({"spec": {"roles": [role("prefill", 1)]}}) == [
        "spec.roles has 1 role(s), not 2 to 10 (types.go:107-111)"
    ]
    assert pods_ds.refusals({"spec": {"roles": [role("prefill", 0), role("decode", 2)]}}) == [
        "replicas must be zero for all non-External roles or non-zero for all (CEL, types.go:102)"
    ]
    exclusive = {"leaderworkerset.sigs.k8s.io/exclusive-topology": "cloud.google.com/gke-nodepool"}
    placed = {
        "roles": [role("prefill", 1), role("decode", 1, exclusive)],
        "placementPolicy": {"type": "ExclusiveSlice"},
    }
    assert pods_ds.refusals({"spec": placed}) == [
        "spec.placementPolicy.topology is required when type is not None (webhook.go:120-123)",
        "spec.roles[1]: leaderworkerset.sigs.k8s.io/exclusive-topology must not be combined with placementPolicy "
        "(webhook.go:126-133)",
    ]
    assert pods_ds.refusals({"spec": {**placed, "placementPolicy": {"type": "None"}}}) == []


def test_role_findings_a_group_on_a_pool_another_role_uses_fails():
    """scheduling_ds.role_findings: a role's group placed on a pool whose first pods are another role's."""
    from tpu_serving_tools.runtime import scheduling, scheduling_ds

    view = PlanView(F.plan())
    pods = pods_of(view)
    placement = scheduling.place(pods, scheduling.node_pools(view))
    prefill_pool = next(placement.pool_of[p.key] for p in pods if p.owner.endswith("-prefill") and p.requests_tpu)
    for p in pods:
        if p.owner.endswith("-decode") and p.key in placement.pool_of:
            placement.pool_of[p.key] = prefill_pool
    found = {f.subject: f for f in scheduling_ds.role_findings(view, pods, placement)}
    assert found["role pd/llama-pd prefill"].ok
    decode = found["role pd/llama-pd decode"]
    assert not decode.ok
    assert decode.reason == f"role decode: group 0 shares pool {prefill_pool.name} with role llama-pd/prefill"


def test_metric_finding_a_leader_no_podmonitoring_scrapes_fails():
    """scheduling_ds.metric_finding: a PodMonitoring whose endpoint names a port the leader does not have scrapes
    nothing, as no PodMonitoring at all."""
    unresolved = copy.deepcopy(F.plan())
    for r in unresolved["resources"]:
        if r["inputs"].get("kind") == "PodMonitoring":
            r["inputs"]["spec"]["endpoints"] = [{"port": "no-such-port"}]
    for plan in (unresolved, F.without(F.plan(), "PodMonitoring-pd-leaders")):
        reason = _failures(plan)["[scheduling] scale pd/llama-pd-decode metric"]
        assert reason == "no PodMonitoring scrapes llama-pd-0-<rev8>-decode-leader, whose pods the HPA averages over"
