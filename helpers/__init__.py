"""Shared code for the summary memory (lesson 3) and summary buffer memory (lesson 4) notebooks.

The subpackages are layers; a module imports only from its own layer or the layers below it
(``tests/test_architecture.py`` checks this and that there is no import cycle):

1. ``base``     paths, exact o200k_base token counts, small text helpers
2. ``lessons``  the lessons' data and prompts, from ``data/``
3. ``memory``   the two memory classes and the analyses that run them (schedule, budget)
4. ``measure``  measuring a summary: drift, audit against the archive
5. ``display``  every printed line format, charts and slider panels
6. ``model``    model access: the openai SDK, recordings, the offline stand-in, summarisers, chat()
7. ``setup``    the set-up check and the notebook runner

Only ``model`` imports the openai SDK or httpx2, so the no-model notebooks never load them.
"""
