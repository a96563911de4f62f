"""What looks secret in a server record, by name and by shape, and the record shown masked or scrubbed.

By name: a key, header, flag (`--api-key X`, `--token=X`), `NAME=value` argument or URL query parameter whose
words say secret (API_KEY, apiKey, DB_PASS, GITHUB_PAT, STRIPE_SK, SLACK_WEBHOOK, SENTRY_DSN, PGPASSWORD...)
hides its whole value, unless its last word says the value is something else (TOKEN_URL, KEY_FILE, AUTH_TYPE).
By shape, under any name: a URL's password (`postgres://admin:••••@db/prod`) and secret query parameters, Slack
and Discord webhook paths, the credential after `Bearer`/`Basic`/`Token`, tokens with a known prefix (GitHub,
GitLab, Slack, OpenAI, Anthropic, Stripe, AWS, Google, Hugging Face, npm, PyPI, JWTs) and PEM private keys.
Only the secret part is hidden, so a URL stays useful. `${VAR}` references, booleans and empty values are not
secrets. Rules rather than a scanning library: they must find the exact span to hide inside one value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

MASK = "••••"
SCRUBBED = "[SCRUBBED]"
# Fields that identify a record rather than configure it: never hidden (an import matches records by them).
IDENTITY = ("name", "profile_tags", "enabled")

Span = tuple[int, int]
Render = Callable[[str, list[Span]], str]

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")  # DB_PASS, apiKey, X-Api-Key, APIKey
_SECRET_WORDS = {"PASS", "PWD", "PAT", "SK", "DSN", "CONN", "CREDS", "SIG", "AUTHN", "AUTHZ", "AUTHORIZATION",
                 "AUTHENTICATION", "OTP"}  # fmt: skip
_SECRET_ENDINGS = ("KEY", "TOKEN", "AUTH", "SECRET", "PASSWORD", "PASSWD")  # APIKEY, ACCESSTOKEN, OAUTH
_SECRET_PARTS = ("SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "BEARER", "PRIVATE", "COOKIE",
                 "SESSION", "WEBHOOK")  # fmt: skip
# A last word saying the value is not the secret itself: TOKEN_URL, KEY_FILE, AUTH_TYPE, SESSION_TIMEOUT.
_NOT_SECRET_LAST = {"FILE", "PATH", "DIR", "FOLDER", "URL", "URI", "HOST", "HOSTNAME", "DOMAIN", "PORT", "TYPE",
                    "KIND", "MODE", "TIMEOUT", "TTL", "EXPIRY", "EXPIRES", "EXPIRATION", "LIFETIME", "ENABLED",
                    "DISABLED", "REQUIRED", "NAME", "USER", "USERNAME", "LENGTH", "SIZE", "LIMIT", "PREFIX",
                    "HEADER", "METHOD", "SCHEME", "PROVIDER", "ALGORITHM", "FORMAT", "VERSION", "REGION",
                    "ENDPOINT", "LEVEL", "ENV", "VAR", "COMMAND", "CMD", "LOCATION"}  # fmt: skip
_CONNECTION_STRING = re.compile(r"CONNECTION_?STRING")

_REFERENCE = re.compile(r"\$\{[^{}$]*\}|\{env:[^{}]*\}")  # ${VAR} (MCPM, VS Code ${input:x}), OpenCode {env:VAR}
_SCHEME_WORD = re.compile(r"^(?:bearer|basic|token|bot|digest|apikey)\b", re.I)
_PLAIN = {"", "true", "false", "yes", "no", "on", "off", "none", "null"}
_AUTH_VALUE = re.compile(r"^(?:Bearer|Basic|Token|Bot|Digest|ApiKey)\s+(\S.*)$", re.I)
_KNOWN_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|sk-ant-[\w-]{20,}|sk-(?:proj-)?[\w-]{20,}|[rs]k_(?:live|test)_[A-Za-z0-9]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[\w-]{35}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}|pypi-[\w-]{50,}"
    r"|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*)"
)
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_URL = re.compile(r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s\"'<>]+")  # bounded: linear time
_WEBHOOK_PATHS = {"hooks.slack.com": "/services/", "discord.com": "/api/webhooks/",
                  "discordapp.com": "/api/webhooks/"}  # fmt: skip
_FLAG = re.compile(r"^--?([A-Za-z][\w.-]*)$")
_ASSIGNMENT = re.compile(r"^-{0,2}([A-Za-z_][\w.-]*)=(.+)$", re.S)  # --token=X, GITHUB_TOKEN=X
_HEADER = re.compile(r"^([A-Za-z][A-Za-z0-9-]*):\s*(?!//)(\S.*)$", re.S)  # Authorization: Bearer X


def secret_name(name: str) -> bool:
    words = [word.upper() for word in _WORDS.findall(name)]
    if not words:
        return False
    if words[-1] in _NOT_SECRET_LAST and "WEBHOOK" not in words:
        return False
    return bool(_CONNECTION_STRING.search("_".join(words))) or any(_secret_word(word) for word in words)


def _secret_word(word: str) -> bool:
    return word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS) or any(part in word for part in _SECRET_PARTS)


def _plain(value: str) -> bool:
    """Nothing to hide: empty, a boolean, or only `${VAR}` references (after an optional `Bearer`)."""
    rest = _SCHEME_WORD.sub("", _REFERENCE.sub("", value).strip()).strip()
    return rest.lower() in _PLAIN


def secret_spans(value: str, name: str | None = None) -> list[Span]:
    """Where `value` (found under `name`, if any) holds secrets; one span over all of it hides it whole."""
    if (name is not None and secret_name(name) and not _plain(value)) or _PEM.search(value):
        return [(0, len(value))]
    spans = [m.span() for m in _KNOWN_TOKEN.finditer(value)]
    for url in _URL.finditer(value):
        spans += [(url.start() + a, url.start() + b) for a, b in _url_spans(url.group())]
    auth = _AUTH_VALUE.match(value)
    if auth and not _plain(auth.group(1)):
        spans.append(auth.span(1))
    return _merged(spans)


def _url_spans(url: str) -> Iterator[Span]:
    """A URL's password (or a token-like user), secret query values, and a known webhook's secret path."""
    start = url.index("://") + 3
    end = next((i for i in range(start, len(url)) if url[i] in "/?#"), len(url))
    at = url.rfind("@", start, end)
    if at != -1:
        user, colon, password = url[start:at].partition(":")
        if colon and not _plain(password):
            yield start + len(user) + 1, at
        elif not colon and len(user) >= 20 and re.search(r"\d", user) and re.search(r"[A-Za-z]", user):
            yield start, at
    host = url[at + 1 if at != -1 else start : end].split(":")[0].lower()
    prefix = _WEBHOOK_PATHS.get(host)
    path_end = next((i for i in range(end, len(url)) if url[i] in "?#"), len(url))
    if prefix and url.startswith(prefix, end) and path_end > end + len(prefix):
        yield end + len(prefix), path_end
    if path_end < len(url) and url[path_end] == "?":
        position = path_end + 1
        query_end = url.find("#", position) if "#" in url[position:] else len(url)
        for pair in url[position:query_end].split("&"):
            key, equals, value = pair.partition("=")
            if equals and secret_name(key) and not _plain(value):
                yield position + len(key) + 1, position + len(pair)
            position += len(pair) + 1


def _argument_spans(item: str, previous: Any, name: str | None) -> list[Span]:
    """An item of an argument list: after a secret flag, `--flag=X` / `NAME=X`, `Header: X`, else its shape."""
    flag = _FLAG.match(previous) if isinstance(previous, str) else None
    if flag and secret_name(flag.group(1)) and not item.startswith("-") and not _plain(item):
        return [(0, len(item))]
    for pattern in (_ASSIGNMENT, _HEADER):
        found = pattern.match(item)
        if found:
            offset = found.start(2)
            return [(offset + a, offset + b) for a, b in secret_spans(found.group(2), found.group(1))]
    return secret_spans(item, name)


def _merged(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def hide(node: Any, render: Render, name: str | None = None) -> Any:
    """A copy of `node` (JSON-like) with every secret part replaced by `render`; keys give names to values,
    and each item of a list is read with the one before it (`--api-key X`)."""
    if isinstance(node, str):
        return render(node, secret_spans(node, name))
    if isinstance(node, dict):
        return {key: hide(value, render, str(key)) for key, value in node.items()}
    if isinstance(node, list):
        return [
            render(item, _argument_spans(item, node[i - 1] if i else None, name))
            if isinstance(item, str)
            else hide(item, render, name)
            for i, item in enumerate(node)
        ]
    return node


def hide_record(record: Any, render: Render) -> Any:
    if not isinstance(record, dict):
        return hide(record, render)
    return {key: value if key in IDENTITY else hide(value, render, key) for key, value in record.items()}


def _masked_text(value: str, spans: list[Span]) -> str:
    if spans == [(0, len(value))]:
        return mask(value)
    return _replaced(value, spans, MASK)


def _scrubbed_text(value: str, spans: list[Span]) -> str:
    return _replaced(value, spans, SCRUBBED)


def _replaced(value: str, spans: list[Span], by: str) -> str:
    parts, position = [], 0
    for start, end in spans:
        parts += [value[position:start], by]
        position = end
    return "".join([*parts, value[position:]])


def mask(value: str) -> str:
    return f"{MASK} ({len(value)} chars)"


def masked_record(record: Any) -> Any:
    """The record as answers show it: whole secrets as `•••• (N chars)`, secret parts as `••••`."""
    return hide_record(record, _masked_text)


def scrubbed_record(record: Any) -> Any:
    """The record as an export without secrets holds it: every secret part replaced by `[SCRUBBED]`."""
    return hide_record(record, _scrubbed_text)


def secret_paths(record: Any, path: str) -> list[str]:
    """Where `record` holds secrets: `servers.db.env.DATABASE_URL`, `servers.x.args[1]`, `servers.y.url`."""
    return changed_paths(record, scrubbed_record(record), path)


def changed_paths(before: Any, after: Any, path: str) -> list[str]:
    """Where `after` differs from `before` (same shape): `servers.db.env.DATABASE_URL`, `servers.x.args[1]`."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [p for key in before for p in changed_paths(before[key], after.get(key), f"{path}.{key}")]
    if isinstance(before, list) and isinstance(after, list):
        return [p for i, item in enumerate(before) for p in changed_paths(item, after[i], f"{path}[{i}]")]
    return [] if before == after else [path]


def unscrub_record(imported: Any, stored: Any) -> tuple[Any, list[str], list[str]]:
    """`imported` with each `[SCRUBBED]` part given back the stored value it stands for: the stored value at the
    same place whose scrubbed form is the same (for a list item, at the same index, else at any). Returns the
    record, the paths kept (relative, e.g. `.env.X`, `.args[1]`) and those with nothing stored to restore (left
    as the placeholder, or dropped when a whole env/header value). Pure: `imported` is not changed."""
    kept: list[str] = []
    missing: list[str] = []
    if not _holds_placeholder(imported):
        return _copy(imported), kept, missing
    scrubbed = scrubbed_record(stored) if stored is not None else None
    record = _unscrub(imported, stored, scrubbed, "", kept, missing, top=True)
    return record, kept, missing


def _unscrub(
    node: Any, stored: Any, scrubbed: Any, path: str, kept: list[str], missing: list[str], *, top: bool = False
) -> Any:
    if not _holds_placeholder(node):
        return _copy(node)
    if scrubbed is not None and node == scrubbed:
        _restored(node, stored, path, kept, missing)
        return _copy(stored)
    if isinstance(node, dict):
        result = {}
        for key, value in node.items():
            child = _unscrub(value, _get(stored, key), _get(scrubbed, key), f"{path}.{key}", kept, missing)
            if not (child == SCRUBBED and not top):  # a whole value with nothing stored: the entry is dropped
                result[key] = child
        return result
    if isinstance(node, list):
        return _unscrub_list(node, stored, scrubbed, path, kept, missing)
    if node == SCRUBBED and isinstance(stored, str):  # the value was edited around: the stored one still stands
        kept.append(path)
        return stored
    missing.append(path)
    return node


def _unscrub_list(
    node: list[Any], stored: Any, scrubbed: Any, path: str, kept: list[str], missing: list[str]
) -> list[Any]:
    """A scrubbed string item takes the stored item with the same scrubbed form: at its own index if that fits
    (nothing moved), else the first one not taken yet (an argument was inserted or removed before it)."""
    stored_items = stored if isinstance(stored, list) else []
    scrubbed_items = scrubbed if isinstance(scrubbed, list) else []
    free: dict[str, list[int]] = {}
    for j, scrubbed_item in enumerate(scrubbed_items):
        if isinstance(scrubbed_item, str) and SCRUBBED in scrubbed_item:
            free.setdefault(scrubbed_item, []).append(j)
    result = []
    for i, item in enumerate(node):
        candidates = free.get(item, []) if isinstance(item, str) else []
        match = i if i in candidates else (candidates[0] if candidates else None)
        if match is not None:
            candidates.remove(match)
            _restored(item, stored_items[match], f"{path}[{i}]", kept, missing)
            result.append(stored_items[match])
        else:
            same = i < len(scrubbed_items)
            stored_item, scrubbed_item = (stored_items[i], scrubbed_items[i]) if same else (None, None)
            result.append(_unscrub(item, stored_item, scrubbed_item, f"{path}[{i}]", kept, missing))
    return result


def _restored(node: Any, stored: Any, path: str, kept: list[str], missing: list[str]) -> None:
    """Note the placeholders of `node` given back from `stored`; a stored placeholder is still missing."""
    still = _placeholder_paths(stored, path)
    kept += [p for p in _placeholder_paths(node, path) if p not in still]
    missing += still


def _placeholder_paths(node: Any, path: str) -> list[str]:
    if isinstance(node, str):
        return [path] if SCRUBBED in node else []
    if isinstance(node, dict):
        return [p for key, value in node.items() for p in _placeholder_paths(value, f"{path}.{key}")]
    if isinstance(node, list):
        return [p for i, item in enumerate(node) for p in _placeholder_paths(item, f"{path}[{i}]")]
    return []


def _holds_placeholder(node: Any) -> bool:
    if isinstance(node, str):
        return SCRUBBED in node
    if isinstance(node, dict):
        return any(_holds_placeholder(value) for value in node.values())
    if isinstance(node, list):
        return any(_holds_placeholder(item) for item in node)
    return False


def _get(node: Any, key: str) -> Any:
    return node.get(key) if isinstance(node, dict) else None


def _copy(node: Any) -> Any:
    if isinstance(node, dict):
        return {key: _copy(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_copy(item) for item in node]
    return node
