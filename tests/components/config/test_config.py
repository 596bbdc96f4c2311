"""Stack config: unit tests and bad-input tests (every problem reported, with key path and choices)."""

from __future__ import annotations

import datetime

import pytest
from pydantic import ValidationError

from tests.fixtures.bad_input import BAD, SERVING_BAD
from tests.fixtures.configs import GOOD, PATHWAYS_JOB, SERVING, as_engine_config, load, with_change
from tpu_serving.common.naming import bucket_name, pool_name, workload_service_account_id
from tpu_serving.config import ConfigError, TpuSliceConfig, validate_stack
from tpu_serving.config.loading import load_stack_config


def test_config_loads_good_stack():
    cfg = load(GOOD)
    ((pool, shape, _),) = cfg.slices
    assert pool == "v6e16" and shape.vms == 4
    assert pool_name(cfg.cluster.name, pool) == "llama405b-v6e16"
    assert bucket_name(cfg.project, cfg.cluster.name, "checkpoints") == "tpu-serving-demo-llama405b-checkpoints"
    assert workload_service_account_id(cfg.cluster.name) == "llama405b-wl"
    assert cfg.cluster.deletion_protection is True
    assert cfg.cluster.release_channel == "REGULAR"


def test_config_models_are_frozen():
    cfg = load(GOOD)
    with pytest.raises(ValidationError):
        cfg.zone = "us-east5-a"


def test_config_every_field_is_described():
    from tpu_serving import backends
    from tpu_serving.config import models

    undescribed = [
        f"{model.__name__}.{name}"
        for module in (models, backends.jetstream, backends.saxml, backends.pathways_job)
        for model in vars(module).values()
        if isinstance(model, type) and issubclass(model, models.Model) and model is not models.Model
        for name, field in model.model_fields.items()
        if not field.description
    ]
    assert undescribed == []


def test_config_count_makes_one_pool_per_slice():
    cfg = load(with_change("tpu-serving:tpuSlices/0/count", 2))
    assert [p for p, _, _ in cfg.slices] == ["v6e16-0", "v6e16-1"]


def test_config_machine_type_and_topology_instead_of_slice_name():
    cfg = load(
        with_change("tpu-serving:tpuSlices/0", {"name": "d", "machineType": "ct6e-standard-8t", "topology": "2x4"})
    )
    assert cfg.slices[0][1].vms == 1


# ---------------------------------------------------------------------------------- bad input


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
    data = with_change(
        "tpu-serving:tpuSlices/0", {"name": "a", "machineType": "ct6e-standard-4t", "topology": "4x5"}, data
    )
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


def test_config_serving_loads():
    cfg = load(SERVING)
    assert cfg.serving.lws_version == "v0.10.0"
    assert cfg.serving.probes.max_startup_seconds == 3600


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
    # the fixture's v6e slice needs 1.31.2-gke.1115000 or later (tests/components/config/test_checks.py)
    for version in ("latest", "1.31", "1.31.2", "1.31.2-gke.1146000", "1.32"):
        assert load(with_change("tpu-serving:cluster/minMasterVersion", version)).cluster.min_master_version == version


def test_config_model_size_is_derived_from_a_known_maxtext_model():
    from tpu_serving.backends.jetstream.checks import _fit_problems

    cfg = load(SERVING)  # llama3.1-405b int8 (377 GiB) on one v6e 4x4 (512 GiB): fits, nothing declared
    assert cfg.serving.model is None
    assert _fit_problems(cfg.serving, cfg.slices[0][1]) == []


def test_config_maintenance_defaults_to_weekend_nights():
    cluster = {k: v for k, v in GOOD["tpu-serving:cluster"].items() if k != "maintenance"}
    m = load({**GOOD, "tpu-serving:cluster": cluster}).cluster.maintenance
    assert (m.window_start, m.window_end, m.recurrence) == (
        "2026-01-03T02:00:00Z",
        "2026-01-03T08:00:00Z",
        "FREQ=WEEKLY;BYDAY=SA,SU",
    )
    assert m.exclusions == []


def test_config_cluster_settings_are_the_cluster_components_arguments():
    """Declared once: the stack file's `cluster` is generated from TpuClusterArgs."""
    import dataclasses

    from tpu_serving.config import ClusterConfig
    from tpu_serving.platform.cluster import CLUSTER_ARGS_FROM_THE_STACK, TpuClusterArgs

    fields = {f.name: f for f in dataclasses.fields(TpuClusterArgs) if f.name not in CLUSTER_ARGS_FROM_THE_STACK}
    # and `existing`: the existing cluster's arguments, less those the stack file sets elsewhere
    assert set(ClusterConfig.model_fields) == set(fields) | {"existing"}
    for name, model_field in ClusterConfig.model_fields.items():
        if name != "existing":
            assert model_field.description == fields[name].metadata["description"], name
    from tpu_serving.config.models import ExistingClusterConfig
    from tpu_serving.platform.existing import EXISTING_ARGS_FROM_THE_STACK, PLATFORM_EXISTING_ARGS, ExistingClusterArgs

    existing = {
        f.name: f for f in dataclasses.fields(ExistingClusterArgs) if f.name not in EXISTING_ARGS_FROM_THE_STACK
    }
    # a model stack's cluster.existing has no platform-only key (nodeServiceAccount): unchanged by it
    assert (
        set(ExistingClusterConfig.model_fields)
        == set(existing) - set(PLATFORM_EXISTING_ARGS)
        == {"kubeconfig", "context", "gke", "node_upgrades_held"}
    )
    for name, model_field in ExistingClusterConfig.model_fields.items():
        assert model_field.description == existing[name].metadata["description"], name
    cfg = load(GOOD).cluster
    args = TpuClusterArgs(project="p-123456", region="us-east5", zone="us-east5-b", name="llama405b")
    assert (cfg.release_channel, cfg.network, cfg.deletion_protection) == (
        args.release_channel,
        args.network,
        args.deletion_protection,
    )
    assert cfg.cpu_pool.machine_type == args.cpu_pool.machine_type


@pytest.mark.parametrize(
    "model, key, source, name",
    [
        ("TpuSliceConfig", "capacity", "TpuNodePoolArgs", "capacity"),
        ("TpuSliceConfig", "spot", "TpuNodePoolArgs", "spot"),
        ("TpuSliceConfig", "max_run_duration_hours", "TpuNodePoolArgs", "max_run_duration_hours"),
        ("TpuSliceConfig", "reservation", "TpuNodePoolArgs", "reservation"),
        ("TpuSliceConfig", "disk_size_gb", "TpuNodePoolArgs", "disk_size_gb"),
        ("BucketConfig", "storage_class", "BucketSpec", "storage_class"),
        ("BucketConfig", "versioning", "BucketSpec", "versioning"),
    ],
)
def test_config_shared_settings_come_from_the_components_declaration(model, key, source, name):
    import dataclasses

    import tpu_serving
    from tpu_serving.config import models

    config_field = getattr(models, model).model_fields[key]
    declaration = next(f for f in dataclasses.fields(getattr(tpu_serving, source)) if f.name == name)
    assert config_field.default == declaration.default
    assert config_field.description == declaration.metadata["description"]


@pytest.mark.parametrize("key", ["region", "project"])
def test_config_a_bare_region_or_project_is_refused_naming_the_provider_key(key):
    """A stack file's bare `region:` became tpu-serving:region and overrode gcp:region (new-user review)."""
    from tests.fixtures.configs import GOOD
    from tpu_serving.config import ConfigError
    from tpu_serving.config.loading import load_stack_config

    values = {**GOOD, f"tpu-serving:{key}": "us-east5" if key == "region" else "other-project"}
    with pytest.raises(ConfigError) as err:
        load_stack_config(values)
    assert f"tpu-serving:{key}: the {key} is `gcp:{key}`" in str(err.value)


def test_config_structured_settings_with_the_stack_files_gcp_keys_name_the_field():
    """validate_stack({'gcp:project': ...}) said gcp:project was missing and suggested `project` (new-user review)."""
    from tpu_serving.config import ConfigError
    from tpu_serving.config.loading import validate_stack

    with pytest.raises(ConfigError) as err:
        validate_stack({"gcp:project": "p", "gcp:region": "us-east5"})
    text = str(err.value)
    assert "gcp:project: a stack file's key; structured settings" in text and "name it `project`" in text
    assert "gcp:project: required key is missing" not in text  # one problem, said once (new-user review 3)
    assert len(err.value.problems) == len(set(err.value.problems))
    assert "tpu-serving:gcp:project" not in text
    with pytest.raises(ConfigError) as err:
        validate_stack({"gcp:region": "us-east5"})
    assert (
        "gcp:project: required key is missing; in a stack file: `pulumi config set gcp:project <value>` "
        "(validate_stack and the provider's `config` name it `project`)"
    ) in err.value.problems


def test_cluster_problems_refuse_maintenance_times_that_are_not_rfc_3339():
    # strptime takes "2026-1-03T02:00:00Z" (no zero padding); RFC 3339 and GKE do not.
    cluster = {
        "name": "llama405b",
        "maintenance": {
            "windowStart": "2026-1-03T02:00:00Z",
            "windowEnd": "2026-01-03T14:00:00Z",
            "exclusions": [
                {"name": "freeze", "startTime": "2026-12-1T00:00:00Z", "endTime": "2026-12-05T00:00:00Z"},
            ],
        },
    }
    with pytest.raises(ConfigError) as err:
        load(with_change("tpu-serving:cluster", cluster))
    assert err.value.problems == [
        'tpu-serving:cluster.maintenance.windowStart = "2026-1-03T02:00:00Z": must be RFC 3339 in UTC, '
        "e.g. 2026-01-03T02:00:00Z",
        'tpu-serving:cluster.maintenance.exclusions[0].startTime = "2026-12-1T00:00:00Z": must be RFC 3339 in UTC, '
        "e.g. 2026-12-01T00:00:00Z",
        # no "ends before it starts" beside them: the stack's check compared the times as text, and "2026-12-05..."
        # sorted before "2026-12-1..."; the exclusion's own rule compares instants, and has none for a bad time
    ]


def test_config_validate_stack_names_the_stack_configuration():
    """config.loading.validate_stack (mutmut_2): without a file name, the problems are the stack configuration's."""
    with pytest.raises(ConfigError) as err:
        validate_stack({"cluster": 5})
    assert str(err.value).startswith("invalid stack configuration: ")


def test_config_a_python_value_that_is_not_json_is_shown_as_text():
    """config.errors.describe (mutmut_116): validate_stack takes Python values; one that JSON cannot encode (a date)
    is shown as its text, with no traceback (json.dumps without `default` raised TypeError)."""
    with pytest.raises(ConfigError) as err:
        validate_stack({"project": "my-project-1", "region": "us-east5", "zone": datetime.date(2026, 1, 1)})
    assert 'tpu-serving:zone = "2026-01-01": must be text (a string)' in err.value.problems


def test_config_a_program_of_another_name_hears_of_its_own_stack():
    """config.loading.load_stack_config (mutmut_33): a project of another name gets its problems under its own
    namespace and the message names the stack's configuration."""
    values = {k.replace("tpu-serving:", "myproj:"): v for k, v in as_engine_config(PATHWAYS_JOB).items()}
    values["myproj:zone"] = "europe-west4-a"
    with pytest.raises(ConfigError) as err:
        load_stack_config(values, "configuration of stack 'dev'", "myproj")
    text = str(err.value)
    assert text.startswith("invalid configuration of stack 'dev': "), text
    assert all(p.startswith(("myproj:", "gcp:")) for p in err.value.problems), err.value.problems
