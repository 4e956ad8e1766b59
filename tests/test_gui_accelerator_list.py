"""The accelerator list of the Scenario dock: forty devices under five groups, a filter box that
hides what does not match (and keeps what is ticked), and a small default shown set whose
groups start open."""

from __future__ import annotations

from PySide6.QtCore import Qt

from accelscope.engine.catalog.groups import GROUP_LABELS, grouped

WINDOW = {"size": (1400, 900)}  # the main window of the tests that take ``window`` (conftest)



def test_the_list_is_grouped_and_every_accelerator_is_in_it_once(window):
    groups = window.controls.accelerator_groups()
    catalog = window.engine.catalog
    assert list(groups) == [GROUP_LABELS[group] for group, _ in grouped(catalog.accelerators.values())]
    assert list(groups) == ["Datacenter GPUs", "Desk and workstation GPUs", "Unified memory", "TPUs and ASICs",
                            "Dataflow and SRAM machines"]
    assert sorted(a for members in groups.values() for a in members) == sorted(catalog.accelerators)
    assert groups["Desk and workstation GPUs"] == ("rtx-4090", "rtx-5090", "rtx-pro-6000", "arc-pro-b60")
    assert {"m4-max", "m3-ultra", "m5-max", "dgx-spark", "ryzen-ai-max-395"} == set(groups["Unified memory"])


def test_the_default_shows_a_few_with_their_groups_open(window):
    shown = window.controller.workspace.shown
    assert 5 <= len(shown) <= 8
    tree = window.controls.accelerator_tree
    for index in range(tree.topLevelItemCount()):
        group = tree.topLevelItem(index)
        members = {group.child(i).data(0, Qt.ItemDataRole.UserRole) for i in range(group.childCount())}
        assert group.isExpanded() == bool(members & set(shown)), group.text(0)


def test_the_filter_hides_rows_that_do_not_match_and_keeps_what_is_ticked(window):
    controls = window.controls
    shown = window.controller.workspace.shown
    controls.accelerator_filter.setText("rtx")
    assert controls.visible_accelerators() == ("rtx-4090", "rtx-5090", "rtx-pro-6000")
    hidden_groups = {g.text(0) for g in controls._group_items.values() if g.isHidden()}
    assert hidden_groups == {"Datacenter GPUs", "Unified memory", "TPUs and ASICs", "Dataflow and SRAM machines"}
    assert window.controller.workspace.shown == shown  # filtering changes nothing shown
    controls.accelerator_filter.setText("AMD instinct")  # every word, in name or vendor, any case
    assert controls.visible_accelerators() == ("mi250", "mi300x", "mi325x", "mi350x", "mi355x", "mi455x")
    controls.accelerator_filter.setText("apple")  # the vendor
    assert controls.visible_accelerators() == ("m4-max", "m3-ultra", "m5-max")
    # A group's box cannot be ticked while filtering (it would tick hidden members too).
    group = controls._group_items["unified"]
    assert not group.flags() & Qt.ItemFlag.ItemIsUserCheckable
    controls.accelerator_item("m3-ultra").setCheckState(0, Qt.CheckState.Checked)
    window.controller.throttle.flush()
    assert "m3-ultra" in window.controller.workspace.shown and set(shown) < set(window.controller.workspace.shown)
    controls.accelerator_filter.setText("no such device")
    assert controls.visible_accelerators() == ()
    controls.accelerator_filter.clear()
    assert len(controls.visible_accelerators()) == len(window.engine.catalog.accelerators)
    assert group.flags() & Qt.ItemFlag.ItemIsUserCheckable
