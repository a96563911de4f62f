"""A few stderr lines under many stdout lines, on the real daemon: the docker-py adapter asks the engine for
stderr alone, and returns exactly what reading the whole log through Python returned before. Likewise for a
stream that is dense far back but absent from the recent log (filtered windows)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from adapters.dockerpy import DockerPyAdapter, map_errors
from adapters.whales import WhalesAdapter
from jarvis.compose_project import ComposeCliProject
from jarvis.errors import DaemonUnavailable, NoContainer
from jarvis.logtail import last_lines
from tests.socket_proxy import DockerSocketProxy
from tests.stacks import Stack, running_stack

pytestmark = pytest.mark.docker

# stderr: 7 lines, six of them interleaved with stdout at the start, then 20,000 stdout lines, one stderr
# line, 3,000 more stdout lines. Each stream is written in order, so its lines are known; the pauses around
# `err 7` keep the daemon's order across the two pipes there (a flood is drained in blocks).
SCRIPT = (  # `$$` is Compose's escape for a literal `$`
    "for i in 1 2 3 4 5 6; do echo err $$i >&2; echo out $$i; done; "
    "seq 1 20000 | sed 's/^/flood /'; sleep 1; echo err 7 >&2; sleep 1; seq 1 3000 | sed 's/^/after /'; echo done; "
    "while :; do sleep 3600; done"
)
# stderr: 5,000 lines, then 2,000 stdout lines.
DENSE_FAR_BACK = (
    "seq 1 5000 | sed 's/^/err /' >&2; sleep 1; seq 1 2000 | sed 's/^/out /'; echo done; while :; do sleep 3600; done"
)
SERVICE = """\
  {name}:
    image: jarvis/busybox:1
    pull_policy: never
    init: true
    logging: {{driver: json-file, options: {{max-size: "50m", max-file: "1"}}}}
    command: ["sh", "-c", "{script}"]
"""
COMPOSE = (
    "services:\n" + SERVICE.format(name="sparse", script=SCRIPT) + SERVICE.format(name="dense", script=DENSE_FAR_BACK)
)


@pytest.fixture(scope="module")
def sparse_stack(base_image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    directory: Path = tmp_path_factory.mktemp("sparse")
    (directory / "compose.yaml").write_text(COMPOSE)
    with running_stack(directory) as stack:
        client = docker.from_env()
        try:
            containers = client.containers.list(filters={"label": f"com.docker.compose.project={stack.name}"})
            assert len(containers) == 2
            stack.services.wait_until_responsive(
                lambda: all(b"done" in c.logs(tail=1) for c in containers), timeout=60, pause=0.2
            )
        finally:
            client.close()
        yield stack


class RecordingAdapter(DockerPyAdapter):
    """The real adapter, recording which log requests it made."""

    def __init__(self, project: ComposeCliProject) -> None:
        super().__init__(project)
        self.requests: list[tuple[int | str, str]] = []

    def _log_entries(self, container_id: str, tail: int | str, stream: str = "all"):  # type: ignore[override]
        self.requests.append((tail, stream))
        return super()._log_entries(container_id, tail, stream)  # type: ignore[arg-type]


def test_sparse_stderr_is_read_with_the_engine_filter_and_is_exact(sparse_stack: Stack) -> None:
    adapter = RecordingAdapter(ComposeCliProject(sparse_stack.settings()))
    logs = adapter.compose_logs("sparse", 5, "stderr")
    assert [line.text for line in logs.lines] == [f"err {i}" for i in range(3, 8)]
    assert {line.stream for line in logs.lines} == {"stderr"}
    assert adapter.requests[-1] == ("all", "stderr")  # the engine filtered; the whole log never came to Python
    assert len(adapter.requests) == 3

    # Exactly what the path without the engine's filter (widening until the whole log was read) returns.
    container = adapter._containers(["sparse"])[0]
    widened = last_lines(lambda tail: adapter._log_entries(container.id, tail), 5, "stderr")
    assert logs.lines == widened
    everything = adapter.compose_logs("sparse", 50, "stderr")
    assert [line.text for line in everything.lines] == [f"err {i}" for i in range(1, 8)]
    assert all(line.time is not None for line in everything.lines)


def test_a_stream_dense_far_back_is_found_by_filtered_windows(sparse_stack: Stack) -> None:
    adapter = RecordingAdapter(ComposeCliProject(sparse_stack.settings()))
    logs = adapter.compose_logs("dense", 5, "stderr")
    assert [line.text for line in logs.lines] == [f"err {i}" for i in range(4996, 5001)]
    # The whole-stream read was dropped after a window's worth; the engine-filtered windows found the last 5.
    assert adapter.requests == [(5, "all"), (40, "all"), ("all", "stderr"), (320, "stderr"), (2560, "stderr")]
    container = adapter._containers(["dense"])[0]
    assert logs.lines == last_lines(lambda tail: adapter._log_entries(container.id, tail), 5, "stderr")


def test_both_adapters_agree_and_all_keeps_the_daemon_order(sparse_stack: Stack) -> None:
    project = ComposeCliProject(sparse_stack.settings())
    ours, whales = DockerPyAdapter(project), WhalesAdapter(project)
    assert [line.text for line in ours.compose_logs("sparse", 3, "stderr").lines] == ["err 5", "err 6", "err 7"]
    assert [line.text for line in whales.compose_logs("sparse", 3, "stderr").lines] == ["err 5", "err 6", "err 7"]
    # `all` is one read of the tail, in the engine's order; the stderr line sits between the two floods.
    window = ours.compose_logs("sparse", 3003, "all").lines
    assert (window[0].stream, window[0].text) == ("stdout", "flood 20000")
    assert (window[1].stream, window[1].text) == ("stderr", "err 7")
    assert [line.text for line in window[-2:]] == ["after 3000", "done"]


def test_log_reads_on_the_local_socket_each_have_their_own_connection(sparse_stack: Stack, tmp_path: Path) -> None:
    """The local engine is read through its socket directly (cheaper per read): the same entries as docker-py's
    transport, a connection per read so one left early spoils no other, and failures mapped as before."""
    proxy = DockerSocketProxy(tmp_path / "docker.sock")
    proxy.start()
    try:
        project = ComposeCliProject(sparse_stack.settings())
        adapter = DockerPyAdapter(project, docker.DockerClient(base_url=proxy.docker_host))
        assert adapter._connection.unix_socket == str(tmp_path / "docker.sock")
        container = adapter._containers(["sparse"])[0]
        before = proxy.accepted
        abandoned = adapter._log_entries(container.id, "all")
        stream, payload = next(abandoned)  # the first of 23,000 entries; the rest stays unread
        # The daemon's order across the two pipes of the first lines is its own: either may come first.
        assert (stream, payload.split(b" ", 1)[1]) in {("stderr", b"err 1\n"), ("stdout", b"out 1\n")}
        window = list(adapter._log_entries(container.id, 3003))
        abandoned.close()
        assert proxy.accepted == before + 2  # the abandoned read and the window: a connection each
        through_requests = DockerPyAdapter(project, docker.DockerClient(base_url=proxy.docker_host))
        through_requests._connection.unix_socket = None
        assert window == list(through_requests._log_entries(container.id, 3003))
        assert len(window) == 3003

        with pytest.raises(NoContainer, match="No such container: nonexistent"), map_errors("logs"):
            list(adapter._log_entries("nonexistent", 5))
        proxy.stop()
        with pytest.raises(DaemonUnavailable), map_errors("logs"):
            list(adapter._log_entries(container.id, 5))
    finally:
        proxy.stop()
