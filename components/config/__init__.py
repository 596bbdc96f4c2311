"""Stack configuration: the settings of one deployment, validated at the edge of the library.

A stack file (``stacks/Pulumi.<stack>.yaml``) is validated here once, before any resource
is registered. Every problem is collected and reported together in one
:class:`ConfigError`, each naming the config key path as the user wrote it
(``tpu-serving:tpuSlices[0].topology``), the bad value and the valid choices.

- :mod:`.models`: the settings models (the backends' own are in :mod:`tpu_serving.backends`; the namespace's in
  :mod:`.tenancy_config`);
- :mod:`.checks`: checks across several settings; :mod:`.existing_checks`: those of existing-cluster mode;
  :mod:`.production`: what keeps a stack from a production SLO (``production``);
- :mod:`.errors`: rendering problems at their key paths;
- :mod:`.loading`: loading from data, a Pulumi config map or the running engine.
"""

from .checks import cluster_problems, derived_name_problems, serving_problems
from .errors import GCP_KEYS, ConfigError
from .loading import load_from_pulumi, load_stack_config, validate_stack
from .models import (
    BucketConfig,
    ClusterConfig,
    CpuPoolConfig,
    StackConfig,
    TpuSliceConfig,
    WorkloadIdentityConfig,
)
from .tenancy_config import TenancyConfig

__all__ = [
    "GCP_KEYS",
    "BucketConfig",
    "ClusterConfig",
    "ConfigError",
    "CpuPoolConfig",
    "StackConfig",
    "TenancyConfig",
    "TpuSliceConfig",
    "WorkloadIdentityConfig",
    "cluster_problems",
    "derived_name_problems",
    "load_from_pulumi",
    "load_stack_config",
    "serving_problems",
    "validate_stack",
]
