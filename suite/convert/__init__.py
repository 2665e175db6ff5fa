"""Conversion between the memory formats memconform judges (each spec with a document format names
it in suite/specs.py: `format`, and its converters to the formats before it: `converters`), driven by
one mapping table (mapping.py, rendered as docs/mapping.md), with round trips A → B → A that hold the
converters to what the table promises.

    from memconform.suite.convert import convert, format_round_trip, format_matrix, default_corpora
"""

from memconform.suite.convert.common import (ConversionError, ConversionResult, ConvertOptions, InvalidInput,
                                              LostField)
from memconform.suite.convert.dispatch import convert
from memconform.suite.convert.corpora import default_corpora
from memconform.suite.convert.render import mapping_markdown
from memconform.suite.convert.roundtrip import format_matrix, format_round_trip

__all__ = ["convert", "format_round_trip", "format_matrix", "default_corpora", "mapping_markdown",
           "ConvertOptions", "ConversionResult", "LostField", "InvalidInput", "ConversionError"]
