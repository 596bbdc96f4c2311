"""What the DisaggregatedSet controller of LeaderWorkerSet v0.10.0 and the llm-d router v0.10.0 do, as the runtime
model knows them: the model's own table, each fact with its upstream file and line (read at
``kubernetes-sigs/lws@v0.10.0`` = 2161f38 and ``llm-d/llm-d-router@v0.10.0`` = 71f4f09). The library keeps its own
copy of some of these; ``tests/tools/runtime/test_runtime_disagg.py`` compares the two without the model importing the library.
"""

from __future__ import annotations

from collections.abc import Mapping

# --------------------------------------------------------------------------- DisaggregatedSet (LWS v0.10.0)

DS_KIND = "DisaggregatedSet"
SCALER_KIND = "DisaggregatedSetRoleScaler"
DS_GROUP = "disaggregatedset.x-k8s.io"

DS_NAME_LABEL = "disaggregatedset.x-k8s.io/name"  # api/disaggregatedset/v1/disaggregatedset_types.go:27
DS_ROLE_LABEL = "disaggregatedset.x-k8s.io/role"  # :31
DS_SLICE_LABEL = "disaggregatedset.x-k8s.io/slice"  # :34
DS_REVISION_LABEL = "disaggregatedset.x-k8s.io/revision"  # :38
# Labels the controller puts on each child LeaderWorkerSet and merges over the user's labels of its leader and worker
# pod templates (the controller's win): app=<ds>-<slice>-<role>, name, role, slice, revision
# (pkg/utils/disaggregatedset/utils.go:103-111 GenerateLabels; pkg/controllers/disaggregatedset/lws_manager.go:45-50
# mergeLabels, :70 worker template, :77-82 leader template only when the role sets one, :88 the LWS itself).

CHILD_NAME = "{ds}-{slice}-{revision}-{role}"
"""Each (slice, role) child LeaderWorkerSet's name (pkg/utils/disaggregatedset/utils.go:93-95 GenerateName, called by
lws_manager.go:60 and disaggregatedset_controller.go:332)."""
REVISION_LENGTH = 8
"""The revision: the first 8 hex digits of sha256 over Go's JSON of every role's ``{name, leaderWorkerTemplate}``
(utils.go:142-169 ComputeRevision). The model cannot reproduce Go's encoding of the defaulted object, so it writes
:data:`REVISION` in its place: only the length and that every template change makes a new one are modelled."""
REVISION = "<rev8>"
"""What the model writes for the revision in names and labels (never the real hash)."""
PRV_SUFFIX = "-prv"
"""The controller's headless, port-less Service per role: ``<child LWS>-prv``, selecting name, role, revision and
slice, made once the target revision has a ready replica on every role (service_manager.go:68-72, :94-104,
:132-162 buildService)."""

SCALER_NAME = "{ds}-{role}"
"""The DisaggregatedSetRoleScaler the controller creates for each ``scaling.mode: External`` role
(scaler_manager.go:57 ScalerName, :103-118). A scaler of that name it does not control is not adopted (:151-161): the
role then has no scaler and runs the replicas its LWS has, 0 for a new one (executor.go:240-250
getTargetReplicas returns currentNew)."""
DEFAULT_MAX_SURGE = 1
"""A role's surge groups in a rollout without its own rollingUpdateConfiguration (v0.10.0
pkg/controllers/disaggregatedset/planner.go:52-59 DefaultRollingUpdateConfig); a role's own maxSurge is scaled against
its replicas, rounded up (executor.go:281-295). Old groups go only once the new revision's groups are ready, while
old + new <= target + maxSurge (planner.go:32, :195-215; executor.go:130, :152): a surge group that no slice takes stops
the rollout of every role."""
SCALER_SEED = 1
"""A new role's scaler starts at 1 replica (disaggregatedset_controller.go:147-178 seedForRole: 'For a fresh role (no
LWS yet) the seed is 1 rather than 0 so vanilla HPA can bootstrap via minReplicas')."""
STATIC_DEFAULT_REPLICAS = 1
"""A Static role without ``spec.replicas`` runs 1 (executor.go:251-253)."""
SCALER_SELECTOR = "{name}={ds},{role_label}={role},{worker_index}=0"
"""The scaler's ``status.selector``: the role's leaders only, one pod per LWS group (scaler_manager.go:177-187); an
HPA averages a Pods metric over the pods it selects (CRD lws-v0.10.0-disaggregatedsetrolescalers-crd.yaml:169-172,
the scale subresource's labelSelectorPath)."""

PLACEMENT_NONE = ("", "None")
"""placementPolicy types that inject no affinity (pkg/utils/disaggregatedset/affinity.go:41). ExclusiveSlice and
ExclusiveTopology add a required podAffinity on name+slice with the policy's topology key (:60-69): every pod of a slice,
all roles, must share one domain of that key."""

LWS_NAME_MAX = 63
"""The LWS webhook validates the name as a DNS-1035 label (pkg/webhooks/leaderworkerset_webhook.go:127-129
NameIsDNS1035Label: lowercase letters, digits and '-', starting with a letter, at most 63 characters): a child name
beyond it is refused, and the DisaggregatedSet controller's Create fails (lws_manager.go:101-106)."""
DNS1035 = r"^[a-z]([-a-z0-9]*[a-z0-9])?$"
STATEFULSET_NAME_MAX = 52
"""An LWS group's worker StatefulSet is named after its leader pod, ``<lws>-<group>``
(pkg/controllers/pod_controller.go:438; the leader StatefulSet is ``<lws>``, leaderworkerset_controller.go:846).
A StatefulSet labels its pods ``controller-revision-hash: <statefulset>-<hash of up to 10 characters>``, a label value of
at most 63 characters, so a StatefulSet named beyond 52 characters never creates its pods
(kubernetes/kubernetes#64023, open; #79337)."""

ROLES_MIN, ROLES_MAX = 2, 10
"""spec.roles has 2 to 10 entries (disaggregatedset_types.go:107-111)."""

# --------------------------------------------------------------------------- llm-d router v0.10.0 in P/D mode

LLMD_ROLE_LABEL = "llm-d.ai/role"
"""The label the prefill and decode filters read (pkg/epp/framework/plugins/scheduling/filter/bylabel/roles.go:11)."""
DECODE_ROLES = frozenset({"decode", "prefill-decode", "both", "encode-prefill-decode"})
DECODE_ACCEPTS_UNLABELLED = True
"""decode-filter: the roles above, and pods without the label (roles.go:46-48, ``NewByLabel(..., true, ...)``)."""
PREFILL_ROLES = frozenset({"prefill", "encode-prefill", "prefill-decode", "both", "encode-prefill-decode"})
"""prefill-filter: only labelled pods (roles.go:56-58, allowsNoLabel false)."""
FAIL_CLOSE = "FailClose"
"""InferencePool ``endpointPickerRef.failureMode``: the Gateway drops a request the picker did not answer for
(gateway-api-inference-extension v1.6.0 api/v1/inferencepool_types.go l.182-188); with ``FailOpen`` it would forward
it "to an endpoint of its picking". With FailClose the proxies send a P/D request only where the picker sent it:
the decode pod it picked first (disagg_profile_handler.go:43-45, decode-first), never to a prefill-only pod."""
PREFILL_ONLY_ROLES = PREFILL_ROLES - DECODE_ROLES
"""Pods that only prefill: never the destination of a picked request."""
PREFILL_HEADER = "x-prefiller-host-port"
"""The EPP tells the decode pod's sidecar where to send the prefill leg: ``<prefill pod address>:<its port>``, the
port being the pool's target port for that endpoint (pkg/common/routing/common.go:14;
pkg/epp/framework/plugins/scheduling/profilehandler/disagg/disagg_profile_handler.go:570-573). The request lands on the
decode pod's sidecar, which sends the prefill leg there and then decode to its local vLLM; 'No sidecar or coordination
logic is needed on the prefill or encode nodes' (docs/disaggregation.md:48-57, :168-177)."""
SIDECAR_PORTS: Mapping[str, tuple[str, int]] = {
    "listen": ("--port", 8000),
    "model-server": ("--model-server-port", 8200),
}
"""The P/D sidecar (cmd/pd-sidecar): ``--port`` where it listens (default 8000) and ``--model-server-port`` where its
local vLLM listens (default 8200) (pkg/sidecar/proxy/options.go:91-92 defaults, :262-265 flags)."""
SIDECAR_MARKERS = ("llm-d-router-disagg-sidecar", "routing-sidecar", "--kv-connector")
"""How the model recognises the sidecar container: its image (``ghcr.io/llm-d/llm-d-router-disagg-sidecar``, the
release workflow .github/workflows/ci-release.yaml:28-31; llm-d's guides' ``routing-sidecar``) or its
``--kv-connector`` flag (options.go:268)."""
