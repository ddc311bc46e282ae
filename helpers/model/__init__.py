"""Layer 7: model access, the only layer that imports the openai SDK or httpx2 (see docs/architecture.md, Models)."""
