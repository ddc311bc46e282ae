"""The offline stand-in: a deterministic, in-process replacement for the chat model, not a language model. It reads
only the request: a summariser request gets fact sentences copied within the word limit, a chat request a reply that
quotes what was sent (``replies``); every text starts with a marker (``markers``). ``server`` answers the SDK."""
