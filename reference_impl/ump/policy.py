"""The UMP reference implementation's decision points: where the spec leaves a choice open, the
reference reads it one way (the defaults here) and a variant (`variants.py`) may read it the other
way (reference_impl/variants.py). The service reads `self.policy.<point>` where the choice is made."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UmpPolicy:
    """Each field is one open choice of the UMP text; its default is the reference reading, and its
    comment names the requirement and the other legitimate reading."""
