"""Layer 3: summary memory, summary buffer memory, and the analyses that drive them (schedule, budget)."""
