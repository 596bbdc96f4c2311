"""The leader's wait for its weights: an init container that holds the group until the checkpoint is in the bucket.

Without it, a group whose weights are not yet copied starts ``vllm serve`` on an empty mount, fails, and its startup
probe restarts it every ``probes.max_startup_seconds`` (an hour by default) on slices that bill (new-user review:
"until they are there, the group restarts every hour"). The init container waits for the whole checkpoint
(``config.json`` and every shard its index names: :data:`COMPLETE`) under the mount of the model's folder and logs
once a minute what it waits for; the server starts once it is there. An init container has no startup
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

from ...common.podspec import container_security, requests, term_trap
from .args import VllmServingArgs, WeightsLoader
from .facts import WEIGHTS_MOUNT, WEIGHTS_VOLUME

MARKER = "config.json"
"""The file vLLM reads first (a Hugging Face checkpoint's model configuration)."""
INDEX = "model.safetensors.index.json"
"""A sharded checkpoint's index: its ``weight_map`` names every shard file."""
CONTAINER = "wait-for-weights"
INTERVAL_SECONDS = 60

COMPLETE = (
    "import json, os, sys; d = sys.argv[1]; i = os.path.join(d, {index!r}); "
    "names = os.listdir(d) if os.path.isdir(d) else []; "
    "shards = set(json.load(open(i))['weight_map'].values()) if os.path.isfile(i) else "
    "[n for n in names if n.endswith('.safetensors')]; "
    "sys.exit(0 if {marker!r} in names and shards and all(os.path.isfile(os.path.join(d, s)) for s in shards) else 1)"
)
"""Whether the checkpoint is whole: ``config.json``, and every shard the index names (else one ``.safetensors`` file at
least). ``config.json`` alone is no proof: a parallel ``gcloud storage cp -r`` lands it within seconds of the start,
and a server started then fails on the missing shards and reloads (GKE review round 63, m2). Each object appears in
the bucket only once its upload completes, so a shard that is there is whole."""


def wait_script(bucket: str, model: str) -> str:
    """Until the checkpoint under the model's mount is whole (:data:`COMPLETE`): a line a minute naming where."""
    check = shlex.join(["python3", "-c", COMPLETE.format(index=INDEX, marker=MARKER), WEIGHTS_MOUNT])
    said = shlex.quote(
        f"waiting for the weights: gs://{bucket}/{model}/ lacks {MARKER} or a shard its {INDEX} names; copy the "
        "checkpoint (docs/backends.md, Weights) and the server starts; if it is there, check the model folder, the "
        "bucket grant and the mount (the pod's events)"
    )
    # PID 1 of its container: a group deleted while it waits leaves at once (:func:`~tpu_serving.common.podspec.term_trap`)
    return (
        f"{term_trap()}until {check}; do echo {said}; sleep {INTERVAL_SECONDS} & wait $!; done; "
        f"echo weights found: {WEIGHTS_MOUNT}"
    )


def weights_wait_container(args: VllmServingArgs) -> k8s.core.v1.ContainerArgs | None:
    """The init container that waits for the checkpoint (GCS FUSE loader only), on the leader and on a multi-host
    group's workers alike, in the engine's image (on the node already: no other pull; its ``python3``), with the
    weights mount alone. The workers wait too: a worker's Ray wait gives up after ``ray_init_timeout``, and a worker
    restarted while its leader is no longer Pending gets the serving group recreated (GKE review round 63, m1)."""
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
