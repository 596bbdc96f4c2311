"""The version set: every pin in one place, and the agreements that can be checked offline."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from pathlib import Path

import pytest

from tests.conftest import CRDS, REFERENCE, ROOT, plan_of
from tests.fixtures.configs import load
from tpu_serving.catalog.versions import PINS, Pin, stale, version_of
from tpu_serving.config import ConfigError
from tpu_serving_tools.preview.offline import kubernetes_objects

TABLES = ROOT / "tools" / "conformance" / "tables"
IMAGE = re.compile(r"^[a-z0-9][\w.-]*(/[\w.-]+)+:[\w.-]+$")
RELEASE = re.compile(r"^(v\d+\.\d+\.\d+|jax-\d+\.\d+\.\d+)$")
FLOORS = {
    ("components/platform/controllers.py", "v0.0.0"),
    ("components/backends/pathways_job/settings.py", "v0.8.0"),
    ("components/platform/controllers.py", "v0.9.0"),
    ("components/backends/saxml/facts.py", "v0.6.0"),
}
"""Version literals that are compatibility floors, not pins: no release at all, the oldest JobSet the
PathwaysJob controller works with, the oldest JobSet with failure-policy rules (Saxml), and the LWS releases from which its last-registered webhook path changes
(``WebhookReadiness.since``)."""


def _literals(path: Path) -> list[tuple[int, str]]:
    """Image references and release tags written as code (not docstrings, not ``min_version=`` floors)."""
    tree = ast.parse(path.read_text())
    skip: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            skip |= {id(s.value) for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)}
        if isinstance(node, ast.keyword) and node.arg == "min_version":
            skip.add(id(node.value))
    return [
        (n.lineno, n.value)
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip
        if IMAGE.match(n.value) or RELEASE.match(n.value)
    ]


def test_versions_every_pin_lives_in_the_version_set():
    found = [
        f"{p.relative_to(ROOT)}:{line}: {value}"
        for p in sorted((ROOT / "components").rglob("*.py"))
        if p.name != "versions.py"
        for line, value in _literals(p)
        if (str(p.relative_to(ROOT)), value) not in FLOORS
    ]
    assert found == [], "pins outside components/catalog/versions.py:\n" + "\n".join(found)


def test_versions_the_check_finds_a_pin_written_elsewhere(tmp_path):
    module = tmp_path / "m.py"
    module.write_text('"""doc v1.2.3"""\nIMAGE = "registry.k8s.io/x/epp:v1.3.1"\nX = f(min_version="v0.4.0")\n')
    assert _literals(module) == [(2, "registry.k8s.io/x/epp:v1.3.1")]


def test_versions_each_entry_is_sourced_and_dated_where_public():
    for p in PINS.values():
        assert p.source and p.newest_source and p.what, p.key
        assert p.released is None or re.fullmatch(r"20\d\d-\d\d-\d\d", p.released), p.key


@pytest.mark.parametrize(
    "key, crd",
    [
        ("lws", "lws-{v}-leaderworkersets-crd.yaml"),
        ("jobset", "jobset-{v}-jobsets-crd.yaml"),
        ("pathways-job", "pathwaysjob-{v}-crd.yaml"),
        ("gmp", "gmp-{v}-podmonitorings-crd.yaml"),
    ],
)
def test_versions_controllers_agree_with_the_crd_the_objects_are_validated_against(reference, key, crd):
    assert (CRDS / crd.format(v=PINS[key].version)).is_file(), f"{key} {PINS[key].value}: no CRD {crd}"


def test_versions_the_endpoint_picker_agrees_with_the_inference_pool_crd(reference):
    """llm-d-router v0.10.0 reads InferencePool inference.networking.k8s.io/v1 of gateway-api-inference-extension
    v1.5.0; the stack validates its pool against the v1.6.0 CRD (GKE serves the CRD, the stack installs none). The
    two schemas differ only in v1.5.0 also requiring endpointPickerRef (read from the two releases' CRD files), so
    a pool valid under v1.6.0 that sets endpointPickerRef is valid under both."""
    import yaml

    from tpu_serving.traffic.gateway import INFERENCE_API
    from tpu_serving_tools.reference.schema import PLATFORM_RELEASES

    agrees = PINS["epp"].agrees_with
    assert all(x in agrees for x in ("inference.networking.k8s.io/v1", "extension v1.5.0", "the v1.6.0 CRD"))
    group, version = INFERENCE_API.split("/")
    assert PLATFORM_RELEASES[group] == "v1.6.0"
    crd = yaml.safe_load((CRDS / "inference-extension-v1.6.0-inferencepools-crd.yaml").read_text())
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version]
    assert served["schema"]["openAPIV3Schema"]["properties"]["spec"]["required"] == ["selector", "targetPorts"]
    plan = plan_of("vllm-llama33-70b-v5e16")
    (pool,) = [o for o in kubernetes_objects(plan) if o["kind"] == "InferencePool"]
    assert pool["apiVersion"] == INFERENCE_API and pool["spec"]["endpointPickerRef"]["name"]
    assert "inference.networking.k8s.io" not in plan.outputs["controllers"]


@pytest.mark.parametrize(
    "key, tables",
    [
        ("vllm-tpu", ["vllm-{n}.json", "tpu-inference-{n}.json"]),
        ("epp", ["epp-{v}.json"]),
        ("pathways-job", ["pathways-rm-{v}.json", "pathways-proxy-{v}.json", "pathways-worker-{v}.json"]),
        ("jetstream", ["maxtext-jetstream-pathways-{v}.json"]),
        ("sax-model-server", ["saxml-{v}.json"]),
        ("sax-admin-server", ["saxml-{v}.json"]),
        ("sax-http", ["saxml-{v}.json"]),
    ],
)
def test_versions_engine_images_agree_with_their_conformance_tables(key, tables):
    v = PINS[key].version
    for name in tables:
        table = TABLES / name.format(v=v, n=v.removeprefix("v"))
        assert table.is_file(), f"{key} {PINS[key].value}: no conformance table {table.name}"
        assert json.loads(table.read_text())["version"] in (v, v.removeprefix("v"), f"jetstream-pathways-{v}")


def test_versions_vllm_wheel_and_tpu_inference_agree():
    # the vllm-tpu wheel requires tpu-inference of its own version (PyPI vllm-tpu 0.21.0 and 0.29.0 requires_dist)
    n = PINS["vllm-tpu"].version.removeprefix("v")
    tpu = json.loads((TABLES / f"tpu-inference-{n}.json").read_text())
    assert tpu["version"] == n and f"tpu_inference-{n}-" in tpu["source"]["artefact"]


def test_versions_stale_pins_are_those_behind_the_newest_known():
    assert {p.key for p in stale()} == {
        "vllm-tpu",
        "pathways-jetstream",
        "sax-admin-server",
        "sax-model-server",
        "sax-http",
        # the e2e toolchain's, each held: GKE's minor, its etcd, the Python SDKs, Go 1.26.8 (tests/e2e/test_e2e_toolchain.py)
        "go-kubernetes",
        "go-etcd",
        "go-pulumi",
        "go-pulumi-kubernetes",
        "go-kustomize",
        "go-lws",  # the newest LWS the module proxy serves
        "go-custom-metrics",  # v1.37.0 is built on k8s.io v0.37.0; the toolchain's Kubernetes is 1.36
    }
    assert all(p.held for p in stale() if p.module)
    assert version_of("docker.io/vllm/vllm-tpu:v0.29.0") == "v0.29.0" and version_of("jax-0.5.3") == "jax-0.5.3"
    assert version_of("r.io/a/b:v1@sha256:" + "a" * 64) == "v1"
    assert Pin("k", "w", "v2", None, "s", "v2", "s").current


def test_versions_preview_names_the_plans_stale_and_archived_pins():
    from tpu_serving_tools.preview.versions import plan_notes, used_pins

    vllm = plan_of("vllm-llama33-70b-v5e16").resources
    assert plan_notes(vllm) == [
        "epp: " + PINS["epp"].status,
        f"vllm-tpu v0.29.0: v0.32.0 is known, held: {PINS['vllm-tpu'].held}",
    ]
    assert "no public reference to an image" in PINS["vllm-tpu"].held
    jetstream = plan_of("llama31-405b-v6e16").resources
    text = json.dumps([r.inputs for r in jetstream])
    assert {p.key for p in used_pins(text)} == {
        "lws",
        "pathways-jetstream",
        "jetstream",
        "jetstream-http",
        "blackbox-exporter",
    }
    assert any(line.startswith("jetstream: archived upstream on 2026-02-01") for line in plan_notes(jetstream))
    assert "pathways-jetstream jax-0.5.3: jax-0.9.0 is known, held: its client is MaxText" in " ".join(
        plan_notes(jetstream)
    )
    # a pin behind with nothing holding it says so as a lag to act on
    lagging = [dataclasses.replace(PINS["vllm-tpu"], held="")]
    assert _notes_of(vllm, lagging) == [
        "vllm-tpu v0.29.0 is behind the newest release known, v0.32.0 (tpu-serving versions)"
    ]
    batch = json.dumps([r.inputs for r in plan_of("pathwaysjob-batch-v6e16").resources])
    assert "pathways" in {p.key for p in used_pins(batch)} and "pathways-jetstream" not in {
        p.key for p in used_pins(batch)
    }


def test_versions_each_pathways_backend_has_its_own_release():
    from tpu_serving.backends.jetstream.args import PathwaysImages
    from tpu_serving.backends.pathways_job.args import PathwaysWorkloadArgs
    from tpu_serving.backends.pathways_job.settings import PathwaysJobConfig

    # pathways-job follows the newest release known; jetstream-pathways holds the one its image was pinned with
    assert PINS["pathways"].current and PINS["pathways"].value == PINS["pathways"].newest
    assert PathwaysJobConfig.model_fields["pathways_version"].default == PINS["pathways"].value
    assert PathwaysWorkloadArgs.__dataclass_fields__["pathways_version"].default == PINS["pathways"].value
    images = PathwaysImages()
    assert version_of(images.server) == version_of(images.proxy) == PINS["pathways-jetstream"].value
    assert "jetstream-pathways" in PINS["pathways"].agrees_with


def test_versions_cli_prints_the_set_and_the_stale_ones(capsys):
    from tpu_serving_tools.cli import main

    assert main(["versions"]) == 0
    every = capsys.readouterr().out.splitlines()
    assert len(every) == len(PINS) + 2
    assert main(["versions", "--stale"]) == 0
    behind = capsys.readouterr().out.splitlines()[1:-1]
    assert [line.split()[0] for line in behind] == [p.key for p in stale()]


def test_versions_cli_fits_a_100_column_terminal_and_verbose_says_the_rest(capsys):
    from tpu_serving_tools.cli import main

    assert main(["versions"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in rows) <= 100
    assert rows[0].split() == ["pin", "version", "released", "newest", "pinned", "from"]
    assert [line.split()[0] for line in rows[1:-1]] == list(PINS)
    assert "--verbose" in rows[-1] and "tpu_serving/versions.py" in rows[-1]
    for flag in ("--verbose", "--sources"):
        assert main(["versions", flag]) == 0
        out = capsys.readouterr().out
        # a line over 100 holds one word alone, a URL that wrapping must not cut
        assert [line for line in out.splitlines() if len(line) > 100 and len(line.split()) > 1] == []
        flat = " ".join(out.split())
        for p in PINS.values():
            for text in (p.source, p.newest_source, p.agrees_with, p.status, p.held):
                assert " ".join(text.split()) in flat, (p.key, text)


def test_versions_lws_restart_policy_follows_the_release():
    from tpu_serving.platform import lws

    assert lws.restart_policy("v0.8.0") == lws.restart_policy("v0.4.0") == "RecreateGroupOnPodRestart"
    assert lws.restart_policy("v0.9.0") == lws.restart_policy(PINS["lws"].value) == "RecreateGroupAfterStart"
    assert lws.version_problem("v0.10.0") == "" and "not an LWS release" in lws.version_problem("latest")


def test_versions_output_names_no_local_path_a_pip_user_lacks(capsys):
    """A pip user has no ``../shared`` beside the package, nor this repository's ``components/``: the output names
    the package's own module and the project's reference material instead."""
    from dataclasses import astuple

    from tpu_serving_tools.preview.versions import main

    assert main([]) == 0
    out = capsys.readouterr().out
    assert "../shared" not in out and "components/" not in out and "tpu_serving/versions.py" in out
    assert not [p.key for p in PINS.values() if any("../shared" in str(v) for v in astuple(p))]


def _which_backend_rows() -> dict[str, str]:
    """The README's "Which backend" table (the docs site includes the same lines), by backend."""
    text = (ROOT / "README.md").read_text()
    part = text.split("<!-- --8<-- [start:which-backend] -->", 1)[1].split("<!-- --8<-- [end:which-backend] -->")[0]
    rows = [line for line in part.strip().splitlines() if line.startswith("| `")]
    return {row.split("`", 2)[1]: row for row in rows}


# Which pin speaks for each backend's engine in the table (each status from the version set).
BACKEND_ENGINE_PIN = {"vllm": "vllm-tpu", "jetstream-pathways": "jetstream", "saxml": "sax-model-server"}
STATUS_WORD = {"archived": "**archived**", "no Saxml release": "**unmaintained**"}


def test_versions_readme_which_backend_table_agrees_with_the_version_set():
    from tpu_serving.backends import BACKENDS

    rows = _which_backend_rows()
    assert set(rows) == set(BACKENDS), "the table lists every backend, and only those"
    assert "[Upgrading](#upgrading)" in (ROOT / "README.md").read_text()
    for backend, key in BACKEND_ENGINE_PIN.items():
        pin, row = PINS[key], rows[backend]
        words = [w for status, w in STATUS_WORD.items() if pin.status.startswith(status)]
        if words:  # an archived or unmaintained engine says so and names what to move to
            assert words[0] in row and row.rstrip(" |").split("|")[-1].strip() not in ("", "-"), row
        else:
            assert "**" not in row and f"{pin.version} pinned" in row and version_of(pin.newest) in row, row
    assert f"Pathways `{PINS['pathways'].value}`" in rows["pathways-job"]


@pytest.mark.parametrize(
    ("key", "value", "name"),
    [
        ("lwsVersion", "v0.11.0", "lws"),
        ("lwsVersion", "v1.0.0", "lws"),
    ],
)
def test_versions_a_controller_newer_than_the_version_set_knows_is_refused(key, value, name):
    from tests.fixtures.configs import VLLM, with_serving

    with pytest.raises(ConfigError) as err:
        load(with_serving(VLLM, **{key: value}))
    newest = PINS[name].newest
    assert f"{name} {value} is newer than the newest release known to the version set, {newest}" in str(err.value)
    assert f"serving.{key}" in str(err.value)
    assert load(with_serving(VLLM, **{key: newest})).serving.lws_version == newest


def test_versions_components_refuse_a_controller_newer_than_the_version_set_knows():
    from tests.components.backends.test_vllm_args import _vllm_args
    from tpu_serving.backends.vllm.args import VllmServingArgs
    from tpu_serving.common.validation import check_arguments
    from tpu_serving.operations.autoscaling import AutoscalingSettings

    with pytest.raises(Exception, match="lws v0.11.0 is newer than the newest release known to the version set"):
        check_arguments("VllmServing", _vllm_args(lws_version="v0.11.0"), VllmServingArgs)
    with pytest.raises(Exception, match="metrics-adapter v0.17.0 is newer than the newest release known"):
        check_arguments(
            "ServingAutoscaler", AutoscalingSettings(max_replicas=2, adapter_version="v0.17.0"), AutoscalingSettings
        )
    newest = AutoscalingSettings(max_replicas=2, adapter_version=PINS["metrics-adapter"].newest)
    assert check_arguments("ServingAutoscaler", newest, AutoscalingSettings) == newest


def _notes_of(resources, pins):
    """plan_notes with the version set's pins replaced by ``pins`` (by key), status lines left out."""
    from unittest import mock

    from tpu_serving_tools.preview import versions as tool

    replaced = {**PINS, **{p.key: p for p in pins}}
    with mock.patch.object(tool, "PINS", replaced):
        notes = tool.plan_notes(resources)
    status_lines = {f"{p.key}: {p.status}" for p in replaced.values() if p.status}
    return [line for line in notes if line not in status_lines]


def test_versions_saxml_pins_are_the_images_their_source_names(seeds):
    """versions._saxml (mutmut_20): each Saxml pin's source is a seed manifest that holds that very image."""
    from tpu_serving.catalog.versions import PINS

    for key in ("sax-admin-server", "sax-model-server", "sax-http"):
        pin = PINS[key]
        (path,) = re.findall(r"seed-manifests/[\w.-]+\.yaml", pin.source)
        assert f"image: {pin.value}\n" in (REFERENCE / path).read_text(), key


def test_versions_saxml_pins_name_the_newest_release_as_upstream_tags_it():
    """versions._saxml: the newest Saxml release is the tag v1.2.0, which the preview names."""
    from tpu_serving.catalog.versions import PINS

    assert {PINS[k].newest for k in ("sax-admin-server", "sax-model-server", "sax-http")} == {"v1.2.0"}
