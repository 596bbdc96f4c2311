"""What the disaggregated vLLM mode relies on: tpu-inference's TPU KV connector, the LeaderWorkerSet v0.10.0
DisaggregatedSet API and the llm-d router's prefill/decode sidecar, each with its upstream source.

The upstream facts are gathered, with their sources, in docs/design/disaggregated-vllm.md; the releases read are
the tpu-inference 0.29.0 and vllm-tpu 0.29.0 wheels the pinned image requires (``TI29``, ``V29``),
kubernetes-sigs/lws@v0.10.0 (``LWS``) and llm-d/llm-d-router@v0.10.0 (``RTR``).
"""

import json
from dataclasses import dataclass

from ...catalog.images import pinned_image_problem
from ...catalog.versions import PINS
from ...common.settings import described
from ...common.validation import Choice
from .facts import HTTP_PORT

# --------------------------------------------------------------------------- the TPU KV connector (tpu-inference)

CONNECTOR = "TPUConnector"
"""The KV connector of the TPU platform for plain-attention models (TI29 tpu_inference/platforms/tpu_platform.py
l.464-472 allows TPUConnector, TPUConnectorHMA, TPUOffloadConnector, RaidenOffloadConnector; TPUConnectorHMA is for
hybrid models, which the library does not serve disaggregated)."""
CONNECTOR_MODULE = "tpu_inference.distributed.tpu_connector"
"""``kv_connector_module_path``: required, vLLM's registry does not know the TPU connectors (V29
vllm/distributed/kv_transfer/kv_connector/factory.py l.102-113 imports the module and takes the class named by
``kv_connector``); every upstream example passes it (tpu-inference examples/disagg/run_disagg_multi_host.sh
l.268, l.341 at b8692ff)."""

KV_TRANSFER_PORT = 9100
"""``TPU_KV_TRANSFER_PORT``: the jax transfer server's control port, on every host of both roles (TI29
tpu_inference/distributed/utils.py l.61-63, default 9100; started in ``register_runner``, tpu_connector.py
l.556, l.570-582, bound on the pod IP)."""
SIDE_CHANNEL_PORT = 9600
"""``TPU_SIDE_CHANNEL_PORT``: the ZMQ side channel; prefill binds a ROUTER on it, decode connects to the prefill
host on *its own* value, so both roles must use the same (TI29 utils.py l.66-68, default 9600;
tpu_connector.py l.505-514, l.587-593, l.882-905)."""
KV_TRANSFER_PORT_ENV = "TPU_KV_TRANSFER_PORT"
SIDE_CHANNEL_PORT_ENV = "TPU_SIDE_CHANNEL_PORT"
HOST_IP_ENV = "VLLM_HOST_IP"
"""The address each worker advertises and binds (TI29 utils.py l.56-58 -> V29 vllm/utils/network_utils.py
l.34-73): the pod IP, from the downward API. Ray does not copy it to its workers (V29
vllm/v1/executor/ray_utils.py l.33-41), so every pod of a group sets its own."""
PULL_TIMEOUT_ENV = "TPU_P2P_WAIT_PULL_TIMEOUT"
"""The KV transfer timeout, in seconds (TI29 tpu_inference/distributed/utils.py l.88-91, default ``"180"``): how long
prefill holds a finished request's blocks for decode's pull (tpu_connector.py l.446-452, released at expiry
l.924-936, "KV transfer timeout. Force recycle the memory buffer."), and how long decode waits for a pull's arrays to
become ready (l.842-850) before it inserts them into its KV cache whether they are or not (l.851-872, l.664-668).

Prefill's window starts when it finishes the one-token prefill leg (``request_finished``, l.410-463), but decode
starts its pull only once its scheduler has allocated the request's blocks (``update_state_after_alloc``,
l.328-371): a request that waits in decode's queue longer than the window finds its prefill blocks recycled (free for other requests), and
decode waits up to the window for arrays that may never become ready and inserts them regardless. The window therefore has to outlast decode's queueing,
which at the HPA's KV-cache target runs to tens of seconds; the library keeps upstream's 180 s
(:data:`PULL_TIMEOUT_SECONDS`) and sizes a prefill server's exit from it instead (it waits the window out, unready,
before it drains: :func:`~.lifecycle.shutdown`, and the prefill HPA removes one such group at a time)."""
PULL_TIMEOUT_SECONDS = 180
"""tpu-inference's default ``TPU_P2P_WAIT_PULL_TIMEOUT`` (TI29 tpu_inference/distributed/utils.py l.90)."""
BULK_PORTS = (32768, 60999)
"""The bulk KV transfer listens on ``TPU_KV_TRANSFER_CHANNEL_NUMBER`` (8) kernel-chosen ports (``f"{host_ip}:0"``,
TI29 tpu_connector.py l.570-582), which decode connects to: Linux's default ``net.ipv4.ip_local_port_range``
(32768 60999, kernel Documentation/networking/ip-sysctl.rst). A NetworkPolicy admits the range with ``endPort``
(GA in Kubernetes 1.25, KEP-2079); they cannot be declared as container ports."""

SIDECAR_IDLE_SECONDS = 300
"""How long the sidecar's HTTP server keeps an idle client connection: ``IdleTimeout: 300 * time.Second``, fixed
(RTR pkg/sidecar/proxy/proxy_helpers.go l.52-57; no flag sets it, options.go). It is the server the gateway's load
balancer reaches on a decode leader, and it is below the load balancer's fixed 600 s
(:data:`~tpu_serving.traffic.gateway_settings.LB_BACKEND_KEEPALIVE_SECONDS`): the preview says so."""

DECODE_SERVER_PORT = 8200
"""Decode's vLLM port behind the sidecar: the sidecar's ``--model-server-port`` default (RTR
pkg/sidecar/proxy/options.go l.92), as llm-d's TPU DisaggregatedSet guide runs it."""


class KvRole(Choice):
    """The part an engine plays in a prefill/decode pair."""

    PREFILL = "prefill"
    """Computes the prompt's KV cache and holds it until decode pulls it (``kv_producer``)."""
    DECODE = "decode"
    """Pulls the KV cache from a prefill server and generates (``kv_consumer``)."""

    @property
    def kv_role(self) -> str:
        """``kv_role`` of ``--kv-transfer-config``: never ``kv_both``, which makes a TPU connector a producer that
        never pulls (the connector only checks ``is_kv_producer``, TI29 tpu_connector.py l.267, l.471; V29
        vllm/config/kv_transfer.py l.11-13, l.113-118: ``kv_both`` is a producer)."""
        return "kv_producer" if self == KvRole.PREFILL else "kv_consumer"


def kv_transfer_config(role: KvRole) -> str:
    """``--kv-transfer-config`` of ``role``, as every upstream example writes it (run_disagg_multi_host.sh l.268,
    l.341; run_disagg_single_host.sh l.172, l.212). No ``kv_connector_extra_config``: the TPU connector reads no key
    of it, and ``kv_ip``/``kv_port`` are ignored (addresses come from the environment above)."""
    return json.dumps(
        {"kv_connector": CONNECTOR, "kv_connector_module_path": CONNECTOR_MODULE, "kv_role": role.kv_role},
        separators=(",", ":"),
    )


PD_FLAGS: tuple[str, ...] = ("--no-enable-prefix-caching",)
"""Both roles run without prefix caching, as every upstream example does (run_disagg_multi_host.sh l.261-269,
l.334-342): at 0.29.0 a full local prefix hit on decode never notifies prefill, which then holds the blocks for
``TPU_P2P_WAIT_PULL_TIMEOUT`` (:data:`PULL_TIMEOUT_SECONDS` by default; fixed in 0.32.0, design note section 1.6)."""

# --------------------------------------------------------------------------- llm-d router (prefill/decode)

PD_ROLE_LABEL = "llm-d.ai/role"
"""The label the endpoint picker's ``prefill-filter`` and ``decode-filter`` read (RTR
pkg/epp/framework/plugins/filter/bylabel/roles.go l.11, l.33-60); decode also admits pods without it, so both
roles carry it."""
SIDECAR_CONNECTOR = "nixlv2"
"""The sidecar's ``--kv-connector`` (RTR pkg/sidecar/proxy/options.go l.164-170; constants.go l.21-33: no TPU
connector). In nixlv2's READ mode the prefill leg goes out with ``max_tokens`` 1 and decode gets the prefill
response's ``kv_transfer_params`` verbatim (connector_nixlv2.go l.161-179, l.405): the TPU connector's ``uuid``,
``remote_block_ids``, ``remote_host``, ``remote_port`` reach decode, as tpu-inference's toy proxy passes them."""


def sidecar_args(inference_pool: str) -> list[str]:
    """The sidecar's flags at v0.10.0: it takes clients on the serving port and runs decode on the local vLLM
    (RTR pkg/sidecar/proxy/options.go l.58-59, l.91-92, l.262-264 ``--port`` 8000 and ``--model-server-port`` 8200;
    l.62, l.268-269 ``--kv-connector``; l.71, l.278 ``--secure-proxy``: plain HTTP to the model servers, which serve
    no TLS).

    With SSRF protection (l.67, l.280 ``--enable-ssrf-protection``, default false): the sidecar sends a prefill leg
    only to a host in its allowlist, the pod IPs and names of ``--inference-pool`` ``<namespace>/<name>`` (l.73,
    l.338, l.373-381; it is required with the protection, l.667-672), else answers 403 (chat_completions.go
    l.117-130; allowlist.go l.198-214, l.389-399). Without it a caller of the decode Service could name any host
    in ``x-prefiller-host-port`` and the decode pod, which has open egress, would post the prompt there.
    ``--pool-group`` keeps its default, ``inference.networking.k8s.io`` (l.225; pkg/common/routing/common.go l.28),
    read as ``v1`` (allowlist.go l.46-49). What it reads, with the pod's service account (allowlist.go l.94-107,
    in-cluster configuration): that InferencePool by name and the pods its selector matches, in its namespace
    (l.140-167, l.297-314), :func:`~.disagg_pods.sidecar_role`."""
    return [
        f"--port={HTTP_PORT}",
        f"--model-server-port={DECODE_SERVER_PORT}",
        f"--kv-connector={SIDECAR_CONNECTOR}",
        "--secure-proxy=false",
        "--enable-ssrf-protection=true",
        f"--inference-pool={inference_pool}",
    ]


# --------------------------------------------------------------------------- LeaderWorkerSet v0.10.0 DisaggregatedSet

DS_API_VERSION = "disaggregatedset.x-k8s.io/v1"
DS_KIND = "DisaggregatedSet"
ROLE_SCALER_KIND = "DisaggregatedSetRoleScaler"
"""Created by the DisaggregatedSet controller, named ``<ds>-<role>``, for each role with ``scaling.mode: External``
(LWS pkg/controllers/disaggregatedset/scaler_manager.go; api/disaggregatedset/v1/disaggregatedsetrolescaler_types.go
l.32-44, seeded at 1 replica): the stack never declares it, it scales it through its ``/scale``."""


def role_scaler(name: str, role: KvRole) -> str:
    """The name of DisaggregatedSet ``name``'s role scaler of ``role`` (:data:`ROLE_SCALER_KIND`), which the role's
    HorizontalPodAutoscaler targets and is named after."""
    return f"{name}-{role.value}"


DS_NAME_LABEL = "disaggregatedset.x-k8s.io/name"
DS_ROLE_LABEL = "disaggregatedset.x-k8s.io/role"
"""Labels the controller puts on each child LeaderWorkerSet and merges onto its pod templates, its own values
winning (LWS pkg/utils/disaggregatedset/utils.go l.93-111, l.144-169); the templates carry the same values, so a
selector of the plan and of the cluster agree."""
WORKER_INDEX_LABEL = "leaderworkerset.sigs.k8s.io/worker-index"
"""Set by the LWS pod webhook: ``"0"`` on a group's leader. The role scaler's selector is
``<name>,<role>,worker-index=0`` (LWS scaler_manager.go l.177-187), so one replica counts one group's leader."""
DS_NAME_MAX = 30
"""Child LeaderWorkerSets are named ``<ds>-<slice>-<rev8>-<role>`` (LWS lws_manager.go l.59-99, utils.go
l.93-111); each group's workers are the StatefulSet ``<lws>-<group>`` (pod_controller.go l.438), and a
StatefulSet's name must leave room for the ``controller-revision-hash`` label value ``<name>-<10-char hash>``
(63 characters, so 52 for the name: kubernetes/kubernetes#64023; the pods of a longer one are never created).
``<ds>`` keeps 30 for slice ``0``, an 8-hex revision, ``prefill`` and a two-digit group index:
52 - len("-0-") - 8 - len("-prefill") - len("-99")."""


@dataclass(frozen=True)
class KvTransfer:
    """The engine's part in a disaggregated prefill/decode pair: the TPU KV connector's role, and on decode the
    llm-d router's sidecar in front of the server."""

    role: KvRole = described("`prefill` (KV producer) or `decode` (KV consumer, behind the router's sidecar).")
    """``prefill`` (KV producer) or ``decode`` (KV consumer, behind the router's sidecar)."""
    sidecar_image: str = described(
        "The llm-d router's prefill/decode sidecar image (decode only).",
        default=PINS["llm-d-disagg-sidecar"].value,
        check=pinned_image_problem,
    )
    """The llm-d router's prefill/decode sidecar image (decode only)."""
    pull_timeout_seconds: int = described(
        "Seconds decode waits for a KV pull and prefill holds a request's blocks for it (`TPU_P2P_WAIT_PULL_TIMEOUT`, "
        "upstream's 180 s by default): longer than a request may wait in decode's queue, or its prefilled blocks are "
        "recycled before decode pulls them; a prefill server that stops waits as long, unready, before it drains.",
        default=PULL_TIMEOUT_SECONDS,
        ge=5,
        le=600,
    )
    """``TPU_P2P_WAIT_PULL_TIMEOUT`` on both roles (:data:`PULL_TIMEOUT_ENV`)."""
    inference_pool: str = described(
        "`<namespace>/<name>` of the InferencePool whose pods the sidecar may send a prefill leg to (its SSRF "
        "allowlist; decode only).",
        default="",
    )
    """``<namespace>/<name>`` of the InferencePool whose pods the sidecar may send a prefill leg to (decode only)."""

    @property
    def server_port(self) -> int:
        """Where vLLM listens: the serving port on prefill, the sidecar's model-server port on decode."""
        return DECODE_SERVER_PORT if self.role == KvRole.DECODE else HTTP_PORT
