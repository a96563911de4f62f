"""Start, stop and list shares. A share is a detached proxy process (see `proxy.py`) and one record in
`<mcpm_dir>/jarvis-shares.json` (beside MCPM's files; 0600, it holds tokens; written atomically under
`.jarvis-shares.lock`), so a share outlives the Jarvis that started it and any later Jarvis can stop it.
Each proxy's log, and briefly its spec and ready files, live in `<mcpm_dir>/jarvis-shares/`.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

from jarvis.atomic import write_atomic, writers_lock
from jarvis.endpoint_probe import EndpointReport, probe
from jarvis.errors import InvalidInput, JarvisError
from jarvis.settings import Settings
from jarvis.share import processes
from jarvis.share.proxy import PATH
from jarvis.share.spec import Member, ProxyReady, ProxySpec, TunnelKind
from jarvis.share.tunnel import Which, tunnel_spec
from jarvis.store.mcpm_store import McpmStore
from jarvis.store.models import ServerRecord

STATE = "jarvis-shares.json"
RUN_DIR = "jarvis-shares"
LOCK = ".jarvis-shares.lock"
TargetKind = Literal["server", "profile"]


class ShareError(JarvisError):
    """A share could not be started, or its state cannot be used; nothing was left running."""


@dataclass(frozen=True)
class Target:
    kind: TargetKind
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.name}"


class ShareRecord(BaseModel):
    id: str
    kind: TargetKind
    name: str
    pid: int  # the proxy, leader of its own process group
    bind: str
    port: int
    token: str | None
    tunnel: TunnelKind | None = None
    public_url: str | None = None
    started_at: float
    served: list[str] = Field(default_factory=list)
    failed: dict[str, str] = Field(default_factory=dict)
    # The proxy's descendants when it became ready (the stdio servers): ended too if the proxy dies first.
    children: dict[int, str] = Field(default_factory=dict)

    @property
    def target(self) -> Target:
        return Target(self.kind, self.name)

    @property
    def local_url(self) -> str:
        host = "127.0.0.1" if self.bind in ("0.0.0.0", "") else f"[{self.bind}]" if ":" in self.bind else self.bind
        if self.bind == "::":
            host = "[::1]"
        return f"http://{host}:{self.port}{PATH}"

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}


@dataclass(frozen=True)
class ShareStatus:
    record: ShareRecord
    answers: EndpointReport | None  # None: the process had died and the share was reaped
    uptime: float


class ShareEngine:
    def __init__(
        self,
        settings: Settings,
        *,
        which: Which,
        member_timeout: float = 30.0,
        tunnel_timeout: float = 20.0,
        probe_timeout: float = 3.0,
        stop_grace: float = 10.0,
    ) -> None:
        self.settings = settings
        self.which = which
        self.folder = settings.mcpm_dir
        self.run_dir = self.folder / RUN_DIR
        self.member_timeout = member_timeout
        self.tunnel_timeout = tunnel_timeout
        self.probe_timeout = probe_timeout
        self.stop_grace = stop_grace

    # -- start ---------------------------------------------------------------------------------------------------

    def start(
        self, target: Target, *, port: int | None = None, no_auth: bool = False, tunnel: TunnelKind | None = None
    ) -> ShareRecord:
        members = self._members(target)
        bind = self.settings.share_bind
        tunnel_config = (
            tunnel_spec(tunnel, self.settings, _forward_host(bind), self.tunnel_timeout, self.which) if tunnel else None
        )
        with self._lock():
            self._reap_dead()
            if existing := self._find(str(target.name), target.kind):
                raise ShareError(f"{target} is already shared ({existing.id}, {existing.local_url}); stop it first.")
        share_id = secrets.token_hex(4)
        self.run_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        spec = ProxySpec(
            share_id=share_id,
            target=str(target),
            members=members,
            prefix_names=target.kind == "profile",
            bind=bind,
            port=port or 0,
            token=None if no_auth else secrets.token_urlsafe(32),
            tunnel=tunnel_config,
            member_timeout=self.member_timeout,
            ready_file=self.run_dir / f"{share_id}.ready.json",
        )
        ready, pid = self._launch(spec)
        record = ShareRecord(
            id=share_id,
            kind=target.kind,
            name=target.name,
            pid=pid,
            bind=bind,
            port=ready.port,
            token=spec.token,
            tunnel=tunnel,
            public_url=ready.public_url,
            started_at=time.time(),
            served=ready.served,
            failed=ready.failed,
            children=processes.snapshot_tree(pid),
        )
        try:
            with self._lock():
                records = self._read()
                if existing := self._find(target.name, target.kind, records):  # another Jarvis was quicker
                    raise ShareError(f"{target} was shared meanwhile ({existing.id}, {existing.local_url}).")
                records[share_id] = record
                self._write(records)
        except BaseException:
            self._end(record)
            raise
        return record

    def _members(self, target: Target) -> list[Member]:
        snapshot = McpmStore(self.folder).read()
        if target.kind == "server":
            if target.name not in snapshot.servers:
                raise InvalidInput.choice("server", target.name, sorted(snapshot.servers) or ["(none in MCPM)"])
            return [_member(snapshot.servers[target.name])]
        names = snapshot.members(target.name)
        if not names:
            known = [p for p in snapshot.profile_names() if snapshot.members(p)]
            if target.name in snapshot.profile_names():
                raise InvalidInput(f"Profile '{target.name}' has no servers. Profiles with servers: {', '.join(known)}")
            raise InvalidInput.choice("profile", target.name, known or ["(none in MCPM)"])
        return [_member(snapshot.servers[name]) for name in names]

    def _launch(self, spec: ProxySpec) -> tuple[ProxyReady, int]:
        """Start the proxy detached and wait for its ready file; on failure nothing is left running or on disk."""
        spec_file = self.run_dir / f"{spec.share_id}.spec.json"
        log_file = self._log_file(spec.share_id)
        write_atomic(spec_file, spec.model_dump_json().encode())
        with log_file.open("ab") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "jarvis.share.proxy", str(spec_file)],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd=self.run_dir,
                start_new_session=True,  # its own process group, outliving Jarvis
            )
        processes.adopt(process)
        deadline = time.monotonic() + self.member_timeout + (spec.tunnel.timeout if spec.tunnel else 0) + 30
        ready: ProxyReady | None = None
        try:
            while ready is None:
                if spec.ready_file.exists():
                    ready = ProxyReady.model_validate_json(spec.ready_file.read_text())
                elif process.poll() is not None:
                    ready = ProxyReady(ok=False, error=f"the proxy exited (code {process.returncode})")
                elif time.monotonic() > deadline:
                    ready = ProxyReady(ok=False, error="the proxy did not become ready in time")
                else:
                    time.sleep(0.05)
        finally:
            if ready is None or not ready.ok:
                processes.stop_tree(process.pid, self.stop_grace)
                why = ready.error if ready else "interrupted"
                # The proxy's own reason says it all; otherwise its log tells what happened.
                tail = "" if spec.ready_file.exists() else _tail(log_file)
                for leftover in (spec_file, spec.ready_file, log_file):
                    leftover.unlink(missing_ok=True)
            else:
                spec.ready_file.unlink(missing_ok=True)
        if not ready.ok:
            raise ShareError(f"Sharing {spec.target} failed: {why}" + (f"\n```\n{tail}\n```" if tail else ""))
        return ready, process.pid

    # -- stop ----------------------------------------------------------------------------------------------------

    def stop(self, name: str) -> ShareRecord:
        """Stop the share with this id, or of this server or profile."""
        with self._lock():
            records = self._read()
            record = self._find(name, None, records)
            if record is None:
                shares = [f"{r.id} ({r.target})" for r in records.values()] or ["(no shares)"]
                raise InvalidInput(f"No share '{name}'. Shares: {', '.join(shares)}")
            self._end(record)
            del records[record.id]
            self._write(records)
        return record

    def _end(self, record: ShareRecord) -> None:
        if self._is_ours(record):
            processes.stop_tree(record.pid, self.stop_grace, record.children)
        self._log_file(record.id).unlink(missing_ok=True)

    # -- list ----------------------------------------------------------------------------------------------------

    def shares(self) -> tuple[list[ShareRecord], list[ShareRecord]]:
        """Every running share, oldest first, and the shares whose process had died (now reaped)."""
        with self._lock():
            reaped = self._reap_dead()
            records = sorted(self._read().values(), key=lambda r: (r.started_at, r.id))
        return records, reaped

    def statuses(self, records: Sequence[ShareRecord]) -> list[ShareStatus]:
        """Each share with a real MCP probe (only the ones asked for: a probe is a round trip)."""
        now = time.time()
        return [
            ShareStatus(r, probe(r.local_url, self.probe_timeout, r.headers), max(0.0, now - r.started_at))
            for r in records
        ]

    # -- state ---------------------------------------------------------------------------------------------------

    def _reap_dead(self) -> list[ShareRecord]:
        """Under the lock: drop the records whose proxy is gone, and end what it left (a tunnel, a member)."""
        records = self._read()
        dead = [r for r in records.values() if not self._is_ours(r)]
        for record in dead:
            if not processes.alive(record.pid):  # else the pid now belongs to another program: leave it alone
                # The group outlives its leader (a tunnel may remain); the stdio servers are orphans.
                processes.stop_tree(record.pid, 1.0, record.children)
            self._log_file(record.id).unlink(missing_ok=True)
            del records[record.id]
        if dead:
            self._write(records)
        return dead

    def _is_ours(self, record: ShareRecord) -> bool:
        """The record's proxy still runs (and the pid was not reused by another program)."""
        if not processes.alive(record.pid):
            return False
        command = processes.command_line(record.pid)
        return command is None or ("jarvis.share.proxy" in command and record.id in command)

    def _find(
        self, name: str, kind: TargetKind | None, records: dict[str, ShareRecord] | None = None
    ) -> ShareRecord | None:
        records = self._read() if records is None else records
        if kind is None and name in records:
            return records[name]
        matches = [r for r in records.values() if r.name == name and (kind is None or r.kind == kind)]
        return matches[0] if matches else None

    def _read(self) -> dict[str, ShareRecord]:
        path = self.folder / STATE
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            return {}
        except (OSError, json.JSONDecodeError) as exc:
            raise ShareError(f"{path} cannot be read ({exc}); remove it once no share is needed.") from exc
        try:
            return {key: ShareRecord.model_validate(value) for key, value in data.get("shares", {}).items()}
        except ValidationError as exc:
            raise ShareError(f"{path} holds an entry Jarvis cannot read: {exc.errors()[0]['msg']}") from exc

    def _write(self, records: dict[str, ShareRecord]) -> None:
        data = {"shares": {key: record.model_dump(mode="json") for key, record in records.items()}}
        write_atomic(self.folder / STATE, json.dumps(data, indent=2).encode(), mode=0o600)

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        busy = ShareError(f"Another Jarvis process holds {self.folder / LOCK}; try again in a moment.")
        with writers_lock(self.folder / LOCK, 30.0, busy):
            yield

    def _log_file(self, share_id: str) -> Path:
        return self.run_dir / f"{share_id}.log"


def _member(record: ServerRecord) -> Member:
    config = record.config or {}
    command = record.command or config.get("command")
    url = record.url or config.get("url") or config.get("serverUrl")
    if command is None and url is None:
        raise InvalidInput(f"Server '{record.name}' has neither a command nor a url; it cannot be shared.")
    return Member(
        name=record.name,
        command=command,
        args=[str(a) for a in (record.args if record.command else config.get("args")) or []],
        env={k: str(v) for k, v in ((record.env if record.command else config.get("env")) or {}).items()},
        url=None if command else url,
        headers={k: str(v) for k, v in ((record.headers if record.url else config.get("headers")) or {}).items()},
    )


def _forward_host(bind: str) -> str:
    """Where a tunnel on this machine reaches the proxy."""
    return {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(bind, bind)


def _tail(path: Path, lines: int = 12) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").strip().splitlines()[-lines:])
    except OSError:
        return ""
