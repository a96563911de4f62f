"""`jarvis_project devops`: pre-commit (with a secrets scanner), .gitignore and a CI workflow for the project's
languages. An existing file is kept unless `force`; each file is reported as written, kept or overwritten.
Files are written atomically. Hook revisions are released tags; `pre-commit autoupdate` moves them forward.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from jarvis.atomic import write_atomic
from jarvis.workspace.detect import Workspace

PRE_COMMIT = ".pre-commit-config.yaml"
GITIGNORE = ".gitignore"
CI_WORKFLOW = ".github/workflows/ci.yml"
PR_AGENT = ".github/workflows/pr_agent.yml"
LANGUAGE_ALIASES = {"javascript": "node", "typescript": "node"}

BASE_HOOKS = """\
  - repo: https://github.com/pre-commit/pre-commit-hooks
    rev: v5.0.0
    hooks:
      - id: trailing-whitespace
      - id: end-of-file-fixer
      - id: check-yaml
      - id: check-added-large-files
      - id: check-merge-conflict
      - id: detect-private-key
  - repo: https://github.com/gitleaks/gitleaks
    rev: v8.21.2
    hooks:
      - id: gitleaks
"""
LANGUAGE_HOOKS = {
    "python": """\
  - repo: https://github.com/astral-sh/ruff-pre-commit
    rev: v0.8.0
    hooks:
      - id: ruff
        args: [--fix]
      - id: ruff-format
""",
    "node": """\
  - repo: https://github.com/pre-commit/mirrors-prettier
    rev: v3.1.0
    hooks:
      - id: prettier
""",
    "go": """\
  - repo: local
    hooks:
      - id: gofmt
        name: gofmt
        entry: gofmt -l -w
        language: system
        types: [go]
""",
    "rust": """\
  - repo: local
    hooks:
      - id: cargo-fmt
        name: cargo fmt
        entry: cargo fmt --all --manifest-path {folder}/Cargo.toml --
        language: system
        types: [rust]
        pass_filenames: false
""",
}
IGNORES = {
    "base": [".env", ".env.*", "!.env.example", "*.log", ".DS_Store", ".idea/", ".vscode/"],
    "python": ["__pycache__/", "*.py[cod]", ".venv/", "venv/", "build/", "dist/", "*.egg-info/", ".pytest_cache/",
               ".ruff_cache/", ".mypy_cache/", ".coverage", "htmlcov/"],
    "node": ["node_modules/", "dist/", "coverage/", ".npm/", "*.tsbuildinfo"],
    "go": ["bin/", "*.test", "*.out", "coverage.txt"],
    "rust": ["target/"],
}  # fmt: skip
PR_AGENT_WORKFLOW = """\
# AI review of pull requests (qodo-ai/pr-agent). Needs the OPENAI_KEY repository secret.
name: PR Agent
on:
  pull_request:
    types: [opened, reopened, ready_for_review]
  issue_comment:
jobs:
  pr_agent:
    if: ${{ github.event.sender.type != 'Bot' }}
    runs-on: ubuntu-latest
    permissions:
      issues: write
      pull-requests: write
      contents: write
    steps:
      - uses: qodo-ai/pr-agent@main
        env:
          OPENAI_KEY: ${{ secrets.OPENAI_KEY }}
          GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}
"""


def apply(workspace: Workspace, *, project_type: str | None, force: bool, ai_review: bool) -> str:
    languages = _languages(workspace, project_type)
    files = {
        PRE_COMMIT: pre_commit_config(workspace, languages),
        GITIGNORE: gitignore(languages),
        CI_WORKFLOW: ci_workflow(workspace, languages),
    }
    if ai_review:
        files[PR_AGENT] = PR_AGENT_WORKFLOW
    shown = ", ".join(languages) or "none detected (pass project_type)"
    lines = [f"# devops: {workspace.root} (languages: {shown})"]
    for name, text in files.items():
        target = workspace.root / name
        existed = target.exists()
        if existed and not force:
            lines.append(f"kept         {name} (exists; force=true overwrites)")
            continue
        write_atomic(target, text.encode(), mode=0o644)
        lines.append(f"{'overwritten' if existed else 'written':<12} {name}")
    if not workspace.is_git:
        lines.append("note: not a git repository; pre-commit needs one (`git init`)")
    lines.append("next: `pre-commit install` to enable the hooks, then commit these files")
    return "\n".join(lines)


def _languages(workspace: Workspace, project_type: str | None) -> list[str]:
    if project_type:
        return [LANGUAGE_ALIASES.get(project_type, project_type)]
    found = {LANGUAGE_ALIASES.get(lang, lang) for lang in workspace.languages}
    return [lang for lang in ("python", "node", "go", "rust") if lang in found]


def pre_commit_config(workspace: Workspace, languages: list[str]) -> str:
    parts = ["# Written by Jarvis. `pre-commit install` enables it; `pre-commit autoupdate` moves the revs.\n"]
    parts.append("repos:\n" + BASE_HOOKS)
    for language in languages:
        hooks = LANGUAGE_HOOKS.get(language)
        if hooks and language == "rust":
            for folder in _folders(workspace, language):
                parts.append(hooks.replace("{folder}", folder).replace("id: cargo-fmt", f"id: cargo-fmt-{folder}"))
        elif hooks:
            parts.append(hooks)
    return "".join(parts)


def gitignore(languages: list[str]) -> str:
    blocks = []
    for key in ["base", *languages]:
        if key in IGNORES:
            blocks.append(f"# {key}\n" + "\n".join(IGNORES[key]) + "\n")
    return "\n".join(blocks)


def ci_workflow(workspace: Workspace, languages: list[str]) -> str:
    jobs = [
        """\
  pre-commit:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "3.12"
      - uses: pre-commit/action@v3.0.1
"""
    ]
    for language in languages:
        for folder in _folders(workspace, language):
            jobs.append(_job(workspace.root, language, folder))
    return "name: CI\non:\n  push:\n    branches: [main]\n  pull_request:\njobs:\n" + "".join(jobs)


def _folders(workspace: Workspace, language: str) -> list[str]:
    matching = [lang for lang in workspace.languages if LANGUAGE_ALIASES.get(lang, lang) == language]
    folders = sorted({f for lang in matching for f in workspace.folders_with(lang)}, key=lambda f: (f != ".", f))
    return folders or ["."]


def _job(root: Path, language: str, folder: str) -> str:
    job_id = language if folder == "." else f"{language}-{folder.replace('/', '-')}"
    head = f"  {job_id}:\n    runs-on: ubuntu-latest\n"
    if folder != ".":
        head += f"    defaults:\n      run:\n        working-directory: {folder}\n"
    steps = "    steps:\n      - uses: actions/checkout@v4\n"
    return head + steps + _steps(root / folder, language, folder)


def _steps(path: Path, language: str, folder: str) -> str:
    if language == "python":
        install = _python_install(path)
        return (
            '      - uses: actions/setup-python@v5\n        with:\n          python-version: "3.12"\n'
            f"      - run: python -m pip install --upgrade pip && {install}\n"
            "      - run: python -m pytest\n"
        )
    if language == "node":
        install = "npm ci" if (path / "package-lock.json").is_file() else "npm install"
        return (
            "      - uses: actions/setup-node@v4\n        with:\n          node-version: 20\n"
            f"      - run: {install}\n      - run: npm run build --if-present\n      - run: npm test\n"
        )
    if language == "go":
        return (
            f"      - uses: actions/setup-go@v5\n        with:\n          go-version-file: {folder}/go.mod\n"
            "      - run: go vet ./...\n      - run: go test ./...\n"
        )
    return "      - uses: dtolnay/rust-toolchain@stable\n      - run: cargo test\n"


def _python_install(path: Path) -> str:
    pyproject = path / "pyproject.toml"
    try:
        extras = tomllib.loads(pyproject.read_text()).get("project", {}).get("optional-dependencies", {})
    except (OSError, tomllib.TOMLDecodeError):
        extras = {}
    extra = next((name for name in ("test", "tests", "dev") if name in extras), None)
    if extra:
        return f'pip install -e ".[{extra}]"'
    if (path / "requirements.txt").is_file():
        return "pip install -r requirements.txt pytest"
    return "pip install -e . pytest" if pyproject.is_file() else "pip install pytest"
