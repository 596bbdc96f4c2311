"""Where the preview says each image of a plan is pulled from: the stack's own remote repositories (its image mirror),
another Artifact Registry repository, or Docker Hub and ghcr.io anonymously through the region's Cloud NAT. Read off
the plan's resources, so any program's plan is described."""

from __future__ import annotations

import re
from typing import Any

from tpu_serving.platform.image_mirror import upstream_of
from tpu_serving_policy.rules import pod_specs

REPOSITORY = "gcp:artifactregistry/repository:Repository"
ARTIFACT_REGISTRY = re.compile(r"^[a-z0-9-]+-docker\.pkg\.dev/[^/]+/(?P<repository>[^/]+)/")
DEPLOYMENT = "tpu-serving:index:TpuServingDeployment"
"""A stack file's program (``__main__.py`` makes one): its advice names the stack file's keys; any other program is a
library program, told of the components."""
ANONYMOUS = (
    "anonymous pulls through the NAT's addresses, which every private node of the region shares: Docker Hub allows "
    "10 an hour per IPv4 address (https://docs.docker.com/docker-hub/usage/), so a rollout or a few slice "
    "recreations in an hour can leave a group in ErrImagePull; GKE image streaming does not apply (Artifact "
    "Registry images only); "
)
MIRROR_ADVICE = {
    True: "imageMirror.mode create (or existing) pulls them through a remote repository",
    False: "tpu_serving.ImageMirror creates remote repositories to pull them through "
    "(tpu_serving.platform.image_mirror.mirrored_image(image, mirror.paths[...]) names an image there), or name an image of "
    'an Artifact Registry remote repository you keep (docs/library-api.md, "Host maintenance and the image mirror")',
}
"""What to do about anonymous pulls, by whether the plan is a stack file's (True) or a library program's."""
OWNED = (
    "created and deleted with this stack, in its project and region, named after its cluster ({second}); cached "
    "after the first pull, reached without the NAT, streamed where image streaming is on"
)
SECOND = {
    True: "a second stack there creates its own, or names these with imageMirror.mode existing",
    False: "a second program there passes ImageMirror another cluster name, or pulls through these by their paths",
}


def plan_images(resources: list[Any]) -> list[str]:
    """The container images of the plan's Kubernetes objects, sorted."""
    return sorted(
        {
            str(c["image"])
            for r in resources
            if r.custom and r.type.startswith("kubernetes:")
            for pod in pod_specs(r.inputs)
            for c in [*(pod.get("containers") or []), *(pod.get("initContainers") or [])]
            if c.get("image")
        }
    )


def _source(image: str, owned: dict[str, str]) -> str:
    """``mirror`` (the stack's repositories), ``registry`` (another Artifact Registry repository), ``upstream``
    (Docker Hub or ghcr.io) or ``other``."""
    m = ARTIFACT_REGISTRY.match(image)
    if m:
        return "mirror" if m.group("repository") in owned else "registry"
    return "upstream" if upstream_of(image) else "other"


def image_source_lines(resources: list[Any]) -> list[str]:
    """One line per source the plan's images are pulled from, with the advice of a stack file's program (a
    ``TpuServingDeployment``) or of a library program's (the components)."""
    owned = {
        str(r.inputs.get("repositoryId")): str((r.inputs.get("remoteRepositoryConfig") or {}).get("description", ""))
        for r in resources
        if r.type == REPOSITORY and r.inputs.get("mode") == "REMOTE_REPOSITORY"
    }
    by_source: dict[str, list[str]] = {}
    for image in plan_images(resources):
        by_source.setdefault(_source(image, owned), []).append(image)
    lines = []
    stack_file = any(r.type == DEPLOYMENT for r in resources)
    if owned:
        repositories = ", ".join(f"{k} ({v})" for k, v in sorted(owned.items()))
        mirrored = ", ".join(by_source.get("mirror", [])) or "none"
        owned_text = OWNED.format(second=SECOND[stack_file])
        lines.append(f"images through this stack's remote repositories {repositories}: {mirrored}; {owned_text}")
    if by_source.get("registry"):
        lines.append(f"images from Artifact Registry: {', '.join(by_source['registry'])}")
    if by_source.get("upstream"):
        advice = ANONYMOUS + MIRROR_ADVICE[stack_file]
        lines.append(f"images from Docker Hub or ghcr.io: {', '.join(by_source['upstream'])}; {advice}")
    if by_source.get("other"):
        lines.append(f"images from other registries: {', '.join(by_source['other'])}")
    return lines
