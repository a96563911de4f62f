from datetime import UTC, datetime

from jarvis.formatting import log_block
from jarvis.runner import LogLine, ServiceLogs

T = datetime(2026, 11, 21, 15, 4, 5, 123456, tzinfo=UTC)


def test_all_streams_are_labelled_and_timestamps_are_short() -> None:
    logs = ServiceLogs(
        service="s",
        requested="all",
        lines=(LogLine(stream="stdout", text="hello", time=T), LogLine(stream="stderr", text="oops", time=T)),
    )
    text = log_block(logs, "s")
    assert "## s — all streams, 2 lines" in text
    assert "15:04:05.123 O hello\n15:04:05.123 E oops" in text
    assert "O=stdout E=stderr" in text


def test_single_stream_has_no_labels_and_says_when_empty() -> None:
    one = ServiceLogs(service="s", requested="stderr", lines=(LogLine(stream="stderr", text="oops"),))
    assert log_block(one, "s").endswith("```\noops\n```")
    none = ServiceLogs(service="s", requested="stdout", lines=())
    assert "(no stdout output)" in log_block(none, "s")


def test_tty_and_approximate_results_say_so() -> None:
    tty = ServiceLogs(service="s", requested="stderr", lines=(LogLine(stream="tty", text="x"),), tty=True)
    assert "one merged stream" in log_block(tty, "s")
    approx = ServiceLogs(service="s", requested="all", lines=(), approximate=True)
    assert "approximate" in log_block(approx, "s")
