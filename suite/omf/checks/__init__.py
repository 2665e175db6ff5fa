"""The shipped OMF checks. Importing this package registers them (in a fixed order)."""

from memconform.suite.omf.checks import (  # noqa: F401
    _common, validation, shape, trust_gate, fail_closed, export, import_, preview, supersession, attacks, stateful,
)
