"""jarvis_share: serve an MCPM server or profile over MCP streamable HTTP (start), stop it, list shares."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal, assert_never

from pydantic import Field

from jarvis.answer import Answer
from jarvis.errors import InvalidInput
from jarvis.pagination import Limit, Offset, Page, page
from jarvis.share.engine import ShareEngine, ShareRecord, ShareStatus, Target
from jarvis.share.spec import TunnelKind
from jarvis.tool_context import ToolContext
from jarvis.tool_signature import Effect

Action = Literal["start", "stop", "list"]
EFFECTS: dict[Action, Effect] = {"start": "writes", "stop": "writes", "list": "reads"}


def jarvis_share(
    jarvis: ToolContext,
    action: Action,
    # Few descriptions: every tool's schema is paid for on each connection.
    name: Annotated[str | None, Field(description="server; stop: or share id")] = None,
    profile: str | None = None,
    port: int | None = None,
    no_auth: Annotated[bool | None, Field(description="no token")] = None,
    tunnel: TunnelKind | None = None,
    limit: Limit = None,
    offset: Offset = None,
) -> str:
    if port is not None and not 1 <= port <= 65535:
        raise InvalidInput(f"Invalid port {port}: 1-65535, or none for a free one.")
    engine = ShareEngine(jarvis.settings, which=jarvis.host.which)
    match action:
        case "start":
            record = engine.start(_target(name, profile), port=port, no_auth=bool(no_auth), tunnel=tunnel)
            return started_text(record)
        case "stop":
            if not (name or profile):
                raise InvalidInput("stop needs name: a share id, or the shared server or profile.")
            record = engine.stop(name or profile or "")
            tunnel_note = f" and its {record.tunnel} tunnel" if record.tunnel else ""
            return f"Stopped share {record.id} ({record.target}): proxy{tunnel_note} ended, state removed."
        case "list":
            records, reaped = engine.shares()
            shown = page(records, limit, offset, default=LIST_PAGE, tool="jarvis_share", arguments={"action": "list"})
            return list_text(engine.statuses(shown.items), reaped, shown)
        case _:
            assert_never(action)


def _target(name: str | None, profile: str | None) -> Target:
    if bool(name) == bool(profile):
        raise InvalidInput("start needs exactly one of name (an MCPM server) or profile (an MCPM profile).")
    return Target("server", name) if name else Target("profile", profile or "")


def started_text(record: ShareRecord) -> str:
    url = record.public_url or record.local_url
    lines = [f"Sharing {record.target} as share {record.id}.", f"URL: {url}"]
    if record.public_url:
        lines.append(f"Local URL: {record.local_url} ({record.tunnel} tunnel)")
    if record.token:
        lines.append(f"Token: {record.token} (send as Authorization: Bearer <token>)")
    else:
        lines.append(f"OPEN SHARE (no_auth): anyone who reaches {url} can use every tool, with no token.")
    if record.kind == "profile":
        lines.append(f"Serving: {', '.join(record.served)} (tools named <server>_<tool>)")
    lines += [f"NOT started: {member}: {why}" for member, why in record.failed.items()]
    entry: dict[str, object] = {"type": "http", "url": url}
    if record.token:
        entry["headers"] = {"Authorization": f"Bearer {record.token}"}
    snippet = json.dumps({"mcpServers": {f"{record.name}-share": entry}}, indent=2)
    lines += ["Client config:", f"```json\n{snippet}\n```", f"Stop with action=stop name={record.id}."]
    return "\n".join(lines)


LIST_PAGE = 50


def list_text(statuses: list[ShareStatus], reaped: list[ShareRecord], shown: Page[ShareRecord]) -> str:
    """This page's shares (each probed), then the shares found dead and reaped, then the page's footer."""
    lines = [_status_line(status) for status in statuses]
    lines += [f"- {r.id} {r.target}: REAPED, its proxy (pid {r.pid}) had died; state removed" for r in reaped]
    rows = [_status_row(status) for status in statuses]
    data = {"shares": shown.data(rows), "reaped": [r.id for r in reaped]}
    return Answer(("\n".join(lines) if lines else "No shares.") + shown.footer, data)


def _status_row(status: ShareStatus) -> dict[str, Any]:
    record, report = status.record, status.answers
    return {
        "id": record.id, "target": str(record.target), "local_url": record.local_url,
        "public_url": record.public_url, "auth": record.token is not None, "uptime_s": int(status.uptime),
        "answers": report is not None and report.ok, "not_started": sorted(record.failed),
    }  # fmt: skip


def _status_line(status: ShareStatus) -> str:
    record, report = status.record, status.answers
    parts = [f"- {record.id} {record.target}", record.local_url]
    if record.public_url:
        parts.append(f"public {record.public_url}")
    parts += ["auth on" if record.token else "auth OFF (open)", f"up {_duration(status.uptime)}"]
    if report is not None and report.ok:
        parts.append(f"answers ({len(report.tools)} tools)")
    elif report is not None:
        parts.append(f"NOT answering ({report.failed_at}: {report.error})")
    if record.failed:
        parts.append("not started: " + ", ".join(record.failed))
    return " · ".join(parts)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"
