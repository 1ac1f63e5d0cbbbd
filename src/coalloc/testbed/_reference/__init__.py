"""Pure-Python twins of the compiled kernels of coalloc.testbed (same signatures, same answers)."""
