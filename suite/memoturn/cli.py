"""`memconform memoturn …` (suite/specs.py `cli = "memconform.suite.memoturn.cli:memoturn"`): the
reference node's MCP server over stdio, and the content-addressed id of a memory.

    memconform memoturn mcp [--db FILE] [--fault NAME] [--variant NAME]…   # MCP over stdio
    memconform memoturn id '{"type": "fact", "topic_key": "user.diet", "content": {"diet": "vegan"}}'

Exit codes as `memconform`'s: 0 fine, 2 unreadable input.
"""

from __future__ import annotations

import json
import sys

import click


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def memoturn() -> None:
    """memoturn typed memories: the reference node's MCP server, and a memory's id."""


@memoturn.command("mcp")
@click.option("--db", default=None, help="the reference's sqlite file (default: in memory)")
@click.option("--fault", default=None, help="one deliberate fault (memconform faults --spec memoturn)")
@click.option("--variant", "variants", multiple=True, help="a legitimate other reading (memconform variants)")
def mcp_command(db: str | None, fault: str | None, variants: tuple[str, ...]) -> None:
    """Serve the reference's memory_* tools over MCP on stdin/stdout (target string
    `memoturn+mcp+stdio:memconform memoturn mcp`)."""
    from memconform.reference_impl.memoturn.mcp import main

    argv = (["--db", db] if db else []) + (["--fault", fault] if fault else [])
    for v in variants:
        argv += ["--variant", v]
    sys.exit(main(argv) or 0)


@memoturn.command("id")
@click.argument("memory")
def id_command(memory: str) -> None:
    """Print the id the engine's construction gives MEMORY (JSON with type, topic_key?, content;
    `-` reads it from stdin): mem_ + 16 bytes of SHA-256(type, 0, topic_key, 0, canonical content)."""
    from memconform.suite.memoturn import model

    text = sys.stdin.read() if memory == "-" else memory
    try:
        value = json.loads(text)
        mtype, topic, content = value["type"], value.get("topic_key"), value.get("content")
        if not isinstance(mtype, str) or (topic is not None and not isinstance(topic, str)):
            raise TypeError("type must be a string, topic_key a string or absent")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        click.echo(f"memconform memoturn id: not a memory ({exc}); give JSON with type, topic_key and content", err=True)
        sys.exit(2)
    if model.has_float(content):
        click.echo("note: the content holds a float (or an integer beyond 2^53): its id is implementation-defined "
                   "(memoturn/id-float-content)", err=True)
    click.echo(model.memory_id(mtype, topic, content))
