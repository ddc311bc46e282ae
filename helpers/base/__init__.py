"""Layer 1, the bottom: where files are, exact token counts, small text helpers. No project imports."""
