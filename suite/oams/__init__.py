"""OAMS 0.1: catalogue, model, client protocol and checks (docs/oams.md)."""
