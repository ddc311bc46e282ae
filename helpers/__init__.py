"""Shared code for the summary memory (lesson 3) and summary buffer memory (lesson 4) notebooks. A notebook imports
from one module (``helpers.lesson3``, ``helpers.lesson4``, ``helpers.attack_surface``); the subpackages are layers,
each importing only from lower ones (docs/architecture.md)."""
