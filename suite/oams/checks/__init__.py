"""The shipped OAMS checks. Importing this package registers them (in a fixed order)."""

from memconform.suite.oams.checks import (_common, store, recall, listing, provenance, files, stateful,  # noqa: F401
                                          envelope)
