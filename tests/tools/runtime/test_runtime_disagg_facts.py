"""The runtime model's own disaggregation facts (tools/runtime: network_kv from the vLLM backend's
runtime_facts.json, ds_facts) agree with the library's (components/backends/vllm/kv.py and facts.py) entry by entry;
the model imports nothing of the library, so each side can only drift alone, and this test catches it."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT
from tpu_serving.backends.vllm import facts as vllm_facts
from tpu_serving.backends.vllm import kv
from tpu_serving_tools.runtime import ds_facts, network_kv


def test_disagg_facts_agree_kv_connector_ports_and_roles():
    facts = network_kv.FACTS
    assert facts.transfer == (kv.KV_TRANSFER_PORT_ENV, kv.KV_TRANSFER_PORT)
    assert facts.side_channel == (kv.SIDE_CHANNEL_PORT_ENV, kv.SIDE_CHANNEL_PORT)
    assert facts.ephemeral == tuple(kv.BULK_PORTS)
    assert facts.connectors[kv.CONNECTOR] == kv.CONNECTOR_MODULE
    assert kv.KvRole.PREFILL.kv_role in facts.producer_roles
    assert kv.KvRole.DECODE.kv_role in facts.consumer_roles
    assert "kv_both" in facts.producer_roles  # the library refuses it for decode: it makes a producer


def test_disagg_facts_agree_controller_labels_kinds_and_router():
    assert (ds_facts.DS_KIND, ds_facts.SCALER_KIND) == (kv.DS_KIND, kv.ROLE_SCALER_KIND)
    assert (ds_facts.DS_NAME_LABEL, ds_facts.DS_ROLE_LABEL) == (kv.DS_NAME_LABEL, kv.DS_ROLE_LABEL)
    assert ds_facts.LLMD_ROLE_LABEL == kv.PD_ROLE_LABEL
    sidecar = dict(ds_facts.SIDECAR_PORTS)
    assert (sidecar["listen"][1], sidecar["model-server"][1]) == (vllm_facts.HTTP_PORT, kv.DECODE_SERVER_PORT)
    assert [a.split("=", 1)[0] for a in kv.sidecar_args("pd/vllm-api-gateway")[:2]] == [
        sidecar["listen"][0],
        sidecar["model-server"][0],
    ]


def test_disagg_facts_each_kv_fact_needs_its_source(tmp_path):
    path = tmp_path / "runtime_facts.json"
    doc = json.loads((ROOT / "components" / "backends" / "vllm" / "runtime_facts.json").read_text())
    assert network_kv.load(ROOT / "components" / "backends" / "vllm" / "runtime_facts.json") == network_kv.FACTS
    doc["kv_transfer"]["side_channel_port"]["source"] = " "
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="kv_transfer.side_channel_port: needs a value and its source"):
        network_kv.load(path)


@pytest.mark.parametrize("role", ["prefill", "decode"])
def test_disagg_facts_the_librarys_name_limit_is_the_longest_the_controllers_can_create(role):
    """The library's DS_NAME_MAX against the model's own name rules (webhook and StatefulSet limits): a name of
    that length runs with two-digit group indexes, one more character does not."""
    from tpu_serving.backends.vllm.disagg_args import ds_name_problem
    from tpu_serving_tools.runtime.pods_ds import Child, child_name, name_problems

    def problems(ds: str) -> list[str]:
        child = Child(ds, "ns", role, 0, child_name(ds, 0, role), {}, True, 100)
        return name_problems(child)

    longest = "d" * kv.DS_NAME_MAX
    assert ds_name_problem(longest) == "" and (role == "decode" or problems(longest) == [])
    assert ds_name_problem(longest + "d") != ""
    if role == "prefill":  # the longer role name sets the limit
        assert problems(longest + "d") != []
