"""Implementations of `jarvis.runner.DockerRunner`: `whales` (Compose CLI) and `dockerpy` (engine API)."""
