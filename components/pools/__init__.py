"""The node pools phase: TPU slice pools, and the capacity fallback's ComputeClass."""
