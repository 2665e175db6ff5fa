"""memoturn in `memconform convert`: its format (side.py, declared as the spec's `format`) and the
converters between memoturn and the formats before it (ump_memoturn, omf_memoturn, upp_memoturn,
oams_memoturn: the spec's `converters`), read by suite/convert through suite/specs.py."""
