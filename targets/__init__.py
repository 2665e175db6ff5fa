"""Reaching an implementation: target strings and one driver per binding."""

from __future__ import annotations

from memconform.targets.target_string import (
    DescriptorTarget, DockerTarget, FileTarget, HttpTarget, JsonRpcTarget, McpTarget, PluggedTarget, ReferenceTarget,
    TargetStringError, UnsupportedTarget, parse_target,
)


def open_driver(text: str, forced_versions: tuple[str, ...] = (), timeout: float = 10.0,
                mcp_protocol: str = "2025-11-25"):
    """Parse a target string and return its driver. Raises TargetStringError for bad strings,
    TargetError when the target cannot be reached, and NotApplicable when it cannot be run here at
    all (docker:IMAGE without a container engine): the plugin skips its items with the reason."""
    from memconform.suite.outcomes import TargetError

    target = parse_target(text)
    if isinstance(target, ReferenceTarget):
        from memconform.targets.reference import ReferenceDriver

        return ReferenceDriver(target, timeout=timeout, mcp_protocol=mcp_protocol)
    if isinstance(target, FileTarget):
        from memconform.targets.file import FileDriver

        return FileDriver(target, forced_versions)
    if isinstance(target, HttpTarget):
        from memconform.targets.http import HttpDriver

        return HttpDriver(target.base_url, forced_versions, timeout=timeout)
    if isinstance(target, McpTarget):
        from memconform.targets.mcp import McpDriver

        return McpDriver(target.text, forced_versions, timeout=timeout, protocol=mcp_protocol)
    if isinstance(target, DescriptorTarget):
        from memconform.targets.descriptor import DescriptorDriver

        return DescriptorDriver.open(target.path, label=target.label, timeout=timeout, mcp_protocol=mcp_protocol)
    if isinstance(target, DockerTarget):
        from memconform.targets.docker import DockerDriver

        return DockerDriver.open(target, forced_versions, timeout=timeout)
    if isinstance(target, JsonRpcTarget):
        from memconform.targets.jsonrpc import JsonRpcDriver

        return JsonRpcDriver.from_target(target.text, timeout=timeout)
    if isinstance(target, PluggedTarget):
        from memconform.suite.specs import get

        return get(target.spec).load(target.opener)(target.text, label=target.label, timeout=timeout)
    assert isinstance(target, UnsupportedTarget)
    raise TargetError(f"{target.kind} targets are not supported by this version of memconform yet "
                      f"({target.text}); supported now: reference, reference?fault=NAME, file:PATH, "
                      "http://HOST:PORT, mcp+stdio:COMMAND, mcp+http://HOST:PORT/mcp, "
                      "jsonrpc+stdio:COMMAND, jsonrpc+http://HOST:PORT/PATH, path/to/target.toml, docker:IMAGE")


__all__ = ["open_driver", "parse_target", "TargetStringError"]
