"""Parsing what the engine sends: multiplexed log frames and the container list endpoint."""

import json
from pathlib import Path

import pytest

from adapters.dockerpy import _entries, _frames, _status, _tty_lines

RECORDED = Path(__file__).parent / "recorded"


def frame(stream: int, payload: bytes) -> bytes:
    return bytes([stream, 0, 0, 0]) + len(payload).to_bytes(4, "big") + payload


@pytest.mark.parametrize("chunk_size", [1, 3, 8, 9, 64, 10_000])
def test_frames_are_demultiplexed_whatever_the_chunk_boundaries(chunk_size: int) -> None:
    raw = frame(1, b"t out 1\n") + frame(2, b"t err 1\n") + frame(1, b"") + frame(2, b"x" * 300 + b"\n")
    chunks = [raw[i : i + chunk_size] for i in range(0, len(raw), chunk_size)]
    assert list(_frames(iter(chunks))) == [
        ("stdout", b"t out 1\n"),
        ("stderr", b"t err 1\n"),
        ("stdout", b""),
        ("stderr", b"x" * 300 + b"\n"),
    ]


def test_truncated_frame_is_dropped_not_misread() -> None:
    raw = frame(1, b"complete\n") + frame(2, b"cut short")[:-3]
    assert list(_frames(iter([raw]))) == [("stdout", b"complete\n")]


def test_tty_stream_is_split_into_lines() -> None:
    chunks = [b"a\r\nb", b"c\r\n", b"tail"]
    assert list(_tty_lines(iter(chunks))) == [("tty", b"a"), ("tty", b"bc"), ("tty", b"tail")]


def test_first_byte_tells_frames_from_a_tty_stream() -> None:
    multiplexed = [frame(2, b"2026-11-21T10:00:00Z e\n")[:1], frame(2, b"2026-11-21T10:00:00Z e\n")[1:]]
    assert list(_entries(iter(multiplexed))) == [("stderr", b"2026-11-21T10:00:00Z e\n")]
    tty = [b"2026-11-21T10:00:00Z a\r\n2026-11-21T10:00:01Z b\r\n"]
    assert [stream for stream, _ in _entries(iter(tty))] == ["tty", "tty"]
    assert list(_entries(iter([]))) == []


def test_container_list_entries_become_service_statuses() -> None:
    listed = json.loads((RECORDED / "containers_list.json").read_text())
    statuses = {s.service: s for s in map(_status, listed)}
    assert statuses["mcpm-essentials"].health == "healthy"
    assert [str(p) for p in statuses["mcpm-essentials"].ports] == ["127.0.0.1:32768->8080"]
    assert statuses["mcpm-memory"].health == "unhealthy"
    assert statuses["mcpm-dev-core"].state == "exited"
    assert statuses["mcpm-dev-core"].exit_code == 3
    assert statuses["mcpm-data"].health is None
    assert statuses["mcpm-data"].container == "jarvis-default-mcpm-data-1"
    assert statuses["mcpm-research"].image == "jarvis-default-mcpm-research"
