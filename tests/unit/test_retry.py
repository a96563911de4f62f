import time

import pytest

from jarvis.errors import DaemonUnavailable, DockerCommandFailed
from jarvis.retry import call_with_retry


def flaky(failures: int, error: Exception):
    calls = []

    def fn() -> str:
        calls.append(time.monotonic())
        if len(calls) <= failures:
            raise error
        return "ok"

    return fn, calls


def test_daemon_unavailable_is_retried_until_it_answers() -> None:
    fn, calls = flaky(3, DaemonUnavailable("unix:///x.sock", "connection refused"))
    assert call_with_retry(5, fn) == "ok"
    assert len(calls) == 4


def test_user_and_build_errors_are_not_retried() -> None:
    fn, calls = flaky(1, DockerCommandFailed("build failed"))
    with pytest.raises(DockerCommandFailed):
        call_with_retry(5, fn)
    assert len(calls) == 1


def test_gives_up_within_the_timeout_with_where_why_and_what_to_check() -> None:
    fn, calls = flaky(10_000, DaemonUnavailable("unix:///x.sock", "connection refused"))
    started = time.monotonic()
    with pytest.raises(DaemonUnavailable) as caught:
        call_with_retry(1.0, fn)
    assert time.monotonic() - started < 1.5
    assert len(calls) > 2
    message = str(caught.value)
    assert "unix:///x.sock" in message
    assert "connection refused" in message
    assert f"after {len(calls)} attempts" in message
    assert "docker info" in message


def test_zero_timeout_means_a_single_attempt() -> None:
    fn, calls = flaky(1, DaemonUnavailable("h", "down"))
    with pytest.raises(DaemonUnavailable):
        call_with_retry(0, fn)
    assert len(calls) == 1
