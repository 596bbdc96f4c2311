"""tpu-serving: one stack file -> a multi-host TPU LLM serving deployment on GKE.

Loads the stack's settings (every problem reported at once, with its key path), builds one
deployment from them and exports its outputs.
"""

import pulumi

from tpu_serving import TpuServingDeployment, TpuServingDeploymentArgs
from tpu_serving.config import load_from_pulumi

settings = load_from_pulumi()
deployment = TpuServingDeployment(settings.cluster.name, TpuServingDeploymentArgs(settings))
for key, value in deployment.outputs.items():
    pulumi.export(key, value)
