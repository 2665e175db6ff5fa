"""UPP variants of the reference implementation: each one legitimate choice the UPP text leaves
open, made the other way (reference_impl/variants.py; decision points in policy.py). The suite must
pass every one (tests/harness/test_variants.py); docs/catalogue-upp.md documents each beside the
requirement whose reading it pins."""

from __future__ import annotations

from memconform.reference_impl.variants import Variant

UPP_VARIANTS: tuple[Variant, ...] = ()
