"""tpu_serving.backends.jetstream (PathwaysServing, JetStream on Pathways): seed conformance, acceptance checks and LWS version switching."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
import yaml
from pydantic.alias_generators import to_snake

from tests.components.backends.test_vllm_args import _shape, in_python
from tests.components.backends.test_vllm_engine_settings import SECRET, python_problems
from tests.conftest import HARDENED_DIFFERENCES, SEED_MANIFESTS, flatten, plan_of, seed_differences
from tests.fixtures.components import run
from tests.fixtures.configs import SERVING, load, plan_edited, stack_problems, two_slices
from tpu_serving import (
    MaxTextSettings,
    PathwaysServingArgs,
    catalog,
)
from tpu_serving.catalog.models import Attention, ModelSize, WeightPrecision
from tpu_serving.common.validation import argument_problems
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.reference import schema

LWS_TYPE = "kubernetes:leaderworkerset.x-k8s.io/v1:LeaderWorkerSet"
PATHWAYS_STACKS = {
    # stack -> (seed manifest, TPU topology of its node pools, number of slices)
    "llama31-405b-v6e16": ("jetstream-pathways-llama31-405b-v6e16.yaml", "4x4", 1),
    "llama2-70b-disagg-v6e8x2": ("jetstream-pathways-disagg-llama2-70b-2xv6e8.yaml", "2x4", 2),
}
SEED_PLACEHOLDERS = (
    "TPU_ACCELERATOR_TYPE",
    "TPU_TOPOLOGY",
    "GCS_CHECKPOINT_PATH",
    "BUCKET_NAME",
    "cloud-pathways-staging",
)


def rendered(stack: str, kind: str) -> dict:
    (obj,) = [o for o in kubernetes_objects(plan_of(stack)) if o["kind"] == kind]
    return obj


def container(pod_spec: dict, name: str) -> dict:
    (c,) = [c for c in pod_spec["containers"] if c["name"] == name]
    return c


def leader(lws: dict) -> dict:
    return lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]


def worker(lws: dict) -> dict:
    return lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]


# ------------------------------------------------------------------------------ seed conformance


def seed_docs(stack: str) -> dict[str, dict]:
    """The seed's LeaderWorkerSet and Service, placeholders filled with the catalog's values."""
    filename, topology, _ = PATHWAYS_STACKS[stack]
    text = (SEED_MANIFESTS / filename).read_text()
    text = text.replace("TPU_ACCELERATOR_TYPE", catalog.V6E.gke_accelerator).replace("TPU_TOPOLOGY", topology)
    docs = [d for d in yaml.safe_load_all(text) if d]
    return {d["kind"]: d for d in docs}


def _maxtext_map(args: list[str]) -> dict[str, str]:
    # MaxText reads `key=value` pairs in any order; booleans are case-insensitive.
    out = {"<config>": args[0]}
    for a in args[1:]:
        k, _, v = a.partition("=")
        out[k] = v.lower() if v.lower() in ("true", "false") else v
    return out


def normalise(obj):
    return flatten(obj, {"jax-tpu": _maxtext_map})


TEMPLATE = "spec.leaderWorkerTemplate"
LEAD = f"{TEMPLATE}.leaderTemplate"
WORK = f"{TEMPLATE}.workerTemplate"
SCRATCH = "stack's own scratch bucket instead of gs://cloud-pathways-staging"
DIFFERENCES: list[tuple[str, str]] = [
    *HARDENED_DIFFERENCES,
    # (regular expression over the flattened path, reason)
    (r"metadata\.namespace", "every stack runs in its own namespace, not `default`"),
    (
        r".*\.containers\[[^\]]+\]\.imagePullPolicy",
        "IfNotPresent, not the seeds' Always: a group recreation does not depend on the registry, and a tag moved "
        "upstream reaches only new nodes (SRE review M3, GKE review m4; jetstream.pods.PULL_POLICY)",
    ),
    (
        r"metadata\.annotations\.pulumi\.com/skipAwait",
        "the Service does not hold `pulumi up` until the model servers are ready (pulumi-kubernetes' Service await)",
    ),
    (r"(metadata|.*\.metadata)\.labels\.app\.kubernetes\.io/.*", "standard part-of/instance labels for ownership"),
    (
        r"spec\.rolloutStrategy\..*",
        "the stack's `rollout` stated (in-place: the LWS webhook's defaults, maxUnavailable 1 and maxSurge 0; "
        "surge: one spare group), so that a preview says how the groups are replaced",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[[a-z-]+\]\.lifecycle\.preStop\..*",
        "graceful shutdown: every container holds for the endpoint's removal and the gateway's longest request",
    ),
    (
        rf"{LEAD}\.spec\.containers\[jax-tpu\]\.securityContext\.capabilities\.add",
        "NET_ADMIN and SYS_TIME dropped: outside Pod Security baseline, and no source shows JetStream needs them",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.terminationGracePeriodSeconds",
        "a grace period that covers the preStop wait, the longest request and a teardown",
    ),
    (
        rf"{TEMPLATE}\.restartPolicy",
        "RecreateGroupAfterStart (LWS v0.9+): the group restarts together, but not while a pod is still pending",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.serviceAccountName",
        "pods run as the workload-identity KSA (checkpoint and scratch access)",
    ),
    (rf"{LEAD}\.spec\.containers\[(pathways-proxy|pathways-rm)\]\.args", SCRATCH),
    (rf"{WORK}\.spec\.containers\[worker\]\.args", SCRATCH),
    (
        rf"{LEAD}\.spec\.containers\[jax-tpu\]\.args\.load_parameters_path",
        "checkpoint in the stack's checkpoints bucket (seed: placeholder)",
    ),
    (
        rf"{LEAD}\.spec\.containers\[jax-tpu\]\.(startupProbe|readinessProbe|livenessProbe)\..*",
        "probe timing: ready as soon as it answers, up to an hour of loading tolerated; startup and liveness on "
        "jax-tpu's own gRPC port (TCP), so a hung jetstream-http never restarts it and recreates the group",
    ),
    (
        rf"{LEAD}\.spec\.containers\[jax-tpu\]\.(args\.prometheus_port|ports)",
        "JetStream's Prometheus metrics on (MaxText prometheus_port, off by default), for the stack's PodMonitoring",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.tolerations",
        "TPU toleration on workers too (the disaggregated seed omits it); a lost node's taints tolerated for "
        "probes.nodeLostSeconds, not the API server's 300 s",
    ),
    (r"spec\.type", "ClusterIP stated explicitly (the Kubernetes default)"),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[[a-z-]+\]\.resources\.requests\.(cpu|memory|google\.com/tpu)",
        "CPU/memory requests for scheduling and the namespace quota (TPU request = its limit)",
    ),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[(pathways-proxy|pathways-rm|jetstream-http|worker)\]\.readinessProbe\..*",
        "TCP readiness on each server's port",
    ),
    (rf"({LEAD}|{WORK})\.spec\.priorityClassName", "serving priority, above batch work (multi-tenancy)"),
    (
        rf"({LEAD}|{WORK})\.metadata\.annotations\.cluster-autoscaler\.kubernetes\.io/safe-to-evict",
        "the cluster autoscaler never moves a serving group to free a node (GKE review round 57, m5)",
    ),
    (r"metadata\.name", "the Service keeps the seed's name; kept under test for renames"),
    (
        rf"({LEAD}|{WORK})\.spec\.containers\[(pathways-proxy|pathways-rm|worker)\]\.image",
        "Pathways images pinned to the jax-0.5.3 release instead of the seed's mutable `latest`",
    ),
]


def unexplained(seed: dict, ours: dict) -> tuple[list[str], set[str]]:
    return seed_differences(seed, ours, DIFFERENCES, normalise)


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
@pytest.mark.parametrize("kind", ["LeaderWorkerSet", "Service"])
def test_pathways_conforms_to_seed(stack, kind, seeds):
    problems, _ = unexplained(seed_docs(stack)[kind], rendered(stack, kind))
    assert problems == [], "differences from the seed that are neither fixed nor listed:\n" + "\n".join(problems)


def test_pathways_every_listed_difference_occurs(seeds):
    used: set[str] = set()
    for stack in PATHWAYS_STACKS:
        for kind in ("LeaderWorkerSet", "Service"):
            used |= unexplained(seed_docs(stack)[kind], rendered(stack, kind))[1]
    stale = [r for r, _ in DIFFERENCES if r not in used and r != r"metadata\.name"]
    assert stale == [], f"listed differences that no longer occur: {stale}"


def test_pathways_conformance_detects_a_change(seeds):
    ours = copy.deepcopy(rendered("llama31-405b-v6e16", "LeaderWorkerSet"))
    container(leader(ours), "jax-tpu")["args"].append("per_device_batch_size=11")
    problems, _ = unexplained(seed_docs("llama31-405b-v6e16")["LeaderWorkerSet"], ours)
    assert any("per_device_batch_size" in p for p in problems)


# ------------------------------------------------------------------------------ acceptance


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
def test_pathways_lws_waits_for_install_and_slices(stack):
    plan = plan_of(stack)
    (lws,) = plan.of_type(LWS_TYPE)
    (install,) = plan.of_type("tpu-serving:index:ControllerInstall")
    (group,) = plan.of_type("kubernetes:yaml/v2:ConfigGroup")
    pools = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if "placementPolicy" in p.inputs]
    # Depending on a component means depending on its children: the release manifest.
    assert group.parent == install.urn and group.urn in lws.dependencies
    assert {p.urn for p in pools} <= set(lws.dependencies)
    assert group.inputs["files"] == ["https://github.com/kubernetes-sigs/lws/releases/download/v0.10.0/manifests.yaml"]


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
def test_pathways_no_seed_placeholder_left(stack):
    text = json.dumps(kubernetes_objects(plan_of(stack)))
    assert [p for p in SEED_PLACEHOLDERS if p in text] == []


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
def test_pathways_instance_flags_match_pools(stack):
    _, topology, slices = PATHWAYS_STACKS[stack]
    plan = plan_of(stack)
    pools = [p for p in plan.of_type("gcp:container/nodePool:NodePool") if "placementPolicy" in p.inputs]
    assert len(pools) == slices
    assert {p.inputs["placementPolicy"]["tpuTopology"] for p in pools} == {topology}
    lws = rendered(stack, "LeaderWorkerSet")
    rm = container(leader(lws), "pathways-rm")["args"]
    assert f"--instance_count={slices}" in rm
    assert f"--instance_type=tpuv6e:{topology}" in rm
    vms = sum(p.inputs["nodeCount"] for p in pools)
    assert lws["spec"]["leaderWorkerTemplate"]["size"] == vms + 1
    assert container(worker(lws), "worker")["resources"]["limits"]["google.com/tpu"] == "4"
    assert leader(lws)["nodeSelector"]["cloud.google.com/gke-tpu-topology"] == topology


def test_pathways_disaggregated_specifics():
    lws = rendered("llama2-70b-disagg-v6e8x2", "LeaderWorkerSet")
    assert lws["spec"]["leaderWorkerTemplate"]["subGroupPolicy"] == {"subGroupSize": 2}
    assert lws["metadata"]["annotations"] == {
        "leaderworkerset.sigs.k8s.io/subgroup-exclusive-topology": "cloud.google.com/gke-nodepool"
    }
    assert "inference_server=ExperimentalMaxtextDisaggregatedServer_8" in container(leader(lws), "jax-tpu")["args"]
    single = rendered("llama31-405b-v6e16", "LeaderWorkerSet")
    assert "subGroupPolicy" not in single["spec"]["leaderWorkerTemplate"]


def probe_timing(jax: dict) -> tuple[int, int]:
    """(seconds the probes impose before Ready once the server answers, seconds of loading tolerated)."""
    s, r = jax["startupProbe"], jax["readinessProbe"]
    start_delay = s.get("initialDelaySeconds", 0)
    imposed = (
        max(start_delay, r.get("initialDelaySeconds", 0)) + s.get("periodSeconds", 10) + r.get("periodSeconds", 10)
    )
    tolerated = start_delay + s.get("periodSeconds", 10) * s.get("failureThreshold", 3)
    return imposed, tolerated


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
def test_pathways_probes_ready_fast_and_tolerate_an_hour(stack, seeds):
    imposed, tolerated = probe_timing(container(leader(rendered(stack, "LeaderWorkerSet")), "jax-tpu"))
    assert imposed <= 60 and tolerated >= 3600
    seed_imposed, seed_tolerated = probe_timing(container(leader(seed_docs(stack)["LeaderWorkerSet"]), "jax-tpu"))
    assert seed_imposed >= 240  # the seeds' 900 s and 240 s waits, measured the same way
    # Loading is tolerated as long as the seed allows for the 405B int8 checkpoint (900 s + 10000 x 1 s, about
    # 3 h). The 70B disaggregated stack deliberately keeps the one-hour default: the seed's 240 s + 10000 x 1 s
    # is a catch-all, and a three-hour window would hold the not-ready alert back as long.
    if stack == "llama31-405b-v6e16":
        assert tolerated >= seed_tolerated, (tolerated, seed_tolerated)
    else:
        assert tolerated < seed_tolerated


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
def test_pathways_service_and_outputs(stack):
    plan = plan_of(stack)
    svc = rendered(stack, "Service")
    assert svc["spec"]["ports"] == [{"name": "jetstream-http", "port": 8000, "protocol": "TCP", "targetPort": 8000}]
    lws = rendered(stack, "LeaderWorkerSet")
    assert (
        svc["spec"]["selector"].items()
        <= lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["metadata"]["labels"].items()
    )
    out = plan.outputs
    assert out["leaderPod"] == "jetstream-pathways-0"
    assert out["portForward"] == f"kubectl -n {out['namespace']} port-forward svc/jetstream-svc 8000:8000"
    assert "localhost:8000/generate" in out["generateExample"]
    assert out["controllers"] == {"leaderworkerset.x-k8s.io": "v0.10.0"}


# ------------------------------------------------------------------------------ LWS versions


def plan_with(stack: str, edit):
    return plan_edited(stack, serving=edit)


@pytest.mark.parametrize("stack", PATHWAYS_STACKS)
@pytest.mark.parametrize("release", ["v0.4.0", "v0.10.0"])
def test_pathways_lws_valid_for_each_release(stack, release, reference):
    plan = plan_with(stack, lambda s: s.update(lwsVersion=release))
    assert plan.outputs["controllers"] == {"leaderworkerset.x-k8s.io": release}
    (group,) = plan.of_type("kubernetes:yaml/v2:ConfigGroup")
    assert f"/download/{release}/" in group.inputs["files"][0]
    (lws,) = [o for o in kubernetes_objects(plan) if o["kind"] == "LeaderWorkerSet"]
    schema.validate_custom(lws, release)
    # The group restart policy follows the release (RecreateGroupAfterStart from v0.9.0), and the object
    # made for the old release is valid for the new one too: upgrading the controller first is safe.
    policy = lws["spec"]["leaderWorkerTemplate"]["restartPolicy"]
    assert policy == ("RecreateGroupOnPodRestart" if release == "v0.4.0" else "RecreateGroupAfterStart")
    schema.validate_custom(lws, "v0.10.0")


def test_jetstream_parallelism_message_gives_the_product():
    """jetstream.checks._parallelism_problems: the message names each ici degree against the slice's chips."""
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:serving"]["maxtext"].update(
        iciFsdpParallelism=2, iciAutoregressiveParallelism=1, iciTensorParallelism=4
    )
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert any("ici parallelism 2 x 1 x 4 does not match the 16 chips" in p for p in err.value.problems)


def test_jetstream_sizing_jetstream_fit_refuses_an_attention_shape_it_does_not_read():
    """The JetStream fit counts weights only: a declared ``attention`` there would be a setting nobody reads."""
    from tpu_serving.backends.jetstream.args import MaxTextSettings
    from tpu_serving.backends.jetstream.args import fit_problems as jetstream_fit

    maxtext = MaxTextSettings(
        "base.yml", "house", max_prefill_predict_length=1024, max_target_length=2048, per_device_batch_size=1
    )
    shape = catalog.resolve_slice_name("v6e-16")
    shaped = ModelSize(13, WeightPrecision.BF16, Attention(layers=40, kv_heads=40, head_dim=128))
    assert jetstream_fit(shaped, maxtext, shape) == [
        "model_size.attention: vLLM's KV cache check reads it; the JetStream fit counts the weights only: leave it out"
    ]
    assert jetstream_fit(ModelSize(13, WeightPrecision.BF16), maxtext, shape) == []


# The HBM fit refused alike by the stack file and PathwaysServingArgs (issue 38, point 1).


JETSTREAM_FIT_REFUSALS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # id: (the stack's one tpuSlices entry, its serving.maxtext keys changed, or serving.model)
    "405B-bf16-on-v6e-16": ({"slice": "v6e-16"}, {"maxtext": {"quantization": None}}),
    "405B-int8-on-v6e-8": ({"slice": "v6e-8"}, {"maxtext": {"iciTensorParallelism": 4}}),
    "declared-200B-on-v5e-2x4-vm": (
        {"machineType": "ct5lp-hightpu-8t", "topology": "2x4"},
        {"maxtext": {"iciTensorParallelism": 4}, "model": {"parametersBillions": 200, "precision": "bf16"}},
    ),
}
"""JetStream stacks whose model one slice's HBM does not hold (the seeds' Llama 3.1 405B unquantized on a v6e-16)."""


def jetstream_fit_stack(tpu_slice: dict[str, Any], serving: dict[str, Any]) -> dict:
    cfg = copy.deepcopy(SERVING)
    pool = cfg["tpu-serving:tpuSlices"][0]
    del pool["slice"]
    pool |= tpu_slice
    maxtext = {
        k: v for k, v in {**cfg["tpu-serving:serving"]["maxtext"], **serving["maxtext"]}.items() if v is not None
    }
    cfg["tpu-serving:serving"] |= {**serving, "maxtext": maxtext}
    return cfg


def jetstream_fit_args(tpu_slice: dict[str, Any], serving: dict[str, Any]) -> PathwaysServingArgs:
    """The same model, slice and MaxText settings as the component's arguments."""
    cfg = jetstream_fit_stack(tpu_slice, serving)
    shape = (
        catalog.resolve_slice_name(tpu_slice["slice"])
        if "slice" in tpu_slice
        else catalog.slice_shape(tpu_slice["machineType"], tpu_slice["topology"])
    )
    maxtext = cfg["tpu-serving:serving"]["maxtext"]
    size = serving.get("model")
    return PathwaysServingArgs(
        namespace="ns",
        service_account="ksa",
        shape=shape,
        num_slices=1,
        maxtext=MaxTextSettings(**{to_snake(k): v for k, v in maxtext.items()}),
        checkpoint_uri="gs://b/ckpt",
        scratch_uri="gs://s/tmp",
        model_size=None if size is None else ModelSize(size["parametersBillions"], size["precision"], _shape(size)),
    )


@pytest.mark.parametrize(("tpu_slice", "serving"), JETSTREAM_FIT_REFUSALS.values(), ids=JETSTREAM_FIT_REFUSALS.keys())
def test_jetstream_hbm_fit_refusal_is_the_same_for_both(tpu_slice, serving):
    (refused,) = [p for p in stack_problems(jetstream_fit_stack(tpu_slice, serving)) if "GiB of HBM" in p]
    python = in_python(refused, "PathwaysServingArgs").replace(
        "PathwaysServingArgs.model:", "PathwaysServingArgs.model_size:"
    )
    assert argument_problems(jetstream_fit_args(tpu_slice, serving)) == [python]


def test_jetstream_unknown_model_size_is_required_by_both():
    serving = {"maxtext": {"modelName": "acme-13b"}}
    (refused,) = [p for p in stack_problems(jetstream_fit_stack({"slice": "v6e-16"}, serving)) if "required" in p]
    (python,) = argument_problems(jetstream_fit_args({"slice": "v6e-16"}, serving))
    assert refused.startswith('tpu-serving:serving.model: required for the HBM fit check, since maxtext.modelName "')
    assert python.startswith(
        'PathwaysServingArgs.model_size: required for the HBM fit check, since maxtext.model_name "acme-13b"'
    )
    assert refused.split("; known: ")[1] == python.split("; known: ")[1]


# PathwaysServing run alone under the recording monitor, and its arguments.


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


def test_pathways_disaggregated_on_a_slice_maxtext_has_no_server_for_is_refused():
    from tpu_serving.catalog import slice_shape

    v6e16 = slice_shape("ct6e-standard-4t", "4x4")
    assert argument_problems(serving_args(mode="disaggregated", shape=v6e16, num_slices=2)) == [
        "PathwaysServingArgs.mode = 'disaggregated': MaxText's disaggregated servers run only on v6e-8 or v5e-16 "
        "slices, not v6e-16 (ct6e-standard-4t, topology 4x4)"
    ]
    v6e8 = slice_shape("ct6e-standard-4t", "2x4")
    assert argument_problems(serving_args(mode="disaggregated", shape=v6e8, num_slices=2)) == []


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


# MaxText's extraArgs cannot change what the library derives nor carry a secret, and no message repeats a refused
# secret: the same rules for a stack file and a Python caller (issue "A platform team adopts it", item 9).


def test_engine_flags_maxtext_extra_args_keep_the_mesh_and_no_secret():
    cfg = copy.deepcopy(SERVING)
    extra = ["enable_jax_profiler=true", f"hf_access_token={SECRET}", "ici_data_parallelism=2", "model_name=x"]
    cfg["tpu-serving:serving"]["maxtext"]["extraArgs"] = extra
    (problem,) = stack_problems(cfg)
    assert problem.startswith("tpu-serving:serving.maxtext.extraArgs: modelName: set by the component")
    assert "ici_data_parallelism: would change the mesh" in problem
    assert "hf_access_token: a secret on the command line" in problem
    assert SECRET not in problem and "the value is not shown" in problem
    settings = MaxTextSettings(
        config_file="c.yml", model_name="m", max_prefill_predict_length=1, max_target_length=2, per_device_batch_size=1
    )
    (python,) = python_problems(dataclasses.replace(settings, extra_args=tuple(extra)), MaxTextSettings)
    assert python.startswith("MaxTextSettings.extra_args: model_name: set by the component") and SECRET not in python
    cfg["tpu-serving:serving"]["maxtext"]["extraArgs"] = ["enable_jax_profiler=true"]
    assert list(load(cfg).serving.maxtext.extra_args) == ["enable_jax_profiler=true"]


@pytest.mark.parametrize("args", [[SECRET], [f"hf_access_token {SECRET}"], [f"HF_ACCESS_TOKEN={SECRET}"], ["x=1", 5]])
def test_engine_flags_a_malformed_maxtext_entry_is_named_by_its_position_only(args):
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:serving"]["maxtext"]["extraArgs"] = args
    (problem,) = stack_problems(cfg)
    assert problem.startswith("tpu-serving:serving.maxtext.extraArgs: [")
    assert SECRET not in problem and "SeCrEt" not in problem
    settings = MaxTextSettings(
        config_file="c.yml", model_name="m", max_prefill_predict_length=1, max_target_length=2, per_device_batch_size=1
    )
    (python,) = argument_problems(dataclasses.replace(settings, extra_args=tuple(args)))
    assert python.startswith("MaxTextSettings.extra_args: [") and SECRET not in python and "SeCrEt" not in python


def test_jetstream_a_server_image_of_another_release_is_refused_naming_the_key():
    from tests.fixtures.configs import SERVING, load, with_serving
    from tpu_serving.catalog.versions import PINS
    from tpu_serving.config import ConfigError

    pin = PINS["jetstream"]
    other = pin.value.replace(pin.version, "v0.2.2")
    with pytest.raises(ConfigError) as err:
        load(with_serving(SERVING, images={"jetstream": other}))
    assert f'serving.images.jetstream = "{other}": is release v0.2.2' in str(err.value)
    assert load(with_serving(SERVING, images={"jetstream": pin.value})).serving.images.jetstream == pin.value


def test_jetstream_refuses_a_checkpoint_bucket_the_workloads_cannot_read():
    """jetstream.checks.problems (mutmut_35): a checkpoints bucket with `workloadAccess: none` is as good as none."""
    cfg = copy.deepcopy(SERVING)
    cfg["tpu-serving:buckets"][0]["workloadAccess"] = "none"
    with pytest.raises(ConfigError) as err:
        load(cfg)
    assert "tpu-serving:buckets: jetstream-pathways needs a `checkpoints` bucket the workloads can access" in (
        err.value.problems
    )


def test_jetstream_rollout_setting_reaches_the_leader_worker_set():
    """jetstream.backend.build (mutmut_46): `serving.rollout: surge` rolls JetStream's groups out with a surge."""
    stack = "llama31-405b-v6e16"

    surge = plan_edited(stack, tpuSlices=two_slices, serving=lambda s: s.update(rollout="surge"))
    strategies = [o["spec"]["rolloutStrategy"] for o in kubernetes_objects(surge) if o["kind"] == "LeaderWorkerSet"]
    # in place (the default the mutant falls back to) has maxSurge 0
    assert [r["rollingUpdateConfiguration"].get("maxSurge") for r in strategies] == [1], strategies
