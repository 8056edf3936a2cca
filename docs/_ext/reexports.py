"""Resolve references to names argonishche re-exports from where they are documented.

``argonishche.VerificationError`` is ``argonishche.exceptions.VerificationError`` and
``argonishche.Backend`` is ``argonishche.hookspecs.Backend``: the API page documents each once,
in its home module, and docstrings name them either way (or unqualified, as ``PasswordHasher``
in the exceptions module's docstrings).  A reference the Python domain cannot resolve is tried
as each of those modules' names before -n reports it.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

HOMES = ("argonishche", "argonishche.exceptions", "argonishche.hookspecs")


def resolve(app: Sphinx, env: BuildEnvironment, node: pending_xref,
            contnode: nodes.TextElement) -> nodes.Element | None:
    if node.get("refdomain") != "py":
        return None
    target = node["reftarget"]
    if "." in target and not target.startswith("argonishche."):
        return None
    name = target.rsplit(".", 1)[-1]
    domain = env.get_domain("py")
    for home in HOMES:
        if f"{home}.{name}" in domain.objects:  # type: ignore[attr-defined]
            retry = node.deepcopy()
            retry["reftarget"] = f"{home}.{name}"
            found: Any = domain.resolve_xref(env, node["refdoc"], app.builder, node["reftype"],
                                             f"{home}.{name}", retry, contnode)
            if found is not None:
                return found  # type: ignore[no-any-return]
    return None


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("missing-reference", resolve)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
