"""What a project is made of, read from its files only (nothing is executed).

Manifests are looked for at the root and one folder down (monorepos: `api/pyproject.toml`, `web/package.json`),
skipping dependency and build folders. Frameworks come from the dependencies the manifests declare.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

SKIPPED_DIRS = frozenset(
    {"node_modules", "vendor", "dist", "build", "target", "venv", "__pycache__", "site-packages", "coverage"}
)
COMPOSE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
KEY_FILES = (
    "README.md", "README.rst", "README", "LICENSE", "LICENSE.md", "Makefile", "justfile", "Dockerfile",
    "AGENTS.md", "CLAUDE.md", ".env.example", "CONTRIBUTING.md", "CHANGELOG.md", "jarvis.toml",
)  # fmt: skip
SECRET_SCANNERS = ("gitleaks", "detect-secrets", "trufflehog", "ggshield")

# dependency name -> framework shown; one table per ecosystem.
PYTHON_FRAMEWORKS = {
    "django": "django", "flask": "flask", "fastapi": "fastapi", "starlette": "starlette", "aiohttp": "aiohttp",
    "tornado": "tornado", "pydantic": "pydantic", "sqlalchemy": "sqlalchemy", "celery": "celery", "mcp": "mcp",
    "fastmcp": "fastmcp", "streamlit": "streamlit", "pandas": "pandas", "numpy": "numpy", "torch": "pytorch",
    "tensorflow": "tensorflow", "scrapy": "scrapy", "typer": "typer", "click": "click", "pytest": "pytest",
    "httpx": "httpx", "requests": "requests", "langchain": "langchain", "alembic": "alembic",
}  # fmt: skip
NODE_FRAMEWORKS = {
    "react": "react", "next": "next.js", "vue": "vue", "nuxt": "nuxt", "svelte": "svelte", "@angular/core": "angular",
    "express": "express", "fastify": "fastify", "koa": "koa", "@nestjs/core": "nestjs", "jest": "jest",
    "vitest": "vitest", "mocha": "mocha", "electron": "electron", "vite": "vite",
    "@modelcontextprotocol/sdk": "mcp-sdk", "prisma": "prisma", "webpack": "webpack", "playwright": "playwright",
    "@playwright/test": "playwright", "cypress": "cypress", "hono": "hono",
}  # fmt: skip
GO_FRAMEWORKS = {
    "github.com/gin-gonic/gin": "gin", "github.com/labstack/echo": "echo", "github.com/gofiber/fiber": "fiber",
    "github.com/go-chi/chi": "chi", "github.com/gorilla/mux": "gorilla/mux", "github.com/spf13/cobra": "cobra",
    "github.com/stretchr/testify": "testify", "github.com/mark3labs/mcp-go": "mcp-go", "gorm.io/gorm": "gorm",
    "google.golang.org/grpc": "grpc", "github.com/modelcontextprotocol/go-sdk": "mcp-go-sdk",
}  # fmt: skip
RUST_FRAMEWORKS = {
    "tokio": "tokio", "actix-web": "actix-web", "axum": "axum", "rocket": "rocket", "serde": "serde",
    "clap": "clap", "diesel": "diesel", "sqlx": "sqlx", "warp": "warp", "tonic": "tonic", "rmcp": "rmcp",
}  # fmt: skip
# image name fragment -> database, for compose services.
DATABASES = {
    "postgres": "postgres", "pgvector": "postgres", "mysql": "mysql", "mariadb": "mariadb", "mongo": "mongodb",
    "redis": "redis", "valkey": "valkey", "qdrant": "qdrant", "elasticsearch": "elasticsearch", "neo4j": "neo4j",
    "clickhouse": "clickhouse", "memcached": "memcached", "rabbitmq": "rabbitmq", "kafka": "kafka",
    "opensearch": "opensearch", "chroma": "chroma", "weaviate": "weaviate", "milvus": "milvus", "sqlite": "sqlite",
}  # fmt: skip


@dataclass
class Manifest:
    path: str  # relative to the project
    language: str
    frameworks: list[str] = field(default_factory=list)
    tests: list[str] = field(default_factory=list)  # test setups this manifest declares


@dataclass
class ComposeFile:
    path: str
    services: dict[str, str] = field(default_factory=dict)  # service -> image, or "build"
    error: str = ""

    @property
    def databases(self) -> list[str]:
        return sorted({db for image in self.services.values() for key, db in DATABASES.items() if key in image})


@dataclass
class Workspace:
    root: Path
    manifests: list[Manifest] = field(default_factory=list)
    compose_files: list[ComposeFile] = field(default_factory=list)
    ci: list[str] = field(default_factory=list)
    pre_commit_hooks: list[str] | None = None  # None: no .pre-commit-config.yaml
    key_files: list[str] = field(default_factory=list)
    is_git: bool = False

    @property
    def languages(self) -> list[str]:
        return sorted({m.language for m in self.manifests})

    @property
    def frameworks(self) -> list[str]:
        return sorted({f for m in self.manifests for f in m.frameworks})

    @property
    def databases(self) -> list[str]:
        return sorted({db for c in self.compose_files for db in c.databases})

    @property
    def secrets_scanner(self) -> str | None:
        return next((h for h in self.pre_commit_hooks or [] if h in SECRET_SCANNERS), None)

    def folders_with(self, language: str) -> list[str]:
        """Folders (relative, "." for the root) holding a manifest of `language`, root first."""
        folders = {str(Path(m.path).parent) for m in self.manifests if m.language == language}
        return sorted(folders, key=lambda f: (f != ".", f))


def scan(root: Path) -> Workspace:
    workspace = Workspace(root=root, is_git=(root / ".git").exists())
    for folder in [root, *_subfolders(root)]:
        workspace.manifests.extend(_manifests_in(root, folder))
        for name in COMPOSE_NAMES:
            if (folder / name).is_file():
                workspace.compose_files.append(_compose_file(root, folder / name))
    workspace.ci = _ci_files(root)
    workspace.pre_commit_hooks = _pre_commit_hooks(root / ".pre-commit-config.yaml")
    workspace.key_files = [name for name in KEY_FILES if (root / name).is_file()]
    return workspace


def _subfolders(root: Path) -> list[Path]:
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    return [p for p in entries if p.is_dir() and not p.name.startswith(".") and p.name not in SKIPPED_DIRS]


def _manifests_in(root: Path, folder: Path) -> list[Manifest]:
    found: list[Manifest] = []

    def rel(name: str) -> str:
        return str((folder / name).relative_to(root))

    if (folder / "pyproject.toml").is_file():
        found.append(_python_manifest(rel("pyproject.toml"), folder))
    elif any((folder / n).is_file() for n in ("setup.py", "setup.cfg", "requirements.txt", "Pipfile")):
        name = next(n for n in ("requirements.txt", "setup.py", "setup.cfg", "Pipfile") if (folder / n).is_file())
        found.append(_python_manifest(rel(name), folder))
    if (folder / "package.json").is_file():
        found.append(_node_manifest(rel("package.json"), folder))
    if (folder / "go.mod").is_file():
        found.append(_go_manifest(rel("go.mod"), folder))
    if (folder / "Cargo.toml").is_file():
        found.append(_rust_manifest(rel("Cargo.toml"), folder))
    for name, language in (
        ("pom.xml", "java"), ("build.gradle", "java"), ("build.gradle.kts", "kotlin"), ("Gemfile", "ruby"),
        ("composer.json", "php"), ("mix.exs", "elixir"), ("Package.swift", "swift"),
    ):  # fmt: skip
        if (folder / name).is_file():
            found.append(Manifest(rel(name), language))
    dotnet = sorted([*folder.glob("*.sln"), *folder.glob("*.csproj")])
    if dotnet:
        found.append(Manifest(rel(dotnet[0].name), "dotnet"))
    return found


def _python_manifest(path: str, folder: Path) -> Manifest:
    names: set[str] = set()
    data = _toml(folder / "pyproject.toml")
    project = data.get("project", {})
    for spec in [*project.get("dependencies", []), *_flatten(project.get("optional-dependencies", {}))]:
        names.add(_requirement_name(spec))
    names.update(name.lower() for name in data.get("tool", {}).get("poetry", {}).get("dependencies", {}))
    for group in data.get("dependency-groups", {}).values():
        names.update(_requirement_name(spec) for spec in group if isinstance(spec, str))
    for requirements in sorted(folder.glob("requirements*.txt")):
        for line in _read(requirements).splitlines():
            if line.strip() and not line.lstrip().startswith(("#", "-")):
                names.add(_requirement_name(line))
    tests = []
    if (
        "pytest" in names
        or "pytest" in data.get("tool", {})
        or (folder / "pytest.ini").is_file()
        or (folder / "conftest.py").is_file()
        or (folder / "tests" / "conftest.py").is_file()
    ):
        tests.append("pytest")
    elif (folder / "tests").is_dir():
        tests.append("tests/ (pytest or unittest)")
    return Manifest(path, "python", _frameworks(names, PYTHON_FRAMEWORKS), tests)


def _node_manifest(path: str, folder: Path) -> Manifest:
    try:
        data = json.loads(_read(folder / "package.json") or "{}")
    except json.JSONDecodeError:
        return Manifest(path, "node", tests=["package.json is not valid JSON"])
    names = {*data.get("dependencies", {}), *data.get("devDependencies", {})}
    language = "typescript" if "typescript" in names or (folder / "tsconfig.json").is_file() else "node"
    tests = []
    script = data.get("scripts", {}).get("test", "")
    if script and "no test specified" not in script:
        tests.append(f"npm test: {script}")
    return Manifest(path, language, _frameworks(names, NODE_FRAMEWORKS), tests)


def _go_manifest(path: str, folder: Path) -> Manifest:
    text = _read(folder / "go.mod")
    modules = set(re.findall(r"^\s*(?:require\s+)?([\w.\-]+\.[a-z]+/[\w.\-/]+)\s+v", text, re.MULTILINE))
    frameworks = sorted({label for p, label in GO_FRAMEWORKS.items() if any(m.startswith(p) for m in modules)})
    return Manifest(path, "go", frameworks, ["go test"] if _has_file(folder, "*_test.go") else [])


def _rust_manifest(path: str, folder: Path) -> Manifest:
    data = _toml(folder / "Cargo.toml")
    names = {*data.get("dependencies", {}), *data.get("dev-dependencies", {})}
    names.update(data.get("workspace", {}).get("dependencies", {}))
    return Manifest(path, "rust", _frameworks(names, RUST_FRAMEWORKS), ["cargo test"])


def _compose_file(root: Path, path: Path) -> ComposeFile:
    compose = ComposeFile(str(path.relative_to(root)))
    try:
        data = YAML(typ="safe", pure=True).load(_read(path)) or {}
    except YAMLError as exc:
        compose.error = f"not valid YAML: {str(exc).splitlines()[0]}"
        return compose
    services = data.get("services") if isinstance(data, dict) else None
    for name, service in (services or {}).items():
        service = service if isinstance(service, dict) else {}
        compose.services[str(name)] = str(service.get("image") or ("build" if "build" in service else "?"))
    return compose


def _ci_files(root: Path) -> list[str]:
    found = [str(p.relative_to(root)) for p in sorted((root / ".github" / "workflows").glob("*.y*ml"))]
    for name in (".gitlab-ci.yml", ".circleci/config.yml", "Jenkinsfile", "azure-pipelines.yml", ".ci/run"):
        if (root / name).is_file():
            found.append(name)
    return found


def _pre_commit_hooks(path: Path) -> list[str] | None:
    if not path.is_file():
        return None
    try:
        data = YAML(typ="safe", pure=True).load(_read(path)) or {}
    except YAMLError:
        return ["(not valid YAML)"]
    return [str(hook.get("id")) for repo in data.get("repos", []) or [] for hook in repo.get("hooks", []) or []]


def _frameworks(names: set[str], table: dict[str, str]) -> list[str]:
    return sorted({table[name] for name in names if name in table})


def _requirement_name(spec: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _flatten(groups: dict[str, list[str]]) -> list[str]:
    return [spec for specs in groups.values() for spec in specs]


def _toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(_read(path))
    except tomllib.TOMLDecodeError:
        return {}


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _has_file(folder: Path, pattern: str, limit: int = 2000) -> bool:
    """A bounded recursive search that skips dependency folders (a `vendor/` may hold thousands of files)."""
    for seen, path in enumerate(folder.rglob(pattern)):
        if seen >= limit:
            return False
        if not SKIPPED_DIRS.intersection(path.relative_to(folder).parts):
            return True
    return False
