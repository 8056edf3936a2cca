"""The plugin guide's (docs/plugins.md) allocator example works as written."""

from __future__ import annotations

import pathlib
import re
import types

import argonishche
from support import KNOWN_TAG, PASSWORD, SALT, SMALL, FakeEntryPoint, make_registry

GUIDE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def test_the_allocator_plugin_example_registers_and_hashes(install):
    block = re.search(r"## An allocator plugin\n\n```\{testcode\}\n(.*?)\n```", GUIDE.read_text(),
                      re.S).group(1)
    plugin = {}
    exec(block, plugin)  # noqa: S102 - our own guide
    hooks = types.SimpleNamespace(
        argonishche_register_allocators=plugin["argonishche_register_allocators"])
    install(make_registry(FakeEntryPoint("pool", hooks)))
    assert argonishche.argon2_hash(PASSWORD, SALT, allocator="pool", **SMALL) == KNOWN_TAG
    assert argonishche.argon2_hash(PASSWORD, SALT, allocator=plugin["Pool"](),
                                   **SMALL) == KNOWN_TAG
