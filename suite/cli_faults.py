"""`memconform faults [--spec S]`: the deliberate defects of the reference implementation, each with
the requirements the suite must report as failed against it (reference_impl/*/faults.py).

`--target='reference?fault=NAME'` judges the reference with one of them switched on and
`memconform serve --fault NAME` serves it; `tests/harness/test_faults.py` holds the suite to the lists.
"""

from __future__ import annotations

import click

from memconform.suite import catalogue
from memconform.suite.catalogue import SPECS


@click.command("faults")
@click.option("--spec", type=click.Choice(SPECS, case_sensitive=False), default=None,
              help="only the faults of this spec")
def faults(spec: str | None) -> None:
    """List every fault of the reference implementation with the requirements it breaks.

    Use one with `pytest --target='reference?fault=NAME'` or `memconform serve --fault NAME`; the
    suite must report exactly the listed requirements as failed (and nothing as an error)."""
    from memconform.reference_impl.faults import FAULTS
    from memconform.targets.reference import _LIVE_BY_SPEC

    chosen = [f for f in FAULTS.values() if spec is None or f.spec == spec.lower()]
    for order in SPECS:
        first = catalogue.load(order).versions[0]
        group = sorted((f for f in chosen if f.spec == order), key=lambda f: f.name)
        if not group:
            continue
        click.secho(f"{order.upper()} — {len(group)} faults", bold=True)
        click.echo("")
        for f in group:
            shows = ", ".join(f.bindings or _LIVE_BY_SPEC.get(f.spec, ()))
            where = [f"on {shows}"] + ([f"from {order.upper()} {f.since}"] if f.since != first else []) \
                + (["shown by interop round trips only"] if f.interop_only else [])
            click.echo(f"{f.name}  ({'; '.join(where)})")
            click.echo(f"  {f.description}")
            click.echo(f"  breaks: {', '.join(f.breaks)}")
            click.echo("")
