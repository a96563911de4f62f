from datetime import UTC, datetime

from jarvis.logtail import last_entries, last_lines, parse_timestamp


def log_of(entries: list[tuple[str, str]]):
    """A fake engine: `tail=T` returns the last T entries of BOTH streams (tail applies before the filter)."""
    reads: list[int] = []

    def read_tail(tail: int):
        reads.append(tail)
        return [
            (stream, f"2026-11-21T10:00:00.{i:09d}Z {text}\n".encode()) for i, (stream, text) in enumerate(entries)
        ][-tail:]

    return read_tail, reads


def test_last_lines_of_a_stream_the_other_stream_buried() -> None:
    entries = [("stderr", f"err {i}") for i in range(1, 11)] + [("stdout", f"out {i}") for i in range(1, 1001)]
    read_tail, reads = log_of(entries)
    lines = last_lines(read_tail, 5, "stderr")
    assert [line.text for line in lines] == [f"err {i}" for i in range(6, 11)]
    assert all(line.stream == "stderr" for line in lines)
    assert reads == [5, 40, 320, 2560]  # widened x8 until the whole log had been read


def test_reads_no_more_than_needed_when_the_stream_is_recent() -> None:
    entries = [("stderr", "err")] + [("stdout", f"out {i}") for i in range(100)]
    read_tail, reads = log_of(entries)
    assert [line.text for line in last_lines(read_tail, 3, "stdout")] == ["out 97", "out 98", "out 99"]
    assert reads == [3]


def test_all_keeps_the_daemon_order_and_short_logs_stop_early() -> None:
    entries = [("stdout", "a"), ("stderr", "b"), ("stdout", "c")]
    read_tail, reads = log_of(entries)
    lines = last_lines(read_tail, 50, "all")
    assert [(line.stream, line.text) for line in lines] == [("stdout", "a"), ("stderr", "b"), ("stdout", "c")]
    assert reads == [50]


def test_widening_follows_the_density_of_the_wanted_stream() -> None:
    # One stderr line in every ten: after 50 entries hold 5, about 500 more are needed for 50 lines.
    entries = [("stderr" if i % 10 == 0 else "stdout", f"line {i}") for i in range(5000)]
    read_tail, reads = log_of(entries)
    lines = last_lines(read_tail, 50, "stderr")
    assert [line.text for line in lines] == [f"line {i}" for i in range(4500, 5000, 10)]
    assert reads == [50, 625]  # density estimate x1.25: one widening, not three


def test_missing_stream_returns_nothing_after_reading_everything() -> None:
    read_tail, reads = log_of([("stdout", str(i)) for i in range(30)])
    assert last_entries(read_tail, 10, "stderr") == []
    assert reads == [10, 80]


def test_tty_lines_count_for_any_stream() -> None:
    read_tail, _ = log_of([("tty", "x"), ("tty", "y")])
    assert [line.text for line in last_lines(read_tail, 5, "stderr")] == ["x", "y"]


def test_timestamps_compare_as_times_not_strings() -> None:
    # RFC 3339 with trailing zeros trimmed: ".5Z" is later than ".49Z" although it sorts first as text.
    a = parse_timestamp("2026-11-21T10:00:00.49Z")
    b = parse_timestamp("2026-11-21T10:00:00.5Z")
    assert a is not None
    assert b is not None
    assert a < b
    assert parse_timestamp("2026-11-21T10:00:00.123456789Z") == datetime(2026, 11, 21, 10, 0, 0, 123456, tzinfo=UTC)
    assert parse_timestamp("2026-11-21T10:00:00Z") == datetime(2026, 11, 21, 10, 0, tzinfo=UTC)
    assert parse_timestamp("not-a-time") is None


def test_line_without_timestamp_keeps_its_text() -> None:
    def read_tail(_tail: int) -> list:
        return [("stdout", b"plain text here\n")]

    (line,) = last_lines(read_tail, 1, "all")
    assert line.text == "plain text here"
    assert line.time is None
