"""Shared code for the lesson notebooks. A notebook imports from one module (``helpers.lesson3``, ``helpers.lesson4``,
``helpers.attack_surface``); the subpackages are layers, each importing only from lower ones (docs/architecture.md)."""
