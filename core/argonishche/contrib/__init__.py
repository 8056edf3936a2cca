"""Integrations with other frameworks, one module each, imported only by name.

Nothing here is imported by ``import argonishche`` or by this package itself, so a framework is
needed only by the module that integrates with it (``argonishche.contrib.django`` needs Django).
"""
