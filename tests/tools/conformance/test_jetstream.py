"""tpu_serving_tools.conformance.jetstream, engine conformance for JetStream + Pathways: MaxText's settings in
``jax-tpu`` and the Pathways containers' flags, against tables extracted from MaxText's and the PathwaysJob
controller's releases."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import plan_of
from tpu_serving_tools.conformance import category, jetstream, table
from tpu_serving_tools.runtime.planview import PlanView

JETSTREAM_STACKS = ["llama2-70b-disagg-v6e8x2", "llama31-405b-v6e16"]
MAXTEXT = "maxtext-jetstream-pathways-v0.2.0"


def _view(stack: str) -> PlanView:
    return PlanView(copy.deepcopy(plan_of(stack).as_json()))


def _container(view: PlanView, name: str) -> dict:
    (lws,) = [r["inputs"] for r in view.resources if r["type"].endswith(":LeaderWorkerSet")]
    t = lws["spec"]["leaderWorkerTemplate"]
    (c,) = [
        c for role in ("leaderTemplate", "workerTemplate") for c in t[role]["spec"]["containers"] if c["name"] == name
    ]
    return c


def _reasons(view: PlanView) -> list[str]:
    return [f.reason for f in jetstream.findings(view) if not f.ok]


@pytest.mark.parametrize("stack", JETSTREAM_STACKS)
def test_jetstream_containers_conform(stack):
    found = jetstream.findings(_view(stack))
    subjects = sorted(f.subject.rsplit(" ", 1)[-1] for f in found)
    assert subjects == ["jax-tpu", "pathways-proxy", "pathways-rm", "worker"], subjects
    assert [f.reason for f in found if not f.ok] == []
    assert jetstream in category.MODULES


@pytest.mark.parametrize(
    ("arg", "why"),
    [
        ("max_prefill_predict_lenght=1024", "max_prefill_predict_lenght: not a key of MaxText's base.yml"),
        ("scan_layers=no", "scan_layers=no: not a bool"),
        ("per_device_batch_size=one", "per_device_batch_size=one: not a float"),
        ("ici_tensor_parallelism=1.5", "ici_tensor_parallelism=1.5: not a int"),
        ("model_name=llama9-70b", "model_name=llama9-70b: not one of"),
        ("logical_axis_rules=[]", "logical_axis_rules=[]: not a list"),
        ("compute_axis_order=0,1,3,2", "compute_axis_order=0,1,3,2: not one of 0,1,2,3, 0,2,1,3"),
        ("quantize_kvcache", "'quantize_kvcache': not key=value"),
    ],
)
def test_jetstream_a_setting_maxtext_refuses_fails(arg, why):
    view = _view("llama2-70b-disagg-v6e8x2")
    _container(view, "jax-tpu")["args"].append(arg)
    (reason,) = _reasons(view)
    assert why in reason, reason


def test_jetstream_maxtext_config_file_must_exist_in_the_release():
    view = _view("llama31-405b-v6e16")
    args = _container(view, "jax-tpu")["args"]
    assert args[0] in table.load(MAXTEXT).choices["config_file"]
    args[0] = "MaxText/configs/v6e/inference/llama3_405b_v6e-16.yml"
    (reason,) = _reasons(view)
    assert "first argument 'MaxText/configs/v6e/inference/llama3_405b_v6e-16.yml': not a config file" in reason


def test_jetstream_a_disaggregated_server_for_other_slices_fails():
    """MaxText's ``_16`` server hard-codes v5e-16 slices; the stack's workers land on two v6e-8 slices."""
    view = _view("llama2-70b-disagg-v6e8x2")
    args = _container(view, "jax-tpu")["args"]
    (i,) = [i for i, a in enumerate(args) if a.startswith("inference_server=")]
    args[i] = "inference_server=ExperimentalMaxtextDisaggregatedServer_16"
    (reason,) = _reasons(view)
    assert "runs on two v5e-16 slices, the workers make v6e-8" in reason, reason


def test_jetstream_pathways_flags_and_variables_upstream_never_passes_fail():
    view = _view("llama2-70b-disagg-v6e8x2")
    _container(view, "pathways-proxy")["args"].append("--resource_manager_adress=x:1")
    _container(view, "worker")["env"] = [{"name": "PATHWAYS_DEBUG", "value": "1"}]
    reasons = " | ".join(_reasons(view))
    assert "--resource_manager_adress: no such flag of pathways-proxy (PathwaysJob v0.1.4)" in reasons
    assert "env PATHWAYS_DEBUG: not passed to pathways-worker" in reasons


@pytest.mark.parametrize(
    ("flag", "want"),
    [("--instance_type=tpuv5e:2x4", "the workers make tpuv6e:2x4"), ("--instance_count=1", "the workers make 2")],
)
def test_jetstream_the_resource_manager_describes_the_workers_slices(flag, want):
    view = _view("llama2-70b-disagg-v6e8x2")
    rm = _container(view, "pathways-rm")
    key = flag.split("=", 1)[0]
    rm["args"] = [flag if a.startswith(f"{key}=") else a for a in rm["args"]]
    (reason,) = _reasons(view)
    assert f"{flag}: {want}" in reason, reason


@pytest.mark.parametrize(
    ("name", "by"),
    [
        (MAXTEXT, "tools/conformance/extract_maxtext.py"),
        ("pathways-rm-v0.1.4", "tools/conformance/extract_pathways.py"),
        ("pathways-proxy-v0.1.4", "tools/conformance/extract_pathways.py"),
        ("pathways-worker-v0.1.4", "tools/conformance/extract_pathways.py"),
    ],
)
def test_jetstream_tables_carry_their_provenance(name, by):
    t = table.load(name)
    assert t.source["by"] == by and t.source["extracted"] and t.source["files"]
    assert t.source["artefact"].startswith(("AI-Hypercomputer/maxtext", "google/pathways-job@v0.1.4 ("))
    assert t.flags or t.config_keys


def test_jetstream_library_disaggregated_servers_are_maxtexts():
    """The library's slice -> server table against the one extracted from MaxText's source."""
    from tpu_serving.backends.jetstream.facts import DISAGGREGATED_SERVERS

    facts = table.load(MAXTEXT).facts
    extracted = {v: k.split("=", 1)[1] for k, v in facts.items() if k.startswith("inference_server=")}
    assert dict(DISAGGREGATED_SERVERS) == extracted


def test_jetstream_runtime_pathways_instance_types_are_the_controllers():
    """The runtime model's hand-sourced table against the one extracted from the controller's source."""
    from tpu_serving_tools.runtime import facts

    rm = table.load("pathways-rm-v0.1.4").facts
    assert {k.removeprefix("instance_type:"): v for k, v in rm.items()} == facts.PW_TPU_VERSION


def test_jetstream_findings_refuse_a_server_image_with_no_maxtext_table():
    view = _view("llama2-70b-disagg-v6e8x2")
    c = _container(view, "jax-tpu")
    c["image"] = c["image"].rsplit(":", 1)[0] + ":v0.1.9"
    (reason,) = _reasons(view)
    assert reason == f"image {c['image']}: no MaxText table for it"


def test_jetstream_findings_refuse_a_pathways_container_with_no_table():
    view = _view("llama2-70b-disagg-v6e8x2")
    _container(view, "pathways-proxy")["name"] = "pathways-relay"
    (found,) = [f for f in jetstream.findings(view) if "pathways-relay" in f.subject]
    assert (found.ok, found.reason) == (False, "no Pathways table for a container named pathways-relay")
    assert found.subject.startswith("engine ") and found.subject.endswith(" pathways-relay")
