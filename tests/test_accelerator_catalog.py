"""The accelerator catalog: bundled files, their sources and conflicts, and the loader's checks."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from accelscope.engine.catalog.accelerators import (
    BUNDLED_ORDER,
    bundled_accelerator_files,
    load_accelerator_file,
    load_bundled_accelerators,
)
from accelscope.engine.core.accelerator import ARCHITECTURE_CLASSES, Accelerator
from accelscope.engine.core.errors import CatalogError
from accelscope.engine.core.sourced import GRADES, Sourced

README = Path(__file__).resolve().parents[1] / "resources" / "accelerators" / "README.md"


@pytest.fixture(scope="module")
def catalog() -> dict[str, Accelerator]:
    return load_bundled_accelerators()


def sourced_fields(accelerator: Accelerator) -> dict[str, Sourced]:
    """Every sourced value of an accelerator by dotted field name."""
    fields = {
        "year": accelerator.year,
        "process_node": accelerator.process_node,
        "tdp_W": accelerator.tdp_W,
        "idle_W": accelerator.idle_W,
        "software_efficiency": accelerator.software_efficiency,
    }
    fields.update({f"peak_flops.{key}": value for key, value in accelerator.peak_flops.items()})
    for index, tier in enumerate(accelerator.memory):
        for name in ("capacity_bytes", "bandwidth_Bps", "link_bandwidth_Bps"):
            value = getattr(tier, name)
            if value is not None:
                fields[f"memory[{index}].{name}"] = value
    networks = {"interconnect": accelerator.interconnect, "scale_out": accelerator.scale_out}
    for prefix, network in networks.items():
        if network is not None:
            for name in ("bandwidth_per_direction_Bps", "latency_s", "domain_size"):
                fields[f"{prefix}.{name}"] = getattr(network, name)
    return fields


def hbm(accelerator: Accelerator):
    tier = accelerator.tier("device")
    assert tier is not None
    return tier


# ---- the bundled catalog -------------------------------------------------------------


def test_all_bundled_accelerators_load_in_order(catalog):
    assert tuple(catalog) == BUNDLED_ORDER
    assert len(catalog) == 48


def test_bundled_files_are_named_after_their_id():
    files = bundled_accelerator_files()
    assert files == sorted(files)
    assert {path.stem for path in files} == set(BUNDLED_ORDER)
    for path in files:
        assert load_accelerator_file(path).id == path.stem


def test_every_value_and_alternative_has_a_source(catalog):
    for accelerator in catalog.values():
        for field, value in sourced_fields(accelerator).items():
            assert value.source.strip(), f"{accelerator.id}: {field} has no source"
            for alternative in value.alternatives:
                assert alternative.source.strip(), f"{accelerator.id}: {field} alternative has no source"
                assert alternative.note.strip(), (
                    f"{accelerator.id}: {field} alternative does not say why it was not used"
                )


# Parts whose makers publish only narrower peaks (Rubin: NVFP4; MI455X: FP8 and FP4; LP30: FP8): a 16-bit
# product on them has no stated rate, and the model says so rather than borrowing one.
NO_PUBLISHED_BF16 = {"vr200", "mi455x", "groq-lp30"}
# Parts with no published compute at all: memory and bandwidth only.
MEMORY_ONLY = {"mi350x", "m5-max", "crescent-island", "ai200"}


def test_memory_only_parts_say_so_and_carry_no_peak(catalog):
    assert {a.id for a in catalog.values() if not a.compute_published} == MEMORY_ONLY
    for accelerator_id in MEMORY_ONLY:
        accelerator = catalog[accelerator_id]
        assert not accelerator.peak_flops and accelerator.compute_unpublished.strip()
        assert all(float(t.bandwidth_Bps) > 0 for t in accelerator.memory if t.placement)


def test_a_file_cannot_both_give_peaks_and_say_none_is_published(tmp_path):
    text = VALID.replace('id = "test-gpu"', 'id = "test-gpu"\ncompute_unpublished = "not disclosed"')
    with pytest.raises(CatalogError, match="compute_unpublished"):
        load_accelerator_file(write(tmp_path, text))


def test_a_memory_only_file_loads_without_peaks(tmp_path):
    start = VALID.index("[peak_flops]")
    end = VALID.index("[[memory]]")
    text = VALID[:start] + VALID[end:]
    text = text.replace('id = "test-gpu"', 'id = "test-gpu"\ncompute_unpublished = "The maker has disclosed no compute."')
    accelerator = load_accelerator_file(write(tmp_path, text))
    assert not accelerator.compute_published and accelerator.peak("bf16") == 0.0
    with pytest.raises(CatalogError, match="peak_flops"):
        load_accelerator_file(write(tmp_path, VALID[:start] + VALID[end:]))


@pytest.mark.parametrize(("accelerator_id", "domain"), [
    ("vr200", 72), ("gb300", 72), ("gb200", 72), ("mi455x", 72), ("groq-lp30", 256), ("tpu-v7", 9216),
])
def test_rack_scale_parts_expose_their_scale_up_domain(catalog, accelerator_id, domain):
    assert catalog[accelerator_id].interconnect.domain_size.value == domain


def test_the_lp30_is_an_sram_machine(catalog):
    lp30 = catalog["groq-lp30"]
    assert [t.kind for t in lp30.memory if t.placement] == ["sram"]
    assert lp30.architecture_class == "deterministic-pipeline"


def test_bundled_values_are_physical(catalog):
    for accelerator in catalog.values():
        assert accelerator.architecture_class in ARCHITECTURE_CLASSES
        assert 0 <= float(accelerator.idle_W) < float(accelerator.tdp_W)
        assert any(tier.placement for tier in accelerator.memory)
        if accelerator.compute_published and accelerator.id not in NO_PUBLISHED_BF16:
            assert accelerator.peak("bf16") > 0, f"{accelerator.id} needs a BF16/FP16 peak for 16-bit models"
        for tier in accelerator.memory:
            if tier.placement:
                assert tier.effective_bandwidth_Bps > 0


# Each known conflict between the papers (kept as alternatives in the accelerator files): the
# field where it lives and a value among its alternatives.
KNOWN_CONFLICTS = [
    ("gaudi3", "peak_flops.bf16", 400e12),
    ("groq-lpu", "tdp_W", 75),
    ("b200", "peak_flops.bf16", 4.5e15),
    ("b200", "memory[0].capacity_bytes", 90e6),
    ("sn40l", "memory[2].capacity_bytes", 786e9),
    ("sn40l", "memory[2].capacity_bytes", 1.5e12),
    ("wse-3", "memory[0].bandwidth_Bps", 220e12),
    ("wse-3", "peak_flops.bf16", 125e15),
    ("wse-3", "tdp_W", 23000),
    ("mi300x", "tdp_W", 700),
    ("mi250", "memory[1].capacity_bytes", 64 * 2**30),
    ("gh200", "tdp_W", 450),
    ("gh200", "memory[2].capacity_bytes", 480e9),
    ("tpu-v7", "memory[0].bandwidth_Bps", 7.2e12),
    ("gc200", "memory[0].bandwidth_Bps", 45e12),
    # Conflicts between the research sources of the later devices.
    ("rtx-4090", "peak_flops.bf16", 330e12),
    ("rtx-5090", "peak_flops.bf16", 419e12),
    ("rtx-pro-6000", "tdp_W", 300),
    ("rtx-pro-6000", "memory[1].bandwidth_Bps", 1.5e12),
    ("l40s", "tdp_W", 300),
    ("b300", "peak_flops.fp4", 13.125e15),
    ("b300", "peak_flops.fp4", 15e15),
    ("b300", "tdp_W", 1400),
    ("b300", "memory[0].capacity_bytes", 288 * 2**30),
    ("b300", "memory[0].bandwidth_Bps", 7.7e12),
    ("gb200", "peak_flops.fp4", 9e15),
    ("gb200", "memory[0].capacity_bytes", 192 * 2**30),
    ("gb200", "memory[0].bandwidth_Bps", 7.7e12),
    ("gb300", "memory[0].capacity_bytes", 288 * 2**30),
    ("dgx-spark", "memory[0].bandwidth_Bps", 301e9),
    ("dgx-spark", "tdp_W", 240),
    ("ryzen-ai-max-395", "tdp_W", 55),
    ("mi355x", "peak_flops.fp8", 2.5e15),
    ("mi355x", "peak_flops.fp4", 20.1e15),
    ("mi355x", "memory[0].capacity_bytes", 64e6),
    ("tpu-v5e", "memory[0].bandwidth_Bps", 800 * 2**30),
    ("tpu-v5e", "interconnect.bandwidth_per_direction_Bps", 100e9),
    ("trainium2", "memory[0].bandwidth_Bps", 3e12),
    ("cloud-ai-100-ultra", "peak_flops.bf16", 288e12),
]


@pytest.mark.parametrize(("accelerator_id", "field", "alternative"), KNOWN_CONFLICTS)
def test_known_conflicts_keep_the_other_value(catalog, accelerator_id, field, alternative):
    value = sourced_fields(catalog[accelerator_id])[field]
    assert value.note.strip(), "the note must explain the choice"
    assert any(alt.value == pytest.approx(alternative) for alt in value.alternatives)


@pytest.mark.parametrize(
    ("accelerator_id", "field", "expected"),
    [
        ("h100-sxm", "peak_flops.bf16", 989.4e12),
        ("h100-sxm", "peak_flops.fp8", 1978.9e12),
        ("h100-sxm", "memory[1].bandwidth_Bps", 3.35e12),
        ("h100-sxm", "memory[1].capacity_bytes", 80 * 2**30),
        ("h100-sxm", "tdp_W", 700),
        ("a100-80gb", "peak_flops.bf16", 312e12),
        ("a100-80gb", "memory[1].bandwidth_Bps", 2.039e12),
        ("h200", "memory[1].bandwidth_Bps", 4.8e12),
        ("mi300x", "peak_flops.bf16", 1307.4e12),
        ("mi300x", "memory[1].bandwidth_Bps", 5.3e12),
        ("mi300x", "memory[1].capacity_bytes", 192 * 2**30),
        ("mi300x", "tdp_W", 750),
        ("mi250", "memory[1].capacity_bytes", 128 * 2**30),
        ("mi250", "tdp_W", 560),
        ("gaudi3", "peak_flops.bf16", 1835e12),
        ("b200", "peak_flops.bf16", 2.25e15),
        ("tpu-v7", "peak_flops.fp8", 4.614e15),
        ("wse-3", "memory[0].capacity_bytes", 44e9),
        ("wse-3", "memory[0].bandwidth_Bps", 21e15),
        ("groq-lpu", "memory[0].capacity_bytes", 230e6),
        ("groq-lpu", "tdp_W", 215),
        ("sn40l", "memory[2].capacity_bytes", 768e9),
    ],
)
def test_spot_checks(catalog, accelerator_id, field, expected):
    assert float(sourced_fields(catalog[accelerator_id])[field]) == pytest.approx(expected, rel=0.01)


def test_devices_without_fp8_units_have_no_fp8_peak(catalog):
    for accelerator_id in ("a100-40gb", "a100-80gb", "mi250", "max-1550"):
        assert catalog[accelerator_id].peak("fp8") == 0.0


def test_stack_factor_is_below_reference_for_amd_and_intel_gpus(catalog):
    for accelerator in catalog.values():
        factor = float(accelerator.software_efficiency)
        if accelerator.vendor in ("AMD", "Intel") and accelerator.architecture_class == "gpu-simt":
            assert factor == pytest.approx(0.8)
            assert "Sec. IV-A" in accelerator.software_efficiency.source
        else:
            assert factor == 1.0


def test_system_scope_power(catalog):
    cs3 = catalog["wse-3"]
    assert cs3.power_scope == "system"
    assert float(cs3.tdp_W) - float(cs3.idle_W) == pytest.approx(4500)
    assert catalog["h100-sxm"].power_scope == "device"


def test_far_tiers_are_reached_over_their_link(catalog):
    gh200_far = catalog["gh200"].tier("far")
    assert gh200_far.link_bandwidth_Bps is not None
    assert gh200_far.effective_bandwidth_Bps == pytest.approx(450e9)
    assert catalog["h100-sxm"].tier("far").effective_bandwidth_Bps == pytest.approx(64e9)


def test_readme_example_loads(tmp_path):
    text = README.read_text(encoding="utf-8")
    example = text.split("## A complete example", 1)[1]
    block = re.search(r"```toml\n(.*?)```", example, re.DOTALL).group(1)
    path = tmp_path / "my-gpu.toml"
    path.write_text(block, encoding="utf-8")
    accelerator = load_accelerator_file(path)
    assert accelerator.id == "my-gpu"
    assert accelerator.tier("far").effective_bandwidth_Bps == 32e9


# ---- malformed files -----------------------------------------------------------------

VALID = """\
id = "test-gpu"
name = "Test GPU"
vendor = "Test"
architecture_class = "gpu-simt"
power_scope = "device"

year = { value = 2024, source = "Test datasheet (2024)" }
process_node = { value = "TSMC N5", source = "Test datasheet (2024)" }
tdp_W = { value = 700, source = "Test datasheet (2024)" }
idle_W = { value = 70, source = "Estimate" }
software_efficiency = { value = 1.0, source = "Reference" }

[peak_flops]
bf16 = { value = 989.4e12, source = "Test datasheet (2024)" }

[[memory]]
kind = "cache"
level = "on-chip"
name = "L2"
placement = false
capacity_bytes = { value = 50e6, source = "Test datasheet (2024)" }

[[memory]]
kind = "hbm"
level = "device"
name = "HBM3"
placement = true
capacity_bytes = { value = 85_899_345_920, source = "Test datasheet (2024)" }
bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }

[[memory]]
kind = "host"
level = "far"
name = "Host DDR5"
placement = true
capacity_bytes = { value = 250e9, source = "Estimate" }
bandwidth_Bps = { value = 76.8e9, source = "Estimate" }
link_bandwidth_Bps = { value = 64e9, source = "PCIe 5.0" }

[interconnect]
name = "NVLink 4"
bandwidth_per_direction_Bps = { value = 450e9, source = "Test datasheet (2024)" }
latency_s = { value = 1e-6, source = "Estimate" }
domain_size = { value = 8, source = "Test datasheet (2024)" }
"""


def write(tmp_path: Path, text: str, name: str = "test-gpu.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def test_the_valid_fixture_loads(tmp_path):
    accelerator = load_accelerator_file(write(tmp_path, VALID))
    assert accelerator.peak("bf16") == 989.4e12
    assert accelerator.source_file.endswith("test-gpu.toml")


@pytest.mark.parametrize(
    ("case", "old", "new", "field"),
    [
        (
            "missing source",
            'bf16 = { value = 989.4e12, source = "Test datasheet (2024)" }',
            "bf16 = { value = 989.4e12 }",
            "peak_flops.bf16.source",
        ),
        (
            "empty source",
            'tdp_W = { value = 700, source = "Test datasheet (2024)" }',
            'tdp_W = { value = 700, source = "  " }',
            "tdp_W.source",
        ),
        (
            "negative bandwidth",
            "bandwidth_Bps = { value = 3.35e12,",
            "bandwidth_Bps = { value = -3.35e12,",
            "memory[1].bandwidth_Bps.value",
        ),
        (
            "unknown class",
            'architecture_class = "gpu-simt"',
            'architecture_class = "quantum"',
            "architecture_class",
        ),
        (
            "unknown top-level key",
            'vendor = "Test"',
            'vendor = "Test"\ncolour = "green"',
            "colour",
        ),
        (
            "unknown key in a tier",
            "bandwidth_Bps = { value = 3.35e12,",
            "bandwith_Bps = { value = 3.35e12,",
            "memory[1].bandwith_Bps",
        ),
        (
            "unknown precision key",
            'bf16 = { value = 989.4e12, source = "Test datasheet (2024)" }',
            'fp16 = { value = 989.4e12, source = "Test datasheet (2024)" }',
            "peak_flops.fp16",
        ),
        ("NaN", "latency_s = { value = 1e-6,", "latency_s = { value = nan,", "interconnect.latency_s.value"),
        (
            "one peer's link faster than the whole",
            'domain_size = { value = 8, source = "Test datasheet (2024)" }',
            ('domain_size = { value = 8, source = "Test datasheet (2024)" }\n'
             'peer_bandwidth_per_direction_Bps = { value = 500e9, source = "Test datasheet (2024)" }'),
            "interconnect.peer_bandwidth_per_direction_Bps.value",
        ),
        ("infinity", "tdp_W = { value = 700,", "tdp_W = { value = inf,", "tdp_W.value"),
        ("text for a number", "tdp_W = { value = 700,", 'tdp_W = { value = "700 W",', "tdp_W.value"),
        (
            "bare number for a sourced value",
            'tdp_W = { value = 700, source = "Test datasheet (2024)" }',
            "tdp_W = 700",
            "tdp_W",
        ),
        (
            "boolean for a number",
            "domain_size = { value = 8,",
            "domain_size = { value = true,",
            "interconnect.domain_size.value",
        ),
        (
            "fractional device count",
            "domain_size = { value = 8,",
            "domain_size = { value = 7.5,",
            "interconnect.domain_size.value",
        ),
        (
            "text for placement",
            "placement = true\ncapacity_bytes = { value = 85",
            'placement = "yes"\ncapacity_bytes = { value = 85',
            "memory[1].placement",
        ),
        ("idle above tdp", "idle_W = { value = 70,", "idle_W = { value = 800,", "idle_W.value"),
        ("negative idle", "idle_W = { value = 70,", "idle_W = { value = -1,", "idle_W.value"),
        (
            "stack factor too high",
            "software_efficiency = { value = 1.0,",
            "software_efficiency = { value = 2.0,",
            "software_efficiency.value",
        ),
        (
            "zero stack factor",
            "software_efficiency = { value = 1.0,",
            "software_efficiency = { value = 0,",
            "software_efficiency.value",
        ),
        ("bad id", 'id = "test-gpu"', 'id = "Test GPU"', "id"),
        ("unknown memory kind", 'kind = "hbm"', 'kind = "gddr6"', "memory[1].kind"),
        ("repeated level", 'level = "device"', 'level = "on-chip"', "memory[1].level"),
        (
            "far tier without link",
            'link_bandwidth_Bps = { value = 64e9, source = "PCIe 5.0" }\n',
            "",
            "memory[2].link_bandwidth_Bps",
        ),
        (
            "alternative without source",
            'idle_W = { value = 70, source = "Estimate" }',
            'idle_W = { value = 70, source = "Estimate", alternatives = [{ value = 60 }] }',
            "idle_W.alternatives[0].source",
        ),
        (
            "unknown grade",
            'tdp_W = { value = 700, source = "Test datasheet (2024)" }',
            'tdp_W = { value = 700, source = "Test datasheet (2024)", grade = "datasheet" }',
            "tdp_W.grade",
        ),
        (
            "grade that is not text",
            'tdp_W = { value = 700, source = "Test datasheet (2024)" }',
            'tdp_W = { value = 700, source = "Test datasheet (2024)", grade = 1 }',
            "tdp_W.grade",
        ),
        (
            "unknown grade of an alternative",
            'idle_W = { value = 70, source = "Estimate" }',
            'idle_W = { value = 70, source = "Estimate", '
            'alternatives = [{ value = 60, source = "x", grade = "press" }] }',
            "idle_W.alternatives[0].grade",
        ),
        (
            "host share above one",
            'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }',
            'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }\n'
            'host_shared = { value = 1.5, source = "Estimate" }',
            "memory[1].host_shared.value",
        ),
        (
            "host share of zero",
            'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }',
            'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }\n'
            'host_shared = { value = 0, source = "Estimate" }',
            "memory[1].host_shared.value",
        ),
        (
            "host share on a far tier",
            'link_bandwidth_Bps = { value = 64e9, source = "PCIe 5.0" }',
            'link_bandwidth_Bps = { value = 64e9, source = "PCIe 5.0" }\n'
            'host_shared = { value = 0.75, source = "Estimate" }',
            "memory[2].host_shared",
        ),
        (
            "alternative of the wrong type",
            'idle_W = { value = 70, source = "Estimate" }',
            'idle_W = { value = 70, source = "Estimate", alternatives = [{ value = "sixty", source = "x" }] }',
            "idle_W.alternatives[0].value",
        ),
    ],
)
def test_malformed_file_names_file_and_field(tmp_path, case, old, new, field):
    path = write(tmp_path, replace_once(VALID, old, new))
    with pytest.raises(CatalogError) as caught:
        load_accelerator_file(path)
    message = str(caught.value)
    assert "test-gpu.toml" in message, case
    assert caught.value.field == field, case
    assert f": {field}: " in message, case


def test_missing_required_field(tmp_path):
    path = write(tmp_path, replace_once(VALID, 'vendor = "Test"\n', ""))
    with pytest.raises(CatalogError, match=r"test-gpu\.toml: vendor: required"):
        load_accelerator_file(path)


def test_bandwidth_may_be_omitted_only_for_a_cache(tmp_path):
    path = write(
        tmp_path, replace_once(VALID, 'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }\n', "")
    )
    with pytest.raises(CatalogError, match=r"memory\[1\]\.bandwidth_Bps: required where placement = true"):
        load_accelerator_file(path)


def test_needs_a_placement_tier(tmp_path):
    text = VALID.replace("placement = true", "placement = false")
    with pytest.raises(CatalogError, match=r"test-gpu\.toml: memory: needs at least one tier with placement = true"):
        load_accelerator_file(write(tmp_path, text))


def test_bad_toml_syntax_names_file_and_line(tmp_path):
    path = write(tmp_path, replace_once(VALID, 'name = "Test GPU"', 'name = "Test GPU'))
    with pytest.raises(CatalogError) as caught:
        load_accelerator_file(path)
    message = str(caught.value)
    assert "test-gpu.toml" in message
    assert "not valid TOML" in message
    assert "line 2" in message


def test_unreadable_file_is_a_catalog_error(tmp_path):
    with pytest.raises(CatalogError, match="missing.toml"):
        load_accelerator_file(tmp_path / "missing.toml")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b'id = "\xff\xfe"\n')
    with pytest.raises(CatalogError, match="binary.toml.*UTF-8"):
        load_accelerator_file(binary)


def test_loader_does_not_require_the_file_name_to_match_the_id(tmp_path):
    accelerator = load_accelerator_file(write(tmp_path, VALID, name="my copy.toml"))
    assert accelerator.id == "test-gpu"


def test_memory_written_as_one_table_is_explained(tmp_path):
    head, _, _ = VALID.partition("[[memory]]")
    _, _, tail = VALID.partition("[interconnect]")
    single_tier = '[memory]\nkind = "hbm"\nlevel = "device"\nname = "HBM3"\nplacement = true\n\n'
    with pytest.raises(CatalogError, match=r"test-gpu\.toml: memory: .*\[\[memory\]\]"):
        load_accelerator_file(write(tmp_path, head + single_tier + "[interconnect]" + tail))


def test_a_mesh_gives_a_group_only_its_direct_links(tmp_path):
    """A switchless mesh of 64 GB/s per pair (the MI300X's Infinity Fabric): a device of a
    group of g reaches the rest over g - 1 links; through a switch any group gets it all."""
    text = VALID.replace(
        'domain_size = { value = 8, source = "Test datasheet (2024)" }\n',
        'domain_size = { value = 8, source = "Test datasheet (2024)" }\n'
        'peer_bandwidth_per_direction_Bps = { value = 64e9, source = "Test datasheet (2024)" }\n',
    )
    mesh = load_accelerator_file(write(tmp_path, text)).interconnect
    assert [mesh.group_bandwidth_Bps(peers) for peers in (1, 3, 7)] == [64e9, 192e9, 448e9]
    assert mesh.group_bandwidth_Bps(8) == 450e9  # never more than the device's total
    switched = load_accelerator_file(write(tmp_path, VALID, "switched.toml")).interconnect
    assert switched.peer_bandwidth_per_direction_Bps is None
    assert switched.group_bandwidth_Bps(1) == 450e9


# ---- source grades and unified memory ------------------------------------------------


def raw_sourced_values(table: dict, prefix: str = ""):
    """Every sourced value and alternative in a raw TOML table: (dotted field, table)."""
    for key, value in table.items():
        field = f"{prefix}{key}"
        if isinstance(value, dict):
            if "value" in value and "source" in value:
                yield field, value
                for index, alternative in enumerate(value.get("alternatives", [])):
                    yield f"{field}.alternatives[{index}]", alternative
            else:
                yield from raw_sourced_values(value, f"{field}.")
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    yield from raw_sourced_values(item, f"{field}[{index}].")


def test_bundled_files_state_a_grade_on_every_value_and_alternative():
    missing = []
    for path in bundled_accelerator_files():
        document = tomllib.loads(path.read_text(encoding="utf-8"))
        fields = list(raw_sourced_values(document))
        assert fields, path.name
        for field, entry in fields:
            if entry.get("grade") not in GRADES:
                missing.append(f"{path.name}: {field}")
    assert not missing, "no grade stated:\n" + "\n".join(missing)


def test_bundled_estimates_are_graded_as_estimates(catalog):
    for accelerator in catalog.values():
        for field, value in sourced_fields(accelerator).items():
            for entry in (value, *value.alternatives):
                if entry.source.startswith("Estimate"):
                    assert entry.grade == "estimate", f"{accelerator.id}: {field} ({entry.source})"
                if entry.grade == "estimate":
                    assert entry.note.strip(), f"{accelerator.id}: {field} is an estimate without its working"


def test_a_missing_grade_is_derived_from_the_source(tmp_path):
    text = replace_once(
        VALID,
        'idle_W = { value = 70, source = "Estimate" }',
        'idle_W = { value = 70, source = "Estimate", alternatives = [{ value = 60, source = "Some review" }] }',
    )
    accelerator = load_accelerator_file(write(tmp_path, text))
    assert accelerator.idle_W.grade == "estimate"
    assert accelerator.idle_W.alternatives[0].grade == "unstated"
    assert accelerator.tdp_W.grade == "unstated"
    assert accelerator.interconnect.latency_s.grade == "estimate"
    assert Sourced(1.0, "Estimate (no figure)").grade == "estimate"


def test_a_stated_grade_is_kept(tmp_path):
    text = replace_once(
        VALID,
        'tdp_W = { value = 700, source = "Test datasheet (2024)" }',
        'tdp_W = { value = 700, source = "Test datasheet (2024)", grade = "vendor", '
        'alternatives = [{ value = 600, source = "A review", grade = "third-party", note = "why" }] }',
    )
    tdp = load_accelerator_file(write(tmp_path, text)).tdp_W
    assert (tdp.grade, tdp.alternatives[0].grade) == ("vendor", "third-party")


def test_a_bad_grade_names_the_choices(tmp_path):
    text = replace_once(
        VALID,
        'tdp_W = { value = 700, source = "Test datasheet (2024)" }',
        'tdp_W = { value = 700, source = "Test datasheet (2024)", grade = "datasheet" }',
    )
    with pytest.raises(CatalogError, match=r"test-gpu\.toml: tdp_W\.grade: must be one of vendor, paper, "
                                           r"third-party, estimate; got 'datasheet'"):
        load_accelerator_file(write(tmp_path, text))


def test_host_shared_is_kept_on_a_device_tier(tmp_path):
    text = replace_once(
        VALID,
        'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }',
        'bandwidth_Bps = { value = 3.35e12, source = "Test datasheet (2024)" }\n'
        'host_shared = { value = 0.75, source = "Estimate", note = "96 of 128 GB." }',
    )
    accelerator = load_accelerator_file(write(tmp_path, text))
    assert float(accelerator.tier("device").host_shared) == 0.75
    assert accelerator.tier("device").host_shared.grade == "estimate"
    assert accelerator.tier("on-chip").host_shared is None


def test_geforce_tensor_peaks_are_the_fp32_accumulate_rates(catalog):
    """GeForce halves BF16/FP16 and FP8 with FP32 accumulation, which inference uses; the
    FP16-accumulate rate the spec tables quote is kept as an alternative of twice the value."""
    for accelerator_id in ("rtx-4090", "rtx-5090"):
        for key in ("bf16", "fp8"):
            peak = catalog[accelerator_id].peak_flops[key]
            assert any(alt.value == pytest.approx(2 * float(peak)) for alt in peak.alternatives), (accelerator_id, key)


def test_pcie_cards_have_no_nvlink(catalog):
    for accelerator_id in ("rtx-4090", "rtx-5090", "rtx-pro-6000", "l40s", "l4"):
        network = catalog[accelerator_id].interconnect
        assert network.name.startswith("PCIe") and float(network.bandwidth_per_direction_Bps) <= 64e9


def test_nvl72_gpus_share_one_nvlink_domain_and_hgx_boards_eight(catalog):
    for accelerator_id, domain in (("gb200", 72), ("gb300", 72), ("b300", 8), ("b200", 8)):
        network = catalog[accelerator_id].interconnect
        assert float(network.domain_size) == domain
        assert float(network.bandwidth_per_direction_Bps) == 900e9


def test_unified_memory_machines_have_one_shared_device_tier(catalog):
    unified = [a for a in catalog.values() if any(t.host_shared is not None for t in a.memory)]
    assert {a.id for a in unified} >= {"m4-max", "m3-ultra", "dgx-spark", "ryzen-ai-max-395"}
    for accelerator in unified:
        device = accelerator.tier("device")
        assert device.kind == "lpddr" and device.host_shared is not None, accelerator.id
        assert accelerator.tier("far") is None, f"{accelerator.id}: unified memory has no separate host tier"
        assert 0 < float(device.host_shared) <= 1
        assert float(accelerator.interconnect.domain_size) == 1, f"{accelerator.id}: a single machine"


def test_sram_that_holds_no_llm_weights_is_not_a_placement_tier(catalog):
    """Qualcomm's and Tenstorrent's on-chip SRAM is compiler-managed and far smaller than an LLM:
    the weights live in LPDDR or GDDR."""
    for accelerator_id, kind in (("cloud-ai-100-ultra", "lpddr"), ("blackhole-p150", "hbm")):
        accelerator = catalog[accelerator_id]
        assert accelerator.architecture_class == "many-core-sram"
        assert not accelerator.tier("on-chip").placement
        assert accelerator.tier("device").kind == kind and accelerator.tier("device").placement


def test_the_catalog_summary_gives_each_values_grade(catalog):
    """`accelscope catalog --json`: a grades object with the summary's own keys."""
    from accelscope.cli.serialize import accelerator_summary

    h100 = accelerator_summary(catalog["h100-sxm"])
    grades = h100["grades"]
    assert grades["peak_flops"].keys() == h100["peak_flops"].keys()
    assert grades["peak_flops"]["bf16"] == "vendor" and grades["idle_w"] == "estimate"
    assert [tier["capacity_bytes"] for tier in grades["memory"]] == ["vendor", "vendor", "vendor"]
    assert grades["interconnect"]["latency_s"] == "estimate" and grades["software_efficiency"] == "paper"
    m4 = accelerator_summary(catalog["m4-max"])
    assert m4["memory"][0]["host_shared"] == 0.75 and m4["grades"]["memory"][0]["host_shared"] == "estimate"
    assert h100["memory"][1]["host_shared"] is None and h100["grades"]["memory"][1]["host_shared"] is None


# ---- groups: where the app lists each accelerator ---------------------------------------------


@pytest.mark.parametrize(("accelerator_id", "group"), [
    ("h100-sxm", "datacenter-gpu"),  # a SIMT GPU
    ("l40s", "datacenter-gpu"),  # a datacenter PCIe card: nothing states otherwise
    ("rtx-4090", "desk"),  # stated in its file
    ("rtx-pro-6000", "desk"),
    ("m4-max", "unified"),  # host_shared device memory
    ("dgx-spark", "unified"),  # a GPU, but unified memory comes first
    ("tpu-v6e", "asic"),  # systolic
    ("trainium2", "asic"),
    ("cloud-ai-100-ultra", "asic"),  # many-core, but its model lives in LPDDR
    ("gc200", "dataflow"),  # many-core with its model in on-chip SRAM
    ("groq-lpu", "dataflow"),  # deterministic pipeline
    ("wse-3", "dataflow"),  # wafer-scale
    ("sn40l", "dataflow"),  # reconfigurable dataflow
])
def test_each_accelerator_is_grouped_by_its_fields(catalog, accelerator_id, group):
    from accelscope.engine.catalog.groups import accelerator_group

    assert accelerator_group(catalog[accelerator_id]) == group


def test_the_stated_group_is_what_the_fields_cannot_tell(catalog):
    """Without its stated group a desk card reads as a datacenter GPU: only the desk cards state one."""
    from dataclasses import replace as changed

    from accelscope.engine.catalog.groups import accelerator_group

    stated = {a.id for a in catalog.values() if a.group}
    assert stated == {"rtx-4090", "rtx-5090", "rtx-pro-6000", "arc-pro-b60"}
    for accelerator_id in stated:
        assert accelerator_group(changed(catalog[accelerator_id], group="")) == "datacenter-gpu"


def test_groups_list_every_accelerator_once_in_catalog_order(catalog):
    from accelscope.engine.catalog.groups import GROUP_LABELS, GROUPS, grouped

    groups = grouped(catalog.values())
    assert [group for group, _ in groups] == list(GROUPS)  # every group has members in the bundled catalog
    listed = [a.id for _, members in groups for a in members]
    assert sorted(listed) == sorted(catalog)
    for _, members in groups:
        assert [a.id for a in members] == [a for a in catalog if a in {m.id for m in members}]
    assert set(GROUP_LABELS) == set(GROUPS)


def test_a_file_may_state_its_group_and_a_bad_one_names_the_choices(tmp_path):
    text = replace_once(VALID, 'power_scope = "device"\n', 'power_scope = "device"\ngroup = "desk"\n')
    assert load_accelerator_file(write(tmp_path, text)).group == "desk"
    assert load_accelerator_file(write(tmp_path, VALID, "plain.toml")).group == ""
    bad = replace_once(VALID, 'power_scope = "device"\n', 'power_scope = "device"\ngroup = "gaming"\n')
    with pytest.raises(CatalogError, match=r"test-gpu\.toml: group: must be one of datacenter-gpu, desk, unified, "
                                           r"asic, dataflow; got 'gaming'"):
        load_accelerator_file(write(tmp_path, bad))


def test_the_catalog_summary_gives_the_group(catalog):
    from accelscope.cli.serialize import accelerator_summary

    assert accelerator_summary(catalog["rtx-5090"])["group"] == "desk"
    assert accelerator_summary(catalog["tpu-v5e"])["group"] == "asic"
