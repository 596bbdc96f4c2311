"""tpu_serving_tools.conformance.vllm: the vLLM TPU containers against the image's release tables (``make check``'s
``engines``), and the library's vLLM facts against the same tables."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import disagg_multi_host_plan
from tpu_serving_tools.conformance import category, table
from tpu_serving_tools.conformance import vllm as conformance
from tpu_serving_tools.runtime.planview import PlanView

VLLM_STACKS = ["vllm-llama33-70b-v5e16", "vllm-llama31-405b-v6e16"]


def _view(stack: str) -> PlanView:
    return PlanView(copy.deepcopy(plan_of(stack).as_json()))


def _containers(view: PlanView) -> list[dict]:
    (lws,) = [r["inputs"] for r in view.resources if r["type"].endswith(":LeaderWorkerSet")]
    t = lws["spec"]["leaderWorkerTemplate"]
    return [c for role in ("leaderTemplate", "workerTemplate") for c in t[role]["spec"]["containers"]]


@pytest.mark.parametrize("stack", VLLM_STACKS)
def test_vllm_every_vllm_container_sets_only_what_its_release_reads(stack):
    result = conformance.findings(_view(stack))
    assert len(result) == 2  # leader and worker
    assert [f for f in result if not f.ok] == []
    assert category.check(_view(stack)).failures() == []


def test_vllm_a_variable_nothing_reads_fails():
    view = _view(VLLM_STACKS[0])
    for c in _containers(view):
        c["env"].append({"name": "TPU_BACKEND_TYPE", "value": "jax"})
        c["env"].append({"name": "RAY_num_heartbeats_timeout", "value": "300000"})
    reasons = [f.reason for f in category.check(view).failures()]
    assert len(reasons) == 2 and all("env TPU_BACKEND_TYPE: read by nothing" in r for r in reasons)
    assert all("env RAY_num_heartbeats_timeout: read by nothing" in r for r in reasons)


def test_vllm_a_misspelt_serve_flag_and_a_foreign_image_fail():
    view = _view(VLLM_STACKS[0])
    leader = _containers(view)[0]
    leader["args"][0] = leader["args"][0].replace("--max-model-len=", "--max-model-length=")
    leader["image"] = "docker.io/vllm/vllm-tpu:v0.32.0"
    (failure,) = category.check(view).failures()
    assert "vllm serve --max-model-length: no such flag in vllm 0.29.0" in failure.reason
    assert "is not vllm/vllm-tpu:v0.29.0" in failure.reason


@pytest.mark.parametrize("removed", ["--max-num-partial-prefills=2", "--calculate-kv-scales"])
def test_vllm_an_extra_arg_vllm_removed_since_the_last_pin_fails(removed):
    """A stack's ``engine.extraArgs`` with a flag vLLM had at 0.21.0 (the previous pin) and dropped by 0.29.0:
    the preview accepts it (the library does not own it), the engine conformance refuses it, as ``vllm serve``
    would at start."""
    from tests.fixtures.configs import plan_edited

    flag = removed.split("=", 1)[0]
    assert flag in table.load("vllm-0.21.0").flags and flag not in conformance.tables().vllm.flags

    def add(serving: dict) -> None:
        serving["engine"]["extraArgs"].append(removed)

    view = PlanView(plan_edited(VLLM_STACKS[1], serving=add).as_json())
    failures = category.check(view).failures()
    assert [f.subject for f in failures] == [
        "engine vllm-llama405b/vllm leader vllm-leader"
    ]  # the worker runs no vllm serve
    assert failures[0].reason == f"vllm serve {flag}: no such flag in vllm {conformance.PINS.vllm_tpu}"


def test_vllm_ray_bootstrap_waits_the_startup_window_with_a_flag_the_script_takes():
    """multi-node-serving.sh gives up after ray_init_timeout (300 s by default); the group may take its whole
    startup window to come up, so leader and worker wait that long."""
    plan = plan_of(VLLM_STACKS[0])
    leader, worker = _containers(PlanView(plan.as_json()))
    (lws,) = [r for r in plan.resources if r.type.endswith(":LeaderWorkerSet")]
    window = lws.inputs["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]["startupProbe"]
    seconds = window["periodSeconds"] * window["failureThreshold"]
    assert f"--ray_init_timeout={seconds}" in leader["args"][0] and f"--ray_init_timeout={seconds}" in worker["args"][0]
    assert "--ray_init_timeout" in conformance.RAY_BOOTSTRAP_FLAGS


def test_vllm_versions_that_must_agree_do_agree():
    """The image tag, the vllm-tpu wheel, the tpu-inference release it requires and the tables are one chain;
    the library's default image is that image."""
    from tpu_serving.backends.vllm.facts import DEFAULT_IMAGE

    pins = conformance.PINS
    assert pins.image.endswith(f":v{pins.vllm_tpu}")
    t = conformance.tables()
    assert (t.vllm.version, t.tpu_inference.version, t.ray.version) == (pins.vllm_tpu, pins.tpu_inference, pins.ray)
    assert DEFAULT_IMAGE.endswith(pins.image), (DEFAULT_IMAGE, pins.image)


def test_vllm_flags_the_library_refuses_in_extra_args_exist_in_the_pinned_release():
    """Every flag vLLM's extraArgs refuse by name is one `vllm serve` of the pinned release registers (its
    conformance table, read from the wheels): a refusal names a real flag, not a guess."""
    from tpu_serving.backends.vllm.facts import ENGINE_FLAGS, PARALLEL_FLAGS_ALLOWED, SERVING_FLAGS, TOPOLOGY_FLAGS

    flags = conformance.tables().vllm.flags
    named = set(ENGINE_FLAGS) | SERVING_FLAGS | TOPOLOGY_FLAGS | PARALLEL_FLAGS_ALLOWED
    assert named and not named - flags, sorted(named - flags)


DISAGG_STACK = "vllm-llama33-70b-disagg-v6e8x2"


def _replace_connector(view: PlanView, old: str, new: str) -> int:
    """Every vLLM container's ``--kv-transfer-config`` of ``view`` naming ``new`` for ``old``; how many changed."""
    changed = 0
    for _, c in conformance._containers(view):
        args = c.get("args") or c.get("command") or []
        for i, arg in enumerate(args):
            if f'"kv_connector":"{old}"' in str(arg):
                args[i] = str(arg).replace(f'"kv_connector":"{old}"', f'"kv_connector":"{new}"')
                changed += 1
    return changed


def test_vllm_the_kv_connector_is_one_the_pinned_tpu_inference_starts():
    """Each role's ``--kv-transfer-config`` names a connector whose ``__init__`` runs ``KVConnectorBase_V1``'s in the
    pinned tpu-inference (read from the wheel: ``connector TPUConnector`` of tpu-inference-0.29.0.json); the HMA
    connector of 0.27.0 to 0.29.0, which skips it and fails EngineCore at start, or one the table does not know,
    fails the check."""
    view = _view(DISAGG_STACK)
    result = conformance.findings(view)
    assert len(result) == 2 and [f for f in result if not f.ok] == []  # prefill and decode: one pod per group
    # roles over two VMs: prefill and decode, leader and worker
    multi_host = conformance.findings(PlanView(copy.deepcopy(disagg_multi_host_plan().as_json())))
    assert len(multi_host) == 4 and [f for f in multi_host if not f.ok] == []
    assert conformance.tables().tpu_inference.facts["connector TPUConnector"].startswith("base initialized")
    for new, why in (("TPUConnectorHMA", "base not initialized: tpu_inference/distributed/tpu_connector_hma.py"),
                     ("NoSuchConnector", "no such connector in the table's files")):  # fmt: skip
        bad = _view(DISAGG_STACK)
        assert _replace_connector(bad, "TPUConnector", new) >= 2  # the leaders of both roles pass it
        reasons = [f.reason for f in conformance.findings(bad) if not f.ok]
        assert reasons and all(
            f"kv_connector {new}: does not start in tpu-inference 0.29.0 ({why}" in r for r in reasons
        )


def test_vllm_metrics_the_librarys_vllm_metrics_are_the_wheels():
    """Every metric the library names (VllmMetric, the signals, the kinds table) is one vLLM 0.29.0 registers, of the
    kind the library says; but three names of older releases the kinds table keeps so as to refuse them as no gauge,
    and the TPU connector's transfer time, which tpu-inference registers (not vLLM's logger)."""
    from tpu_serving.backends.vllm.disagg_backend import TRANSFER_TIME
    from tpu_serving.backends.vllm.facts import METRIC_KINDS, SIGNALS, VllmMetric

    t = table.load("vllm-0.29.0")
    assert {m.value: t.metrics.get(m.value) for m in VllmMetric if m.value not in t.metrics} == {}
    signals = {v.removesuffix("_total") for v in vars(SIGNALS).values() if isinstance(v, str) and v.startswith("vllm:")}
    assert signals <= set(t.metrics), signals - set(t.metrics)
    older = {"vllm:time_per_output_token_seconds", "vllm:gpu_prefix_cache_queries", "vllm:gpu_prefix_cache_hits"}
    assert {m for m in METRIC_KINDS if m not in t.metrics} == older
    assert {m: str(k) for m, k in METRIC_KINDS.items() if m in t.metrics} == {
        m: t.metrics[m] for m in METRIC_KINDS if m in t.metrics
    }
    assert TRANSFER_TIME not in t.metrics
