"""Reaching an implementation: target strings and one driver per binding."""

from __future__ import annotations

from memconform.targets.target_string import (
    FileTarget, ReferenceTarget, TargetStringError, UnsupportedTarget, parse_target,
)


def open_driver(text: str, forced_versions: tuple[str, ...] = ()):
    """Parse a target string and return its driver. Raises TargetStringError for bad strings and
    TargetError when the target cannot be reached."""
    from memconform.suite.outcomes import TargetError

    target = parse_target(text)
    if isinstance(target, ReferenceTarget):
        from memconform.targets.reference import ReferenceDriver

        return ReferenceDriver(target)
    if isinstance(target, FileTarget):
        from memconform.targets.file import FileDriver

        return FileDriver(target, forced_versions)
    assert isinstance(target, UnsupportedTarget)
    raise TargetError(f"{target.kind} targets are not supported by this version of memconform yet "
                      f"({target.text}); supported now: reference, reference?fault=NAME, file:PATH")


__all__ = ["open_driver", "parse_target", "TargetStringError"]
