"""The leader's wait for its weights: an init container that holds the group until the checkpoint is in the bucket.

Without it, a group whose weights are not yet copied starts ``vllm serve`` on an empty mount, fails, and its startup
probe restarts it every ``probes.max_startup_seconds`` (an hour by default) on slices that bill (new-user review:
"until they are there, the group restarts every hour"). The init container waits for the checkpoint's
``config.json`` (every Hugging Face checkpoint has one; vLLM reads it first) under the mount of the model's folder
and logs once a minute what it waits for; the server starts once it is there. An init container has no startup
probe, so nothing restarts the pod meanwhile; the group shows as not ready, and its alerts say so.

It reads the GCS FUSE mount, which an init container can do only after the driver's sidecar serves it: from GKE
1.29 the driver's webhook injects ``gke-gcsfuse-sidecar`` as a native sidecar at the head of ``initContainers``
(GoogleCloudPlatform/gcs-fuse-csi-driver pkg/webhook/injection.go @01870a9, ``injectSidecarContainer``:
``insert(pod.Spec.InitContainers, ..., getInjectIndex(...))``, index 0 unless an ``istio-proxy`` comes first), so it
runs before this one. The other loaders (the Run:ai streamer reads ``gs://`` itself; Hugging Face downloads) have no
mount to look at and get no wait.
"""

import shlex

import pulumi_kubernetes as k8s

from ...podspec import container_security, requests
from .args import VllmServingArgs, WeightsLoader
from .facts import WEIGHTS_MOUNT, WEIGHTS_VOLUME

MARKER = "config.json"
"""The file whose presence says the checkpoint is there (a Hugging Face checkpoint's model configuration)."""
CONTAINER = "wait-for-weights"
INTERVAL_SECONDS = 60


def wait_script(bucket: str, model: str) -> str:
    """Until ``config.json`` is under the model's mount: a line a minute naming the object it waits for."""
    marker = f"{WEIGHTS_MOUNT}/{MARKER}"
    said = shlex.quote(
        f"waiting for the weights: gs://{bucket}/{model}/{MARKER} is not there yet; copy the checkpoint "
        "(docs/backends.md, Weights) and the server starts"
    )
    return f"until [ -f {marker} ]; do echo {said}; sleep {INTERVAL_SECONDS}; done; echo weights found: {marker}"


def weights_wait_container(args: VllmServingArgs) -> k8s.core.v1.ContainerArgs | None:
    """The leader's init container that waits for the checkpoint (GCS FUSE loader only), in the engine's image (on
    the node already: no other pull), with the weights mount alone."""
    if args.loader != WeightsLoader.GCSFUSE or args.weights_bucket is None:
        return None
    return k8s.core.v1.ContainerArgs(
        name=CONTAINER,
        image=args.images.engine,
        command=["/bin/sh", "-c"],
        args=[wait_script(str(args.weights_bucket), args.model)],
        resources=requests("10m", "32Mi", {}),
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name=WEIGHTS_VOLUME, mount_path=WEIGHTS_MOUNT, read_only=True)],
        security_context=container_security(),
    )
