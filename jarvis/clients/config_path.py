"""Which file may stand for a client's config file: `jarvis_client config config_path=` and the `configPath` of
each client in an imported `clients` section are checked here, the same way.

A path fits a client when it is absolute (or starts with `~`), has the client's file name or an extension of
its format, sits in a folder that exists (Jarvis never creates folders for it), is not a dangling symlink, and,
when the file exists, is a regular file that parses in the client's format and either has the client's own
file name, already holds the client's server section, or is empty. So a `package.json` never gets an
`mcpServers` block, and nothing is written where the user did not point on purpose.
"""

from __future__ import annotations

from pathlib import Path

from jarvis.clients.catalog import ClientSpec
from jarvis.clients.formats import ClientFileError, format_for
from jarvis.errors import InvalidInput
from jarvis.user_files import CLIENT_FILE_LIMIT, UnreadableFile, read_limited, shown, user_path

SUFFIXES = {"json": (".json",), "toml": (".toml",), "yaml": (".yaml", ".yml")}


def checked_config_path(spec: ClientSpec, text: str, home: Path) -> Path:
    """The path `text` names for `spec`'s client (`~` is `home`), or InvalidInput saying why it does not fit."""
    path = user_path(text, "config_path", home)
    if not path.is_absolute():
        raise InvalidInput(f"config_path must be absolute or start with ~ (got {shown(text)}); 'default' resets.")
    own_name = Path(spec.default_path).name
    suffixes = SUFFIXES[spec.file_format]
    refused = f"config_path {shown(path)} cannot be {spec.name}'s file"
    if path.name != own_name and path.suffix.lower() not in suffixes:
        raise InvalidInput(
            f"{refused}: {spec.name} keeps its servers in a {spec.file_format.upper()} file; "
            f"name it {own_name} or give it the extension {' or '.join(suffixes)}."
        )
    if not path.parent.is_dir():
        raise InvalidInput(f"{refused}: the folder {shown(path.parent)} does not exist (Jarvis does not create it).")
    if path.is_symlink() and not path.exists():
        raise InvalidInput(f"{refused}: it is a symlink to {shown(path.readlink())}, which does not exist.")
    try:
        data = read_limited(path, CLIENT_FILE_LIMIT)
    except FileNotFoundError:
        return path  # a new file: the first edit creates it
    except UnreadableFile as exc:
        raise InvalidInput(f"{refused}: {exc}") from exc
    try:
        content = data.decode("utf-8")
        file_format = format_for(spec.file_format, spec.section)
        file_format.read(content)
        holds_section = file_format.holds_section(content)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{refused}: it is not UTF-8 text.") from exc
    except (ClientFileError, RecursionError) as exc:
        raise InvalidInput(f"{refused}: {exc or 'nested too deeply'}") from exc
    if content.strip() and path.name != own_name and not holds_section:
        raise InvalidInput(
            f"{refused}: it has no {spec.section!r} section, so it looks like another program's file. Use the "
            f"client's own file name ({own_name}), a new file, or a file that already holds {spec.section!r}."
        )
    return path
