"""The OMF 1.0 reference implementation (memd's Open Memory Format): `OmfStore` (sqlite),
`OmfEngine` (export, import, preview), the CLI and HTTP bindings over them (docs/omf.md)."""

from memconform.reference_impl.omf.engine import OmfEngine, ValidationError
from memconform.reference_impl.omf.store import OmfStore

__all__ = ["OmfEngine", "OmfStore", "ValidationError", "make_engine"]


def make_engine(db: str | None = None, *, fault: str | None = None, variants: tuple[str, ...] = ()) -> OmfEngine:
    return OmfEngine(OmfStore(db or ":memory:"), fault=fault, variants=variants)
