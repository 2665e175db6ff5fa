"""UMP variants of the reference implementation: each one legitimate choice the UMP text leaves
open, made the other way (reference_impl/variants.py; decision points in policy.py). The suite must
pass every one (tests/harness/test_variants.py); docs/catalogue-ump.md documents each beside the
requirement whose reading it pins."""

from __future__ import annotations

from memconform.reference_impl.variants import Variant

UMP_VARIANTS: tuple[Variant, ...] = ()
