"""tpu_serving.common.settings: settings declared once, as dataclasses, for the stack file's models and the
components' arguments alike."""

from __future__ import annotations

import copy
import dataclasses
import enum
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic.alias_generators import to_camel

from tests.fixtures.configs import VLLM, stack_problems, with_change
from tests.fixtures.configs import stack_problems as problems
from tests.fixtures.pools import cpu_pool_args
from tests.fixtures.pools import pool_args as tpu_pool_args
from tpu_serving import (
    BucketsArgs,
    ObservabilityArgs,
    ProjectServicesArgs,
    ServingGatewayArgs,
    catalog,
)
from tpu_serving.backends.vllm import VllmEngineSettings, VllmServingArgs
from tpu_serving.backends.vllm.args import extra_args_problem
from tpu_serving.catalog.machines import machine_type_problem
from tpu_serving.common.settings import described, proxy_only_subnet_problem
from tpu_serving.common.validation import argument_problems, type_hints
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


@dataclass(frozen=True)
class _Item:
    size: int = described("Size.", default=1, ge=1)


@dataclass(frozen=True)
class _Holder:
    items: tuple[_Item, ...] = described("Items.", default=())


def test_settings_tuple_items_become_their_dataclass():
    """settings.to_settings (mutmut_17): a tuple of settings dataclasses comes back as those dataclasses, not as the
    stack file's models."""
    from tpu_serving.common.settings import settings_model, to_settings

    model = settings_model(_Holder, "HolderConfig").model_validate({"items": [{"size": 2}, {}]})
    assert to_settings(model, _Holder) == _Holder(items=(_Item(2), _Item(1)))


# Components refuse what the stack file refuses (issue "A platform team adopts it", item 9): each rule a stack
# file's setting enforces, the same bad value given to the component's Python arguments is refused too, named by its
# Python field. The settings the stack file shares with a component are read from the component's dataclass, every
# bound and check of each; the settings a hand-written stack model mirrors are listed (MIRRORED, below).


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


@pytest.mark.parametrize(("cls", "stack", "path", "required", "field", "value"), CASES)
def test_settings_a_shared_settings_bad_value_is_refused_by_both(cls, stack, path, required, field, value):
    key = path.replace("/", ".")
    refused = stack_problems(with_change(f"{path}/{to_camel(field)}", value, stack))
    assert any(p.startswith(f"{key}.{to_camel(field)}") for p in refused), refused
    python = argument_problems(cls(**{**required, field: value}))
    assert any(p.startswith(f"{cls.__name__}.{field}") for p in python), python


def test_settings_every_shared_settings_class_has_cases():
    assert {c.values[0] for c in CASES} == {cls for cls, *_ in SHARED}
    assert len(CASES) >= 20


def test_settings_rules_across_fields_hold_for_both():
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


# Settings a hand-written stack model mirrors.


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
def test_settings_a_mirrored_settings_bad_value_is_refused_by_both(path, value, args, field):
    key = path.replace("/", ".")
    refused = stack_problems(with_change(path, value, copy.deepcopy(VLLM)))
    assert any(p.startswith(key) for p in refused), refused
    python = argument_problems(args(**{field: value}))
    name = type(args()).__name__
    assert any(p.startswith(f"{name}.{field}") for p in python), python


def test_settings_proxy_only_subnet_needs_64_addresses():
    assert proxy_only_subnet_problem("192.168.0.0/26") == ""
    assert "/27 has 32" in proxy_only_subnet_problem("192.168.0.0/27")
    assert "not a CIDR block" in proxy_only_subnet_problem("192.168.0.1/23")
    found = problems(with_change("tpu-serving:gateway", {"proxyOnlyCidr": "192.168.0.0/28"}))
    assert found == [
        'tpu-serving:gateway.proxyOnlyCidr = "192.168.0.0/28": a proxy-only subnet needs at least 64 addresses (a /26 '
        "or larger; /23 recommended), /28 has 16"
    ]
