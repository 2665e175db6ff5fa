"""The shipped UPP checks. Importing this package registers them (in a fixed order)."""

from memconform.suite.upp.checks import _common, l1, wire, bad_input, attacks, l2, l3, stateful  # noqa: F401
