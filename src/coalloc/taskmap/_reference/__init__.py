"""Pure Python/NumPy twins of the compiled kernels of :mod:`coalloc.taskmap`."""
