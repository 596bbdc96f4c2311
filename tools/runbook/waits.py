"""The runbooks' waits: loops that end by themselves, so that a procedure pasted as a script goes on only once the
cluster has done what the step waited for (a ``get -w`` never ends: GKE review round 62), whatever the serving
workload (SRE review 30, M1: a DisaggregatedSet's, a JobSet's and a PathwaysJob's were ``get -w``)."""

from __future__ import annotations

from tpu_serving_tools.runbook.names import LWS, Names
from tpu_serving_tools.runtime.ds_facts import DS_NAME_LABEL, DS_ROLE_LABEL
from tpu_serving_tools.runtime.facts import JOBSET_NAME_LABEL

STARTED = "T=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
STARTED_AT = f"{STARTED}   # when the pool is labelled"


def ready_again(namespace: str, workload: str) -> str:
    """A loop that ends once every standing group of the LeaderWorkerSet serves: its ``Available`` condition True (a
    ``get -w`` never ends, and a procedure pasted as a script stopped at it: GKE review round 62).

    Not ``status.readyReplicas``: LWS v0.10.0 counts every Ready leader there, a surge group's (index >=
    ``spec.replicas``) included, so during a canary held on its spare slice the count reached the replicas with a
    standing group down (SRE review 32, M2). ``Available`` counts only the groups below ``spec.replicas`` that are Ready
    with their workers, and only once the groups being rolled are updated (``pkg/controllers/
    leaderworkerset_controller.go`` ``updateConditions`` l.434-500: ``readyNonBurstWorkerCount == *lws.Spec.Replicas
    && partitionedUpdatedAndReadyCount == partitionedCurrentNonBurstCount``), so a rollout in progress holds the wait
    too."""
    available = '{.status.conditions[?(@.type=="Available")].status}'
    read = f"kubectl -n {namespace} get leaderworkerset {workload} -o jsonpath='{available}'"
    return f'until [ "$({read})" = True ]; do sleep 30; done   # wait: every standing group serves (Available)'


def role_ready_again(namespace: str, disaggregated_set: str, role: str) -> str:
    """A loop that ends once every LeaderWorkerSet of the DisaggregatedSet's ``role`` has its Ready groups back to its
    replicas, as :func:`ready_again` for one. LWS v0.10.0's controller writes no status on the DisaggregatedSet, and
    makes one LeaderWorkerSet per slice and role, named ``<set>-<slice>-<revision>-<role>``
    (``pkg/utils/disaggregatedset/utils.go`` l.93-95 ``GenerateName``, called at
    ``pkg/controllers/disaggregatedset/lws_manager.go`` l.60), a revision hash the plan cannot know; it labels each
    with the set's name and the role (``utils.go`` l.103-111 ``GenerateLabels``; ``lws_manager.go`` l.88 puts them on
    the LeaderWorkerSet's own metadata), so the loop selects them by those. None found (a kubectl error, or none made
    yet) is not done; an old revision's scaled to 0 is."""
    selector = f"{DS_NAME_LABEL}={disaggregated_set},{DS_ROLE_LABEL}={role}"
    columns = "'{range .items[*]}{.spec.replicas} {.status.readyReplicas}{\"\\n\"}{end}'"
    done = "awk '$2 + 0 < $1 + 0 {n++} END {exit (n > 0 || NR == 0)}'"
    return (
        f"until kubectl -n {namespace} get leaderworkerset -l {selector} -o jsonpath={columns} | {done}; do sleep 30; "
        f"done   # wait: every {role} LeaderWorkerSet's READY back to its replicas"
    )


def pods_ready_again(namespace: str, jobset: str, pods: int, note: str = "") -> str:
    """A loop that ends once ``pods`` pods of the JobSet ``jobset`` are Ready (the plan's count: a JobSet restarted
    makes its pods Job by Job, so all those made Ready is not yet all). The JobSet controller labels every pod it makes
    ``jobset.sigs.k8s.io/jobset-name=<jobset>`` (kubernetes-sigs/jobset v0.12.0 ``pkg/controllers/jobset_controller.go``
    l.950 on each Job's pod template, l.1020); the manifests' own labels (``app.kubernetes.io/instance``) select the
    Saxml cell's Deployments and its publisher Job too, whose finished pod is never Ready."""
    ready = '{.status.conditions[?(@.type=="Ready")].status}'
    read = f"kubectl -n {namespace} get pods -l {JOBSET_NAME_LABEL}={jobset} -o jsonpath='{{range .items[*]}}{ready}{{\"\\n\"}}{{end}}'"
    return f'until [ "$({read} | grep -c True)" -ge {pods} ]; do sleep 30; done   # wait: all {pods} pods Ready again{note}'


def serving_again(n: Names) -> list[str]:
    """The loops that end once the runbook's workload serves again: a LeaderWorkerSet's READY back to its replicas;
    each role's LeaderWorkerSets' for a DisaggregatedSet; every pod of a JobSet Ready, or of the JobSet a PathwaysJob's
    controller makes, of its own name (google/pathways-job v0.1.4 ``pathwaysjob_controller.go`` l.249-250)."""
    if n.kind == LWS:
        return [ready_again(n.namespace, n.workload)]
    if n.kind == "disaggregatedset":
        return [role_ready_again(n.namespace, n.workload, role) for role in n.roles]
    note = " (a job that has failed or finished never is: the preview's Drain: line)" if n.kind == "pathwaysjob" else ""
    return [pods_ready_again(n.namespace, n.workload, n.pods, note)]


def until_back(selector: str, what: str = "the pool") -> str:
    """A loop that ends once every node of ``selector`` has been Ready since ``$T`` (it went down for its maintenance
    and came back), and not before: GKE may take the perform label off within a minute, hours before (a public GPU
    run). No node selected does not end it. docs/operate.md, "Start it yourself", step 4, prints the same line."""
    ready = '{.status.conditions[?(@.type=="Ready")]'
    columns = f"'{{range .items[*]}}{ready}.status}} {ready}.lastTransitionTime}}{{\"\\n\"}}{{end}}'"
    done = 'awk -v t="$T" \'$1 != "True" || $2 <= t {n++} END {exit (n > 0 || NR == 0)}\''
    return (
        f"until kubectl get nodes -l {selector} -o jsonpath={columns} | {done}; do sleep 60; done"
        f"   # done: every node of {what} Ready again since $T"
    )


def grown(namespace: str, workload: str) -> str:
    """A loop that ends once the LeaderWorkerSet holds more groups than ``$N``: the HPA acts on a raised minimum at
    its next sync, not at once (kubernetes v1.36.3 pkg/controller/podautoscaler/horizontal.go ``updateHPA`` ->
    ``enqueueHPA`` -> ``queue.AddRateLimited``, a 15 s resync by default; measured 12 s on the e2e control plane by SRE
    review 29), so a READY loop read at once sees the old replicas all Ready and ends before the group exists."""
    read = f"kubectl -n {namespace} get leaderworkerset {workload} -o jsonpath='{{.spec.replicas}}'"
    return f'until [ "$({read})" -gt "$N" ] 2>/dev/null; do sleep 5; done   # wait: the HPA has added the group'
