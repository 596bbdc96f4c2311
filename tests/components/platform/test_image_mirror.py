"""The image mirror (``imageMirror``): the images of Docker Hub and ghcr.io pulled through Artifact Registry remote
repositories, created by the stack with the cluster it creates, named existing, or not at all (GKE review M2)."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import plan_of
from tests.fixtures.configs import VLLM, load, plan_of_config
from tpu_serving.common.validation import argument_problems
from tpu_serving.config import ConfigError
from tpu_serving.config.mirror import image_fields, mirror_paths, mirrored_config, needed_upstreams
from tpu_serving.platform.image_mirror import (
    DOCKER_HUB,
    GHCR,
    ImageMirrorArgs,
    ImageMirrorSettings,
    MirrorMode,
    mirrored_image,
    repository_args,
    upstream_of,
)
from tpu_serving.platform.services import ARTIFACT_REGISTRY_API
from tpu_serving_tools.preview.image_notes import image_source_lines

REPOSITORY = "gcp:artifactregistry/repository:Repository"
AR = "us-west4-docker.pkg.dev/tpu-serving-demo"
EXISTING_CLUSTER = {"name": "vllm", "existing": {"kubeconfig": "~/.kube/platform.yaml"}}


def with_gateway(data: dict) -> dict:
    """``data`` behind an InferencePool (its endpoint picker's image is ghcr.io's)."""
    out = copy.deepcopy(data)
    out["tpu-serving:gateway"] = {"inferencePool": True}
    return out


def test_image_mirror_upstream_of_an_image():
    assert upstream_of("docker.io/vllm/vllm-tpu:v0.29.0") is DOCKER_HUB
    assert upstream_of("python:3.12-slim") is DOCKER_HUB  # no registry host: Docker Hub
    assert upstream_of("index.docker.io/library/python:3.12") is DOCKER_HUB
    assert upstream_of("ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0") is GHCR
    assert upstream_of("us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0") is None
    assert upstream_of("gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.16.7-gke.0") is None


def test_image_mirror_keeps_the_path_tag_and_digest_and_puts_official_images_under_library():
    repo = f"{AR}/vllm-dockerhub"
    assert mirrored_image("docker.io/vllm/vllm-tpu:v0.29.0", repo) == f"{repo}/vllm/vllm-tpu:v0.29.0"
    assert mirrored_image("python:3.12-slim", repo) == f"{repo}/library/python:3.12-slim"
    digest = "sha256:" + "a" * 64
    assert mirrored_image(f"ghcr.io/llm-d/x:v1@{digest}", f"{AR}/g") == f"{AR}/g/llm-d/x:v1@{digest}"
    kept = "us-docker.pkg.dev/cloud-tpu-images/inference/sax-http:v1.0.0"
    assert mirrored_image(kept, repo) == kept


def test_image_mirror_repositories_are_remote_docker_repositories_of_their_upstream():
    args = ImageMirrorArgs(project="tpu-serving-demo", location="us-west4", cluster="vllm", docker_hub=True, ghcr=True)
    hub, ghcr = (repository_args(args, u) for u in (DOCKER_HUB, GHCR))
    assert hub["format"] == ghcr["format"] == "DOCKER" and hub["mode"] == ghcr["mode"] == "REMOTE_REPOSITORY"
    assert hub["repository_id"] == "vllm-dockerhub" and ghcr["repository_id"] == "vllm-ghcr"
    assert hub["remote_repository_config"]["docker_repository"] == {"public_repository": "DOCKER_HUB"}
    assert ghcr["remote_repository_config"]["common_repository"] == {"uri": "https://ghcr.io"}
    assert argument_problems(ImageMirrorArgs(project="Bad_Project", location="us-west4", cluster="vllm"))


def test_image_mirror_default_creates_the_repositories_of_a_created_cluster_and_rewrites_every_image():
    cfg = load(with_gateway(VLLM))
    assert [u.key for u in needed_upstreams(cfg)] == ["docker_hub", "ghcr"]
    mirrored = mirrored_config(cfg)
    images = dict(image_fields(mirrored))
    assert images["serving.images.vllm"] == f"{AR}/vllm-dockerhub/vllm/vllm-tpu:v0.29.0"
    assert images["gateway.eppImage"] == f"{AR}/vllm-ghcr/llm-d/llm-d-router-endpoint-picker:v0.10.0"
    assert mirrored_config(mirrored) == mirrored  # idempotent: the phases may read either
    plan = plan_of_config(with_gateway(VLLM))
    repos = {r.inputs["repositoryId"]: r for r in plan.of_type(REPOSITORY)}
    assert set(repos) == {"vllm-dockerhub", "vllm-ghcr"}
    assert {r.inputs["location"] for r in repos.values()} == {"us-west4"}
    apis = {r.inputs["service"] for r in plan.of_type("gcp:projects/service:Service")}
    assert ARTIFACT_REGISTRY_API in apis
    pulled = {c["image"] for r in plan.resources for c in _containers(r)}
    assert not {i for i in pulled if i.startswith(("docker.io/", "ghcr.io/"))}


def test_image_mirror_only_the_upstreams_the_images_need():
    plan = plan_of_config(VLLM)  # no gateway: no ghcr.io image
    assert {r.inputs["repositoryId"] for r in plan.of_type(REPOSITORY)} == {"vllm-dockerhub"}


def test_image_mirror_none_and_an_existing_cluster_pull_from_the_upstreams():
    off = copy.deepcopy(VLLM)
    off["tpu-serving:imageMirror"] = {"mode": "none"}
    plan = plan_of_config(off)
    assert plan.of_type(REPOSITORY) == []
    assert ARTIFACT_REGISTRY_API not in {r.inputs["service"] for r in plan.of_type("gcp:projects/service:Service")}
    existing = {**VLLM, "tpu-serving:cluster": EXISTING_CLUSTER}
    cfg = load(existing)  # unset on an existing cluster: no project-level resource unasked
    assert mirror_paths(cfg) == {} and mirrored_config(cfg) is cfg


def test_image_mirror_existing_pulls_through_the_named_repositories():
    named = with_gateway(VLLM)
    platform = "us-docker.pkg.dev/platform-registry"
    named["tpu-serving:imageMirror"] = {"mode": "existing", "dockerHub": f"{platform}/hub", "ghcr": f"{platform}/gh"}
    images = dict(image_fields(mirrored_config(load(named))))
    assert images["serving.images.vllm"] == f"{platform}/hub/vllm/vllm-tpu:v0.29.0"
    assert images["gateway.eppImage"].startswith(f"{platform}/gh/llm-d/")
    assert plan_of_config(named).of_type(REPOSITORY) == []  # never created nor changed


def test_image_mirror_existing_without_a_needed_repository_is_refused_at_its_key():
    named = with_gateway(VLLM)
    named["tpu-serving:imageMirror"] = {"mode": "existing", "dockerHub": "us-docker.pkg.dev/platform-registry/hub"}
    with pytest.raises(ConfigError) as err:
        load(named)
    (problem,) = err.value.problems
    assert problem.startswith("tpu-serving:imageMirror.ghcr: unset, but tpu-serving:gateway.eppImage = ")
    assert (
        "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0" in problem and "valid: create, existing, none" in problem
    )


def test_image_mirror_settings_refuse_paths_without_existing_and_bad_paths():
    assert ImageMirrorSettings(mode=MirrorMode.CREATE, ghcr="us-docker.pkg.dev/p-12345/gh").problems() == [
        "ghcr names an existing repository, but mode = create: set mode to existing or remove ghcr"
    ]
    bad = copy.deepcopy(VLLM)
    bad["tpu-serving:imageMirror"] = {"mode": "existing", "dockerHub": "docker.io/vllm"}
    with pytest.raises(ConfigError) as err:
        load(bad)
    assert any(p.startswith("tpu-serving:imageMirror.dockerHub") for p in err.value.problems)


def test_image_mirror_preview_says_where_each_image_comes_from():
    line, other = image_source_lines(plan_of("vllm-llama33-70b-v5e16").resources)
    assert other == (  # the host-maintenance gate's and the prober's
        "images from other registries: gcr.io/distroless/python3-debian13:nonroot, "
        "quay.io/prometheus/blackbox-exporter:v0.28.0"
    )
    assert line.startswith(
        "images through this stack's remote repositories vllm70b-dockerhub (Docker Hub), vllm70b-ghcr (ghcr.io): "
    )
    assert "created and deleted with this stack" in line
    upstream, _ = image_source_lines(plan_of("vllm-llama33-70b-existing").resources)
    assert upstream.startswith("images from Docker Hub or ghcr.io: docker.io/vllm/vllm-tpu:v0.29.0")
    assert "10 an hour per IPv4 address" in upstream and "image streaming does not apply" in upstream


def _containers(r) -> list[dict]:
    from tpu_serving_policy.rules import pod_specs

    if not (r.custom and r.type.startswith("kubernetes:")):
        return []
    return [
        c for pod in pod_specs(r.inputs) for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]
    ]


def test_image_mirror_on_an_existing_cluster_is_listed_with_the_cloud_resources():
    named = {**with_gateway(VLLM), "tpu-serving:cluster": EXISTING_CLUSTER}
    named["tpu-serving:imageMirror"] = {"mode": "existing", "dockerHub": f"{AR}/hub", "ghcr": f"{AR}/gh"}
    (entry,) = [e for e in plan_of_config(named).outputs["cloudResources"] if e["kind"] == "image mirror"]
    assert entry["status"] == "existing" and entry["name"] == f"{AR}/hub, {AR}/gh"
    assert entry["key"] == "tpu-serving:imageMirror.mode" and "roles/artifactregistry.reader" in entry["needs"][0]
    created = {**named, "tpu-serving:imageMirror": {"mode": "create"}}
    (entry,) = [e for e in plan_of_config(created).outputs["cloudResources"] if e["kind"] == "image mirror"]
    assert entry["status"] == "created" and entry["name"] == f"{AR}/vllm-dockerhub, {AR}/vllm-ghcr"


def _library_plan(mirror: bool) -> list:
    """A library program's plan: ``VllmServing`` alone (its image from Docker Hub), or pulled through an
    ``ImageMirror`` the program creates (``mirrored_image``)."""
    from tpu_serving import ImageMirror, ImageMirrorArgs, VllmImages, VllmServing, VllmServingArgs, catalog
    from tpu_serving_tools.preview.offline import run_program

    def program() -> None:
        images = VllmImages()
        if mirror:
            made = ImageMirror("m", ImageMirrorArgs("my-project", "us-east5", "c", docker_hub=True))
            images = VllmImages(vllm=mirrored_image(images.vllm, made.paths["docker_hub"]))
        shape = catalog.slice_shape("ct6e-standard-8t", "2x4")
        served = "meta-llama/Llama-3.3-70B-Instruct"
        args = VllmServingArgs("serving", "server", shape, "llama", served, weights_bucket="w", images=images)
        VllmServing("v", args)

    return run_program(program, {}, project="my-serving", stack="dev").resources


def test_image_notes_tell_a_library_program_of_image_mirror_not_a_stack_file_key():
    """A library program has no stack file: its preview names the component (new-user review)."""
    [upstream] = image_source_lines(_library_plan(mirror=False))
    assert upstream.startswith("images from Docker Hub or ghcr.io: docker.io/vllm/vllm-tpu:v0.29.0")
    assert "tpu_serving.ImageMirror creates remote repositories" in upstream and "imageMirror.mode" not in upstream
    owned = next(x for x in image_source_lines(_library_plan(mirror=True)) if x.startswith("images through"))
    assert owned.startswith("images through this stack's remote repositories c-dockerhub (Docker Hub): ")
    assert "passes ImageMirror another cluster name" in owned and "imageMirror.mode" not in owned
    # a stack file's program is still told of its key
    stack, _ = image_source_lines(plan_of("vllm-llama33-70b-existing").resources)
    assert "imageMirror.mode create (or existing)" in stack and "tpu_serving.ImageMirror" not in stack


@pytest.mark.parametrize(
    ("image", "upstream", "mirrored"),
    [
        ("vllm/vllm-tpu:v0.29.0", "docker_hub", "R/vllm/vllm-tpu:v0.29.0"),  # Docker's short form
        ("docker.io/vllm/vllm-tpu:v0.29.0", "docker_hub", "R/vllm/vllm-tpu:v0.29.0"),
        ("python:3.11", "docker_hub", "R/library/python:3.11"),
        ("localhost:5000/a:b", None, "localhost:5000/a:b"),
        ("registry.example.com/team/img:1", None, "registry.example.com/team/img:1"),
    ],
)
def test_image_mirror_a_first_component_is_a_host_only_with_a_dot_a_port_or_localhost(image, upstream, mirrored):
    """GKE review round 63, M1: ``vllm/vllm-tpu:v0.29.0`` was read as from a registry named ``vllm``, so the stack's
    Docker Hub mirror was dropped (distribution/reference normalize.go ``splitDockerDomain``)."""
    from tpu_serving.platform.image_mirror import mirrored_image, upstream_of

    found = upstream_of(image)
    assert (found.key if found else None) == upstream
    assert mirrored_image(image, "R") == mirrored
