"""tpu-serving: one stack file -> a multi-host TPU LLM serving deployment on GKE.

Loads the stack's settings (every problem reported at once, with its key path), builds one
deployment from them and exports its outputs. A platform stack (``sharedPlatform``) builds the
cluster its model stacks share instead, and exports the ``platform`` output they read.
"""

import pulumi

from tpu_serving import TpuServingDeployment, TpuServingDeploymentArgs
from tpu_serving.config import load_from_pulumi
from tpu_serving.config.platform_stack import platform_from_pulumi
from tpu_serving.platform.tpu_platform import TpuPlatform, TpuPlatformArgs

shared = platform_from_pulumi()
if shared is not None:
    outputs = TpuPlatform(shared.cluster.name, TpuPlatformArgs(shared, pulumi.get_stack())).outputs
else:
    settings = load_from_pulumi()
    outputs = TpuServingDeployment(settings.cluster.name, TpuServingDeploymentArgs(settings)).outputs
for key, value in outputs.items():
    pulumi.export(key, value)
