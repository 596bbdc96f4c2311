"""Engine pods leave gracefully (issue 35: findings 2, 7, 9, 14 and the hang timeout): a drain on SIGTERM, preStop
hooks on leaders and workers, a grace period derived from the gateway's request timeout, prefill's wait for the KV
pulls, its slower scale-down and token liveness, the compilation cache keyed by group and worker index."""

from __future__ import annotations

import dataclasses

import pytest
import yaml

from tests.conftest import plan_of
from tpu_serving import catalog
from tpu_serving.backends.vllm import VllmServingArgs
from tpu_serving.backends.vllm.facts import MULTI_HOST_ENV
from tpu_serving.backends.vllm.kv import KvRole, KvTransfer
from tpu_serving.backends.vllm.pods import engine_args, leader_worker_set_spec
from tpu_serving.traffic.gateway import GatewaySettings
from tpu_serving_tools.preview.offline import kubernetes_objects

V5E16 = "vllm-llama33-70b-v5e16"


def vllm_args(machine_type: str, topology: str, **changes: object) -> VllmServingArgs:
    """The least engine arguments on a ``machine_type`` ``topology`` slice, with ``changes``."""
    base: dict[str, object] = {
        "namespace": "n",
        "service_account": "sa",
        "shape": catalog.slice_shape(machine_type, topology),
        "model": "m",
        "served_model_name": "m",
        "weights_bucket": "b",
    }
    return VllmServingArgs(**{**base, **changes})  # type: ignore[arg-type]


DISAGG = "vllm-llama33-70b-disagg-v6e8x2"
JETSTREAM = "llama31-405b-v6e16"
SEED = "llama2-70b-disagg-v6e8x2"


def objects(stack: str, kind: str) -> list[dict]:
    return [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == kind]


def gateway_timeout(stack: str) -> int:
    with open(f"stacks/Pulumi.{stack}.yaml") as f:
        gateway = yaml.safe_load(f)["config"].get("tpu-serving:gateway")
    return int((gateway or {}).get("requestTimeoutSeconds", GatewaySettings().request_timeout_seconds))


def templates(lws_spec: dict) -> dict[str, dict]:
    t = lws_spec["leaderWorkerTemplate"]
    return {k: t[k]["spec"] for k in ("leaderTemplate", "workerTemplate") if k in t}


def leader_of(pods: dict[str, dict]) -> dict:
    """The leader pod of a group's ``templates``: its ``leaderTemplate``, or for groups of one pod (single-host, no
    ``leaderTemplate``: vllm.pods) its ``workerTemplate``."""
    return pods.get("leaderTemplate") or pods["workerTemplate"]


def container(pod: dict, prefix: str) -> dict:
    (c,) = [c for c in pod["containers"] if c["name"].startswith(prefix)]
    return c


def test_shutdown_vllm_leader_drains_and_workers_hold_their_hosts():
    """No grace period, no preStop, no drain: workers dropped their hosts mid-request (finding 14)."""
    (lws,) = [o for o in objects(V5E16, "LeaderWorkerSet")]
    pods = templates(lws["spec"])
    request = gateway_timeout(V5E16)
    leader, worker = container(pods["leaderTemplate"], "vllm"), container(pods["workerTemplate"], "vllm")
    assert f"--shutdown-timeout={request} " in leader["args"][0] + " "
    assert leader["lifecycle"]["preStop"] == {"sleep": {"seconds": 30}}
    hook = worker["lifecycle"]["preStop"]["exec"]["command"][-1]
    assert hook.startswith("while ray health-check --address=${LWS_LEADER_ADDRESS}:6379") and "done" in hook
    for pod in pods.values():
        # the preStop wait, the longest request the gateway allows, the teardown
        assert pod["terminationGracePeriodSeconds"] == 30 + request + 30


def test_shutdown_grace_follows_the_gateways_request_timeout():
    from tpu_serving.backends.base import longest_request_seconds
    from tpu_serving.common.podspec import Shutdown

    args = vllm_args("ct5lp-hightpu-4t", "4x4", shutdown=Shutdown(1200))
    t = leader_worker_set_spec(args)["leaderWorkerTemplate"]
    assert isinstance(t, dict)
    grace = {t[k].spec.termination_grace_period_seconds for k in ("leaderTemplate", "workerTemplate")}
    assert grace == {30 + 1200 + 30}
    assert "--shutdown-timeout=1200" in engine_args(args)

    class Stack:
        gateway: GatewaySettings | None = GatewaySettings(request_timeout_seconds=900)

    assert longest_request_seconds(Stack()) == 900  # type: ignore[arg-type]
    Stack.gateway = None
    assert longest_request_seconds(Stack()) == GatewaySettings().request_timeout_seconds  # type: ignore[arg-type]


def ds_roles() -> dict[str, dict]:
    (ds,) = objects(DISAGG, "DisaggregatedSet")
    return {r["name"]: r for r in ds["spec"]["roles"]}


def test_shutdown_prefill_fails_readiness_then_waits_out_the_kv_pulls():
    """Prefill left while decode pulled its KV; after the pull timeout decode inserts arrays that never became ready
    (finding 2)."""
    request = gateway_timeout(DISAGG)
    roles = ds_roles()
    for name, r in roles.items():
        for pod in templates(r["spec"]).values():
            env = {e["name"]: e.get("value") for e in container(pod, "vllm")["env"]}
            assert env["TPU_P2P_WAIT_PULL_TIMEOUT"] == "180", name
    prefill = templates(roles["prefill"]["spec"])
    leader = container(leader_of(prefill), "vllm")
    hook = leader["lifecycle"]["preStop"]["exec"]["command"][-1]
    assert hook == "touch /tmp/tpu-serving-draining; sleep 210"  # 30 s to deregister, then the 180 s pull timeout
    ready = leader["readinessProbe"]["exec"]["command"][-1]
    assert ready.startswith("[ ! -e /tmp/tpu-serving-draining ] && exec python3 -c ") and ":8000/health" in ready
    assert {p["terminationGracePeriodSeconds"] for p in prefill.values()} == {30 + 180 + request + 30}
    decode = templates(roles["decode"]["spec"])
    assert container(leader_of(decode), "vllm")["lifecycle"]["preStop"] == {"sleep": {"seconds": 30}}
    assert {p["terminationGracePeriodSeconds"] for p in decode.values()} == {30 + request + 30}


def test_shutdown_kv_pull_timeout_is_upstreams_and_outlasts_decode_queueing():
    """30 s recycled prefilled blocks before a request that queued on decode for longer pulled them (GKE review G1):
    the default is tpu-inference 0.29.0's own 180 s, and the prefill drain, its HPA pacing and the preview follow the
    setting."""
    from tpu_serving.backends.vllm.disagg_backend import caveats
    from tpu_serving.backends.vllm.kv import PULL_TIMEOUT_SECONDS
    from tpu_serving.backends.vllm.settings import DisaggregationConfig

    assert KvTransfer(KvRole.PREFILL).pull_timeout_seconds == PULL_TIMEOUT_SECONDS == 180
    assert DisaggregationConfig.model_fields["kv_pull_timeout_seconds"].default == 180
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h for h in objects(DISAGG, "HorizontalPodAutoscaler")}
    (prefill,) = [h for n, h in hpas.items() if n.endswith("prefill")]
    assert prefill["spec"]["behavior"]["scaleDown"]["policies"][0]["periodSeconds"] == 30 + 180 + 300 + 30
    one_vm = catalog.slice_shape("ct6e-standard-8t", "2x4")
    notes = caveats(240, one_vm)
    assert any("240 s" in n for n in notes) and not any("180 s" in n for n in notes)
    assert any("for the KV pull timeout, 180 s" in n for n in caveats(PULL_TIMEOUT_SECONDS, one_vm))


@pytest.mark.parametrize("role, port", [("prefill", 8000), ("decode", 8200)])
def test_shutdown_disaggregated_liveness_is_the_engines_health_on_its_own_port(role, port):
    """A liveness probe that generated a token queued behind user traffic, so an overload failed it and recreated the
    groups that carried the load (SRE review M3): liveness sends no request while requests run. It reads /health and
    /metrics on the engine's own port, not the sidecar's (backends.vllm.progress)."""
    leader = container(leader_of(templates(ds_roles()[role]["spec"])), "vllm")
    script = leader["livenessProbe"]["exec"]["command"][2]
    assert f"127.0.0.1:{port}/health" in script and f"127.0.0.1:{port}/metrics" in script
    assert "httpGet" not in leader["livenessProbe"]
    # a completion only while the engine reports nothing running (it queues behind nobody), and never on prefill
    assert ("if busy == 0:" in script) == (role == "decode") and ("/v1/completions" in script) == (role == "decode")


def test_shutdown_prefill_scales_down_one_drained_group_at_a_time():
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h for h in objects(DISAGG, "HorizontalPodAutoscaler")}
    period = {name: h["spec"]["behavior"]["scaleDown"]["policies"][0]["periodSeconds"] for name, h in hpas.items()}
    grace = {
        r: next(iter(templates(s["spec"]).values()))["terminationGracePeriodSeconds"] for r, s in ds_roles().items()
    }
    (prefill,) = [p for n, p in period.items() if n.endswith("prefill")]
    (decode,) = [p for n, p in period.items() if n.endswith("decode")]
    assert prefill == grace["prefill"] and decode == 60


def test_shutdown_prefill_scale_down_period_stays_within_the_hpa_api():
    from tpu_serving.backends.vllm.disagg_args import VllmDisaggregatedArgs
    from tpu_serving.backends.vllm.disagg_backend import scale_down_period
    from tpu_serving.common.podspec import Shutdown

    def role(kv: KvRole) -> VllmServingArgs:
        return vllm_args("ct6e-standard-4t", "2x4", namespace="pd", kv_transfer=KvTransfer(kv), shutdown=Shutdown(3600))

    args = VllmDisaggregatedArgs(prefill=role(KvRole.PREFILL), decode=role(KvRole.DECODE), namespace="pd")
    assert scale_down_period(args, KvRole.PREFILL) == 1800


def test_shutdown_compilation_cache_is_keyed_by_group_and_worker_on_every_stack():
    """Keyed by node name, every new node (scale from zero, repair, upgrade) compiled cold (finding 7)."""
    specs = [o["spec"] for o in objects(V5E16, "LeaderWorkerSet")] + [r["spec"] for r in ds_roles().values()]
    for spec in specs:
        for pod in templates(spec).values():
            env = {e["name"]: e for e in container(pod, "vllm")["env"]}
            assert env["VLLM_XLA_CACHE_PATH"]["value"] == "/compilation-cache/$(LWS_GROUP_INDEX)/$(LWS_WORKER_INDEX)"
            assert "NODE_NAME" not in env


def test_shutdown_ray_compiled_graph_timeouts_are_minutes():
    """Ray reads RAY_CGRAPH_get_timeout in seconds (ray 2.60.0 ray/dag/context.py l.13-14): 30000 was 8 h 20 min."""
    for key in ("RAY_CGRAPH_get_timeout", "RAY_CGRAPH_submit_timeout"):
        assert 60 <= int(MULTI_HOST_ENV[key]) <= 900, key


def test_shutdown_jetstream_group_holds_every_container_through_the_longest_request():
    (lws,) = objects(JETSTREAM, "LeaderWorkerSet")
    request = gateway_timeout(JETSTREAM)
    for pod in templates(lws["spec"]).values():
        assert pod["terminationGracePeriodSeconds"] == 30 + request + 30
        for c in pod["containers"]:
            assert c["lifecycle"]["preStop"] == {"sleep": {"seconds": 30 + request}}, c["name"]


def test_shutdown_seed_stack_adds_no_capability_outside_the_baseline_it_does_not_need():
    """NET_ADMIN and SYS_TIME are outside Pod Security baseline and no source shows JetStream needs them (finding 9)."""
    (lws,) = objects(SEED, "LeaderWorkerSet")
    jax = container(templates(lws["spec"])["leaderTemplate"], "jax-tpu")
    added = set(jax["securityContext"]["capabilities"].get("add") or ())
    assert not added & {"NET_ADMIN", "SYS_TIME"}


def test_shutdown_sleep_never_exceeds_the_grace_period():
    from tpu_serving.common.podspec import Shutdown

    s = Shutdown(request_seconds=1, hold_seconds=0)
    assert s.pre_stop_seconds < s.grace_seconds
    assert dataclasses.replace(s, hold_seconds=30).grace_seconds == s.grace_seconds + 30
