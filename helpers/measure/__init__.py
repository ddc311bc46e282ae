"""Layer 4: measuring what a memory sends: drift, claims no user made, attacks, bills and ledgers."""

LESSON_KINDS = ("summary memory", "summary buffer memory", "sliding window")
"""The memory kinds the lessons show, in their order: what notebooks 06 and 07 measure unless told otherwise, so a
kind added to the registry changes no lesson's output."""
