"""Building a fault's wraps (reference_impl/faults.py, `Fault.wraps`): the few shapes every spec's
wrong implementations share. A wrap takes the implementation and the method it replaces
(`original`) and returns the wrong method; `install_wraps` puts it on that one object."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Wrap = Callable[[Any, Callable[..., Any]], Callable[..., Any]]


def after(operation: str, change: Callable[[Any], Any]) -> dict[str, Wrap]:
    """The operation's answer, changed: `change(answer)` returns the wrong one."""
    return {operation: lambda implementation, original: lambda *a, **k: change(original(*a, **k))}


def before(operation: str, change: Callable[..., tuple[tuple[Any, ...], dict[str, Any]]]) -> dict[str, Wrap]:
    """The operation called with changed arguments: `change(*args, **kwargs)` returns (args, kwargs)."""
    def wrap(implementation: Any, original: Callable[..., Any]) -> Callable[..., Any]:
        def wrong(*a: Any, **k: Any) -> Any:
            args, kwargs = change(*a, **k)
            return original(*args, **kwargs)
        return wrong
    return {operation: wrap}


def instead(operation: str, wrong: Callable[..., Any]) -> dict[str, Wrap]:
    """The operation replaced outright by `wrong` (called with the operation's arguments)."""
    return {operation: lambda implementation, original: wrong}


def each(operation: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Wrap]:
    """Every object of the operation's answer (a list, or one object) changed in place."""
    def apply(answer: Any) -> Any:
        for item in answer if isinstance(answer, list) else [answer]:
            change(item)
        return answer
    return after(operation, apply)


def within(part: str, **wraps: Wrap) -> dict[str, Wrap]:
    """Wraps of the methods of one part of the implementation (an endpoint, a task runner, a store)."""
    def wrap(implementation: Any, inner: Any) -> Any:
        for name, w in wraps.items():
            setattr(inner, name, w(inner, getattr(inner, name)))
        return inner
    return {part: wrap}


def then(change: Callable[[Any], Any]) -> Wrap:
    """A wrap (for `within`) that changes what the wrapped method returns."""
    return lambda part, original: lambda *a, **k: change(original(*a, **k))


def keep(**changes: Any) -> Callable[[dict[str, Any]], None]:
    """An object whose members are set as given (a callable is applied to the member's value)."""
    def change(item: dict[str, Any]) -> None:
        for name, value in changes.items():
            item[name] = value(item[name]) if callable(value) else value
    return change


def drop(*members: str) -> Callable[[dict[str, Any]], None]:
    """An object without these members."""
    def change(item: dict[str, Any]) -> None:
        for member in members:
            item.pop(member, None)
    return change
