"""The version set: every release the library pins, in one place, each with its source, its date, the newest
release known to this table, and what it must agree with.

Components read their defaults from here (:data:`PINS`); ``tpu-serving versions`` prints the set, the
preview names each pin of the plan that is older than the newest release known, and
``tests/components/catalog/test_versions.py`` checks the agreements that can be checked offline (a CRD file for each controller
release, the engine conformance tables for the engine images). Dates: a PyPI upload date, or the date of the
commit a git tag points at (``git log -1 --format=%cs <tag>``) in the repository mirrored on the date the
entry gives, or, for a closed-source image, the date of the commit that first names its tag in a public
Google source (a bound: the image is at least that old); an image tag without a public source has no date;
for a Go module, the ``Time`` of its ``.info`` on the Go module proxy.

The pins with a :attr:`Pin.module` are the e2e toolchain's (``make e2e-tools``, ``tpu_serving_tools.e2e.toolchain``
builds them from the Go module proxy), not releases a plan deploys; ``tests/e2e/test_e2e_toolchain.py`` checks each
against its ``e2e/tools/<tool>/go.mod``.
Nothing here imports the rest of the library.
"""

from __future__ import annotations

import re
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
    held: str = ""
    """Why the pin stays behind the newest release known, when that is deliberate (nothing to act on)."""
    module: str = ""
    """The Go module the e2e toolchain builds the pin from (``make e2e-tools``); empty for a release a plan uses."""

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
_PROXY = "proxy.golang.org, read 2026-11-28"
_LWS_RELEASE = "v0.10.0"
_JOBSET_RELEASE = "v0.12.0"


# The e2e toolchain (make e2e-tools): Go programs built from the Go module proxy, each in its own module under
# e2e/tools/ (one go.mod could not hold them: their k8s.io and controller-runtime requirements differ).
_GO_TOOLS = (
    Pin(
        "go-kubernetes",
        "kube-apiserver, kube-controller-manager, kube-scheduler of the e2e toolchain",
        "v1.36.3",
        "2026-07-22",
        f"{_PROXY}: k8s.io/kubernetes/@v/list ends v1.36.1 v1.36.3 v1.37.2 v1.38.0-beta.0 (no v1.36.4); "
        "v1.36.3 is the newest 1.36 patch served, the minor of GKE's Rapid channel default 1.36.4-gke.1391000 "
        "(GKE rapid-channel release notes of 2026-09-23)",
        "v1.37.2",
        f"{_PROXY} (v1.38.0-beta.0 is a pre-release)",
        "the minor of the GKE the stacks run on: it does not, quite. The eight stacks that create a cluster are on "
        "the REGULAR channel (releaseChannel REGULAR, the library's default; the two with an InferencePool at "
        "minMasterVersion 1.35), whose default for cluster creation is 1.35.8-gke.1036000 (GKE Regular channel "
        "release notes of 2026-09-17) and which offers 1.34 to 1.36; 1.36 is the minor Regular upgrades them to "
        "next and Rapid's default. Its k8s.io staging modules are at v0.36.3 (the replace lines of "
        "e2e/tools/kubernetes/go.mod, one per replace of k8s.io/kubernetes v1.36.3's own go.mod)",
        held="GKE's Regular channel creates clusters on 1.35 and offers 1.36, Rapid's default (1.36.4-gke.1391000); "
        "kept at 1.36 rather than rebuilt on a 1.35 patch (a new toolchain, its etcd and staging modules with it): "
        "the stacks' manifests are validated against the Kubernetes 1.34 schema, which both minors serve; v1.37 is "
        "no GKE default yet",
        module="k8s.io/kubernetes",
    ),
    Pin(
        "go-etcd",
        "etcd of the e2e toolchain",
        "v3.6.16",
        "2026-10-22",
        f"{_PROXY}: go.etcd.io/etcd/server/v3/@v/list, the newest v3.6.x (v3.6.16)",
        "v3.7.3",
        _PROXY,
        "the etcd minor Kubernetes v1.36.3 is built with: its go.mod requires go.etcd.io/etcd/client/v3 v3.6.8 "
        "and kubeadm's DefaultEtcdVersion is 3.6.8-0 (cmd/kubeadm/app/constants/constants.go l.334)",
        held="Kubernetes 1.36 runs etcd 3.6; v3.6.16 is the newest 3.6 patch served",
        module="go.etcd.io/etcd/server/v3",
    ),
    Pin(
        "go-kwok",
        "kwok (fake nodes and pods) of the e2e toolchain",
        "v0.8.0",
        "2026-06-23",
        f"{_PROXY}: sigs.k8s.io/kwok/@v/list v0.6.1 v0.7.0 v0.8.0",
        "v0.8.0",
        _PROXY,
        "Go 1.26.8 (its go.mod says go 1.26.0); its default Stages (kustomize/stage/node/fast, "
        "node/heartbeat-with-lease, pod/fast in the module zip) are the ones kwokctl loads",
        module="sigs.k8s.io/kwok",
    ),
    Pin(
        "go-lws",
        "LeaderWorkerSet controller of the e2e toolchain",
        "v0.9.0",
        "2026-06-17",
        f"{_PROXY}: sigs.k8s.io/lws/@v/v0.9.0.zip is served (v0.8.0 too); v0.10.0's .info and .mod are served "
        "(commit 2161f38f) but its .zip answers 403 'This module version is not available.', as do the "
        "pseudo-versions of the 12 commits after v0.10.0 and of v0.9.0..v0.10.0, and @v/list (tried 2026-11-28)",
        _LWS_RELEASE,
        _LWS_MIRROR,
        "the lws pin (v0.10.0), the release the stacks install: it does not, it is the newest release the module "
        "proxy serves. make e2e installs v0.9.0's manifest in place of v0.10.0's, so it does not see what v0.10.0 "
        "adds: the DisaggregatedSetRoleScaler CRD and the DisaggregatedSet fields of its scaling "
        "(git diff --stat v0.9.0 v0.10.0 -- config/crd: 4 files, 233 insertions, 4 deletions; the LeaderWorkerSet CRD's "
        "share is 2 lines, spec.replicas minimum 0 and maximum 1000000) and the controller's fixes (git log "
        "v0.9.0..v0.10.0: unrelated StatefulSets ignored by the watch mapper, #957; subgroup annotations and TPU "
        "variables with subGroupSize 1, #945 and #918; LWS metadata onto StatefulSets, #896; the webhook's replicas "
        "range, #913); #945 and #918 touch only subgroups, which JetStream-Pathways' multi-slice groups use (subGroupSize = the slice's VMs, "
        "not 1); the vLLM stacks' LeaderWorkerSets have none",
        held="the module proxy refuses sigs.k8s.io/lws@v0.10.0's zip (see source); move to v0.10.0 when it serves it",
        module="sigs.k8s.io/lws",
    ),
    Pin(
        "go-jobset",
        "JobSet controller of the e2e toolchain",
        _JOBSET_RELEASE,
        "2026-05-08",
        f"{_PROXY}: sigs.k8s.io/jobset/@v/v0.12.0.info (commit 09e9a3bb) and its zip are served; the @v/list "
        "answers 403",
        _JOBSET_RELEASE,
        _JOBSET_MIRROR,
        "the jobset pin, the controller release the stacks install (equal)",
        module="sigs.k8s.io/jobset",
    ),
    Pin(
        "go-pulumi",
        "Pulumi CLI (engine) of the e2e toolchain",
        "v3.274.1",
        "2026-11-05",
        f"{_PROXY}: github.com/pulumi/pulumi/pkg/v3/@v/list ... v3.252.0 v3.260.0 v3.274.0 v3.274.1 v3.275.0 "
        "v3.276.0; v3.272.0 answers 403. The nearest release at or above the Python SDK, at its newest patch",
        "v3.276.0",
        _PROXY,
        "the Python SDK pulumi==3.272.0 (constraints.txt): the CLI is two minor releases newer (3.274.1), never "
        "older; pkg/v3 v3.272.0 is not served",
        held="the nearest served release at or above the Python SDK's 3.272.0; newer CLIs drift further from it",
        module="github.com/pulumi/pulumi/pkg/v3",
    ),
    Pin(
        "go-pulumi-kubernetes",
        "Pulumi Kubernetes provider (pulumi-resource-kubernetes) of the e2e toolchain",
        "v4.0.0-20260115033456-f47bc2d6f199",
        "2026-01-15",
        f"{_PROXY}: github.com/pulumi/pulumi-kubernetes/provider/v4/@v/list holds only this pseudo-version (the "
        "provider module has no tags of its own); its commit f47bc2d6f199 is the tag v4.25.0 (pulumi/pulumi-kubernetes "
        "mirror of 2026-07-01; its CHANGELOG has no 4.25.0 section, the commit's Unreleased items are listed under "
        "4.26.0; pulumi-kubernetes 4.25.0 on PyPI 2026-01-16)",
        "v4.34.2",
        "pulumi-kubernetes 4.34.2 on PyPI (2026-09-21), the Python SDK of constraints.txt; no provider module "
        f"version for it on the Go proxy ({_PROXY})",
        "the Python SDK pulumi_kubernetes==4.34.2 (constraints.txt): the provider is release v4.25.0, nine minor "
        "releases older than the SDK",
        held="the only provider module version the Go proxy serves",
        module="github.com/pulumi/pulumi-kubernetes/provider/v4",
    ),
    Pin(
        "go-kustomize",
        "kustomize of the e2e toolchain (builds the controllers' release manifests)",
        "v5.8.2",
        "2026-09-30",
        f"{_PROXY}: sigs.k8s.io/kustomize/kustomize/v5/@v/list ends v5.8.1 v5.8.2 v5.8.3",
        "v5.8.3",
        _PROXY,
        "Go 1.26.8: v5.8.2's go.mod says go 1.26.0; the controllers' own Makefiles download kustomize v5.2.1 "
        "(JobSet v0.12.0 Makefile l.347)",
        held="v5.8.3's go.mod says go 1.27.0, newer than the toolchain's Go 1.26.8",
        module="sigs.k8s.io/kustomize/kustomize/v5",
    ),
    Pin(
        "go-prometheus",
        "promtool (Prometheus' PromQL engine and rule tester) of the e2e toolchain: checks the stacks' alert queries",
        "v0.316.0",
        "2026-11-05",
        f"{_PROXY}: github.com/prometheus/prometheus/@v/list ends v0.315.0 v0.315.1 v0.316.0 (the module "
        "versions of Prometheus v3.x: v0.316.0 is release 3.16.0, its VERSION file)",
        "v0.316.0",
        _PROXY,
        "Go 1.26.8: v0.316.0's go.mod says go 1.26.7 (its .promu.yml builds releases with Go 1.27)",
        module="github.com/prometheus/prometheus",
    ),
    Pin(
        "go-custom-metrics",
        "test-adapter of the custom metrics API server library (sigs.k8s.io/custom-metrics-apiserver, its sample "
        "adapter) of the e2e toolchain: stands in for the Custom Metrics Stackdriver Adapter in make e2e",
        "v1.36.0",
        "2026-06-05",
        f"{_PROXY}: sigs.k8s.io/custom-metrics-apiserver/@v/list v1.36.0 v1.37.0; v1.36.0.info Time "
        "2026-06-05T02:08:01Z",
        "v1.37.0",
        f"{_PROXY} (v1.37.0.info Time 2026-09-22T02:04:11Z)",
        "the Kubernetes minor of the toolchain (go-kubernetes v1.36.3): v1.36.0's go.mod requires k8s.io/apiserver "
        "and k8s.io/metrics v0.36.1, so it serves custom.metrics.k8s.io v1beta1 and v1beta2 and external.metrics.k8s.io "
        "v1beta1 as the 1.36 HPA controller asks for them; Go 1.26.8 (its go.mod says go 1.26.0). Not the Stackdriver "
        "adapter the stacks install (pin metrics-adapter): its module, github.com/GoogleCloudPlatform/k8s-stackdriver, "
        "is not served (proxy.golang.org answers 403 for its @v/list and that of its custom-metrics-stackdriver-adapter "
        "module, 2026-11-29)",
        held="v1.37.0 requires k8s.io v0.37.0, a Kubernetes minor newer than the toolchain's 1.36",
        module="sigs.k8s.io/custom-metrics-apiserver",
    ),
)

GO_MODULE_RELEASES: dict[str, str] = {"go-pulumi-kubernetes": "v4.25.0", "go-prometheus": "v3.16.0"}
"""The release a Go pin's pseudo-version is, when its module has no tag of its own (the tag at the commit): the
version the toolchain stamps into the binary."""


def _saxml(key: str, what: str, tag: str) -> Pin:
    """A Saxml image of the seed; its conformance table is the Saxml release of the same tag."""
    return Pin(
        key,
        what,
        f"us-docker.pkg.dev/cloud-tpu-images/inference/{key}:{tag}",
        None,
        "the Saxml seed's manifest (seed-manifests/saxml-lmcloudspmd175b-2xv5e-4x8.yaml)",
        "v1.2.0",
        _SAXML_TAGS,
        f"the Saxml conformance table (saxml-{tag}.json)",
        "no Saxml release since v1.2.0 (2024-02-20)",
        "the Saxml seed's tags, whose flags the conformance table holds; v1.2.0's images were not verified here",
    )


PINS: dict[str, Pin] = {
    p.key: p
    for p in (
        Pin(
            "lws",
            "LeaderWorkerSet controller",
            _LWS_RELEASE,
            "2026-08-11",
            _LWS_MIRROR,
            "v0.10.0",
            _LWS_MIRROR,
            "the CRD the objects are validated against (lws v0.10.0's, in the project's reference material)",
        ),
        Pin(
            "jobset",
            "JobSet controller",
            _JOBSET_RELEASE,
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
            "Pathways server and proxy images of the pathways-job backend (spec.pathwaysVersion)",
            "jax-0.9.0",
            "2026-04-13",
            "AI-Hypercomputer/pathways-utils pathwaysutils/experimental/shared_pathways_service/"
            "deploy_pathways_service.py: flag jax_version defaults to 0.9.0 and the server image is "
            "us-docker.pkg.dev/cloud-tpu-v2-images/pathways/server:jax-{jax_version} (l.22-23 and 256 at 8950a34); "
            "the proxy of a server image is the same tag of proxy_server (gke_utils.py "
            "get_compatible_proxy_server_image, pathwaysutils 0.1.13 on PyPI). Dated by the commit that first "
            "names it (c2a9fe0, 2026-04-13): the images are closed source, their build dates not public",
            "jax-0.9.0",
            "the newest tag a Google source names, read 2026-11-25: still the default of pathwaysutils 0.1.13 "
            "(PyPI, 2026-10-19) and of the pathways-utils mirror of 2026-08-05 (8950a34); AI-Hypercomputer/xpk "
            "(367c838, 2026-06-25) and maxtext (e591f30, 2026-08-22) name only `latest`; jax-0.10.x and dated "
            "tags appear only in public files of unidentified repositories, not verified",
            "the JAX of every pathways-job client: the batch container's PATHWAYS_JAX_VERSION and the interactive "
            "example (jax==0.9.0; pathwaysutils 0.1.11 to 0.1.12 admit it, 0.1.13 needs jax>=0.10.0); not the "
            "jetstream-pathways backend, whose Pathways images stay at pathways-jetstream",
        ),
        Pin(
            "pathways-jetstream",
            "Pathways server and proxy images of the jetstream-pathways backend",
            "jax-0.5.3",
            None,
            "the Pathways on GKE guide (seed 003); the JetStream seeds themselves use `latest`",
            "jax-0.9.0",
            "the newest Pathways release known, the pathways pin's (read 2026-11-25)",
            "the JAX of the jetstream-pathways:v0.2.0 image, the client of these servers (not verified here)",
            "archived with JetStream (2026-02-01)",
            "its client is MaxText in the archived jetstream-pathways:v0.2.0 image, whose JAX it must match",
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
            "v0.16.10",
            None,
            "GoogleCloudPlatform/k8s-stackdriver tag cm-sd-adapter-v0.16.10: newer than the mirror read (2026-08-21, "
            "newest tag cm-sd-adapter-v0.16.9), so read from what names it: PR #1245 (merged, 2026-08-25) moves "
            "deploy/production/adapter_new_resource_model.yaml to image v0.16.10-gke.0, and a public deployment guide "
            "(read 2026-11-27) applies raw.githubusercontent.com/.../cm-sd-adapter-v0.16.10/custom-metrics-stackdriver-"
            "adapter/deploy/production/adapter_new_resource_model.yaml. The tag's date and manifest were not read here",
            "v0.16.10",
            "PR #1252 (merged) prepares v0.16.11; no public reference to a cm-sd-adapter-v0.16.11 tag found "
            "(2026-11-27), so it is not known as a release",
            "the manifest at the tag (deploy/production/adapter_new_resource_model.yaml), installed as the stack's "
            "ConfigGroup; at v0.16.9 it named image v0.16.7-gke.0, at v0.16.10 not read here (v0.16.9-gke.0 or "
            "v0.16.10-gke.0, by the order of PRs #1242 and #1245)",
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
            "llm-d-disagg-sidecar",
            "llm-d router's prefill/decode sidecar image (decode pods of the disaggregated vLLM mode)",
            "ghcr.io/llm-d/llm-d-router-disagg-sidecar:v0.10.0",
            "2026-08-17",
            f"{_LLMD_ROUTER_MIRROR}: tag v0.10.0 (71f4f09), cmd/pd-sidecar; image name and registry from "
            ".github/workflows/ci-release.yaml l.28-31 and ci-build-images.yaml l.101-108 (the release tag is the "
            "image tag, as for the endpoint picker); the tag was not checked against the registry",
            "v0.10.0",
            f"{_LLMD_ROUTER_MIRROR} (v0.10.0-rc.1 2026-08-11, v0.9.0 2026-06-23)",
            "the endpoint picker's release (epp): the picker sets the x-prefiller-host-port header the sidecar "
            "reads (pkg/common/routing/common.go l.14), and its flags (pkg/sidecar/proxy/options.go l.71, l.91-92, "
            "l.164-170) are the ones the disaggregated vLLM mode passes",
            "pre-1.0; the sidecar has no TPU KV connector (--kv-connector: nixlv2, shared-storage, sglang, mooncake, "
            "offloading; constants.go l.21-33): the disaggregated mode uses nixlv2, whose READ mode passes the TPU "
            "connector's kv_transfer_params through (llm-d-router connector_nixlv2.go l.161-179, l.405)",
        ),
        # v0.29.0: the newest vllm-tpu release with both a wheel on PyPI and a public reference to its image
        # tag (no registry was queried). Its flags and environment were read from the 0.29.0 wheels (vllm-tpu,
        # tpu-inference); the pod shape (multi-host Ray group, its environment, the bootstrap script's path)
        # still follows tpu-inference v0.27.0's examples and Dockerfile, the newest tag of the tpu-inference
        # git mirror (the wheels carry neither examples/ nor docker/). The Ray table is not the image's own
        # Ray (unpinned by the wheel, unpublished for the image): tools/conformance/vllm.py PINS says why.
        Pin(
            "vllm-tpu",
            "vLLM TPU image",
            "docker.io/vllm/vllm-tpu:v0.29.0",
            "2026-09-10",
            f"vllm-tpu 0.29.0, {_PYPI}; image tag referenced by AI-Hypercomputer/tpu-recipes "
            "inference/ironwood/vLLM/Qwen3-32B/llm-d/README.md @88193151 (line 17), not checked against a registry",
            "v0.32.0",
            f"vllm-tpu 0.32.0 (2026-10-22), {_PYPI}; no public reference to its image tag found (v0.30.0 and "
            "v0.31.0 neither), so not pinned",
            "the vllm and tpu-inference conformance tables (vllm-0.29.0.json, tpu-inference-0.29.0.json: the "
            "wheel requires tpu-inference==0.29.0, and nixl==0.3.0 as 0.21.0 already did) and a Ray table "
            "(ray-2.60.0.json): the wheel leaves Ray unpinned and the image's Ray release is published nowhere, "
            "so the table stays the newest Ray on PyPI when extracted. The prefill/decode mode's KV connector, "
            "TPUConnector, runs KVConnectorBase_V1's initializer at 0.29.0 (tpu_connector.py l.142-144), so it is "
            "not hit by the 0.27.0-0.29.0 bug of TPUConnectorHMA, whose __init__ skips it (tpu_connector_hma.py "
            "l.51-62; EngineCore fails at start: tpu-inference issue 3468, fixed by PR 3566 after 0.29.0; the reason "
            "llm-d/llm-d PR 2533 pins its TPU P/D guide to v0.26.0); make check's engines category holds every "
            "--kv-transfer-config to a connector the table reads as initialized",
            held="v0.30.0 to v0.32.0 have wheels on PyPI but no public reference to an image (read 2026-11-25)",
        ),
        Pin(
            "jetstream",
            "JetStream + MaxText server image",
            "us-docker.pkg.dev/cloud-tpu-images/inference/jetstream-pathways:v0.2.0",
            None,
            "the JetStream + Pathways seed manifests (the project's reference material)",
            "v0.2.0",
            "no newer image verified here",
            "the MaxText conformance table (maxtext-jetstream-pathways-v0.2.0.json)",
            "archived upstream on 2026-02-01 (AI-Hypercomputer/JetStream README, acd4f5a): it names tpu-inference, "
            "the vllm backend's engine, as the successor",
        ),
        Pin(
            "blackbox-exporter",
            "Prometheus blackbox exporter image (the serving probe)",
            "quay.io/prometheus/blackbox-exporter:v0.28.0",
            "2025-12-04",
            "prometheus/blackbox_exporter tags, mirror of 2026-07-24: tag v0.28.0 (VERSION 0.28.0); the image name and "
            "registry from its README l.4, l.29, l.262 and Makefile l.19, Makefile.common l.84, l.87, l.243 (the image "
            "tag is the build's DOCKER_IMAGE_TAG), published by .circleci/config.yml l.65-73 on release tags v*; the "
            "tag quay.io/prometheus/blackbox-exporter:v0.28.0 is named by public deployments (its registry not read)",
            "v0.28.0",
            "prometheus/blackbox_exporter tags, mirror of 2026-07-24 (v0.27.0 2025-06-30, v0.26.0 2025-02-26)",
            "its CONFIGURATION.md at v0.28.0 (the http module the prober's ConfigMap holds: tpu_serving.operations.prober)",
        ),
        Pin(
            "python",
            "Python image of the host-maintenance gate (tpu_serving.operations.maintenance.maintenance_gate, stdlib only)",
            "gcr.io/distroless/python3-debian13:nonroot",
            None,
            "GoogleContainerTools/distroless python3/README.md (the image's entrypoint is the interpreter, the CMD a .py "
            "file) and python3/python.bzl (oci_image per distro and user; /usr/bin/python3 symlinked to the distro's "
            "Python, 3.13.5 on debian13 by python3/testdata/debian13.yaml); common/variables.bzl USERS, NONROOT = 65532",
            "gcr.io/distroless/python3-debian13:nonroot",
            "a rolling tag: distroless publishes no versioned tags (the same README)",
            "the gate's program: the standard library of Python 3.13, no third-party import",
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
        *_GO_TOOLS,
    )
}
"""Every pin, by key."""


def stale() -> list[Pin]:
    """The pins older than the newest release known to the table."""
    return [p for p in PINS.values() if not p.current]


_GKE_VERSION = re.compile(r"^(latest|\d+\.\d+(\.\d+(-gke\.\d+)?)?)$")
"""Values GKE accepts for ``min_master_version``: ``latest``, a minor, a patch or a full GKE version."""


def gke_version_problem(version: str | None) -> str:
    """Why ``version`` is not a value GKE accepts for ``min_master_version``, or ``""``."""
    if version is None or _GKE_VERSION.match(version):
        return ""
    return "must be `latest` or a GKE version such as 1.31, 1.31.1 or 1.31.1-gke.1146000"
