"""The disaggregated vLLM mode (issue 21): its settings and refusals (stack file and component alike), the
DisaggregatedSet and its pods, the flows the roles accept, the prefill/decode endpoint picker, an HPA per role on its
role scaler, scale from zero per role, cost, panels and alerts per role."""

from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml

from tests.conftest import plan_of
from tests.fixtures.configs import DISAGG_STACK, disagg_multi_host_plan, load
from tpu_serving import catalog
from tpu_serving.backends.vllm import VllmEngineSettings, VllmServingArgs
from tpu_serving.backends.vllm.args import Dtype
from tpu_serving.backends.vllm.disagg_args import VllmDisaggregatedArgs
from tpu_serving.backends.vllm.disagg_pods import disaggregated_set_spec
from tpu_serving.backends.vllm.kv import DS_NAME_MAX, KvRole, KvTransfer
from tpu_serving.common.validation import argument_problems
from tpu_serving.config import ConfigError
from tpu_serving.platform.lws import Rollout
from tpu_serving.traffic.gateway_settings import LB_BACKEND_KEEPALIVE_SECONDS
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.reference import schema

STACK = "vllm-llama33-70b-disagg-v6e8x2"
AT = "tpu-serving:serving.disaggregation"

DISAGG = {
    "gcp:project": "tpu-serving-demo",
    "gcp:region": "us-east5",
    "tpu-serving:zone": "us-east5-b",
    "tpu-serving:cluster": {"name": "pdserve"},
    "tpu-serving:tpuSlices": [
        # one group per role and a spare slice for a rollout's surge group
        {"name": "prefill", "machineType": "ct6e-standard-4t", "topology": "2x4", "count": 2, "diskSizeGb": 300},
        {"name": "decode", "machineType": "ct6e-standard-4t", "topology": "2x4", "count": 2, "diskSizeGb": 300},
    ],
    "tpu-serving:buckets": [{"purpose": "checkpoints", "workloadAccess": "read"}, {"purpose": "scratch"}],
    "tpu-serving:workloadIdentity": {"namespace": "pd"},
    "tpu-serving:observability": {"unpaged": True},
    "tpu-serving:production": False,
    "tpu-serving:serving": {
        "backend": "vllm",
        "slices": ["prefill", "decode"],
        "model": "llama-3.3-70b-instruct",
        "servedModelName": "meta-llama/Llama-3.3-70B-Instruct",
        "disaggregation": {"prefill": {"slice": "prefill"}, "decode": {"slice": "decode"}},
    },
    "tpu-serving:gateway": {"inferencePool": True},
}


def problems_of(edit) -> list[str]:
    cfg = copy.deepcopy(DISAGG)
    edit(cfg["tpu-serving:serving"]["disaggregation"], cfg)
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


def test_disagg_minimal_stack_loads():
    assert load(DISAGG).serving.disaggregation.decode.slice == "decode"


def test_disagg_mismatched_kv_layout_is_refused_at_decodes_keys_all_at_once():
    def edit(d, _cfg):
        d["prefill"]["engine"] = {"dtype": "bfloat16", "blockSize": 64}
        d["decode"]["engine"] = {"dtype": "float32", "blockSize": 32}

    found = problems_of(edit)
    dtype = next(p for p in found if p.startswith(f"{AT}.decode.engine.dtype"))
    assert '"float32"' in dtype and '"bfloat16"' in dtype and f"{AT}.prefill.engine.dtype" in dtype
    assert any(p.startswith(f"{AT}.decode.engine.blockSize = 32") and "64" in p for p in found), found


def test_disagg_parallelism_that_does_not_match_the_slice_is_refused_per_role():
    found = problems_of(lambda d, _c: d["decode"].update(engine={"tensorParallelSize": 3}))
    assert any(p.startswith(f"{AT}.decode.engine.tensorParallelSize: tensor 3") and "valid" in p for p in found)


def test_disagg_model_that_does_not_fit_a_role_names_the_role():
    found = problems_of(lambda d, _c: d["prefill"].update(engine={"memoryUtilization": 0.3}))
    assert any(f"({AT}.prefill.engine)" in p and "HBM" in p for p in found), found
    assert not any(f"({AT}.decode.engine)" in p for p in found)


def test_disagg_roles_need_their_own_listed_slice_kinds():
    def edit(d, cfg):
        d["decode"]["slice"] = "prefill"

    found = problems_of(edit)
    assert any(p.startswith(f'{AT}.decode.slice = "prefill"') for p in found), found
    assert any(p.startswith("tpu-serving:serving.slices") for p in found), found


def test_disagg_single_engine_keys_are_refused():
    def edit(d, cfg):
        cfg["tpu-serving:serving"]["replicas"] = 1
        cfg["tpu-serving:serving"]["engine"] = {"maxModelLen": 4096}

    found = problems_of(edit)
    assert any(p.startswith("tpu-serving:serving.replicas: set per role") for p in found), found
    assert any(p.startswith("tpu-serving:serving.engine: set per role") for p in found), found


def test_disagg_a_role_cannot_set_its_own_kv_transfer_config():
    found = problems_of(lambda d, _c: d["decode"].update(engine={"extraArgs": ['--kv-transfer-config={"a":1}']}))
    assert any(p.startswith(f"{AT}.decode.engine.extraArgs: --kv-transfer-config: set by the component") for p in found)


def test_disagg_without_the_endpoint_picker_is_refused():
    cfg = copy.deepcopy(DISAGG)
    cfg["tpu-serving:gateway"] = {"inferencePool": False}
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any(p.startswith("tpu-serving:gateway.inferencePool = false") for p in err.value.problems)


def test_disagg_role_autoscaling_must_span_its_slices():
    def edit(d, _c):
        d["prefill"]["autoscaling"] = {"maxReplicas": 2}

    found = problems_of(edit)
    assert any(p.startswith(f"{AT}.prefill.autoscaling.maxReplicas = 2") for p in found), found


def test_disagg_each_role_keeps_a_spare_slice_for_its_surge_group():
    """A DisaggregatedSet rolls each role with surge and removes an old group only once the new revision is ready
    (LWS v0.10.0 planner.go l.195-215, executor.go l.148-149): a role whose slices its groups fill would stop the
    rollout of both roles, so its kind's count is the groups plus one."""

    def full(d, cfg):
        cfg["tpu-serving:tpuSlices"][1]["count"] = 1
        d["prefill"]["autoscaling"] = {"maxReplicas": 2}

    found = problems_of(full)
    assert (
        f"{AT}.decode.replicas = 1: each group takes one whole slice and a rollout's surge group one more (the "
        'spare), and tpuSlices "decode" provides 1 2x4 slice; set that slice kind\'s count to 2'
    ) in found, found
    assert (
        f"{AT}.prefill.autoscaling.maxReplicas = 2: each group takes one whole slice and a rollout's surge group one "
        'more (the spare), and tpuSlices "prefill" provides 2 2x4 slices; set that slice kind\'s count to 3 or '
        "maxReplicas to 1"
    ) in found, found

    def spare(d, cfg):
        cfg["tpu-serving:tpuSlices"][0]["count"] = 3
        d["prefill"]["autoscaling"] = {"maxReplicas": 2}

    cfg = copy.deepcopy(DISAGG)
    spare(cfg["tpu-serving:serving"]["disaggregation"], cfg)
    assert load(cfg).serving is not None


# --------------------------------------------------------------------------- the component's own checks (parity)


def role(kv: KvRole | None, **engine) -> VllmServingArgs:
    return VllmServingArgs(
        namespace="pd",
        service_account="vllm",
        shape=catalog.slice_shape("ct6e-standard-4t", "2x4"),
        model="llama-3.3-70b-instruct",
        served_model_name="meta-llama/Llama-3.3-70B-Instruct",
        weights_bucket="b",
        engine=VllmEngineSettings(**engine),
        kv_transfer=KvTransfer(kv, inference_pool="pd/vllm-api-gateway") if kv is not None else None,
        rollout=Rollout.SURGE,
    )


def pair(**changes) -> VllmDisaggregatedArgs:
    base = VllmDisaggregatedArgs(prefill=role(KvRole.PREFILL), decode=role(KvRole.DECODE), namespace="pd")
    return dataclasses.replace(base, **changes)


def test_disagg_component_refuses_what_the_stack_refuses():
    assert argument_problems(pair()) == []
    # bfloat16, not float32: 70B float32 weights (261 GiB) would not fit the 2x4 slice, a refusal of the role itself
    found = argument_problems(pair(decode=role(KvRole.DECODE, dtype=Dtype.BFLOAT16, block_size=32)))
    assert any(p.startswith("VllmDisaggregatedArgs.decode.engine.dtype") for p in found), found
    assert any(p.startswith("VllmDisaggregatedArgs.decode.engine.block_size") for p in found), found
    found = argument_problems(pair(decode=role(KvRole.DECODE, tensor_parallel_size=3)))
    assert any(p.startswith("VllmDisaggregatedArgs.decode.engine.tensor_parallel_size") for p in found), found


def test_disagg_component_refuses_swapped_roles_and_different_models():
    found = argument_problems(pair(prefill=role(KvRole.DECODE), decode=role(None)))
    assert any(p.startswith("VllmDisaggregatedArgs.prefill.kv_transfer") for p in found), found
    assert any(p.startswith("VllmDisaggregatedArgs.decode.kv_transfer") for p in found), found
    other = dataclasses.replace(role(KvRole.DECODE), model="other-model")
    assert any(p.startswith("VllmDisaggregatedArgs.decode.model") for p in argument_problems(pair(decode=other)))


def test_disagg_set_spec_scales_external_roles_only():
    spec = disaggregated_set_spec(pair(decode=dataclasses.replace(role(KvRole.DECODE), autoscaled=True)))
    prefill, decode = spec["roles"]
    assert "scaling" not in prefill and prefill["spec"]["replicas"] == 1
    assert decode["scaling"] == {"mode": "External"} and "replicas" not in decode["spec"]


# --------------------------------------------------------------------------- the stack's plan


def objects(kind: str, plan=None) -> list[dict]:
    """The stack's objects of ``kind`` (of ``plan`` when given: :func:`~tests.fixtures.configs.disagg_multi_host_plan`
    for what only roles over several VMs have)."""
    return [o for o in kubernetes_objects(plan or plan_of(STACK)) if o["kind"] == kind]


def ds_roles(plan=None) -> dict[str, dict]:
    (ds,) = objects("DisaggregatedSet", plan)
    return {r["name"]: r for r in ds["spec"]["roles"]}


def pods_of(r: dict) -> dict[str, dict]:
    """A multi-host role's pod templates, its leader's and its workers'."""
    t = r["spec"]["leaderWorkerTemplate"]
    return {k: t[k]["spec"] for k in ("leaderTemplate", "workerTemplate")}


def leader_of(r: dict) -> dict:
    """A role's leader pod: its ``leaderTemplate``, or on a single-host role (groups of one pod, no
    ``leaderTemplate``: vllm.pods) its ``workerTemplate``."""
    t = r["spec"]["leaderWorkerTemplate"]
    return (t.get("leaderTemplate") or t["workerTemplate"])["spec"]


def test_disagg_stack_roles_are_single_host():
    """The shipped stack runs each role on one VM (ct6e-standard-8t, groups of one pod, no Ray): the layout
    tpu-inference's daily GKE run and llm-d's TPU prefill/decode guides use (GKE/TPU review M2)."""
    for name, r in ds_roles().items():
        t = r["spec"]["leaderWorkerTemplate"]
        assert t["size"] == 1 and "leaderTemplate" not in t, name
        (c,) = t["workerTemplate"]["spec"]["containers"]
        assert c["name"] == "vllm-leader" and c["resources"]["limits"]["google.com/tpu"] == "8", name
        assert "TPU_MULTIHOST_BACKEND" not in {e["name"] for e in c["env"]}, name


def test_disagg_plan_is_one_disaggregated_set_and_no_leader_worker_set():
    assert objects("LeaderWorkerSet") == []
    (ds,) = objects("DisaggregatedSet")
    assert ds["spec"]["slices"] == 1 and set(ds_roles()) == {"prefill", "decode"}
    assert all(r["scaling"] == {"mode": "External"} for r in ds_roles().values())


@pytest.mark.parametrize("name", ["prefill", "decode"])
def test_disagg_every_pod_has_the_connector_env_and_ports(name):
    """Leader and worker pods of roles over several VMs (Ray: TPU_MULTIHOST_BACKEND), on the stack with multi-host
    roles."""
    for which, spec in pods_of(ds_roles(disagg_multi_host_plan())[name]).items():
        (c,) = spec["containers"]
        env = {e["name"]: e for e in c["env"]}
        assert env["TPU_KV_TRANSFER_PORT"]["value"] == "9100", which
        assert env["TPU_SIDE_CHANNEL_PORT"]["value"] == "9600", which
        assert env["TPU_MULTIHOST_BACKEND"]["value"] == "ray", which
        assert env["VLLM_HOST_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP", which
        assert {9100, 9600} <= {p["containerPort"] for p in c["ports"]}, which
        (term,) = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"
        ]
        (pools,) = term["matchExpressions"]
        assert pools["key"] == "cloud.google.com/gke-nodepool", which
        assert pools["values"] == [f"vllmpd70b-{name}-{i}" for i in range(3)], which


def test_disagg_kv_roles_and_the_decode_sidecar():
    leaders = {n: leader_of(r) for n, r in ds_roles().items()}
    serve = {n: " ".join(s["containers"][0]["args"]) for n, s in leaders.items()}
    assert '"kv_role":"kv_producer"' in serve["prefill"] and '"kv_role":"kv_consumer"' in serve["decode"]
    assert "tpu_inference.distributed.tpu_connector" in serve["decode"]
    assert "--port=8000" in serve["prefill"] and "--port=8200" in serve["decode"]
    # both leaders wait for the checkpoint (weights_wait); decode's routing sidecar comes first
    assert [c["name"] for c in leaders["prefill"]["initContainers"]] == ["wait-for-weights"]
    sidecar, wait = leaders["decode"]["initContainers"]
    assert wait["name"] == "wait-for-weights"
    assert sidecar["restartPolicy"] == "Always" and "--model-server-port=8200" in sidecar["args"]
    # pulled through the stack's ghcr.io remote repository (imageMirror)
    assert sidecar["image"].startswith(
        "us-east5-docker.pkg.dev/tpu-serving-demo/vllmpd70b-ghcr/llm-d/llm-d-router-disagg-sidecar:"
    )


def test_disagg_network_policies_admit_exactly_the_role_flows():
    pol = {p["metadata"]["name"]: p["spec"] for p in objects("NetworkPolicy")}
    (outside,) = pol["same-namespace"]["podSelector"]["matchExpressions"]
    assert outside == {"key": "disaggregatedset.x-k8s.io/name", "operator": "NotIn", "values": ["vllm"]}
    kv = pol["vllm-kv-from-decode"]
    assert kv["podSelector"]["matchLabels"]["disaggregatedset.x-k8s.io/role"] == "prefill"
    (rule,) = kv["ingress"]
    assert rule["from"][0]["podSelector"]["matchLabels"]["disaggregatedset.x-k8s.io/role"] == "decode"
    ports = [(p["port"], p.get("endPort")) for p in rule["ports"]]
    assert ports == [(9100, None), (9600, None), (32768, 60999)]
    # decode pods accept their own role, and the collectors on the metrics port: nothing from prefill
    into_decode = {
        n
        for n, s in pol.items()
        if s["podSelector"].get("matchLabels", {}).get("disaggregatedset.x-k8s.io/role") == "decode"
    }
    assert into_decode == {
        "vllm-decode-within-role",
        "scrape-vllm-decode-leaders",
        "serving-ingress",
        "vllm-from-namespace",
    }
    scrape = pol["scrape-vllm-decode-leaders"]["ingress"][0]
    assert scrape["from"][0]["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "gmp-system"}


def test_disagg_endpoint_picker_runs_the_prefill_decode_profiles():
    (cm,) = [c for c in objects("ConfigMap") if c["metadata"]["name"].endswith("-epp")]
    config = yaml.safe_load(next(iter(cm["data"].values())))
    assert {p["name"] for p in config["schedulingProfiles"]} == {"prefill", "decode"}
    assert "disagg-profile-handler" in {p["type"] for p in config["plugins"]}
    (pool,) = objects("InferencePool")
    assert pool["spec"]["selector"]["matchLabels"] == {"disaggregatedset.x-k8s.io/name": "vllm", "role": "leader"}


def test_disagg_an_hpa_per_role_on_its_role_scaler():
    hpas = {h["metadata"]["name"]: h["spec"] for h in objects("HorizontalPodAutoscaler")}
    assert set(hpas) == {"vllm-prefill", "vllm-decode"}
    for name, spec in hpas.items():
        ref = spec["scaleTargetRef"]
        assert (ref["apiVersion"], ref["kind"], ref["name"]) == (
            "disaggregatedset.x-k8s.io/v1",
            "DisaggregatedSetRoleScaler",
            name,
        )
    metric = {n: s["metrics"][0]["pods"]["metric"]["name"] for n, s in hpas.items()}
    assert metric["vllm-prefill"].endswith("|vllm:num_requests_waiting|gauge")
    assert metric["vllm-decode"].endswith("|vllm:kv_cache_usage_perc|gauge")


def test_disagg_each_roles_second_slice_and_its_spare_scale_from_zero_and_are_billed_so():
    """The first slice of a role keeps its VMs; the HPA's second group and a rollout's surge group (the spare) come
    up on slices that scale from zero."""
    pools = {
        r.inputs["name"]: r.inputs
        for r in plan_of(STACK).resources
        if r.type == "gcp:container/nodePool:NodePool" and r.name.startswith("vllmpd70b-")
    }
    for role_name in ("prefill", "decode"):
        assert pools[f"vllmpd70b-{role_name}-0"]["nodeCount"] == 1  # one VM per slice (ct6e-standard-8t)
        for spare in (1, 2):
            assert pools[f"vllmpd70b-{role_name}-{spare}"]["autoscaling"]["totalMinNodeCount"] == 0
    tpu = {i["what"]: i for i in plan_of(STACK).outputs["cost"]["items"] if i["part"] == "tpu"}
    assert {w.split(":")[0] for w in tpu} == {"prefill", "decode"}
    assert all("3 x v6e-8 on-demand (2 from zero)" in w for w in tpu), list(tpu)


def test_disagg_panels_and_alerts_per_role():
    outputs = plan_of(STACK).outputs
    for r in ("prefill", "decode"):
        assert f"vllmpd70b: {r} pods not ready" in outputs["alertPolicies"]
        assert f"vllmpd70b: {r} queue backlog high" in outputs["alertPolicies"]
    (dash,) = [r for r in plan_of(STACK).resources if r.type == "gcp:monitoring/dashboard:Dashboard"]
    text = dash.inputs["dashboardJson"]
    assert "decode: KV transfer time" in text and "vllm:tpu_kv_transfer_time_ms_bucket" in text
    assert "prefill: time to first token" in text and "prefill: KV transfer time" not in text


def test_disagg_set_is_validated_strictly_against_its_crd(reference):
    (ds,) = objects("DisaggregatedSet")
    releases = plan_of(STACK).outputs["controllers"]
    assert schema.validate_all([ds], releases) == []
    bad = copy.deepcopy(ds)
    bad["spec"]["roles"][0]["replicaz"] = 1
    (problem,) = schema.validate_all([bad], releases)
    assert "replicaz" in problem


def test_disagg_roles_roll_out_with_surge_and_cache_per_group_and_worker():
    """In place, a role of one group stopped serving on every change (GKE review): the DisaggregatedSet's own
    default is maxSurge 1, maxUnavailable 0 (LWS v0.10.0 planner.go DefaultRollingUpdateConfig)."""
    found = argument_problems(pair(decode=dataclasses.replace(role(KvRole.DECODE), rollout=Rollout.IN_PLACE)))
    assert any(
        p.startswith("VllmDisaggregatedArgs.decode.rollout = 'in-place': a role rolls out with surge") for p in found
    )
    # roles over two VMs (a leader and a worker pod per group) and the stack's roles on one VM (the worker template
    # is the group's one pod)
    for plan, templates in (
        (disagg_multi_host_plan(), ("leaderTemplate", "workerTemplate")),
        (None, ("workerTemplate",)),
    ):
        (ds,) = objects("DisaggregatedSet", plan)
        for r in ds["spec"]["roles"]:
            strategy = r["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"]
            assert (strategy["maxSurge"], strategy["maxUnavailable"]) == (1, 0), r["name"]
            assert ("leaderTemplate" in r["spec"]["leaderWorkerTemplate"]) == (plan is not None), r["name"]
            for template in templates:
                (container,) = [
                    c
                    for c in r["spec"]["leaderWorkerTemplate"][template]["spec"]["containers"]
                    if c["name"].startswith("vllm")
                ]
                env = {e["name"]: e for e in container["env"]}
                # keyed by group and worker index, under the role's folder, as every LeaderWorkerSet's cache: a folder per
                # node name started every new node cold (scale from zero, repair, upgrade: issue 35, finding 7)
                assert env["LWS_GROUP_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == (
                    "metadata.labels['leaderworkerset.sigs.k8s.io/group-index']"
                )
                assert (
                    env["VLLM_XLA_CACHE_PATH"]["value"] == "/compilation-cache/$(LWS_GROUP_INDEX)/$(LWS_WORKER_INDEX)"
                )
                names = [e["name"] for e in container["env"]]
                assert names.index("LWS_GROUP_INDEX") < names.index("VLLM_XLA_CACHE_PATH")
                assert "NODE_NAME" not in names


def test_disagg_a_stack_rollout_is_refused_in_the_disaggregated_mode():
    def edit(_disaggregation, cfg):
        cfg["tpu-serving:serving"]["rollout"] = "in-place"

    (problem,) = problems_of(edit)
    assert problem.startswith('tpu-serving:serving.rollout = "in-place": the disaggregated mode\'s roles roll out')
    assert load(DISAGG).serving.disaggregation is not None  # and without it, the stack loads


def test_disagg_the_adapters_viewer_grant_is_made_once_and_outlives_the_stack():
    """Two grants of one project binding (one per role) and a delete that removes it for every cluster of the
    project (GKE review): one grant, kept on destroy."""
    plan = plan_of(STACK)
    grants = [
        r
        for r in plan.of_type("gcp:projects/iAMMember:IAMMember")
        if r.inputs.get("role") == "roles/monitoring.viewer" and "autoscaler" in r.urn
    ]
    assert len(grants) == 1 and grants[0].retain_on_delete is True
    assert len(plan.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler")) == 2


def test_disagg_a_kv_cache_target_above_one_is_refused():
    """vllm:kv_cache_usage_perc is a fraction (1 means 100 percent): the default target 5 never scales (user review)."""

    def edit(disaggregation, _cfg):
        disaggregation["decode"]["autoscaling"] = {"maxReplicas": 1}

    (problem,) = problems_of(edit)
    assert problem.startswith(
        "tpu-serving:serving.disaggregation.decode.autoscaling.target = 5: vllm:kv_cache_usage_perc"
    )
    assert "valid: a target in (0, 1]" in problem

    def fine(disaggregation, cfg):
        disaggregation["decode"]["autoscaling"] = {"maxReplicas": 1, "target": 0.8}

    cfg = copy.deepcopy(DISAGG)
    fine(cfg["tpu-serving:serving"]["disaggregation"], cfg)
    assert load(cfg).serving.disaggregation.decode.autoscaling.target == 0.8


def test_disagg_roles_share_one_context_length():
    def edit(disaggregation, _cfg):
        disaggregation["decode"]["engine"] = {"maxModelLen": 4096}

    (problem,) = problems_of(edit)
    assert problem.startswith("tpu-serving:serving.disaggregation.decode.engine.maxModelLen = 4096: prefill computes")
    found = argument_problems(pair(decode=role(KvRole.DECODE, max_model_len=4096)))
    assert any(p.startswith("VllmDisaggregatedArgs.decode.engine.max_model_len = 4096") for p in found), found


def test_disagg_preview_and_diff_say_how_a_change_rolls_out_and_what_upstream_has_not_shown():
    import json as _json

    from tpu_serving_tools.diff.review import diff_plans
    from tpu_serving_tools.preview.stack import summary

    plan = plan_of(STACK)
    lines = summary(plan).splitlines()
    assert any(line.startswith("Rollout: a change to either role's template is a new revision") for line in lines)
    multi_host = summary(disagg_multi_host_plan()).splitlines()  # the upstream status of roles over several VMs
    assert any("shown working nowhere upstream" in line and line.startswith("note: ") for line in multi_host)
    head = plan.as_json()
    base = _json.loads(_json.dumps(head))
    ds = next(r for r in base["resources"] if r["inputs"].get("kind") == "DisaggregatedSet")
    ds["inputs"]["spec"]["roles"][1]["spec"]["leaderWorkerTemplate"]["size"] = 3
    (line,) = diff_plans(STACK, base, head).rollouts
    assert "DisaggregatedSet" in line and "rolls both roles with surge" in line


def test_disagg_component_role_pools_hold_a_spare_for_the_surge_group():
    assert argument_problems(pair(decode=dataclasses.replace(role(KvRole.DECODE), node_pools=("d-0", "d-1")))) == []
    found = argument_problems(pair(decode=dataclasses.replace(role(KvRole.DECODE), node_pools=("d-0",))))
    assert found == [
        "VllmDisaggregatedArgs.decode.node_pools = ['d-0']: the role's 1 group(s) take a slice each and a rollout's "
        "surge group one more (LWS v0.10.0 disaggregatedset planner.go l.195-215); list 2 node pools"
    ], found


def test_disagg_shared_adapter_settings_must_agree_between_the_roles():
    """One metrics adapter serves both roles: its install and its grant are said once, so the roles agree."""

    def edit(disaggregation, _cfg):
        disaggregation["prefill"]["autoscaling"] = {"maxReplicas": 1}
        disaggregation["decode"]["autoscaling"] = {
            "maxReplicas": 1,
            "target": 0.8,
            "adapterInstall": "existing",
            "adapterIam": "existing",
        }

    found = problems_of(edit)
    assert [p.split(" = ")[0] for p in found] == [
        "tpu-serving:serving.disaggregation.decode.autoscaling.adapterInstall",
        "tpu-serving:serving.disaggregation.decode.autoscaling.adapterIam",
    ]
    assert ["prefill's says unset" in found[0], 'prefill\'s says "create"' in found[1]] == [True, True]


def test_disagg_each_role_has_a_budget_of_one_eviction():
    (ds,) = objects("DisaggregatedSet")
    roles = {r["name"] for r in ds["spec"]["roles"]}
    budgets = {
        b["spec"]["selector"]["matchLabels"]["disaggregatedset.x-k8s.io/role"]: b
        for b in objects("PodDisruptionBudget")
        if "disaggregatedset.x-k8s.io/role" in b["spec"]["selector"]["matchLabels"]
    }
    assert set(budgets) == roles == {"prefill", "decode"}
    for pdb in budgets.values():
        assert pdb["spec"]["selector"]["matchLabels"]["disaggregatedset.x-k8s.io/name"] == ds["metadata"]["name"]
        assert pdb["spec"]["maxUnavailable"] == 1
        assert pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow"
    drain = plan_of(STACK).as_json()["outputs"]["rollout"]["drain"]
    assert drain.startswith("a node drain or upgrade takes one group of each role at a time")


# --------------------------------------------------------------------------- the router around the roles (issue 35)


def picker_config() -> dict:
    (cm,) = [c for c in objects("ConfigMap") if c["metadata"]["name"].endswith("-epp")]
    return yaml.safe_load(next(iter(cm["data"].values())))


def test_disagg_picker_screens_revisions_and_always_disaggregates_without_prefix_scoring():
    """Findings 3 and 6: the rollout screener keeps a request on one DisaggregatedSet revision (alpha: the picker
    runs with --allow-experimental-plugins), and with prefix caching off on both roles the picker neither scores
    prefixes nor decides on them."""
    config = picker_config()
    plugins = {p["type"]: p.get("parameters") for p in config["plugins"]}
    screener = plugins["disaggregatedset-rollout-screener"]
    assert screener["scope"]["labelSelector"] == "disaggregatedset.x-k8s.io/name=vllm,role=leader"
    assert screener["revisionGating"] == {"mode": "sum", "requireRoles": {"values": ["prefill", "decode"]}}
    assert plugins["disagg-profile-handler"] == {"deciders": {"prefill": "always-disagg-pd-decider"}}
    assert "always-disagg-pd-decider" in plugins
    assert not [t for t in plugins if "prefix" in t], plugins
    for profile in config["schedulingProfiles"]:
        assert not [r for r in profile["plugins"] if "prefix" in r["pluginRef"]]
    (epp,) = [d for d in objects("Deployment") if d["metadata"]["name"].endswith("-epp")]
    args = epp["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--allow-experimental-plugins" in args
    engines = [c for r in ds_roles().values() for c in leader_of(r)["containers"]]
    assert all("--no-enable-prefix-caching" in " ".join(c.get("args", []) + c.get("command", [])) for c in engines)


def test_disagg_picker_survives_its_own_restart():
    """Finding 4: FailClose, a leader and a standby with leader election and its Lease grant, RollingUpdate that
    never takes both, probes every running replica passes, a budget of one eviction."""
    (pool,) = objects("InferencePool")
    assert pool["spec"]["endpointPickerRef"]["failureMode"] == "FailClose"
    (epp,) = [d for d in objects("Deployment") if d["metadata"]["name"].endswith("-epp")]
    spec = epp["spec"]
    assert spec["replicas"] == 2
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
    (c,) = spec["template"]["spec"]["containers"]
    assert "--ha-enable-leader-election" in c["args"]
    assert c["readinessProbe"]["grpc"]["service"] == c["livenessProbe"]["grpc"]["service"] == "liveness"
    labels = spec["selector"]["matchLabels"]
    (budget,) = [b for b in objects("PodDisruptionBudget") if b["spec"]["selector"]["matchLabels"] == labels]
    assert budget["spec"]["maxUnavailable"] == 1
    (role,) = [r for r in objects("Role") if r["metadata"]["name"] == epp["metadata"]["name"]]
    leases = [r for r in role["rules"] if r["apiGroups"] == ["coordination.k8s.io"]]
    assert leases and {"get", "create", "update"} <= set(leases[0]["verbs"]) and leases[0]["resources"] == ["leases"]


def test_disagg_prefill_takes_no_client_only_decode_the_picker_and_health_checks():
    """Finding 4's ingress: nothing admits gateway clients, the proxies or the allowed namespaces to prefill's
    engine port; decode, the picker and Google's health-check ranges reach it."""
    pol = {p["metadata"]["name"]: p["spec"] for p in objects("NetworkPolicy")}
    into_prefill = {
        n: s
        for n, s in pol.items()
        if s["podSelector"].get("matchLabels", {}).get("disaggregatedset.x-k8s.io/role") == "prefill"
    }
    assert "serving-ingress" not in into_prefill and "vllm-from-namespace" not in into_prefill
    assert pol["serving-ingress"]["podSelector"]["matchLabels"]["disaggregatedset.x-k8s.io/role"] == "decode"
    (epp,) = [d for d in objects("Deployment") if d["metadata"]["name"].endswith("-epp")]
    pool_ingress = pol["vllm-api-gateway-pool-ingress"]
    assert pool_ingress["podSelector"]["matchLabels"] == {"disaggregatedset.x-k8s.io/name": "vllm", "role": "leader"}
    (rule,) = pool_ingress["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}]
    peers = [p.get("ipBlock", {}).get("cidr") or p["podSelector"]["matchLabels"] for p in rule["from"]]
    assert peers == [epp["spec"]["selector"]["matchLabels"], "35.191.0.0/16", "130.211.0.0/22"]


def test_disagg_load_balancer_health_check_reaches_each_roles_engine():
    """Finding 5: /health on decode's port 8000 is the sidecar's constant 200; /ping is vLLM's health handler,
    which the sidecar passes to decode's engine and prefill serves itself."""
    (hc,) = objects("HealthCheckPolicy")
    check = hc["spec"]["default"]["config"]["httpHealthCheck"]
    assert (check["requestPath"], check["port"]) == ("/ping", 8000)
    assert hc["spec"]["targetRef"]["kind"] == "InferencePool"


def test_disagg_sidecar_runs_with_ssrf_protection_and_only_it_holds_a_token():
    """Finding 8: the sidecar allows prefill targets only from the stack's InferencePool, with a token mounted into
    it alone and a Role that reads that pool and the pods."""
    leader = leader_of(ds_roles()["decode"])
    sidecar, wait = leader["initContainers"]
    assert "--enable-ssrf-protection=true" in sidecar["args"]
    assert "--inference-pool=vllm-pd70b/vllm-api-gateway" in sidecar["args"]
    (mount,) = sidecar["volumeMounts"]
    assert mount["mountPath"] == "/var/run/secrets/kubernetes.io/serviceaccount"
    assert wait["name"] == "wait-for-weights" and mount["name"] not in str(wait["volumeMounts"])
    (volume,) = [v for v in leader["volumes"] if v["name"] == mount["name"]]
    assert {"serviceAccountToken", "configMap", "downwardAPI"} == {k for s in volume["projected"]["sources"] for k in s}
    assert leader["automountServiceAccountToken"] is False
    assert all(mount["name"] not in str(c.get("volumeMounts")) for c in leader["containers"])
    (role,) = [r for r in objects("Role") if r["metadata"]["name"] == "vllm-routing-sidecar"]
    assert {(r["apiGroups"][0], r["resources"][0]) for r in role["rules"]} == {
        ("inference.networking.k8s.io", "inferencepools"),
        ("", "pods"),
    }
    (binding,) = [b for b in objects("RoleBinding") if b["metadata"]["name"] == "vllm-routing-sidecar"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "vllm", "namespace": "vllm-pd70b"}]
    assert leader["serviceAccountName"] == "vllm"


def test_disagg_component_refuses_a_decode_role_without_its_pool():
    decode = dataclasses.replace(role(KvRole.DECODE), kv_transfer=KvTransfer(KvRole.DECODE))
    found = argument_problems(pair(decode=decode))
    assert any("decode.kv_transfer.inference_pool" in p and "<namespace>/<name>" in p for p in found), found


def test_disagg_problems_refuse_a_name_the_disaggregated_set_cannot_take():
    long_name = "l" * (DS_NAME_MAX + 1)
    found = problems_of(lambda _d, cfg: cfg["tpu-serving:serving"].update(name=long_name))
    assert f'tpu-serving:serving.name = "{long_name}": at most {DS_NAME_MAX} characters' in "\n".join(found)


def test_disagg_an_unlisted_role_slice_is_named_with_the_valid_ones():
    """vllm.disagg_checks.problems (mutmut_47): the message quotes the role's slice and lists the valid ones."""
    found = problems_of(lambda d, _c: d["decode"].update(slice="v6e-elsewhere"))
    want = 'tpu-serving:serving.disaggregation.decode.slice = "v6e-elsewhere": not one of serving.slices; valid: '
    assert any(p.startswith(want + "prefill, decode") for p in found), found


def test_disagg_roles_in_another_namespace_are_named():
    """vllm.disagg_args.problems (mutmut_15): a role in a namespace other than the set's is refused by name."""
    import dataclasses

    other = dataclasses.replace(role(KvRole.DECODE), namespace="elsewhere")
    found = argument_problems(pair(decode=other))
    assert "VllmDisaggregatedArgs.decode.namespace = 'elsewhere': must be the DisaggregatedSet's, 'pd'" in found, found


def test_disagg_a_role_autoscaling_metric_that_is_not_a_gauge_is_named():
    """vllm.disagg_checks._group_problems (mutmut_37): the refusal names vLLM as the server whose metric it is."""
    found = problems_of(
        lambda d, _c: d["decode"].update(autoscaling={"maxReplicas": 2, "metric": "vllm:e2e_request_latency_seconds"})
    )
    assert any(": vllm:e2e_request_latency_seconds is a histogram of vLLM; the HPA reads a gauge: " in p for p in found)


def test_disagg_fixture_is_the_stack_shape():
    """The disaggregated fixture above loads (the refusals are of the edit alone)."""
    assert load(copy.deepcopy(DISAGG)).serving is not None


def test_disagg_hbm_fit_refusal_is_the_stacks_for_each_role():
    """Issue 38: each role's engine holds the whole model on its own slice, so each role of the component refuses
    weights its slice does not hold, with the stack file's figures (405B in bf16 on v6e 2x4 slices)."""
    name = "meta-llama/Llama-3.1-405B-Instruct"
    refused = [
        p for p in problems_of(lambda d, cfg: cfg["tpu-serving:serving"].update(servedModelName=name)) if "HBM" in p
    ]
    roles = {r: dataclasses.replace(role(r), served_model_name=name) for r in (KvRole.PREFILL, KvRole.DECODE)}
    python = argument_problems(pair(prefill=roles[KvRole.PREFILL], decode=roles[KvRole.DECODE]))
    assert [p.split(": ", 1)[0] for p in refused] == [
        f"tpu-serving:serving.servedModelName ({AT}.prefill.engine)",
        f"tpu-serving:serving.servedModelName ({AT}.decode.engine)",
    ]
    assert [p.split(": ", 1)[0] for p in python] == [
        "VllmDisaggregatedArgs.prefill.served_model_name",
        "VllmDisaggregatedArgs.decode.served_model_name",
    ]
    spelled = [
        p.split(": ", 1)[1]
        .replace("memoryUtilization", "memory_utilization")
        .replace("maxModelLen", "max_model_len")
        .replace("serving.modelSize", "model_size")
        for p in refused
    ]
    assert [p.split(": ", 1)[1] for p in python] == spelled
    assert "754 GiB of HBM, and one request of engine.max_model_len 8192 tokens 3.9 GiB of KV cache" in spelled[0]
    assert "more than the 230.4 GiB" in spelled[0] and "v6e-32, topology 4x8" in spelled[0]


def test_disagg_single_host_roles_are_not_called_multi_host():
    """GKE/TPU review M2: the stack's roles on one VM each (the layout upstream shows) no longer carry the gap and the
    note that multi-host roles are shown nowhere; the same stack with roles over two VMs still has both, and its
    Caution: line."""
    from tpu_serving_tools.preview.stack import summary

    single, multi = plan_of(STACK), disagg_multi_host_plan()
    gap = {p: next(g for g in q.outputs["production"]["gaps"] if g.startswith("serving.disaggregation set: "))
           for p, q in (("single", single), ("multi", multi))}  # fmt: skip
    assert "alpha API" in gap["single"] and "multi-host" not in gap["single"]
    assert gap["multi"].endswith("and multi-host prefill and decode roles are shown working nowhere upstream")
    for plan, multi_host in ((single, False), (multi, True)):
        lines = summary(plan).splitlines()
        notes = [line for line in lines if line.startswith("note: disaggregated mode: ")]
        assert any("the DisaggregatedSet API is alpha (LWS v0.10.0)" in n for n in notes)
        assert any("shown working nowhere upstream" in n for n in notes) == multi_host
        assert any(line.startswith("Caution: multi-host vLLM") for line in lines) == multi_host


def test_vllm_pods_routing_sidecar_readiness_on_its_own_health_route():
    (ds,) = [o for o in kubernetes_objects(plan_of(DISAGG_STACK)) if o["kind"] == "DisaggregatedSet"]
    sidecars = [
        c
        for role in ds["spec"]["roles"]
        # a single-host role's one pod comes from workerTemplate (no leaderTemplate: vllm.pods)
        for t in [role["spec"]["leaderWorkerTemplate"]]
        for c in (t.get("leaderTemplate") or t["workerTemplate"])["spec"].get("initContainers", [])
        if c["name"] == "routing-sidecar"
    ]
    assert len(sidecars) == 1  # decode's leaders only
    (sidecar,) = sidecars
    assert sidecar["readinessProbe"]["httpGet"] == {"path": "/health", "port": 8000, "scheme": "HTTP"}
    # A liveness restart would recreate the decode group: none.
    assert "livenessProbe" not in sidecar and "startupProbe" not in sidecar


def test_disagg_keepalive_preview_names_the_sidecars_fixed_idle_timeout():
    from tpu_serving import catalog
    from tpu_serving.backends.vllm.disagg_backend import caveats

    (note,) = [c for c in caveats(180, catalog.slice_shape("ct6e-standard-8t", "2x4")) if "sidecar" in c]
    assert "300 s" in note and f"{LB_BACKEND_KEEPALIVE_SECONDS} s" in note
