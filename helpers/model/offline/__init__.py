"""The offline stand-in: a deterministic, in-process replacement for the chat model, not a language model.

It reads only the request. A summariser request gets an extractive summary (fact sentences copied word for word
within the prompt's word limit: it loses whole sentences, never rewords); a chat request a short reply that
quotes a fact asked for and says where it was found, or says it was not sent, followed for the course's own
conversations by a reply written for this project (``data/offline_replies/``). Every text starts with a marker.
Modules: ``markers``, ``requests`` (reading a request), ``facts``, ``summariser``, ``replies``, ``written``,
``server`` (the response body and the transport).
"""
