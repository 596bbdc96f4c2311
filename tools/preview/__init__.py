"""The offline preview of a stack (make preview) or of a program, and what it says of a plan: capacity, cost, images, exposure, zones, pins."""
