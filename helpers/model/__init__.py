"""Layer 6: model access. The only layer that imports the openai SDK or httpx2."""
