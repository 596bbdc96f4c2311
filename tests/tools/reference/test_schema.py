"""Strict schema validation of every object in every stack's manifests."""

import copy

import pytest

from tests.conftest import ALL_STACKS, plan_of
from tpu_serving_tools.preview.offline import kubernetes_objects
from tpu_serving_tools.reference import schema


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_schema_every_stack_object_is_valid(stack, reference):
    plan = plan_of(stack)
    objects = kubernetes_objects(plan)
    assert objects, f"{stack} declares no Kubernetes object"
    releases = plan.outputs.get("controllers") or {}
    assert schema.validate_all(objects, releases) == []


def test_schema_builtin_rejects_unknown_field():
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a", "lables": {}}}
    with pytest.raises(schema.SchemaError, match="lables"):
        schema.validate_builtin(ns)


def test_schema_builtin_rejects_wrong_type():
    sa = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "a"},
        "automountServiceAccountToken": "yes",
    }
    with pytest.raises(schema.SchemaError):
        schema.validate_builtin(sa)


def test_schema_validate_builtin_reads_each_schema_file_once_and_still_refuses():
    """The schema files are parsed once per process; a later object of the same kind is still checked."""
    good = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}}
    schema.validate_builtin(good)
    from kubernetes_validate import utils

    parsed = utils.schema_contents.cache_info().misses
    bad = copy.deepcopy(good) | {"dta": {}}
    with pytest.raises(schema.SchemaError, match="dta"):
        schema.validate_builtin(bad)
    schema.validate_builtin(good)
    assert utils.schema_contents.cache_info().misses == parsed


def test_schema_closed_rejects_unknown_fields_but_keeps_preserved_ones():
    s = schema.closed(
        {
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b": {"type": "string"}}},
                "free": {"type": "object", "properties": {"x": {}}, "x-kubernetes-preserve-unknown-fields": True},
                "port": {"x-kubernetes-int-or-string": True},
            },
        }
    )
    assert s["additionalProperties"] is False
    assert s["properties"]["a"]["additionalProperties"] is False
    assert "additionalProperties" not in s["properties"]["free"]
    assert s["properties"]["port"]["anyOf"] == [{"type": "integer"}, {"type": "string"}]


def test_schema_closed_leaves_value_validation_branches_open(reference):
    """A oneOf branch that names fewer fields than the object is a value validation, not a field list: closing it
    refused a Gateway address ``{type: NamedAddress, value: <name>}`` that the API server takes (Gateway API v1.3.0
    CRD ``spec.addresses[]``: the second branch names only ``type``)."""
    gateway = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "g", "namespace": "n"},
        "spec": {
            "gatewayClassName": "gke-l7-rilb",
            "addresses": [{"type": "NamedAddress", "value": "my-vip"}],
            "listeners": [{"name": "http", "protocol": "HTTP", "port": 80}],
        },
    }
    assert schema.validate_all([gateway], {}) == []
    unknown = copy.deepcopy(gateway)
    unknown["spec"]["addresses"][0]["port"] = 80  # still closed outside the branches
    assert schema.validate_all([unknown], {})


@pytest.mark.parametrize("release", ["v0.4.0", "v0.10.0"])
def test_schema_crd_rejects_unknown_field_in_pod_template(release, reference):
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "x"},
        "spec": {
            "leaderWorkerTemplate": {
                "size": 2,
                "workerTemplate": {"spec": {"containers": [{"name": "c", "image": "i"}]}},
            }
        },
    }
    schema.validate_custom(lws, release)
    bad = copy.deepcopy(lws)
    bad["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    with pytest.raises(schema.SchemaError, match="imagePullPolicyy"):
        schema.validate_custom(bad, release)


def test_schema_unknown_release_is_an_error(reference):
    with pytest.raises(schema.SchemaError, match="have"):
        schema.crd_schema("jobset.x-k8s.io", "v9.9.9", "v1alpha2")
