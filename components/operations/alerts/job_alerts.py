"""The alert on a JobSet-run workload whose pods are not all running (a PathwaysJob: its controller makes one JobSet
of a ``pathways-head`` Job and one ``worker`` Job per slice), which :class:`~tpu_serving.operations.observability.Observability`
creates when the backend names the pods (:attr:`~tpu_serving.operations.observability.ServingMetrics.job_pods`).

It reads only ``kube_pod_status_phase``, a series of GKE's managed kube state metrics ``POD`` package
(:data:`tpu_serving.operations.observability.POD_PHASE`): a pod Pending (its slice gone to a repair, a host maintenance event or
a stockout), Failed (the job failed: JobSet keeps a failed run's Jobs and their failed pods until it restarts them or
is deleted) or Unknown for the alert's minutes fires it; so does, for a workload that should run until stopped, no pod
Running at all.
"""

from dataclasses import dataclass

KEY = "job-not-running"
PHASE = "kube_pod_status_phase"
"""As :data:`tpu_serving.operations.observability.POD_PHASE` (kept apart so that module stays within its size)."""
NOT_RUNNING_PHASES = "Pending|Failed|Unknown"


@dataclass(frozen=True)
class JobPods:
    """The pods of a JobSet-run workload."""

    kind: str
    """What the pods run, e.g. ``PathwaysJob pathways``, for the alert's title and runbook."""
    pattern: str
    """RE2 pattern of the pods' names (JobSet names a pod ``<jobset>-<replicatedJob>-<job index>-<pod index>-<x>``)."""
    runs_until_stopped: bool
    """True: an interactive or serving workload, whose pods should all be Running; False: a batch job, whose pods
    finish (Succeeded) and so fire only while Pending, Failed or Unknown."""
    delete: str = ""
    """The ``kubectl delete`` arguments that clear the failed workload for ``pulumi up --refresh`` to recreate it
    (``pathwaysjob <name>``, ``jobset <name>``); empty: the page names the workload generically."""


def not_running_alert(cluster: str, namespace: str, pods: JobPods, minutes: int) -> tuple[str, str, str, int, str, str]:
    """``(key, title, query, minutes, runbook, severity)`` of the alert (an
    :class:`~tpu_serving.operations.alerts.alert_policies.Alert`): ERROR, the job does not run (a failed JobSet does not come back by
    itself)."""
    where = f'cluster="{cluster}",namespace="{namespace}",pod=~"{pods.pattern}"'
    stuck = f'(sum({PHASE}{{{where},phase=~"{NOT_RUNNING_PHASES}"}}) > 0)'
    query = stuck
    if pods.runs_until_stopped:
        running = f'(sum({PHASE}{{{where},phase="Running"}}) or on() vector(0))'
        query = f"{stuck} or on() ({running} == 0)"
    gone = " or none runs" if pods.runs_until_stopped else ""
    runbook = (
        f"A pod of {pods.kind} in namespace {namespace} has been Pending, Failed or Unknown{gone} for {minutes} "
        f"minutes. `kubectl -n {namespace} get pods,jobsets`: a Pending pod waits for its slice (repair, host "
        "maintenance, stockout); a failed JobSet (ReachedMaxRestarts) stays failed and pulumi up does not recreate "
        f"it: delete it (`kubectl -n {namespace} delete {pods.delete or '<its workload>'}`), then pulumi up "
        "--refresh. Its TPU slices bill meanwhile."
    )
    return KEY, f"{pods.kind} pods not running", query, minutes, runbook, "ERROR"
