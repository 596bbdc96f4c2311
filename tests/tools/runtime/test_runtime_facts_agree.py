"""The runtime model keeps its own facts (tools/runtime: machine_facts, engine_facts), never imported from the
library. These tests hold the two apart: they agree entry by entry, and a library constant changed alone
makes ``make check`` fail."""

from __future__ import annotations

import dataclasses

import pytest

from tests.conftest import ROOT
from tpu_serving import catalog
from tpu_serving.backends.jetstream import facts as jetstream_facts
from tpu_serving.backends.jetstream import settings as jetstream_settings
from tpu_serving.backends.pathways_job import facts as pathways_job_facts
from tpu_serving.backends.saxml import facts as saxml_facts
from tpu_serving.backends.vllm import settings as vllm_settings
from tpu_serving.catalog import machines
from tpu_serving.operations import observability
from tpu_serving.traffic import epp as library_epp
from tpu_serving.traffic import gateway as library_gateway
from tpu_serving.traffic import gateway_settings as library_gateway_settings
from tpu_serving_tools.check import run_checks
from tpu_serving_tools.preview.offline import preview_stack
from tpu_serving_tools.runtime import engine_facts as ef
from tpu_serving_tools.runtime import machine_facts as mf
from tpu_serving_tools.runtime.planview import PlanView


@pytest.mark.parametrize("name", sorted(mf.TPU_MACHINES))
def test_facts_agree_tpu_machines(name):
    fact, lib, mt = mf.TPU_MACHINES[name], machines.machine(name), catalog.MACHINE_TYPES[name]
    assert lib is not None
    assert (fact.vcpus, fact.memory_gib) == (lib.vcpus, lib.memory_gib)
    assert (fact.chips, fact.accelerator) == (mt.chips_per_vm, mt.generation.gke_accelerator)
    assert fact.single_host_topology in mt.topologies


def test_facts_agree_general_machines_and_allocatable():
    names = [f"{family}-{n}" for family, (_, sizes) in mf.GENERAL_FAMILIES.items() for n in sizes]
    names += sorted(mf.TPU_MACHINES)
    for name in names:
        lib = machines.machine(name)
        assert lib is not None, name
        cpu, memory = mf.allocatable(name) or (0.0, 0.0)
        assert cpu == pytest.approx(lib.allocatable_cpu) and memory == pytest.approx(lib.allocatable_memory), name
    assert (mf.SYSTEM_CPU, mf.SYSTEM_MEMORY_BYTES) == (machines.SYSTEM_CPU, machines.SYSTEM_MEMORY_BYTES)
    # what the library knows beyond the model's table is a machine type the model cannot place pods on
    assert mf.shape("n2-standard-3") is None and mf.allocatable("x1-made-up-8") is None


def test_facts_agree_engine_ports_roles_and_gke_constants():
    assert (ef.SAX_ADMIN, ef.SAX_MODEL, ef.SAX_HTTP) == (
        saxml_facts.ADMIN,
        saxml_facts.MODEL_JOB,
        saxml_facts.HTTP,
    )
    assert (ef.SAX_ADMIN_PORT, ef.SAX_MODEL_PORT) == (saxml_facts.ADMIN_PORT, saxml_facts.MODEL_PORT)
    assert ef.PATHWAYS_WORKER_PORT == jetstream_facts.WORKER_PORT
    assert ef.PATHWAYS_PROXY_PORT == pathways_job_facts.PROXY_PORT
    assert ef.GMP_COLLECTOR_NAMESPACE == observability.GMP_COLLECTOR_NAMESPACE
    assert dict(ef.GMP_COLLECTOR_LABELS) == dict(observability.GMP_COLLECTOR_LABELS)
    assert ef.GATEWAY_CLASS_REGIONAL_INTERNAL == library_gateway_settings.GATEWAY_CLASS
    assert ef.PROXY_ONLY_PURPOSE == library_gateway_settings.PROXY_ONLY_PURPOSE
    assert tuple(ef.HEALTH_CHECK_RANGES) == tuple(library_gateway_settings.HEALTH_CHECK_RANGES)
    assert ef.SERVING_SERVICE["vllm"] == vllm_settings.VllmServingConfig.model_fields["service_name"].default
    assert ef.SERVING_SERVICE["jetstream-pathways"] == (
        jetstream_settings.PathwaysServingConfig.model_fields["service_name"].default
    )
    assert ef.SERVING_SERVICE["saxml"] == saxml_facts.HTTP_SERVICE


def test_facts_agree_endpoint_picker_ports():
    """The library's picker ports are the release's defaults, as the model knows them (llm-d-router v0.10.0
    options.go), and the health port is the one GKE checks (the llm-d-router-gateway chart's gke.yaml)."""
    listens = {what: default for what, (_, default) in ef.EPP_PORTS.items()}
    assert listens == {
        "ext-proc": library_epp.EPP_GRPC_PORT,
        "health": library_epp.EPP_HEALTH_PORT,
        "metrics": library_epp.EPP_METRICS_PORT,
    }
    assert ef.GKE_EPP_HEALTH_CHECK_PORT == library_epp.EPP_HEALTH_PORT
    assert ef.EPP_PORTS["health"][0] == "--grpc-health-port" and ef.EPP_POOL_FLAG == "--pool-name"


def test_facts_a_library_picker_port_changed_alone_fails_make_check(monkeypatch):
    # the pool, its Service, the container port and the policy all follow; the picker still listens on 9002
    monkeypatch.setattr(library_gateway, "EPP_GRPC_PORT", 9102)  # the InferencePool's picker port
    monkeypatch.setattr(library_epp, "EPP_GRPC_PORT", 9102)  # the picker's container, Service and policy
    assert _failures("vllm-llama33-70b-v5e16") == [
        "[ports] ports picker vllm-llama70b/vllm-api-gateway ext-proc 9102: epp listens for ext-proc on 9002 "
        "(default, no --grpc-port); the pool's calls land on 9102"
    ]
    # the picker is told its health port, but GKE still health-checks 9003, which the policy no longer admits
    monkeypatch.setattr(library_gateway, "EPP_GRPC_PORT", 9002)
    monkeypatch.setattr(library_epp, "EPP_GRPC_PORT", 9002)
    monkeypatch.setattr(library_epp, "EPP_HEALTH_PORT", 9103)
    failures = _failures("vllm-llama33-70b-v5e16")
    assert (
        "[ports] ports picker vllm-llama70b/vllm-api-gateway health check 9003: epp serves gRPC health on 9103 "
        "(--grpc-health-port); GKE health-checks 9003 (GKE's default: no HealthCheckPolicy on Service "
        "vllm-api-gateway-epp)"
    ) in failures
    assert any(
        f.startswith(
            "[network] flow load balancer health checks 35.191.0.0/16 -> vllm-llama70b/vllm-api-gateway-epp:9003"
        )
        for f in failures
    )


def _failures(stack: str) -> list[str]:
    plan = preview_stack(ROOT, stack).as_json()
    return [f"[{r.category}] {f.subject}: {f.reason}" for r in run_checks(PlanView(plan)) for f in r.failures()]


def test_facts_a_library_accelerator_label_changed_alone_fails_make_check(monkeypatch):
    for name, mt in list(catalog.MACHINE_TYPES.items()):
        if mt.generation.gke_accelerator == "tpu-v6e-slice":
            wrong = dataclasses.replace(mt.generation, gke_accelerator="tpu-v6e-podslice")
            monkeypatch.setitem(catalog.MACHINE_TYPES, name, dataclasses.replace(mt, generation=wrong))
    catalog._canonical_shapes.cache_clear()  # the slice names resolve through the patched catalog
    try:
        failures = _failures("vllm-llama31-405b-v6e16")
    finally:
        monkeypatch.undo()
        catalog._canonical_shapes.cache_clear()
    # pods that no pool takes; the groups they belong to cannot come up for a rollout either
    # and the pool no pod can land on (coverage)
    assert failures and all(
        f.startswith(("[scheduling] pod ", "[rollout] ", "[coverage] coverage tpu pool ")) for f in failures
    )
    assert "no node pool has labels {" in failures[0]
    assert "'cloud.google.com/gke-tpu-accelerator': 'tpu-v6e-podslice'" in failures[0]


def test_facts_library_collector_labels_changed_alone_fail_make_check(monkeypatch):
    from tpu_serving.tenancy import tenant as tenancy

    monkeypatch.setattr(tenancy, "GMP_COLLECTOR_LABELS", {"app": "prometheus-collector"})
    failures = _failures("vllm-llama33-70b-v5e16")
    assert failures and all(f.startswith("[network] flow gmp-system/collector -> ") for f in failures)


def test_facts_library_health_check_ranges_changed_alone_fail_make_check(monkeypatch):
    from tpu_serving import phases

    monkeypatch.setattr(phases, "HEALTH_CHECK_RANGES", ("35.191.0.0/16",))
    monkeypatch.setattr(library_epp, "HEALTH_CHECK_RANGES", ("35.191.0.0/16",))
    failures = _failures("vllm-llama33-70b-v5e16")
    assert failures and all("load balancer health checks 130.211.0.0/22" in f for f in failures)


def test_facts_each_backend_holds_its_runtime_facts_which_the_library_never_reads():
    """A backend is one folder, its runtime facts included, but they stay the model's: no library module
    reads them, and the model reads them as files (it imports nothing from the library)."""
    from tpu_serving_tools.runtime import backend_facts as bf

    backends = ROOT / "components" / "backends"
    assert {p.parent.name for p in backends.glob(f"*/{bf.FACTS_FILE}")} == {
        "jetstream",
        "pathways_job",
        "saxml",
        "vllm",
    }
    readers = [p for p in (ROOT / "components").rglob("*.py") if bf.FACTS_FILE in p.read_text()]
    assert readers == []
    assert set(bf.BACKENDS) == {"jetstream-pathways", "pathways-job", "saxml", "vllm"}
    assert len(bf.FACT_FLOWS) == 6 and all(f.source for f in bf.FACT_FLOWS)


def test_facts_runtime_facts_refuse_an_unsourced_entry_or_a_missing_file(tmp_path):
    import json
    import shutil

    from tpu_serving_tools.runtime import backend_facts as bf

    copy = tmp_path / "backends"
    shutil.copytree(ROOT / "components" / "backends", copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert set(bf.load(copy)) == set(bf.BACKENDS)
    saxml = copy / "saxml" / bf.FACTS_FILE
    doc = json.loads(saxml.read_text())
    doc["ports"]["admin"]["source"] = " "
    saxml.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="ports.admin: needs a value and its source"):
        bf.load(copy)
    doc["ports"]["admin"]["source"] = "x"
    doc["flows"][0]["to"] = "nobody"
    saxml.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"flows\[0\]: `from` and `to` must be roles"):
        bf.load(copy)
    saxml.unlink()
    with pytest.raises(RuntimeError, match=f"saxml has no {bf.FACTS_FILE}"):
        bf.load(copy)
