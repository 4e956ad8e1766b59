"""The model against the papers' numbers: ``validate`` runs the engine on every measurement and
claim of ``resources/measurements.toml`` (read by ``catalog/measurements.py``); ``format_report``
and ``to_dict`` give the report as text and as data.

- ``ideal.py``: the pure-roofline twin of an engine
- ``served.py``: served runs of many requests, by the serving simulator
- ``report.py``: predictions, row and claim reports, statistics, targets, ``validate``
- ``text.py``: the report as text and as plain data
"""

from .report import Report, validate
from .text import format_report, to_dict

__all__ = ["Report", "format_report", "to_dict", "validate"]
