"""Shared code for the summary memory (lesson 3) and summary buffer memory (lesson 4) notebooks.

A notebook imports what it uses from one module: ``helpers.lesson3`` (notebooks 01 to 03),
``helpers.lesson4`` (04 and 05) or ``helpers.attack_surface`` (06); each offers names from the layers below
and imports each on first use. The subpackages are those layers; a module imports only from its own layer or
the layers below it (``tests/test_architecture.py`` checks this and that there is no import cycle):

1. ``base``     paths, exact o200k_base token counts, small text helpers, errors, signing
2. ``lessons``  the lessons' data and prompts, from ``data/``
3. ``memory``   the memory kinds (one module each, listed in ``memory/registry.py``), what works on any
                kind (defences, erasure, saved states) and the analyses without a model (schedule, budget)
4. ``measure``  measuring a summary: drift, audit against the archive, billed tokens, the attack table
5. ``display``  every printed line format, charts and slider panels
6. ``model``    model access: the openai SDK, recordings, the offline stand-in, summarisers, chat()
7. ``setup``    the set-up check and the notebook runner

Only ``model`` imports the openai SDK or httpx2, so the no-model notebooks never load them.
"""
