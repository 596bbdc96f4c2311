"""The stack file's ``tenancy``: the namespace as a tenant (quota, network policy, RBAC), a part of
:class:`~tpu_serving.config.models.StackConfig`."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pydantic import Field, ValidationInfo, field_validator

from ..common.settings import Cidr, K8sName, Model, settings_model
from ..tenancy.tenant import QUOTA_SETTINGS, TenancyArgs, operator_problems

if TYPE_CHECKING:

    class QuotaConfig(Model):
        """To mypy: the generated model's fields (TenancyArgs has required fields a quota has not)."""

        cpu: str
        memory: str

else:
    QuotaConfig = settings_model(
        TenancyArgs,
        "QuotaConfig",
        exclude=tuple(f.name for f in dataclasses.fields(TenancyArgs) if f.name not in QUOTA_SETTINGS),
    )
"""The stack file's ``tenancy.quota``: the CPU and memory quota arguments of :class:`~tpu_serving.tenancy.tenant.Tenancy`."""


class OperatorsConfig(Model):
    """Who operates the variant: bound to a namespaced Role (observe, port-forward, restart)."""

    groups: list[str] = Field(default_factory=list, description="Groups, e.g. Google Groups for GKE RBAC.")
    users: list[str] = Field(default_factory=list, description="Users (email addresses).")

    @field_validator("groups", "users")
    @classmethod
    def _emails(cls, v: list[str], info: ValidationInfo) -> list[str]:
        problems = operator_problems(v, "")
        if problems:
            raise ValueError("; ".join(problems))
        return v


class TenancyConfig(Model):
    """The stack's namespace as a tenant: quota, network policy, priorities, RBAC (seed 004)."""

    quota: QuotaConfig = Field(default_factory=QuotaConfig, description="CPU and memory quota.")
    allowed_namespaces: list[K8sName] = Field(
        default_factory=list, description="Namespaces whose pods may reach the serving ports."
    )
    allowed_cidrs: list[Cidr] = Field(
        default_factory=list, description="CIDR blocks that may reach the serving ports (load balancer clients)."
    )
    operators: OperatorsConfig = Field(default_factory=OperatorsConfig, description="The team operating the variant.")
