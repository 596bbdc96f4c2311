"""The identity and tenancy phases: the workload identity, the namespace's tenancy, and the operators' access."""
