"""Pure NumPy/Python twins of the family's compiled kernels (exact parity, tested)."""
