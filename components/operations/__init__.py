"""The operations phase: observability, autoscaling, the serving probe, and the signals of lost and refused groups."""
