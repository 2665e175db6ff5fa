"""The shipped UMP checks. Importing this package registers them (in a fixed order)."""

from memconform.suite.ump.checks import l0, l1, l2, l3, runner13, robustness, attacks, stateful  # noqa: F401
