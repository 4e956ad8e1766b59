"""Each calibration constant of the GPU class agrees with the figures its basis states: the
value is recomputed from the numbers written in the basis text (resources/efficiency.toml), so
editing one without the other fails here."""

from __future__ import annotations

import re
import statistics

import pytest

from accelscope.engine.catalog.constants import load_constants


@pytest.fixture(scope="module")
def constants():
    return load_constants()


def _gpu(constants):
    return constants.for_class("gpu-simt")


def test_busy_power_floor_is_the_mean_of_the_stated_load_over_tdp_ratios(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["busy_power_fraction"]
    pairs = [(float(w), float(tdp)) for w, tdp in re.findall(r"(\d+) W of (\d+) W", basis)]
    assert pairs == [(478.0, 700.0), (337.0, 400.0), (625.0, 750.0)]  # the paper's three GPUs
    mean = statistics.fmean(w / tdp for w, tdp in pairs)  # 0.6829, 0.8425, 0.8333 -> 0.7862
    assert mean == pytest.approx(0.7862, abs=1e-4)
    stated = float(re.search(r"is (0\.\d+)", basis).group(1))
    assert stated == gpu.busy_power_fraction
    assert abs(gpu.busy_power_fraction - mean) <= 0.005  # rounded to two decimals


def test_classes_without_a_published_load_figure_have_no_floor(constants):
    for name, cls in constants.classes.items():
        if name == "gpu-simt":
            continue
        assert cls.busy_power_fraction == 0.0, name
        assert re.search(r"no floor|not set|Not needed", cls.basis["busy_power_fraction"]), name


def test_gpu_compute_efficiency_is_the_large_gemm_fraction_less_the_stated_loss(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["compute_efficiency"]
    low, high, peak = (float(x) for x in re.search(r"(\d+)-(\d+) of (\d+) TFLOP/s", basis).groups())
    loss = float(re.search(r"another ~(\d+)%", basis).group(1)) / 100.0
    large_gemm = (low + high) / 2.0 / peak  # 785/989 = 0.794
    assert large_gemm * (1.0 - loss) == pytest.approx(gpu.compute_efficiency, abs=0.02)  # 0.714 vs 0.70


def test_gpu_memory_efficiency_lies_between_the_stated_decode_and_copy_fractions(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["memory_efficiency"]
    copies = [float(a) / float(b) for a, b in re.findall(r"(\d\.\d) of (\d\.\d+) TB/s", basis)]
    assert copies and all(c == pytest.approx(0.9, abs=0.02) for c in copies)  # 3.0/3.35, 4.3/4.8
    kernels = float(re.search(r"the ~(0\.\d+) such kernels", basis).group(1))
    assert gpu.memory_efficiency == pytest.approx((statistics.fmean(copies) + kernels) / 2.0, abs=0.01)


def test_gpu_per_layer_overhead_is_kernels_times_launch_cost(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["per_layer_overhead_s"]
    kernels = int(re.search(r"launches ~(\d+) kernels", basis).group(1))
    low, high = (float(x) * 1e-6 for x in re.search(r"costs ~([\d.]+)-([\d.]+) us", basis).groups())
    assert kernels * low <= gpu.per_layer_overhead_s <= kernels * high  # 20-40 us
    assert gpu.per_layer_overhead_s == pytest.approx(kernels * (low + high) / 2)  # "at the middle"


def test_gpu_interconnect_efficiency_is_the_stated_bus_bandwidth_fraction(constants):
    gpu = _gpu(constants)
    low, high, link = (float(x) for x in re.search(
        r"~(\d+)-(\d+) GB/s of the (\d+) GB/s", gpu.basis["interconnect_efficiency"]).groups())
    assert low / link <= gpu.interconnect_efficiency + 0.005 and gpu.interconnect_efficiency <= high / link


def test_gpu_usable_memory_is_vllms_default_utilisation(constants):
    gpu = _gpu(constants)
    stated = float(re.search(r"gpu_memory_utilization = (0\.\d+)", gpu.basis["usable_memory_fraction"]).group(1))
    assert stated == gpu.usable_memory_fraction


def _stated_times(basis: str, unit: str) -> list[float]:
    """The '(~X unit)' figures a basis lists, part by part."""
    return [float(x) for x in re.findall(rf"\(~([\d.]+) {unit}\)", basis)]


def test_gpu_host_time_per_step_is_the_sum_of_its_stated_parts(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["step_overhead_s"]
    parts = _stated_times(basis, "ms")  # schedule, inputs, sampling, outputs
    assert parts == [0.1, 0.5, 0.2, 0.2]
    total = float(re.search(r"~([\d.]+) ms in all", basis).group(1))
    assert sum(parts) == pytest.approx(total) == pytest.approx(gpu.step_overhead_s * 1e3)


def test_gpu_host_time_per_sequence_is_the_sum_of_its_stated_parts(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["sequence_overhead_s"]
    parts = _stated_times(basis, "us")  # scheduling, batch update, stop checks, serialising
    assert parts == [10.0, 5.0, 8.0, 2.0]
    total = float(re.search(r"~([\d.]+) us in all", basis).group(1))
    assert sum(parts) == pytest.approx(total) == pytest.approx(gpu.sequence_overhead_s * 1e6)
    # The consequence the basis states: at batch 128 the host takes 1.0 + 128 x 0.025 ms a step.
    stated = float(re.search(r"At batch 128 it is ([\d.]+) ms", basis).group(1))
    assert 128 * gpu.sequence_overhead_s * 1e3 == pytest.approx(stated, abs=0.05)


def test_host_driven_classes_share_the_gpu_estimate_and_device_driven_ones_have_none(constants):
    gpu = _gpu(constants)
    for name, cls in constants.classes.items():
        if name == "gpu-simt":
            continue
        if "equal to the GPU class" in cls.basis["step_overhead_s"]:
            assert (cls.step_overhead_s, cls.sequence_overhead_s) == (gpu.step_overhead_s, gpu.sequence_overhead_s)
        else:
            assert cls.basis["step_overhead_s"].startswith("Not modelled"), name
            assert cls.basis["sequence_overhead_s"].startswith("Not modelled"), name
            assert (cls.step_overhead_s, cls.sequence_overhead_s) == (0.0, 0.0), name


def test_operator_overlap_is_what_each_basis_describes(constants):
    for name, cls in constants.classes.items():
        basis = cls.basis["operator_overlap"]
        if "one after another" in basis:
            assert cls.operator_overlap == 0.0, name
        else:
            assert "roofline of the whole" in basis, name
            assert cls.operator_overlap == 1.0, name
    assert _gpu(constants).operator_overlap == 0.0  # kernels on a stream run in turn


def test_gpu_collective_cost_is_a_kernel_and_two_synchronisations(constants):
    gpu = _gpu(constants)
    basis = gpu.basis["collective_overhead_s"]
    kernel = float(re.search(r"a launch and tail of ~([\d.]+) us", basis).group(1))
    synchronisation = float(re.search(r"~([\d.]+) us each", basis).group(1))
    assert "twice" in basis
    total = float(re.search(r"~([\d.]+) us before any step", basis).group(1))
    assert kernel + 2 * synchronisation == pytest.approx(total) == pytest.approx(gpu.collective_overhead_s * 1e6)
    for name, cls in constants.classes.items():
        if name != "gpu-simt":
            assert cls.basis["collective_overhead_s"].startswith("Not modelled"), name
            assert cls.collective_overhead_s == 0.0, name


def test_gpu_activation_quantisation_is_its_kernels_times_the_per_layer_kernel_cost(constants):
    """Four linear products per layer, one to three quantisation kernels before each, at the
    per-layer floor's 2-4 us per kernel; the value is the middle count at the middle cost."""
    gpu = _gpu(constants)
    basis = gpu.basis["activation_quantization_overhead_s"]
    products = re.search(r"each of a decoder layer's (\w+) linear products", basis).group(1)
    assert products == "four"
    fewest, most = (int(x) for x in re.search(r"That is (\d+)-(\d+) extra kernels per layer", basis).groups())
    assert (fewest, most) == (4 * 1, 4 * 3)  # one kernel (static or per-token scale), three (per-tensor)
    low, high = (float(x) for x in re.search(r"at ([\d.]+)-([\d.]+) us each", basis).groups())
    floor = gpu.basis["per_layer_overhead_s"]
    assert (low, high) == tuple(float(x) for x in re.search(r"costs ~([\d.]+)-([\d.]+) us", floor).groups())
    count, cost = (float(x) for x in re.search(r"middle, (\d+) x ([\d.]+) us", basis).groups())
    assert count == (fewest + most) / 2 and cost == (low + high) / 2
    assert gpu.activation_quantization_overhead_s == pytest.approx(count * cost * 1e-6)  # 24 us
    for name, cls in constants.classes.items():
        if name != "gpu-simt":
            assert cls.basis["activation_quantization_overhead_s"].startswith("Not modelled"), name
            assert cls.activation_quantization_overhead_s == 0.0, name
