"""The decode leader's routing sidecar of the disaggregated mode: the llm-d router's prefill/decode proxy, and the
service account token only it mounts."""

import pulumi_kubernetes as k8s

from ...common.podspec import container_security, requests
from .args import VllmServingArgs
from .facts import HTTP_PORT
from .kv import KvRole, sidecar_args


def sidecar_container(args: VllmServingArgs) -> k8s.core.v1.ContainerArgs | None:
    """The llm-d router's prefill/decode sidecar on a decode leader, a native sidecar (an init container that keeps
    running, ``restartPolicy: Always``, Kubernetes 1.29 and later) as llm-d's TPU DisaggregatedSet guide runs it
    (guides/pd-disaggregation/modelserver/tpu/v7-dynamic-slice/vllm/base/disaggregatedset.yaml @33a21d7). It takes
    the clients on the serving port, sends the prefill leg to the prefill server the endpoint picker named in
    ``x-prefiller-host-port`` and decode to the local vLLM (llm-d-router@v0.10.0 docs/disaggregation.md l.48-57)."""
    kv = args.kv_transfer
    if kv is None or kv.role != KvRole.DECODE:
        return None
    return k8s.core.v1.ContainerArgs(
        name="routing-sidecar",
        image=kv.sidecar_image,
        args=sidecar_args(kv.inference_pool),
        restart_policy="Always",
        ports=[k8s.core.v1.ContainerPortArgs(name="http", container_port=HTTP_PORT)],
        # Readiness on the sidecar's own health route (llm-d-router@v0.10.0 pkg/sidecar/proxy/proxy.go l.624-626:
        # ``GET /health`` answers 200 from the proxy itself); a native sidecar's readiness counts in the pod's
        # (https://kubernetes.io/docs/concepts/workloads/pods/sidecar-containers/), so a hung sidecar takes the
        # decode leader out of the pool. No liveness probe and no memory limit: a restart of any container
        # recreates the whole group (lws v0.10.0 pkg/utils/pod/pod_utils.go l.28-45 ``ContainerRestarted``), and
        # llm-d's guide gives the sidecar no resources to size a limit from (``resources: {}``, @33a21d7 above).
        readiness_probe=k8s.core.v1.ProbeArgs(
            http_get=k8s.core.v1.HTTPGetActionArgs(path=SIDECAR_HEALTH_PATH, port=HTTP_PORT, scheme="HTTP"),
            period_seconds=10,
            failure_threshold=3,
        ),
        resources=requests(*ROUTING_SIDECAR_REQUESTS),
        security_context=container_security(),
        volume_mounts=[k8s.core.v1.VolumeMountArgs(name=SIDECAR_TOKEN_VOLUME, mount_path=TOKEN_DIR, read_only=True)],
    )


SIDECAR_HEALTH_PATH = "/health"
"""The routing sidecar's own health route (llm-d-router@v0.10.0 pkg/sidecar/proxy/proxy.go l.624-626)."""

SIDECAR_TOKEN_VOLUME = "sidecar-api-token"
TOKEN_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
"""Where client-go's in-cluster configuration reads the token, the CA and the namespace (client-go rest/config.go
``InClusterConfig``: ``tokenFile``, ``rootCAFile``), which the sidecar's SSRF allowlist uses
(llm-d-router@v0.10.0 pkg/sidecar/proxy/allowlist.go l.94-107)."""


def sidecar_token_volume() -> k8s.core.v1.VolumeArgs:
    """The service account token, the cluster's CA and the namespace, as the kubelet mounts them when a pod
    automounts its token (a projected volume of a ``serviceAccountToken``, the ``kube-root-ca.crt`` ConfigMap and
    the downward API's namespace: Kubernetes docs, "Configure Service Accounts for Pods", "Launch a Pod using
    service account token projection"; Kubernetes 1.34 BoundServiceAccountTokenVolume), mounted into the router's
    sidecar alone: the pod keeps ``automountServiceAccountToken: false``, so vLLM and Ray get no token."""
    return k8s.core.v1.VolumeArgs(
        name=SIDECAR_TOKEN_VOLUME,
        projected=k8s.core.v1.ProjectedVolumeSourceArgs(
            sources=[
                k8s.core.v1.VolumeProjectionArgs(
                    service_account_token=k8s.core.v1.ServiceAccountTokenProjectionArgs(
                        path="token", expiration_seconds=3607
                    )
                ),
                k8s.core.v1.VolumeProjectionArgs(
                    config_map=k8s.core.v1.ConfigMapProjectionArgs(
                        name="kube-root-ca.crt", items=[k8s.core.v1.KeyToPathArgs(key="ca.crt", path="ca.crt")]
                    )
                ),
                k8s.core.v1.VolumeProjectionArgs(
                    downward_api=k8s.core.v1.DownwardAPIProjectionArgs(
                        items=[
                            k8s.core.v1.DownwardAPIVolumeFileArgs(
                                path="namespace",
                                field_ref=k8s.core.v1.ObjectFieldSelectorArgs(field_path="metadata.namespace"),
                            )
                        ]
                    )
                ),
            ]
        ),
    )


ROUTING_SIDECAR_REQUESTS: tuple[str, str] = ("1", "1Gi")
"""CPU and memory requests of the decode leader's routing sidecar."""
