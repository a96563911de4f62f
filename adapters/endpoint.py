"""Where the Docker daemon is, as both the docker CLI and docker-py resolve it: DOCKER_HOST, else the
current docker context (DOCKER_CONTEXT or ~/.docker/config.json), else the local socket."""

from __future__ import annotations

import os

from docker.context import ContextAPI
from docker.utils import kwargs_from_env

DEFAULT_SOCKET = "unix:///var/run/docker.sock"


def daemon_endpoint() -> str:
    try:
        host = kwargs_from_env().get("base_url") or ContextAPI.kwargs_from_context().get("base_url")
    except Exception:  # a broken context file must not hide the real error being reported
        host = os.environ.get("DOCKER_HOST")
    return str(host or DEFAULT_SOCKET)
