"""Shared test support: a loopback OpenAI-compatible server and mock-transport helpers."""
