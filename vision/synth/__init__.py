"""Synthetic table scenes with labels, reproducible from a seed (see docs/camera.md)."""
