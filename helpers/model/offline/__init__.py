"""The offline stand-in: a deterministic, in-process replacement for the chat model, not a language model."""
