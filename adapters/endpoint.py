"""Where a host's Docker daemon is, and a docker-py client for it.

The default host is resolved as both the docker CLI and docker-py do: DOCKER_HOST, else the current docker
context (DOCKER_CONTEXT or ~/.docker/config.json), else the local socket. A named host (`JARVIS_HOSTS`) is
its endpoint: a URL, or a docker context of that name."""

from __future__ import annotations

import importlib.util
import os

import docker
from docker.context import ContextAPI
from docker.transport import UnixHTTPAdapter
from docker.utils import kwargs_from_env

from jarvis.docker_hosts import DockerHost
from jarvis.errors import ConfigError

DEFAULT_SOCKET = "unix:///var/run/docker.sock"


def daemon_endpoint(host: DockerHost | None = None) -> str:
    if host is not None and host.endpoint is not None:
        return f"context {host.endpoint}" if host.kind == "context" else host.endpoint
    try:
        where = kwargs_from_env().get("base_url") or ContextAPI.kwargs_from_context().get("base_url")
    except Exception:  # a broken context file must not hide the real error being reported
        where = os.environ.get("DOCKER_HOST")
    return str(where or DEFAULT_SOCKET)


def missing_context(host: DockerHost) -> ConfigError:
    return ConfigError(
        f"JARVIS_HOSTS: host {host.name} names the docker context {host.endpoint!r}, which does not exist "
        "(`docker context ls` lists them)."
    )


def docker_client(host: DockerHost | None) -> docker.DockerClient:
    """docker-py's client for `host`; it connects on its first request (the API version probe)."""
    if host is None or host.endpoint is None:
        return docker.from_env()
    match host.kind:
        case "context":
            context = ContextAPI.get_context(host.endpoint)
            if context is None:  # docker-py would otherwise fall back to the local socket
                raise missing_context(host)
            if str(context.Host or "").startswith("ssh://"):
                _need_ssh_transport(host)
            return docker.DockerClient.from_context(host.endpoint, use_ssh_client=True)
        case "ssh":  # the system's OpenSSH client, as the docker CLI uses it
            _need_ssh_transport(host)
            return docker.DockerClient(base_url=host.endpoint, use_ssh_client=True)
        case _:  # unix or tcp: TLS as the docker CLI takes it, from DOCKER_TLS_VERIFY and DOCKER_CERT_PATH
            environment = {**os.environ, "DOCKER_HOST": host.endpoint}
            return docker.from_env(environment=environment, use_context=False)


def unix_socket_path(client: docker.DockerClient) -> str | None:
    """The Unix socket `client` talks to, or None (tcp, TLS, ssh, named pipe)."""
    adapter = getattr(client.api, "_custom_adapter", None)  # docker-py keeps its transport there
    path = getattr(adapter, "socket_path", None) if isinstance(adapter, UnixHTTPAdapter) else None
    return path if isinstance(path, str) else None


def _need_ssh_transport(host: DockerHost) -> None:
    """docker-py reaches ssh:// only with paramiko installed (its ssh module imports it, even to run OpenSSH)."""
    if importlib.util.find_spec("paramiko") is None:
        raise ConfigError(
            f"JARVIS_HOSTS: host {host.name} is reached over ssh, which the dockerpy adapter does through "
            "paramiko: install it (`pip install 'jarvis[ssh]'`), or set JARVIS_OBSERVE_ADAPTER=whales "
            "(the docker CLI's own ssh)."
        )
