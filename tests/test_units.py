"""The short number forms the app writes beside bars, in tool tips and on axes: one home
(engine/core/units.py), each with the outputs the panels have always shown."""

from __future__ import annotations

import math

import pytest

from accelscope.engine.core import units
from accelscope.engine.core.precision import PRECISION_LABELS, PRECISIONS


@pytest.mark.parametrize(
    "formatter, value, text",
    [
        (units.compact, 0.01234, "0.0123"),
        (units.compact, 989.4, "989"),
        (units.compact, 15_500, "15.5 k"),
        (units.compact, 2_100_000, "2.1 M"),
        (units.compact, 3.2e9, "3.2 G"),
        (units.compact, 1.28e9, "1.28 G"),
        (units.compact, 4.51e12, "4.51 T"),
        (units.compact, 2e16, "2.00e+16"),
        (units.compact, math.nan, "—"),
        (units.count, 12_345, "12,345"),
        (units.count, 2_100_000, "2.1 M"),
        (units.short_number, 15_520, "15,500"),
        (units.short_number, 0.01234, "0.0123"),
        (units.short_number, math.inf, "n/a"),
        (units.short_bandwidth, 3.35e12, "3.35 TB/s"),
        (units.short_bandwidth, 64e9, "64 GB/s"),
        (units.short_bytes, 720e6, "720 MB"),
        (units.short_bytes, 1.034e9, "1.03 GB"),
        (units.gigabytes, 16.06e9, "16.06 GB"),
        (units.milliseconds, 0.0278, "27.8 ms"),
        (units.short_time, 0.0278, "27.8 ms"),
        (units.short_time, 14.2, "14.2 s"),
        (units.duration_text, 1234.0, "1,230 s"),
        (units.watts, 700.0, "700 W"),
        (units.watts, 5600.0, "5.6 kW"),
        (units.joules, 0.00042, "0.42 mJ"),
        (units.joules, 56_000.0, "56 kJ"),
        (units.ratio_text, 1.0712, "1.07×"),
        (units.ratio_text, None, "—"),
        (units.times_text, 5.214, "5.21x"),
        (units.times_text, 2157.3, "2,157x"),
        (units.measured_number, 27.84, "27.8"),
        (units.measured_number, None, "-"),
        (units.grid_value, 1234.4, "1,234"),
        (units.tick_text, 12_000.0, "12,000"),
        (units.tick_text, 1e5, "10⁵"),
        (units.tick_text, 2e-4, "2·10⁻⁴"),
        (units.log_tick_text, 4.0, "10k"),
        (units.log_tick_text, 6.0, "1M"),
    ],
)
def test_each_short_form_reads_as_the_panels_show_it(formatter, value, text):
    assert formatter(value) == text


def test_every_precision_has_one_display_label():
    assert list(PRECISION_LABELS) == list(PRECISIONS)
    assert PRECISION_LABELS["bf16"] == "BF16" and PRECISION_LABELS["fp4"] == "FP4"


@pytest.mark.parametrize("value, text", [
    (8.03e9, "8.03 B"), (31.527303e9, "31.5 B"), (3.5e8, "350 M"), (1.04e12, "1.04 T"), (3.1527303e16, "31,527 T"),
])
def test_parameter_counts_read_as_model_cards_write_them(value, text):
    assert units.format_params(value) == text


def test_a_count_of_one_is_singular():
    assert units.counted(1, "device") == "1 device"
    assert units.counted(2048, "device") == "2,048 devices"
    assert units.counted(1.0, "micro-batch", "micro-batches") == "1 micro-batch"
    assert units.counted(3, "micro-batch", "micro-batches") == "3 micro-batches"
