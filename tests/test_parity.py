"""Components refuse what the stack file refuses (issue "A platform team adopts it", item 9): each rule a stack
file's setting enforces, the same bad value given to the component's Python arguments is refused too, named by its
Python field. The settings the stack file shares with a component are read from the component's dataclass, every
bound and check of each; the settings a hand-written stack model mirrors are listed."""

from __future__ import annotations

import copy
import dataclasses
import enum
import re
import typing
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from pydantic.alias_generators import to_camel, to_snake

from tests.fixtures.configs import SERVING, VLLM, load, with_change
from tests.fixtures.pools import cpu_pool_args
from tests.fixtures.pools import pool_args as tpu_pool_args
from tpu_serving import (
    BucketsArgs,
    MaxTextSettings,
    ObservabilityArgs,
    PathwaysServingArgs,
    ProjectServicesArgs,
    ServingGatewayArgs,
    catalog,
)
from tpu_serving.backends.vllm import VllmEngineSettings, VllmServingArgs
from tpu_serving.backends.vllm.args import extra_args_problem
from tpu_serving.catalog.machines import machine_type_problem
from tpu_serving.catalog.models import Attention, ModelSize
from tpu_serving.common.validation import argument_problems, type_hints
from tpu_serving.config import ConfigError
from tpu_serving.operations.autoscaling import (
    AutoscalingSettings,
    ServingAutoscalerArgs,
    adapter_version_problem,
    gauge_problem,
    metric_problem,
)
from tpu_serving.platform import lws
from tpu_serving.platform.buckets import BucketSpec
from tpu_serving.platform.cluster import CpuPoolArgs, TpuClusterArgs
from tpu_serving.platform.maintenance import (
    MaintenanceExclusion,
    MaintenanceSettings,
    instant_problem,
    recurrence_problem,
)
from tpu_serving.tenancy.identity import WorkloadIdentityArgs
from tpu_serving.tenancy.tenant import TenancyArgs

BAD_FOR_CHECK: dict[Callable[..., str], Any] = {
    extra_args_problem: ["--tensor-parallel-size=4"],
    gauge_problem: "vllm:request_success_total",
    metric_problem: "vllm:request_success_total",
    machine_type_problem: "n2-standrd-8",
    recurrence_problem: "FREQ=HOURLY",
    instant_problem: "next saturday",
    lws.version_problem: "latest",
    adapter_version_problem: "v9.0.0",
}
"""A value each declared check refuses (a check missing here fails the test that reads it)."""

VLLM_AUTOSCALED = with_change("tpu-serving:serving/autoscaling", {"maxReplicas": 1}, VLLM)

SHARED: list[tuple[type, dict, str, dict[str, Any]]] = [
    # (settings dataclass, a valid stack, its path there, the dataclass's required fields)
    (VllmEngineSettings, with_change("tpu-serving:serving/engine", {}, VLLM), "tpu-serving:serving/engine", {}),
    (AutoscalingSettings, VLLM_AUTOSCALED, "tpu-serving:serving/autoscaling", {"max_replicas": 1}),
    (MaintenanceSettings, with_change("tpu-serving:cluster/maintenance", {}), "tpu-serving:cluster/maintenance", {}),
    (CpuPoolArgs, with_change("tpu-serving:cluster/cpuPool", {}), "tpu-serving:cluster/cpuPool", {}),
]


def bad_values(cls: type) -> Iterator[tuple[str, Any]]:
    """(field, a value its declared bounds, check or choices refuse) for each field of settings dataclass ``cls``."""
    hints = type_hints(cls)
    for f in dataclasses.fields(cls):
        bounds = f.metadata.get("bounds") or {}
        for bound, value in bounds.items():
            if bound in ("ge", "gt"):
                yield f.name, value - 1
            elif bound in ("le", "lt"):
                yield f.name, value + 1
            elif bound == "min_length":
                yield f.name, "" if value == 1 else "x"
            elif bound == "max_length":
                yield f.name, "x" * (value + 1)
            elif bound == "pattern":
                yield f.name, "?"
        if f.metadata.get("check"):
            yield f.name, BAD_FOR_CHECK[f.metadata["check"]]
        choices = [a for a in typing.get_args(hints[f.name]) or (hints[f.name],) if isinstance(a, type)]
        if any(issubclass(a, enum.Enum) for a in choices):
            yield f.name, "no-such-choice"


CASES = [
    pytest.param(cls, stack, path, required, field, value, id=f"{cls.__name__}.{field}={value!r}")
    for cls, stack, path, required in SHARED
    for field, value in bad_values(cls)
]


def stack_problems(cfg: dict) -> list[str]:
    with pytest.raises(ConfigError) as err:
        load(cfg)
    return err.value.problems


@pytest.mark.parametrize(("cls", "stack", "path", "required", "field", "value"), CASES)
def test_parity_a_shared_settings_bad_value_is_refused_by_both(cls, stack, path, required, field, value):
    key = path.replace("/", ".")
    refused = stack_problems(with_change(f"{path}/{to_camel(field)}", value, stack))
    assert any(p.startswith(f"{key}.{to_camel(field)}") for p in refused), refused
    python = argument_problems(cls(**{**required, field: value}))
    assert any(p.startswith(f"{cls.__name__}.{field}") for p in python), python


def test_parity_every_shared_settings_class_has_cases():
    assert {c.values[0] for c in CASES} == {cls for cls, *_ in SHARED}
    assert len(CASES) >= 20


# --------------------------------------------------------------------------- rules across fields


def test_parity_rules_across_fields_hold_for_both():
    late = {"windowStart": "2026-01-03T08:00:00Z", "windowEnd": "2026-01-03T02:00:00Z"}
    assert any("windowEnd" in p for p in stack_problems(with_change("tpu-serving:cluster/maintenance", late)))
    python = argument_problems(MaintenanceSettings(window_start=late["windowStart"], window_end=late["windowEnd"]))
    assert any(p.startswith("MaintenanceSettings.window_end") for p in python), python
    twice = [{"name": "a", "startTime": "2026-12-01T00:00:00Z", "endTime": "2026-12-02T00:00:00Z"}] * 2
    assert stack_problems(with_change("tpu-serving:cluster/maintenance", {"exclusions": twice}))
    exclusion = MaintenanceExclusion(name="a", start_time="2026-12-01T00:00:00Z", end_time="2026-12-02T00:00:00Z")
    assert argument_problems(MaintenanceSettings(exclusions=(exclusion, exclusion)))
    bad_start = [{"name": "a", "startTime": "soon"}]
    assert stack_problems(with_change("tpu-serving:cluster/maintenance", {"exclusions": bad_start}))
    assert argument_problems(MaintenanceSettings(exclusions=(MaintenanceExclusion(name="a", start_time="soon"),)))
    assert stack_problems(with_change("tpu-serving:serving/autoscaling", {"maxReplicas": 1, "minReplicas": 2}, VLLM))
    assert argument_problems(AutoscalingSettings(max_replicas=1, min_replicas=2))


# --------------------------------------------------------------------------- settings a stack model mirrors


def valid(cls: type, **values: Any) -> Callable[..., Any]:
    """``cls``'s arguments: ``values`` (valid ones) with the caller's changes."""
    return lambda **changes: cls(**{**values, **changes})


V5E16 = catalog.resolve_slice_name("v5litepod-16")
vllm_args = valid(
    VllmServingArgs,
    namespace="vllm",
    service_account="vllm",
    shape=V5E16,
    model="llama-3.3-70b-instruct",
    served_model_name="meta-llama/Llama-3.3-70B-Instruct",
    weights_bucket="weights",
)
identity_args = valid(
    WorkloadIdentityArgs,
    project="my-project-1",
    namespace="ns",
    kubernetes_service_account="ksa",
    gcp_service_account_id="ns-workloads",
)
autoscaler_args = valid(
    ServingAutoscalerArgs,
    project="my-project-1",
    namespace="ns",
    target="vllm",
    settings=AutoscalingSettings(max_replicas=1),
    metric="vllm:num_requests_waiting",
)
cluster_args = valid(TpuClusterArgs, project="my-project-1", region="us-east5", zone="us-east5-b", name="c")

buckets_args = valid(
    BucketsArgs,
    project="my-project-1",
    buckets=[BucketSpec(purpose="scratch", name="my-project-1-scratch", location="US-EAST5")],
)
gateway_args = valid(
    ServingGatewayArgs,
    project="my-project-1",
    region="us-east5",
    network="default",
    namespace="ns",
    name="gw",
    service="vllm-api",
    port=8000,
    health_path="/health",
)
observability_args = valid(ObservabilityArgs, project="my-project-1", cluster="c", namespace="ns")
tenancy_args = valid(TenancyArgs, namespace="ns", tpu_chips=16)
services_args = valid(ProjectServicesArgs, project="my-project-1", apis=["container.googleapis.com"])

WORKLOAD_IDENTITY = "tpu-serving:workloadIdentity"
RESERVED = ("kube-system", "kube-public", "kube-node-lease", "gke-managed-system", "gmp-system", "gmp-public")
"""Namespaces a workload must not use (tpu_serving.common.naming.RESERVED_NAMESPACES and its prefixes)."""
MIRRORED: dict[Callable[..., Any], dict[str, tuple[str, Any, ...]]] = {
    # Python arguments -> their field -> (the stack key that sets it, values both must refuse...)
    identity_args: {
        "namespace": (f"{WORKLOAD_IDENTITY}/namespace", "Serving_NS", *RESERVED),
        "kubernetes_service_account": (f"{WORKLOAD_IDENTITY}/kubernetesServiceAccount", "Vllm"),
        "gcp_service_account_id": (f"{WORKLOAD_IDENTITY}/gcpServiceAccount", "wl", "Bad_Account"),
        "project": ("gcp:project", "My_Project"),
    },
    vllm_args: {
        "namespace": (f"{WORKLOAD_IDENTITY}/namespace", "Serving_NS", "kube-system"),
        "service_account": (f"{WORKLOAD_IDENTITY}/kubernetesServiceAccount", "Vllm"),
        "name": ("tpu-serving:serving/name", "Vllm_Set"),
        "service_name": ("tpu-serving:serving/serviceName", "Vllm_Api"),
        "served_model_name": ("tpu-serving:serving/servedModelName", "", "m" * 257),
        "replicas": ("tpu-serving:serving/replicas", 0, 65),
        "lws_version": ("tpu-serving:serving/lwsVersion", "latest"),
        "model": ("tpu-serving:serving/model", "/abs/path"),
    },
    autoscaler_args: {
        "project": ("gcp:project", "My_Project"),
        "namespace": (f"{WORKLOAD_IDENTITY}/namespace", *RESERVED),
    },
    cluster_args: {
        "project": ("gcp:project", "My_Project"),
        "region": ("gcp:region", "us-westt4", "uswest4"),
        "labels": ("tpu-serving:labels", {"Team": "ml"}, {"team": "ML"}, {"9team": "ml"}),
    },
    # Every other component that takes the project: the stack's gcp:project reaches each of them.
    **{args: {"project": ("gcp:project", "My_Project")} for args in (buckets_args, services_args)},
    # Issue 22 (new-user review): the serving namespace is none Kubernetes or GKE reserves, wherever it is taken;
    # node pool labels follow GCP's label rules; operators are emails; regions follow GCP's region names.
    cpu_pool_args: {
        "project": ("gcp:project", "My_Project"),
        "labels": ("tpu-serving:labels", {"Team": "ml"}),
        "region": ("gcp:region", "us-westt4"),
    },
    tpu_pool_args: {
        "project": ("gcp:project", "My_Project"),
        "labels": ("tpu-serving:labels", {"Team": "ml"}, {"team": "ML"}),
        "region": ("gcp:region", "us-westt4"),
    },
    gateway_args: {
        "project": ("gcp:project", "My_Project"),
        "namespace": (f"{WORKLOAD_IDENTITY}/namespace", "kube-system"),
        "region": ("gcp:region", "us-westt4"),
    },
    observability_args: {
        "project": ("gcp:project", "My_Project"),
        "namespace": (f"{WORKLOAD_IDENTITY}/namespace", "kube-system"),
    },
    tenancy_args: {
        "namespace": (f"{WORKLOAD_IDENTITY}/namespace", *RESERVED),
    },
}
MIRRORED_CASES = [
    pytest.param(path, value, args, field, id=f"{type(args()).__name__}.{field}={value!r:.20}")
    for args, fields in MIRRORED.items()
    for field, (path, *values) in fields.items()
    for value in values
]


@pytest.mark.parametrize(("path", "value", "args", "field"), MIRRORED_CASES)
def test_parity_a_mirrored_settings_bad_value_is_refused_by_both(path, value, args, field):
    key = path.replace("/", ".")
    refused = stack_problems(with_change(path, value, copy.deepcopy(VLLM)))
    assert any(p.startswith(key) for p in refused), refused
    python = argument_problems(args(**{field: value}))
    name = type(args()).__name__
    assert any(p.startswith(f"{name}.{field}") for p in python), python


@pytest.mark.parametrize(
    ("key", "field", "value"),
    [
        ("users", "operator_users", ["alice"]),
        ("users", "operator_users", ["alice@example.com", "bob@"]),
        ("groups", "operator_groups", ["ml-platform-oncall"]),
    ],
)
def test_parity_operators_are_email_addresses_for_both(key, field, value):
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


# --------------------------------------------------------------------------- the HBM fit (issue 38, point 1)


SHAPE = {"attention": {"layers": 80, "kvHeads": 8, "headDim": 128}}
"""A declared size's attention shape (a Llama 3 70B's)."""

FIT_REFUSALS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    # id: (the stack's one tpuSlices entry, its serving keys changed)
    "405B-bf16-on-v6e-16": ({"slice": "v6e-16"}, {"servedModelName": "meta-llama/Llama-3.1-405B-Instruct"}),
    "70B-bf16-on-v5e-2x4-vm": ({"machineType": "ct5lp-hightpu-8t", "topology": "2x4"}, {}),
    "70B-bf16-on-v5e-8": ({"slice": "v5litepod-8"}, {}),
    "70B-float32-on-v6e-8": ({"slice": "v6e-8"}, {"engine": {"dtype": "float32"}}),
    "405B-fp8-at-load-on-v5e-16": (
        {"slice": "v5litepod-16"},
        {"servedModelName": "meta-llama/Llama-3.1-405B-Instruct", "engine": {"quantization": "fp8"}},
    ),
    "declared-200B-on-v5e-16": (
        {"slice": "v5litepod-16"},
        {"servedModelName": "acme/house-model", "modelSize": {"parametersBillions": 200, "precision": "bf16", **SHAPE}},
    ),
    "declared-70B-int8-at-half-hbm-on-v5e-4": (
        {"slice": "v5litepod-4"},
        {
            "servedModelName": "acme/house-model",
            "modelSize": {"parametersBillions": 70, "precision": "int8", **SHAPE},
            "engine": {"memoryUtilization": 0.5},
        },
    ),
    "235B-bf16-kv-cache-on-v6e-16": (
        {"slice": "v6e-16"},
        {"servedModelName": "Qwen/Qwen3-235B-A22B", "engine": {"maxModelLen": 32768, "tensorParallelSize": 16}},
    ),
}
"""Stacks whose model the slice's HBM does not hold (the issue's 405B in bf16 on a v6e-16, a model too big for a
v5e 2x4 VM), each with the vLLM fixture's other settings."""


def fit_stack(tpu_slice: dict[str, Any], serving: dict[str, Any]) -> dict:
    cfg = copy.deepcopy(VLLM)
    pool = cfg["tpu-serving:tpuSlices"][0]
    del pool["slice"]
    pool |= tpu_slice
    cfg["tpu-serving:serving"] |= serving
    return cfg


def fit_args(tpu_slice: dict[str, Any], serving: dict[str, Any]) -> VllmServingArgs:
    """The same model, slice and engine as the component's arguments."""
    shape = (
        catalog.resolve_slice_name(tpu_slice["slice"])
        if "slice" in tpu_slice
        else catalog.slice_shape(tpu_slice["machineType"], tpu_slice["topology"])
    )
    size = serving.get("modelSize")
    return vllm_args(
        shape=shape,
        served_model_name=serving.get("servedModelName", VLLM["tpu-serving:serving"]["servedModelName"]),
        engine=VllmEngineSettings(**{to_snake(k): v for k, v in serving.get("engine", {}).items()}),
        model_size=None if size is None else ModelSize(size["parametersBillions"], size["precision"], _shape(size)),
    )


def _shape(size: dict[str, Any]) -> Attention | None:
    """A declared size's ``attention``, as the component's argument takes it."""
    a = size.get("attention")
    return None if a is None else Attention(layers=a["layers"], kv_heads=a["kvHeads"], head_dim=a["headDim"])


def in_python(problem: str, args: str = "VllmServingArgs") -> str:
    """A stack file's problem as the component's arguments spell it: its fields from ``args``, in snake case
    (``serving.modelSize`` is the argument ``model_size``)."""
    text = problem.replace("(serving.modelSize)", "(model_size)").replace("tpu-serving:serving.", f"{args}.")
    return re.sub(r"\b[a-z]+(?:[A-Z][a-z]+)+\b", lambda m: to_snake(m.group()), text)


@pytest.mark.parametrize(("tpu_slice", "serving"), FIT_REFUSALS.values(), ids=FIT_REFUSALS.keys())
def test_parity_hbm_fit_refusal_is_the_same_for_both(tpu_slice, serving):
    (refused,) = [p for p in stack_problems(fit_stack(tpu_slice, serving)) if "GiB of HBM" in p]
    assert argument_problems(fit_args(tpu_slice, serving)) == [in_python(refused)]


def test_parity_hbm_fit_of_the_issue_names_the_fitting_slice_for_both():
    """Issue 38: Llama-3.1-405B in bf16 on a v6e-16 passed the library's checks; now its arguments are refused
    with the stack file's figures (754 GiB needed, 461 GiB usable, v6e-32 the smallest slice that holds it)."""
    (problem,) = argument_problems(fit_args(*FIT_REFUSALS["405B-bf16-on-v6e-16"]))
    assert problem == (
        "VllmServingArgs.served_model_name: 405B parameters in bf16 need about 754 GiB of HBM, and one request of "
        "engine.max_model_len 8192 tokens 7.9 GiB of KV cache: 762.2 GiB, more than the 460.8 GiB the engine may use "
        "on one 4x4 slice (512 GiB x engine.memory_utilization 0.9); use a larger slice (the "
        "smallest ct6e-standard-4t slice that holds them is v6e-32, topology 4x8: 1024 GiB), quantize "
        "(engine.quantization) or, for a smaller checkpoint, declare its size (model_size)"
    )


def test_parity_unknown_model_size_is_required_by_both():
    """An unknown served name and no size: both refuse, each naming its own key and showing a value for it."""
    serving = {"servedModelName": "acme/house-model"}
    (refused,) = [p for p in stack_problems(fit_stack({"slice": "v5litepod-16"}, serving)) if "modelSize" in p]
    (python,) = argument_problems(fit_args({"slice": "v5litepod-16"}, serving))
    assert refused.startswith('tpu-serving:serving.modelSize: required for the HBM fit check, since servedModelName "')
    assert python.startswith('VllmServingArgs.model_size: required for the HBM fit check, since served_model_name "')
    assert (
        "`model_size=ModelSize(13, WeightPrecision.BF16, Attention(layers=40, kv_heads=40, head_dim=128))` "
        "(precision: fp32, bf16, fp16, fp8, int8, int4)" in python
    )
    assert refused.split("; known: ")[1] == python.split("; known: ")[1]
    fits = dict(serving, modelSize={"parametersBillions": 13, "precision": "bf16", **SHAPE})
    assert argument_problems(fit_args({"slice": "v5litepod-16"}, fits)) == []


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
def test_parity_jetstream_hbm_fit_refusal_is_the_same_for_both(tpu_slice, serving):
    (refused,) = [p for p in stack_problems(jetstream_fit_stack(tpu_slice, serving)) if "GiB of HBM" in p]
    python = in_python(refused, "PathwaysServingArgs").replace(
        "PathwaysServingArgs.model:", "PathwaysServingArgs.model_size:"
    )
    assert argument_problems(jetstream_fit_args(tpu_slice, serving)) == [python]


def test_parity_jetstream_unknown_model_size_is_required_by_both():
    serving = {"maxtext": {"modelName": "acme-13b"}}
    (refused,) = [p for p in stack_problems(jetstream_fit_stack({"slice": "v6e-16"}, serving)) if "required" in p]
    (python,) = argument_problems(jetstream_fit_args({"slice": "v6e-16"}, serving))
    assert refused.startswith('tpu-serving:serving.model: required for the HBM fit check, since maxtext.modelName "')
    assert python.startswith(
        'PathwaysServingArgs.model_size: required for the HBM fit check, since maxtext.model_name "acme-13b"'
    )
    assert refused.split("; known: ")[1] == python.split("; known: ")[1]
