"""The stack file's ``controllerInstalls``: whether the stack installs (and owns) each controller, or the cluster runs
it already (docs/existing-cluster.md)."""

from __future__ import annotations

from pydantic import Field

from ..common.settings import CreateOrExisting, Model

MODE_CONTROLLERS = ("lws", "jobset", "pathways-job")
"""The controllers (``Controller.name``) whose install mode the stack file sets here (the metrics adapter's is
``serving.autoscaling.adapterInstall``)."""


def _controller_install(controller: str) -> CreateOrExisting | None:
    return Field(
        None,
        description=f"`create`: the stack installs and owns the {controller} release (its CRDs, webhooks, namespace "
        "and cluster roles, deleted by `pulumi destroy`, with every custom resource of theirs in the cluster); "
        "`existing`: the cluster runs it already, and the stack installs nothing (the preview names the release it "
        "expects and that the stack does not own it); unset: `create` on a cluster the stack creates, `existing` "
        "on an existing one (`cluster.existing`), where a shared cluster's controller is the platform's: a tenant "
        "stack that owned it would delete every tenant's custom resources when destroyed.",
    )


class ControllerInstallsConfig(Model):
    """Whether the stack installs each controller or the cluster runs it already (the stack file's
    ``controllerInstalls``; the metrics adapter's is ``serving.autoscaling.adapterInstall``)."""

    lws: CreateOrExisting | None = _controller_install("LeaderWorkerSet")
    jobset: CreateOrExisting | None = _controller_install("JobSet")
    pathways_job: CreateOrExisting | None = _controller_install("PathwaysJob")

    def of(self, controller: str, existing_cluster: bool) -> CreateOrExisting:
        """The install mode of controller ``controller`` (``lws``, ``jobset``, ``pathways-job``; any other is
        created), unset resolved by the cluster's mode (``existing_cluster``)."""
        given = {"lws": self.lws, "jobset": self.jobset, "pathways-job": self.pathways_job}.get(controller)
        if given is not None:
            return given
        if existing_cluster and controller in MODE_CONTROLLERS:
            return CreateOrExisting.EXISTING
        return CreateOrExisting.CREATE
