"""Spies the task-mapping deadline tests share: count a function's calls without changing
what it returns."""

from __future__ import annotations


def counted(monkeypatch, owner, name: str) -> list:
    """Replace ``owner.name`` by a wrapper that appends ``name`` to the returned list at
    each call (then calls the real one)."""
    calls = []
    fn = getattr(owner, name)

    def spy(*args, **kwargs):
        calls.append(name)
        return fn(*args, **kwargs)

    monkeypatch.setattr(owner, name, spy)
    return calls
