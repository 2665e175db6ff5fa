"""The shipped memoturn checks. Importing this package registers them (in a fixed order)."""

from memconform.suite.memoturn.checks import _common, core, recall, lifecycle, mcp_tools, stateful  # noqa: F401
