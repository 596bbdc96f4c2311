"""The runbooks' commands in one stack's own names (make runbook)."""
