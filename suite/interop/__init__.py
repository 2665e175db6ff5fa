"""Interop: what survives when memory moves between implementations and between formats."""
