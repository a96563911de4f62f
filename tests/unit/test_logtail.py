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


def engine_of(entries: list[tuple[str, str]]):
    """A fake engine that can also filter: `read_stream(s, tail)` is stream s among the last `tail` entries
    ("all": the whole log), streamed; how many entries each filtered read delivered is recorded."""
    read_tail, reads = log_of(entries)
    filtered: list[tuple[str, int | str, int]] = []

    def read_stream(stream: str, tail: int | str):
        window = read_tail(len(entries) if tail == "all" else tail)
        record = [stream, tail, 0]
        filtered.append(record)  # type: ignore[arg-type]
        for entry in window:
            if entry[0] == stream:
                record[2] += 1
                yield entry

    return read_tail, read_stream, reads, filtered


def test_a_sparse_stream_is_asked_of_the_engine_alone_after_the_first_widened_window() -> None:
    # 3 stderr lines, the first two under 10,000 stdout lines: widening x8 would read the whole log through Python.
    entries = (
        [("stderr", "err 1")]
        + [("stdout", f"out {i}") for i in range(10_000)]
        + [("stderr", "err 2"), ("stdout", "last out"), ("stderr", "err 3")]
    )
    read_tail, read_stream, reads, filtered = engine_of(entries)
    lines = last_lines(read_tail, 5, "stderr", read_stream)
    assert [line.text for line in lines] == ["err 1", "err 2", "err 3"]
    assert reads[:2] == [5, 16]  # the tail, then one window widened by the density seen (2 of 5)
    assert filtered == [["stderr", "all", 3]]
    # The same answer as reading the whole log through Python (the path without the engine's filter).
    assert lines == last_lines(log_of(entries)[0], 5, "stderr")


def test_the_engine_filter_keeps_only_the_last_n_of_the_stream() -> None:
    entries = [("stdout", f"out {i}") for i in range(200)] + [("stderr", f"err {i}") for i in range(1, 4)]
    entries = [("stderr", f"old {i}") for i in range(1_000)] + entries
    read_tail, read_stream, _, filtered = engine_of(entries)
    assert [line.text for line in last_lines(read_tail, 5, "stderr", read_stream)] == [
        "old 998",
        "old 999",
        "err 1",
        "err 2",
        "err 3",
    ]
    # 1,003 stderr entries are more than a window's worth (11 x 8): the filtered windows found the last 5.
    assert filtered == [["stderr", "all", 89], ["stderr", 88, 3], ["stderr", 704, 504]]


def test_a_stream_dense_far_back_is_found_by_filtered_windows_not_read_whole() -> None:
    # 100,000 stderr lines, then 1,000 stdout lines: no stderr in the widened window, a lot of it before.
    entries = [("stderr", f"err {i}") for i in range(100_000)] + [("stdout", f"out {i}") for i in range(1_000)]
    read_tail, read_stream, reads, filtered = engine_of(entries)
    lines = last_lines(read_tail, 5, "stderr", read_stream)
    assert [line.text for line in lines] == [f"err {i}" for i in range(99_995, 100_000)]
    assert lines == last_lines(log_of(entries)[0], 5, "stderr")
    assert reads[:2] == [5, 40]
    # The whole-stream read stopped after a window's worth (40 x 8), then the filtered window of 2,560 held N.
    assert filtered == [["stderr", "all", 321], ["stderr", 320, 0], ["stderr", 2560, 1560]]


def test_filtered_windows_end_with_the_whole_stream() -> None:
    # Dense far back, then a long stretch of stdout: the filtered windows stay short of N, the last read is whole.
    entries = [("stderr", f"err {i}") for i in range(400)] + [("stdout", "out")] * 300_000
    read_tail, read_stream, _, filtered = engine_of(entries)
    assert [line.text for line in last_lines(read_tail, 5, "stderr", read_stream)] == [
        f"err {i}" for i in range(395, 400)
    ]
    assert [(tail, delivered) for _, tail, delivered in filtered] == [
        ("all", 321),
        (320, 0),
        (2560, 0),
        (20480, 0),
        (163840, 0),
        ("all", 400),
    ]


def test_dense_streams_short_logs_and_all_never_ask_the_engine_to_filter() -> None:
    dense = [("stderr" if i % 3 == 0 else "stdout", f"line {i}") for i in range(3000)]
    short = [("stderr", "err")] + [("stdout", f"out {i}") for i in range(30)]
    for entries, stream in ((dense, "stderr"), (short, "stderr"), (dense, "all")):
        read_tail, read_stream, _, filtered = engine_of(entries)
        assert last_lines(read_tail, 50, stream, read_stream)
        assert filtered == []
