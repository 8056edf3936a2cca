"""The work-memory budget tests' fixtures (the allocators' are tests/conftest.py's)."""

from __future__ import annotations

import pytest
from budget_gate import Gate
from support import FakeEntryPoint, allocator_plugin, make_registry


@pytest.fixture
def gate(install):
    """A registry of the test's own with the ``gate`` allocator (:class:`budget_gate.Gate`)."""
    allocator = Gate()
    install(make_registry(FakeEntryPoint("zz-gate", allocator_plugin(allocator))))
    return allocator
