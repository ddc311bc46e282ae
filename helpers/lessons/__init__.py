"""Layer 2: the lessons' conversations, settings, prompts and published figures, read from ``data/``."""
