"""The snapshot holder: leases, atomic swaps, strictly newer ids, broken generations skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.holder import SnapshotHolder
from snapshot_format.layout import StateLayout
from tests.server_fixtures import GraphBuilder, build_standard


@pytest.fixture
def layout(tmp_path: Path) -> StateLayout:
    return StateLayout(config_path=tmp_path / "kivgraph.toml", state_dir=tmp_path / "state")


def publish(layout: StateLayout, tmp_path: Path) -> str:
    return build_standard(GraphBuilder(tmp_path / "src")).publish(layout).name


def test_with_nothing_published_the_holder_lends_nothing(layout: StateLayout) -> None:
    holder = SnapshotHolder(layout)
    assert holder.start().swapped_to is None
    with holder.lease() as generation:
        assert generation is None
    assert holder.refresh().swapped_to is None


def test_a_swap_keeps_the_old_environment_until_its_last_lease_ends(layout: StateLayout, tmp_path: Path) -> None:
    first = publish(layout, tmp_path)
    holder = SnapshotHolder(layout)
    assert holder.start().swapped_to == first
    with holder.lease() as old:
        assert old is not None and old.name == first
        second = publish(layout, tmp_path)
        events = holder.refresh()
        assert events.swapped_to == second and not events.first
        with holder.lease() as new:
            assert new is not None and new.name == second
        assert holder.open_generations() == 2
        assert not old.closed and old.counts().symbols > 0  # still mapped and readable mid-call
    assert old.closed
    assert holder.open_generations() == 1
    holder.close()


def test_the_holder_never_moves_back_to_an_older_generation(layout: StateLayout, tmp_path: Path) -> None:
    first = publish(layout, tmp_path)
    second = publish(layout, tmp_path)
    holder = SnapshotHolder(layout)
    holder.start()
    assert holder.current_name == second
    layout.current_pointer.write_text(first + "\n")
    assert holder.refresh().swapped_to is None
    assert holder.current_name == second
    holder.close()


def test_at_start_a_broken_current_falls_back_to_the_newest_readable(layout: StateLayout, tmp_path: Path) -> None:
    first = publish(layout, tmp_path)
    second = publish(layout, tmp_path)
    (layout.generations_dir / second / "manifest").unlink()
    holder = SnapshotHolder(layout)
    events = holder.start()
    assert events.swapped_to == first
    assert any("manifest missing" in reason for reason in events.refused)
    holder.close()


def test_a_digest_mismatch_is_skipped_for_the_newest_other_generation(layout: StateLayout, tmp_path: Path) -> None:
    first = publish(layout, tmp_path)
    second = publish(layout, tmp_path)
    holder = SnapshotHolder(layout)
    holder.start()
    assert holder.current_name == second
    # The link layer is each generation's own (the repository layers of equal content are one file, shared).
    data = layout.generations_dir / second / "data.mdb"
    raw = bytearray(data.read_bytes())
    needle = raw.find(b"gamma")
    assert needle > 0
    raw[needle : needle + 3] = b"GAM"  # same size, different content
    data.write_bytes(bytes(raw))
    events = holder.verify_current()
    assert events.swapped_to == first
    assert "content digest" in events.refused[0]
    assert holder.refresh().swapped_to is None  # CURRENT still names the bad one: it stays skipped
    assert holder.verify_current().swapped_to is None  # the fallback verifies
    holder.close()


def test_two_finders_of_one_damage_both_leave_with_the_successor_installed(
    layout: StateLayout, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A call and the poller can find the same damage together. The second finder used to return at once,
    # while the first was still opening the successor, and its retry read the damaged generation again.
    import threading
    import time

    from server import holder as holder_module

    first = publish(layout, tmp_path)
    second = publish(layout, tmp_path)
    holder = SnapshotHolder(layout)
    holder.start()
    assert holder.current_name == second
    opening = threading.Event()
    real = holder_module.open_newest_readable

    def slow_open(*args, **kwargs):
        opening.set()
        time.sleep(0.3)  # the window in which the second finder arrives
        return real(*args, **kwargs)

    monkeypatch.setattr(holder_module, "open_newest_readable", slow_open)
    with holder.lease() as generation:
        assert generation is not None
        poller = threading.Thread(target=holder.condemn, args=(generation, "size differs"))
        poller.start()
        assert opening.wait(10)
        holder.condemn(generation, "size differs")  # the call's own finding
        assert holder.current_name == first  # when it returns, the retry reads the successor
    poller.join(10)
    holder.close()
