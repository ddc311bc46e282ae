"""The offline stand-in: a deterministic, in-process replacement for the chat model. Not a language model.

Read it part by part:

* ``markers``    the labels every stand-in text carries, so its output is never taken for a model's
* ``requests``   reading a request: is it a summariser request, and what are its sections
* ``facts``      sentences and the facts they carry (amounts, ages, rules, ...)
* ``summariser`` the extractive summariser: copies fact sentences, keeps to the word limit
* ``replies``    short grounded chat replies: quote the fact asked for and say where it is, note a fact told
* ``written``    replies written for the course's conversations (``data/offline_replies/``)
* ``server``     the OpenAI-compatible response and the ``httpx2`` transport the SDK talks to
"""
