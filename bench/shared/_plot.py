"""Shared helper of the bench scripts: matplotlib on a headless machine, if installed."""


def pyplot():
    """Return ``matplotlib.pyplot`` with the Agg backend, or None (with a note) if missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed (pip install 'coalloc[bench]'): no plot")
        return None
    return plt
