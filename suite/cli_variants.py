"""`memconform variants [--spec S]`: the legitimate readings the reference implementation can make the
other way, each with the requirements whose reading it pins (reference_impl/*/variants.py).

`--target='reference?variant=NAME'` (repeatable, combinable with one fault) judges the reference with
them and `memconform serve --variant NAME` serves them; `tests/harness/test_variants.py` holds the
suite to passing every one: a check that fails a variant is a defect, like one that passes a fault.
"""

from __future__ import annotations

import click

from memconform.suite.catalogue import SPECS


@click.command("variants")
@click.option("--spec", type=click.Choice(SPECS, case_sensitive=False), default=None,
              help="only the variants of this spec")
def variants(spec: str | None) -> None:
    """List every variant of the reference implementation with the readings it pins.

    Use them with `pytest --target='reference?variant=NAME'` (several: repeat variant=) or `memconform
    serve --variant NAME`; the suite must pass every one: no MUST failure, no error, the top level."""
    from memconform.reference_impl.variants import VARIANTS
    from memconform.suite import catalogue

    chosen = [v for v in VARIANTS.values() if spec is None or v.spec == spec.lower()]
    for order in SPECS:
        group = sorted((v for v in chosen if v.spec == order), key=lambda v: v.name)
        if not group:
            continue
        first = catalogue.load(order).versions[0]
        click.secho(f"{order.upper()} — {len(group)} variants", bold=True)
        click.echo("")
        for v in group:
            where = ([f"on {', '.join(v.bindings)}"] if v.bindings else []) + (
                [f"from {order.upper()} {v.since}"] if v.since != first else [])
            click.echo(f"{v.name}" + (f"  ({'; '.join(where)})" if where else ""))
            click.echo(f"  {v.description}")
            click.echo(f"  reading of: {', '.join(v.readings)}")
            click.echo("")
    if not chosen:
        click.echo("no variants" + (f" for {spec}" if spec else ""))
