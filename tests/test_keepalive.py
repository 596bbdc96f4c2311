"""HTTP keep-alive of the servers a gateway's load balancer reaches (GKE review G3): vLLM closed idle connections
after 5 s while the load balancer's proxies keep them 600 s, so a request sent on a connection the server had just
closed failed with a 502."""

from __future__ import annotations

from tests.conftest import plan_of
from tpu_serving.traffic.gateway_settings import LB_BACKEND_KEEPALIVE_SECONDS, SERVER_KEEPALIVE_SECONDS
from tpu_serving_tools.preview.offline import kubernetes_objects

VLLM_STACKS = (
    "vllm-llama33-70b-v5e16",
    "vllm-llama33-70b-existing",
    "vllm-llama31-405b-v6e16",
    "vllm-llama33-70b-disagg-v6e8x2",
)


def pod_templates(stack: str) -> list[dict]:
    out = []
    for o in kubernetes_objects(plan_of(stack)):
        if o["kind"] == "LeaderWorkerSet":
            specs = [o["spec"]]
        elif o["kind"] == "DisaggregatedSet":
            specs = [r["spec"] for r in o["spec"]["roles"]]
        else:
            continue
        for spec in specs:
            t = spec["leaderWorkerTemplate"]
            out += [t[k]["spec"] for k in ("leaderTemplate", "workerTemplate") if k in t]
    return out


def test_keepalive_outlasts_the_load_balancers_on_every_vllm_server():
    assert SERVER_KEEPALIVE_SECONDS > LB_BACKEND_KEEPALIVE_SECONDS == 600
    for stack in VLLM_STACKS:
        pods = pod_templates(stack)
        assert pods, stack
        for pod in pods:
            (engine,) = [c for c in pod["containers"] if c["name"].startswith("vllm")]
            env = {e["name"]: e.get("value") for e in engine.get("env", [])}
            assert int(env["VLLM_HTTP_TIMEOUT_KEEP_ALIVE"]) == SERVER_KEEPALIVE_SECONDS, stack


def test_keepalive_preview_names_the_sidecars_fixed_idle_timeout():
    from tpu_serving import catalog
    from tpu_serving.backends.vllm.disagg_backend import caveats

    (note,) = [c for c in caveats(180, catalog.slice_shape("ct6e-standard-8t", "2x4")) if "sidecar" in c]
    assert "300 s" in note and f"{LB_BACKEND_KEEPALIVE_SECONDS} s" in note
