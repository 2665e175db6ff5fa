"""The shipped UMP checks. Importing this package registers them."""

from memconform.suite.ump.checks import l0  # noqa: F401
