"""UMP's pieces of the reference server: its service (`make_service`) and the owners' keys an operator
holds (`keyring_from`). The all-spec server itself — `serve`, `start_in_thread`, `RunningServer` — is
reference_impl/serve.py; its names are kept here too, as the tests and older callers import them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.reference_impl.serve import (RunningServer, _bind, _config, _fault_for, _Server, _url,  # noqa: F401
                                             serve, start_in_thread)


def make_service(*, db: str | None = None, require_capability: bool = True, fault: str | None = None,
                 variants: tuple[str, ...] = (), owners_file: str | None = None) -> Any:
    from memconform.reference_impl.ump.service import UmpService

    return UmpService(db=db or ":memory:", require_capability=require_capability, fault=fault, variants=variants,
                      **({"keyring": keyring_from(owners_file)} if owners_file else {}))


def keyring_from(path: str) -> Any:
    """The owners' keys an owners file or descriptor names (`[ump.owners.NAME]` with seeds): the keys
    this server's operator holds instead of the suite's test keys (docs/vendor-keys.md)."""
    import tomllib

    from nacl.signing import SigningKey

    from memconform.reference_impl.ump.engine import Keyring
    from memconform.suite.ump.owners import OwnerError, owners_from_table

    try:
        with open(path, "rb") as fh:
            doc = tomllib.load(fh)
        owners = owners_from_table(doc.get("ump", doc), base_dir=str(Path(path).resolve().parent), where=path)
    except (OSError, tomllib.TOMLDecodeError, OwnerError) as exc:
        raise SystemExit(f"memconform serve --owners {path}: {exc}") from None
    keys = {o.did: SigningKey(o.seed) for o in owners.owners.values() if o.seed is not None}
    if not keys:
        raise SystemExit(f"memconform serve --owners {path}: no owner there has a seed to sign with")
    return Keyring(keys)


if __name__ == "__main__":  # python -m memconform.reference_impl.ump.serve [--stdio] …: `memconform serve`
    from memconform.suite.cli import serve as _serve_command

    _serve_command(prog_name="python -m memconform.reference_impl.ump.serve")
