"""`jarvis_project diff`: git status, a per-file summary, then the patch cut to a budget (and what was cut).

git runs without a shell, a pager, colours or external diff drivers, with paths unquoted; files are never
read by Jarvis itself. The working diff (default) or the staged one; the other side is counted, not hidden.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from jarvis.errors import ProjectError
from jarvis.host import Host

PATCH_BUDGET = 12_000  # characters of patch in one answer
STATUS_LINES = 60
GIT_TIMEOUT = 60
GIT = ("git", "-c", "core.quotepath=off", "-c", "color.ui=never", "--no-pager")


@dataclass
class FileChange:
    path: str
    added: str  # "-" for binary files
    deleted: str


def review(path: Path, *, staged: bool, host: Host) -> str:
    """git runs as on `host`: its PATH finds git, its HOME holds the user's git configuration."""
    top = _git(host, path, "rev-parse", "--show-toplevel").strip()
    status = _git(host, path, "status", "--porcelain=v1", "--branch", "--untracked-files=all").splitlines()
    branch = status[0].removeprefix("## ") if status and status[0].startswith("## ") else "?"
    entries = [line for line in status if not line.startswith("## ")]
    cached = ["--cached"] if staged else []
    changes = _numstat(_git(host, path, "diff", *cached, "--numstat", "-M"))
    other = _numstat(_git(host, path, "diff", *([] if staged else ["--cached"]), "--numstat", "-M"))
    patch = _git(host, path, "diff", *cached, "--no-color", "--no-ext-diff", "-M")
    side = "staged (index vs HEAD)" if staged else "working tree vs index"
    lines = [f"# diff {side}: {top}", f"branch: {branch}"]
    if not entries:
        lines.append("clean: nothing to commit")
    lines += _status_block(entries)
    if not staged and any(entry.startswith("??") for entry in entries):
        lines.append("untracked files are not in the diff (git add them to include)")
    if other:
        lines.append(f"{len(other)} {'unstaged' if staged else 'staged'} file(s) not shown (staged={not staged})")
    if not changes:
        lines.append(f"no {'staged' if staged else 'unstaged'} changes")
        return "\n".join(lines)
    lines.append(f"## files ({len(changes)}, +added -deleted)")
    lines += [f"{c.path}  +{c.added} -{c.deleted}" for c in changes]
    shown, cut = bound_patch(patch, PATCH_BUDGET)
    lines += ["## patch", "```diff", shown.rstrip("\n"), "```"]
    if cut:
        lines.append(f"cut (budget {PATCH_BUDGET} chars): {cut}")
    return "\n".join(lines)


def bound_patch(patch: str, budget: int) -> tuple[str, str]:
    """Whole files while they fit; the first that does not is truncated at a line; the rest are named."""
    files = _split_files(patch)
    kept: list[str] = []
    truncated = ""
    omitted: list[str] = []
    left = budget
    for name, text in files:
        if truncated or left <= 0:
            omitted.append(name)
        elif len(text) <= left:
            kept.append(text)
            left -= len(text)
        else:
            all_lines = text.splitlines(keepends=True)
            head, used = [], 0
            for line in all_lines:
                if used + len(line) > left:
                    break
                head.append(line)
                used += len(line)
            kept.append("".join(head))
            truncated = f"{name} truncated at {len(head)} of {len(all_lines)} lines"
            left = 0
    notes = [truncated] if truncated else []
    if omitted:
        notes.append(f"{len(omitted)} file(s) omitted: {', '.join(omitted[:20])}{' …' if len(omitted) > 20 else ''}")
    return "".join(kept), "; ".join(notes)


def _split_files(patch: str) -> list[tuple[str, str]]:
    files: list[tuple[str, str]] = []
    for chunk in patch.split("\ndiff --git "):
        if not chunk.strip():
            continue
        text = chunk if chunk.startswith("diff --git ") else "diff --git " + chunk
        header = text.splitlines()[0]
        name = header.rsplit(" b/", 1)[-1] if " b/" in header else header
        files.append((name, text if text.endswith("\n") else text + "\n"))
    return files


def _status_block(entries: list[str]) -> list[str]:
    if not entries:
        return []
    kinds = {"M": "modified", "A": "added", "D": "deleted", "R": "renamed", "C": "copied", "U": "conflicted"}
    tally: dict[str, int] = {}
    for entry in entries:
        code = entry[:2]
        kind = "untracked" if code == "??" else next((kinds[c] for c in code if c in kinds), "changed")
        tally[kind] = tally.get(kind, 0) + 1
    lines = ["status: " + ", ".join(f"{n} {kind}" for kind, n in tally.items()), "```"]
    lines += entries[:STATUS_LINES]
    if len(entries) > STATUS_LINES:
        lines.append(f"… {len(entries) - STATUS_LINES} more")
    lines.append("```")
    return lines


def _numstat(output: str) -> list[FileChange]:
    changes = []
    for line in output.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            changes.append(FileChange(parts[2], parts[0], parts[1]))
    return changes


def _git(host: Host, path: Path, *args: str) -> str:
    if not path.is_dir():
        raise ProjectError(f"{path} is not a directory.")
    try:
        done = subprocess.run(
            [*GIT, *args],
            cwd=path,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT,
            stdin=subprocess.DEVNULL,
            env=host.child_environ(GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0", LC_ALL="C"),
        )
    except FileNotFoundError as exc:
        raise ProjectError("git is not installed (no `git` on PATH).") from exc
    except subprocess.TimeoutExpired as exc:
        raise ProjectError(f"git {args[0]} took longer than {GIT_TIMEOUT}s in {path}.") from exc
    if done.returncode != 0:
        message = done.stderr.strip().splitlines()[0] if done.stderr.strip() else f"exit {done.returncode}"
        if "not a git repository" in done.stderr:
            raise ProjectError(f"{path} is not inside a git repository. Pass `path` of a repository, or `git init`.")
        raise ProjectError(f"git {args[0]} failed in {path}: {message}")
    return done.stdout
