"""OAMS in `memconform convert`: its format (side.py, declared as the spec's `format`) and the
converters between OAMS and the formats before it (ump_oams, omf_oams, upp_oams: the spec's
`converters`), read by suite/convert through suite/specs.py."""
