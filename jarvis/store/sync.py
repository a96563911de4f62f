"""Profile metadata (profiles_metadata.json) against the servers' `profile_tags` (servers.json).

In MCPM 2.x a profile's members are the servers carrying its tag; the metadata entry holds its name,
description and API key. Findings that have one safe repair are `fixable`; the repair only adds or
normalises, it never removes a server from a profile.
"""

from __future__ import annotations

from dataclasses import dataclass

from jarvis.store.mcpm_store import Snapshot
from jarvis.store.models import ProfileMeta


@dataclass(frozen=True)
class Finding:
    text: str
    fixable: bool


def audit(snapshot: Snapshot, configured: tuple[str, ...]) -> list[Finding]:
    findings: list[Finding] = []
    for server_name, server in snapshot.servers.items():
        doubled = sorted({tag for tag in server.profile_tags if server.profile_tags.count(tag) > 1})
        if doubled:
            findings.append(Finding(f"server {server_name} repeats tag(s) {', '.join(doubled)}", True))
    for profile in snapshot.profile_names():
        members = snapshot.members(profile)
        if profile not in snapshot.profiles:
            findings.append(
                Finding(f"profile {profile} ({', '.join(members)}) has no entry in profiles_metadata.json", True)
            )
        elif snapshot.profiles[profile].name != profile:
            meta_name = snapshot.profiles[profile].name
            findings.append(Finding(f"profiles_metadata.json entry {profile} is named '{meta_name}'", True))
        elif not members:
            findings.append(Finding(f"profile {profile} has no servers (no server carries its tag)", False))
    for profile in configured:
        if profile not in snapshot.profile_names():
            findings.append(
                Finding(f"profile {profile} is configured (JARVIS_PROFILES) but MCPM has no such profile", False)
            )
    for name, (_raw, why) in snapshot.unreadable.items():
        findings.append(Finding(f"servers.json entry {name} is not a valid MCPM server ({why}); left as is", False))
    return findings


def repair(snapshot: Snapshot) -> list[str]:
    """Apply every fixable repair to `snapshot`; returns one line per change."""
    changes: list[str] = []
    for server_name, server in snapshot.servers.items():
        unique = list(dict.fromkeys(server.profile_tags))
        if unique != server.profile_tags:
            server.profile_tags = unique
            changes.append(f"server {server_name}: duplicate tags removed ({', '.join(unique)})")
    for profile in snapshot.profile_names():
        if profile not in snapshot.profiles:
            snapshot.profiles[profile] = ProfileMeta.new(profile)
            changes.append(f"profile {profile}: metadata entry added")
        elif snapshot.profiles[profile].name != profile:
            snapshot.profiles[profile].name = profile
            changes.append(f"profile {profile}: metadata name set to '{profile}'")
    return changes
