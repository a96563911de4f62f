"""Each adapter translates its library's exceptions in one place; these pin the translations."""

import pytest
import requests
from docker.errors import APIError, DockerException, NotFound
from python_on_whales.exceptions import DockerException as WhalesException

from adapters import dockerpy, whales
from jarvis.docker_hosts import parse_host
from jarvis.errors import DaemonUnavailable, DockerCommandFailed, NoContainer, ProjectError, UnknownService


def whales_error(stderr: str, code: int = 1) -> WhalesException:
    return WhalesException(["docker", "compose", "x"], code, b"", stderr.encode())


@pytest.mark.parametrize(
    ("stderr", "expected"),
    [
        ("Cannot connect to the Docker daemon at unix:///x.sock. Is the docker daemon running?", DaemonUnavailable),
        ("failed to connect to the docker API at unix:///x.sock; check if the path is correct", DaemonUnavailable),
        ("error during connect: Get http://x: EOF", DaemonUnavailable),
        ("docker: 'compose' is not a docker command.", ProjectError),
        ("no such service: nope", UnknownService),
        ('service "a" has no container to start', NoContainer),
        ('no container found for project "x": not found', NoContainer),
        ("failed to solve: dockerfile parse error line 3", DockerCommandFailed),
    ],
)
def test_whales_errors(stderr: str, expected: type[Exception]) -> None:
    with pytest.raises(expected), whales._map_errors("docker compose x"):
        raise whales_error(stderr)


def test_whales_command_failure_keeps_the_tail_of_the_output() -> None:
    with pytest.raises(DockerCommandFailed) as caught, whales._map_errors("docker compose build"):
        raise whales_error("\n".join(f"line {i}" for i in range(100)), code=17)
    text = str(caught.value)
    assert "docker compose build failed (exit 17)" in text
    assert "line 99" in text
    assert "line 10\n" not in text


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (requests.exceptions.ConnectionError("Connection refused"), DaemonUnavailable),
        (requests.exceptions.ChunkedEncodingError("reset"), DaemonUnavailable),
        (DockerException("Error while fetching server API version: ('Connection aborted.')"), DaemonUnavailable),
        (NotFound("No such container: x"), NoContainer),
        (APIError("conflict"), DockerCommandFailed),
        (DockerException("something else"), DockerCommandFailed),
    ],
)
def test_dockerpy_errors(error: Exception, expected: type[Exception]) -> None:
    with pytest.raises(expected), dockerpy.map_errors("logs"):
        raise error


def test_daemon_unavailable_names_where_and_why() -> None:
    def fail() -> None:
        try:
            raise FileNotFoundError(2, "No such file or directory")
        except FileNotFoundError as inner:
            raise requests.exceptions.ConnectionError("wrapped") from inner

    with pytest.raises(DaemonUnavailable) as caught, dockerpy.map_errors("logs"):
        fail()
    assert "No such file or directory" in caught.value.why
    assert caught.value.where


def test_whales_unavailable_says_why_from_the_line_that_says_it() -> None:
    """`docker version` prints the client's half as JSON on stdout before the error on stderr."""
    client_json = b'{"Client":{"Version":"28.2.2"},"Server":null}\n'
    error = WhalesException(["docker", "version"], 1, client_json, b"Cannot connect to the Docker daemon at tcp://h:1.")
    host = parse_host("lab", "tcp://h:1")
    with pytest.raises(DaemonUnavailable) as caught, whales._map_errors("docker version", host):
        raise error
    assert (caught.value.where, caught.value.why, caught.value.host) == (
        "tcp://h:1",
        "Cannot connect to the Docker daemon at tcp://h:1.",
        "lab",
    )
    assert str(caught.value).startswith("Docker host lab unavailable at tcp://h:1: Cannot connect to the Docker daemon")


def test_dockerpy_unavailable_names_the_host_it_was_asked_about() -> None:
    host = parse_host("lab", "tcp://h:1")
    with pytest.raises(DaemonUnavailable) as caught, dockerpy.map_errors("list containers", host):
        raise requests.exceptions.ConnectionError("refused")
    assert (caught.value.where, caught.value.host) == ("tcp://h:1", "lab")
