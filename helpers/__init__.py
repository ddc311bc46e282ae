"""Shared code for the summary memory (lesson 3) and summary buffer memory (lesson 4) notebooks."""
