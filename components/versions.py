"""The version set: every release the library pins, in one place, each with its source, its date, the newest
release known to this table, and what it must agree with.

Components read their defaults from here (:data:`PINS`); ``tpu-serving versions`` prints the set, the
preview names each pin of the plan that is older than the newest release known, and
``tests/test_versions.py`` checks the agreements that can be checked offline (a CRD file for each controller
release, the engine conformance tables for the engine images). Dates: a PyPI upload date, or the date of the
commit a git tag points at (``git log -1 --format=%cs <tag>``) in the repository mirrored on the date the
entry gives; an image tag without a public source has no date. Nothing here imports the rest of the library.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pin:
    """One pinned release."""

    key: str
    """Short name, e.g. ``lws``."""
    what: str
    """What it is."""
    value: str
    """The pinned version, tag or image reference."""
    released: str | None
    """Its release date (ISO), or None when no public source dates it."""
    source: str
    """Where the pin and its date come from."""
    newest: str
    """The newest release known to this table (equal to the pin when it is current)."""
    newest_source: str
    """Where the newest release was read, and when."""
    agrees_with: str = ""
    """What the pin must agree with."""
    status: str = ""
    """Upstream's state when it matters to a user: archived, unmaintained."""

    @property
    def current(self) -> bool:
        return self.version == version_of(self.newest)

    @property
    def version(self) -> str:
        return version_of(self.value)


def version_of(value: str) -> str:
    """The tag of an image reference (``repo:tag`` -> ``tag``), or the value itself."""
    tail = value.rsplit("/", 1)[-1]
    return tail.split(":", 1)[1].split("@", 1)[0] if ":" in tail else value


_LWS_MIRROR = "kubernetes-sigs/lws tags, mirror of 2026-08-21"
_JOBSET_MIRROR = "kubernetes-sigs/jobset tags, mirror of 2026-08-18"
_LLMD_ROUTER_MIRROR = "llm-d/llm-d-router tags, mirror of 2026-08-22"
_SAXML_TAGS = "google/saxml tag v1.2.0 (2024-02-20), mirror of 2026-07-14; its image tags not verified here"
_PYPI = "PyPI upload dates (https://pypi.org/pypi/<name>/json), read 2026-11-25"


def _saxml(key: str, what: str, tag: str) -> Pin:
    """A Saxml image of the seed; its conformance table is the Saxml release of the same tag."""
    return Pin(
        key,
        what,
        f"us-docker.pkg.dev/cloud-tpu-images/inference/{key}:{tag}",
        None,
        "the Saxml seed",
        "v1.2.0",
        _SAXML_TAGS,
        f"the Saxml conformance table (saxml-{tag}.json)",
        "no Saxml release since v1.2.0 (2024-02-20)",
    )


PINS: dict[str, Pin] = {
    p.key: p
    for p in (
        Pin(
            "lws",
            "LeaderWorkerSet controller",
            "v0.10.0",
            "2026-08-11",
            _LWS_MIRROR,
            "v0.10.0",
            _LWS_MIRROR,
            "the CRD the objects are validated against (../shared/reference/crds/lws-v0.10.0-*)",
        ),
        Pin(
            "jobset",
            "JobSet controller",
            "v0.12.0",
            "2026-05-08",
            _JOBSET_MIRROR,
            "v0.12.0",
            _JOBSET_MIRROR,
            "the CRD the objects are validated against (jobset-v0.12.0-jobsets-crd.yaml); PathwaysJob needs v0.8.0+",
        ),
        Pin(
            "pathways-job",
            "PathwaysJob controller",
            "v0.1.4",
            "2025-10-22",
            "google/pathways-job tags, mirror of 2025-10-22",
            "v0.1.4",
            "google/pathways-job tags, mirror of 2025-10-22",
            "its CRD (pathwaysjob-v0.1.4-crd.yaml) and the Pathways conformance tables (pathways-*-v0.1.4.json)",
        ),
        Pin(
            "pathways",
            "Pathways server and proxy images (spec.pathwaysVersion)",
            "jax-0.5.3",
            None,
            "the Pathways on GKE guide (seed 003); the images are closed source, with no public release dates",
            "jax-0.5.3",
            "no newer tag verified here: the issue reports newer tags in public manifests, not yet read",
            "the JAX of every client: the batch container's PATHWAYS_JAX_VERSION and the interactive example",
        ),
        Pin(
            "gmp",
            "Managed Prometheus PodMonitoring CRD (prometheus-engine)",
            "v0.17.2",
            "2026-01-07",
            "GoogleCloudPlatform/prometheus-engine tags, mirror of 2026-07-02",
            "v0.17.2",
            "GoogleCloudPlatform/prometheus-engine tags, mirror of 2026-07-02",
            "the CRD the PodMonitorings are validated against (gmp-v0.17.2-podmonitorings-crd.yaml)",
        ),
        Pin(
            "metrics-adapter",
            "Custom Metrics Stackdriver Adapter",
            "v0.16.9",
            "2026-08-11",
            "GoogleCloudPlatform/k8s-stackdriver tag cm-sd-adapter-v0.16.9, mirror of 2026-08-18",
            "v0.16.9",
            "k8s-stackdriver mirror of 2026-08-18 (a v0.16.10 is reported upstream since, not read here)",
        ),
        Pin(
            "epp",
            "Inference Gateway endpoint picker image (llm-d router)",
            "ghcr.io/llm-d/llm-d-router-endpoint-picker:v0.10.0",
            "2026-08-17",
            f"{_LLMD_ROUTER_MIRROR}: tag v0.10.0 (71f4f09); image name and registry from its Makefile l.21, l.26 and "
            ".github/workflows/ci-release.yaml l.29, l.37-39 (the release tag is the image tag)",
            "v0.10.0",
            f"{_LLMD_ROUTER_MIRROR} (v0.10.0-rc.1 2026-08-11, v0.9.0 2026-06-23); a newer release reported elsewhere "
            "was not read here",
            "its conformance table (epp-v0.10.0.json); the InferencePool API it reads, inference.networking.k8s.io/v1 "
            "(pkg/epp/server/options.go l.173-174) of gateway-api-inference-extension v1.5.0 (go.mod l.61): the stack "
            "installs no InferencePool CRD (GKE serves it) and validates the objects against the v1.6.0 CRD, whose "
            "schema differs from v1.5.0's only in no longer requiring endpointPickerRef, which the stack always sets",
            "the endpoint picker moved from gateway-api-inference-extension to llm-d/llm-d-router after v1.5.0 (v1.6.0 "
            "README l.16-23); llm-d-router is pre-1.0 and its EndpointPickerConfig API llm-d.ai/v1alpha1",
        ),
        Pin(
            "vllm-tpu",
            "vLLM TPU image",
            "docker.io/vllm/vllm-tpu:v0.21.0",
            "2026-06-05",
            f"vllm-tpu 0.21.0, {_PYPI}; image tag pinned by ray-project/ray doc/source/serve/llm/user-guides/tpu.md",
            "v0.32.0",
            f"vllm-tpu 0.32.0 (2026-10-22), {_PYPI}; its image tag not verified here",
            "the vllm and tpu-inference conformance tables (vllm-0.21.0.json, tpu-inference-0.21.0.json: the "
            "wheel requires tpu-inference==0.21.0) and the Ray table the image ships (ray-2.60.0.json)",
        ),
        Pin(
            "jetstream",
            "JetStream + MaxText server image",
            "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pathways:v0.2.0",
            None,
            "the JetStream + Pathways seeds (../shared/reference/seed-manifests)",
            "v0.2.0",
            "no newer image verified here",
            "the MaxText conformance table (maxtext-jetstream-pathways-v0.2.0.json)",
            "archived upstream on 2026-02-01 (AI-Hypercomputer/JetStream README, acd4f5a): it names tpu-inference, "
            "the vllm backend's engine, as the successor",
        ),
        Pin(
            "jetstream-http",
            "JetStream HTTP front end image",
            "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-http:v0.2.3",
            None,
            "the JetStream + Pathways seeds",
            "v0.2.3",
            "no newer image verified here",
            status="archived upstream on 2026-02-01, with JetStream",
        ),
        _saxml("sax-admin-server", "Saxml admin server image", "v1.1.0"),
        _saxml("sax-model-server", "Saxml model server image", "v1.1.0"),
        _saxml("sax-http", "Saxml HTTP server image", "v1.0.0"),
    )
}
"""Every pin, by key."""


def stale() -> list[Pin]:
    """The pins older than the newest release known to the table."""
    return [p for p in PINS.values() if not p.current]
