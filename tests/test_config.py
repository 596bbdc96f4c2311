"""Stack config: unit tests and bad-input tests (every problem reported, with key path and choices)."""

from __future__ import annotations

import copy
import json

import pytest
from pydantic import ValidationError

from tpu_serving.config import (
    ConfigError,
    StackConfig,
    TpuSliceConfig,
    bucket_name,
    gcp_service_account_id,
    load_stack_config,
    pool_name,
)

GOOD = {
    "gcp:project": "tpu-serving-demo",
    "gcp:region": "us-east5",
    "tpu-serving:zone": "us-east5-b",
    "tpu-serving:cluster": {"name": "llama405b"},
    "tpu-serving:tpuSlices": [{"name": "v6e16", "slice": "v6e-16"}],
    "tpu-serving:buckets": [{"purpose": "checkpoints", "workloadAccess": "read"}],
    "tpu-serving:workloadIdentity": {"namespace": "llama405b"},
}


def as_engine_config(data: dict) -> dict[str, str]:
    """Config as the engine hands it over: every value a string, objects as JSON text."""
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items()}


def load(data: dict) -> StackConfig:
    return load_stack_config(as_engine_config(data))


def with_change(path: str, value, base: dict = GOOD) -> dict:
    """GOOD with ``path`` (``key/sub/0/field``) set to ``value``; ``...`` deletes it."""
    data = copy.deepcopy(base)
    *parents, last = path.split("/")
    node = data
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    if value is ...:
        del node[int(last) if last.isdigit() else last]
    else:
        node[int(last) if last.isdigit() else last] = value
    return data


def test_config_loads_good_stack():
    cfg = load(GOOD)
    ((pool, shape, _),) = cfg.slices
    assert pool == "v6e16" and shape.vms == 4
    assert pool_name(cfg, pool) == "llama405b-v6e16"
    assert bucket_name(cfg, cfg.buckets[0]) == "tpu-serving-demo-llama405b-checkpoints"
    assert gcp_service_account_id(cfg) == "llama405b-wl"
    assert cfg.cluster.deletion_protection is True
    assert cfg.cluster.release_channel == "REGULAR"


def test_config_models_are_frozen():
    cfg = load(GOOD)
    with pytest.raises(ValidationError):
        cfg.zone = "us-east5-a"


def test_config_every_field_is_described():
    from tpu_serving import config

    undescribed = [
        f"{model.__name__}.{name}"
        for model in vars(config).values()
        if isinstance(model, type) and issubclass(model, config.Model) and model is not config.Model
        for name, field in model.model_fields.items()
        if not field.description
    ]
    assert undescribed == []


def test_config_count_makes_one_pool_per_slice():
    cfg = load(with_change("tpu-serving:tpuSlices/0/count", 2))
    assert [p for p, _, _ in cfg.slices] == ["v6e16-0", "v6e16-1"]


def test_config_machine_type_and_topology_instead_of_slice_name():
    cfg = load(with_change("tpu-serving:tpuSlices/0", {"name": "d", "machineType": "ct6e-standard-8t", "topology": "2x4"}))
    assert cfg.slices[0][1].vms == 1


# ---------------------------------------------------------------------------------- bad input

BAD = [
    # (id, change path, value, expected key path, expected fragments of the message)
    ("misspelt-top-level-key", "tpu-serving:clusterr", {"name": "x"}, "tpu-serving:clusterr", ["unknown key", "tpu-serving:cluster"]),
    ("misspelt-nested-key", "tpu-serving:cluster/releaseChanel", "RAPID", "tpu-serving:cluster.releaseChanel", ["unknown key", "did you mean `releaseChannel`?"]),
    ("invalid-topology", "tpu-serving:tpuSlices/0", {"name": "a", "machineType": "ct6e-standard-4t", "topology": "4x5"}, "tpu-serving:tpuSlices[0].topology", ["'4x5'", "2x4, 4x4, 4x8"]),
    ("malformed-topology", "tpu-serving:tpuSlices/0", {"name": "a", "machineType": "ct6e-standard-4t", "topology": "4by4"}, "tpu-serving:tpuSlices[0].topology", ["AxB"]),
    ("topology-not-on-machine-type", "tpu-serving:tpuSlices/0", {"name": "a", "machineType": "ct6e-standard-8t", "topology": "4x4"}, "tpu-serving:tpuSlices[0].topology", ["not supported by ct6e-standard-8t", "valid: 2x4"]),
    ("unknown-machine-type", "tpu-serving:tpuSlices/0", {"name": "a", "machineType": "ct6e-standard-16t", "topology": "4x4"}, "tpu-serving:tpuSlices[0].machineType", ["ct6e-standard-4t"]),
    ("unknown-slice-name", "tpu-serving:tpuSlices/0/slice", "v6e-12", "tpu-serving:tpuSlices[0].slice", ["v6e-16"]),
    ("slice-and-shape-both", "tpu-serving:tpuSlices/0/topology", "4x4", "tpu-serving:tpuSlices[0]", ["either `slice`"]),
    ("spot-and-reservation", "tpu-serving:tpuSlices/0", {"name": "a", "slice": "v6e-16", "spot": True, "reservation": "r1"}, "tpu-serving:tpuSlices[0]", ["mutually exclusive"]),
    ("zone-outside-region", "tpu-serving:zone", "us-west4-a", "tpu-serving:zone", ["outside the region", "us-east5-b"]),
    ("malformed-zone", "tpu-serving:zone", "useast5b", "tpu-serving:zone", ["GCP zone"]),
    ("bad-project-id", "gcp:project", "My_Project", "gcp:project", ["project ID"]),
    ("missing-region", "gcp:region", ..., "gcp:region", ["required"]),
    ("no-slices", "tpu-serving:tpuSlices", [], "tpu-serving:tpuSlices", ["at least 1"]),
    ("bad-release-channel", "tpu-serving:cluster/releaseChannel", "FAST", "tpu-serving:cluster.releaseChannel", ["'RAPID', 'REGULAR' or 'STABLE'"]),
    ("cluster-name-too-long", "tpu-serving:cluster/name", "a" * 41, "tpu-serving:cluster.name", ["1 to 40"]),
    ("cluster-name-uppercase", "tpu-serving:cluster/name", "Llama", "tpu-serving:cluster.name", ["lower-case"]),
    ("namespace-invalid", "tpu-serving:workloadIdentity/namespace", "llama_405b", "tpu-serving:workloadIdentity.namespace", ["lower-case"]),
    ("service-account-id-too-short", "tpu-serving:workloadIdentity/gcpServiceAccount", "sa", "tpu-serving:workloadIdentity.gcpServiceAccount", ["6 to 30"]),
    ("bucket-purpose", "tpu-serving:buckets/0/purpose", "weights", "tpu-serving:buckets[0].purpose", ["'checkpoints', 'state' or 'scratch'"]),
    ("duplicate-bucket-purpose", "tpu-serving:buckets", [{"purpose": "state"}, {"purpose": "state"}], "tpu-serving:buckets", ["repeated: state"]),
    ("duplicate-pool", "tpu-serving:tpuSlices", [{"name": "a", "slice": "v6e-16"}, {"name": "a", "slice": "v6e-8"}], "tpu-serving:tpuSlices", ["repeated: a"]),
    ("count-zero", "tpu-serving:tpuSlices/0/count", 0, "tpu-serving:tpuSlices[0].count", ["greater than or equal to 1"]),
    ("count-wrong-type", "tpu-serving:tpuSlices/0/count", "two", "tpu-serving:tpuSlices[0].count", ["integer"]),
    ("cpu-pool-min-over-max", "tpu-serving:cluster/cpuPool", {"minNodes": 4, "maxNodes": 2}, "tpu-serving:cluster.cpuPool", ["must not exceed"]),
    ("bad-label", "tpu-serving:labels", {"Team": "ml"}, "tpu-serving:labels", ["Team"]),
    ("derived-pool-name-too-long", "tpu-serving:cluster/name", "a" * 36, "tpu-serving:tpuSlices[0].name", ["node pool name", "1 to 40"]),
    ("derived-service-account-too-long", "tpu-serving:cluster/name", "a" * 30, "tpu-serving:workloadIdentity.gcpServiceAccount", ["6 to 30"]),
    ("derived-bucket-name-too-long", "tpu-serving:cluster/name", "b" * 40, "tpu-serving:buckets[0].name", ["default bucket name", "3 to 63"]),
    ("derived-node-account-too-long", "tpu-serving:cluster/name", "a" * 26, "tpu-serving:tpuSlices[0].name", ["node service account id", "6 to 30"]),
    ("reserved-slice-name", "tpu-serving:tpuSlices/0/name", "cpu", "tpu-serving:tpuSlices[0].name", ["reserved", "head"]),
    ("min-master-version-malformed", "tpu-serving:cluster/minMasterVersion", "1.x", "tpu-serving:cluster.minMasterVersion", ["`latest`", "1.31.1-gke"]),
    ("security-group-not-gke-security-groups", "tpu-serving:cluster/securityGroup", "ops@example.com", "tpu-serving:cluster.securityGroup", ["gke-security-groups@"]),
    ("group-subjects-without-security-group", "tpu-serving:tenancy", {"operators": {"groups": ["oncall@example.com"]}}, "tpu-serving:tenancy.operators.groups", ["grant nothing", "cluster.securityGroup"]),
    ("maintenance-window-not-rfc3339", "tpu-serving:cluster/maintenance", {"windowStart": "2026-01-03 02:00"}, "tpu-serving:cluster.maintenance.windowStart", ["RFC 3339"]),
    ("maintenance-recurrence-not-rrule", "tpu-serving:cluster/maintenance", {"recurrence": "weekends"}, "tpu-serving:cluster.maintenance.recurrence", ["RRULE"]),
    ("no-upgrades-exclusion-without-end", "tpu-serving:cluster/maintenance", {"exclusions": [{"name": "freeze", "startTime": "2026-12-01T00:00:00Z", "scope": "NO_UPGRADES"}]}, "tpu-serving:cluster.maintenance.exclusions[0].endTime", ["NO_UPGRADES"]),
    ("exclusion-ends-before-start", "tpu-serving:cluster/maintenance", {"exclusions": [{"name": "f", "startTime": "2026-12-02T00:00:00Z", "endTime": "2026-12-01T00:00:00Z"}]}, "tpu-serving:cluster.maintenance.exclusions[0].endTime", ["after startTime"]),
    ("exclusion-unknown-scope", "tpu-serving:cluster/maintenance", {"exclusions": [{"name": "f", "startTime": "2026-12-01T00:00:00Z", "scope": "NO_PATCHES"}]}, "tpu-serving:cluster.maintenance.exclusions[0].scope", ["NO_MINOR_OR_NODE_UPGRADES"]),
]


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_config_bad_input_is_reported_with_key_path(case):
    _, path, value, key, fragments = case
    with pytest.raises(ConfigError) as exc:
        load(with_change(path, value))
    problems = exc.value.problems
    matching = [p for p in problems if p.startswith(key)]
    assert matching, f"no problem at {key}: {problems}"
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


def test_config_reports_every_problem_at_once():
    data = with_change("tpu-serving:zone", "us-west4-a")
    data = with_change("tpu-serving:clusterr", {}, data)
    data = with_change("tpu-serving:tpuSlices/0", {"name": "a", "machineType": "ct6e-standard-4t", "topology": "4x5"}, data)
    with pytest.raises(ConfigError) as exc:
        load(data)
    assert len(exc.value.problems) == 3
    assert str(exc.value).startswith("invalid stack configuration: 3 problems")


def test_config_error_is_a_run_error_without_traceback():
    import pulumi

    assert issubclass(ConfigError, pulumi.RunError)


def test_config_single_shape_model_directly():
    with pytest.raises(ValidationError):
        TpuSliceConfig(name="a")


# ---------------------------------------------------------------------------------- serving

SERVING = {
    **GOOD,
    "tpu-serving:buckets": [{"purpose": "checkpoints", "workloadAccess": "read"}, {"purpose": "scratch"}],
    "tpu-serving:serving": {
        "backend": "jetstream-pathways",
        "slices": ["v6e16"],
        "checkpointPath": "llama/int8",
        "maxtext": {
            "configFile": "MaxText/configs/base.yml",
            "modelName": "llama3.1-405b",
            "maxPrefillPredictLength": 1024,
            "maxTargetLength": 2048,
            "perDeviceBatchSize": 1,
            "iciAutoregressiveParallelism": 2,
            "iciTensorParallelism": 8,
            "quantization": "int8",
        },
    },
}


def test_config_serving_loads():
    cfg = load(SERVING)
    assert cfg.serving.lws_version == "v0.10.0"
    assert cfg.serving.probes.max_startup_seconds == 3600


SERVING_BAD = [
    ("disaggregated-one-slice", "tpu-serving:serving/mode", "disaggregated", "tpu-serving:serving.mode", ["exactly 2 slices"]),
    ("unknown-serving-slice", "tpu-serving:serving/slices", ["v6e-16"], "tpu-serving:serving.slices", ["valid: v6e16"]),
    ("parallelism-mismatch", "tpu-serving:serving/maxtext/iciTensorParallelism", 4, "tpu-serving:serving.maxtext", ["16 chips"]),
    ("two-minus-one-parallelisms", "tpu-serving:serving/maxtext", {**SERVING["tpu-serving:serving"]["maxtext"], "iciFsdpParallelism": -1, "iciTensorParallelism": -1}, "tpu-serving:serving.maxtext", ["at most one"]),
    ("lws-too-old", "tpu-serving:serving/lwsVersion", "v0.3.0", "tpu-serving:serving.lwsVersion", ["oldest supported, v0.4.0"]),
    ("lws-not-a-release", "tpu-serving:serving/lwsVersion", "latest", "tpu-serving:serving.lwsVersion", ["vMAJOR.MINOR.PATCH"]),
    ("checkpoint-absolute", "tpu-serving:serving/checkpointPath", "gs://other/ckpt", "tpu-serving:serving.checkpointPath", ["inside the stack's checkpoints bucket"]),
    ("misspelt-maxtext-key", "tpu-serving:serving/maxtext/maxTargetLen", 10, "tpu-serving:serving.maxtext.maxTargetLen", ["unknown key", "maxTargetLength"]),
    ("missing-maxtext-key", "tpu-serving:serving/maxtext/modelName", ..., "tpu-serving:serving.maxtext.modelName", ["required"]),
    ("capability-not-allowed", "tpu-serving:serving/jaxTpu", {"capabilities": ["SYS_ADMIN"]}, "tpu-serving:serving.jaxTpu.capabilities[0]", ["SYS_PTRACE"]),
    ("no-scratch-bucket", "tpu-serving:buckets", [{"purpose": "checkpoints"}], "tpu-serving:buckets", ["`scratch` bucket"]),
    ("unknown-backend", "tpu-serving:serving/backend", "vllm", "tpu-serving:serving.backend", ["jetstream-pathways"]),
    ("prefill-longer-than-target", "tpu-serving:serving/maxtext/maxPrefillPredictLength", 4096, "tpu-serving:serving", ["maxPrefillPredictLength (4096) must not exceed maxtext.maxTargetLength (2048)"]),
    ("known-model-too-big-for-slice", "tpu-serving:serving/maxtext/quantization", ..., "tpu-serving:serving.maxtext.modelName", ["405B parameters in bf16", "754 GiB", "smallest ct6e-standard-4t topology that fits is 4x8"]),
    ("declared-model-too-big-for-slice", "tpu-serving:serving/model", {"parametersBillions": 600, "precision": "int8"}, "tpu-serving:serving.model", ["600B parameters in int8", "4x8"]),
    ("unknown-model-without-size", "tpu-serving:serving/maxtext/modelName", "my-llm", "tpu-serving:serving.model", ["required for the HBM fit check", "llama3.1-405b"]),
    ("image-malformed", "tpu-serving:serving/images", {"jetstream": "Jetstream Server"}, "tpu-serving:serving.images.jetstream", ["not an image reference"]),
]


@pytest.mark.parametrize("case", SERVING_BAD, ids=[c[0] for c in SERVING_BAD])
def test_config_serving_bad_input_is_reported_with_key_path(case):
    _, path, value, key, fragments = case
    with pytest.raises(ConfigError) as exc:
        load(with_change(path, value, SERVING))
    problems = exc.value.problems
    matching = [p for p in problems if p.startswith(key)]
    assert matching, f"no problem at {key}: {problems}"
    for fragment in fragments:
        assert any(fragment in p for p in matching), f"{fragment!r} not in {matching}"


def test_config_min_master_version_accepts_what_gke_accepts():
    for version in ("latest", "1.31", "1.31.1", "1.31.1-gke.1146000"):
        assert load(with_change("tpu-serving:cluster/minMasterVersion", version)).cluster.min_master_version == version


def test_config_model_size_is_derived_from_a_known_maxtext_model():
    from tpu_serving.config import _jetstream_fit_problems

    cfg = load(SERVING)  # llama3.1-405b int8 (377 GiB) on one v6e 4x4 (512 GiB): fits, nothing declared
    assert cfg.serving.model is None
    assert _jetstream_fit_problems(cfg.serving, cfg.slices[0][1]) == []


def test_config_maintenance_defaults_to_weekend_nights():
    m = load(GOOD).cluster.maintenance
    assert (m.window_start, m.window_end, m.recurrence) == ("2026-01-03T02:00:00Z", "2026-01-03T08:00:00Z", "FREQ=WEEKLY;BYDAY=SA,SU")
    assert m.exclusions == []
