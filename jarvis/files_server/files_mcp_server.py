"""`jarvis files serve`: the files MCP server (read, bash, grep), each tool with `context_focus_question`.

The binding: each plain tool function (jarvis.files_server.file_tools) becomes an SDK tool whose schema is its signature
without the `FilesRoot`, plus `context_focus_question`. A call runs through the pruning pipeline: the request is
logged, the tool runs (`bash` in the event loop, so the client's cancellation reaches it; the others in a worker
thread), a `JarvisError` becomes a tool error (`isError`) and is never pruned, and the output is pruned when asked.

Invalid arguments are the seed's `req:invalid_request`: a JSON-RPC error -32602 (invalid params) naming the fields,
not a tool result. The SDK turns its own argument validation errors into tool errors but lets `MCPError` through, so
each tool's argument model is wrapped to raise `MCPError` instead (the tool's schema is unchanged), and arguments that
contradict each other (`InvalidArguments`, found before anything runs) are answered the same way.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, CallToolResult, TextContent, ToolAnnotations
from pydantic import ValidationError, ValidatorFunctionWrapHandler, model_validator

from jarvis import __version__
from jarvis.errors import InvalidArguments, JarvisError
from jarvis.files_server import file_tools as tools
from jarvis.files_server.file_tools import FilesRoot
from jarvis.pruning import FocusQuestion, Request
from jarvis.settings import Settings

log = logging.getLogger("jarvis.files")

READS = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
RUNS_ANYTHING = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
)

# (function, description, annotations): the whole tool surface of the files server.
TOOLS: list[tuple[Callable[..., Any], str, ToolAnnotations]] = [
    (tools.read, "Read a file (relative to the root), whole or a window of numbered lines.", READS),
    (
        tools.bash,
        "Run a shell command in the root; stdout, [stderr], [exit code: N]. Killed on timeout.",
        RUNS_ANYTHING,
    ),
    (tools.grep, "Search files under the root with regular expressions; path:line:text per match.", READS),
]
QUESTION = inspect.Parameter(
    "context_focus_question", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=FocusQuestion
)


def bind(function: Callable[..., Any], root: FilesRoot, settings: Settings) -> Callable[..., Any]:
    """An SDK-facing async function: `function`'s parameters (without the root) plus the focus question."""
    name = function.__name__
    signature = inspect.signature(function, eval_str=True)
    parameters = list(signature.parameters.values())[1:]  # the FilesRoot is supplied here, not by the client
    exposed = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]

    @functools.wraps(function)
    async def tool(**arguments: Any) -> CallToolResult:
        request = Request.receive(name, arguments.pop(QUESTION.name, None))
        try:
            if inspect.iscoroutinefunction(function):
                output = await function(root, **arguments)
            else:
                output = await anyio.to_thread.run_sync(functools.partial(function, root, **arguments))
        except InvalidArguments as exc:
            request.invalid(str(exc))
            raise invalid_params(name, str(exc)) from exc
        except JarvisError as exc:
            request.exec_failed(exc)
            return _result(str(exc), error=True)
        except Exception:
            log.exception("tool.internal_error request_id=%s tool=%s", request.id, name)
            raise
        except BaseException as exc:  # the client cancelled: the tool has cleaned up (bash killed its group)
            request.exec_failed(exc)
            raise
        request.executed(output)
        return _result(await anyio.to_thread.run_sync(request.respond, output, settings))

    tool.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*exposed, QUESTION], return_annotation=CallToolResult
    )
    tool.__annotations__ = {p.name: p.annotation for p in [*exposed, QUESTION]} | {"return": CallToolResult}
    del tool.__wrapped__  # the SDK must see the bound signature, not the plain function's
    return tool


def create_files_server(settings: Settings) -> MCPServer:
    root = FilesRoot(settings.files_root)
    declared = []
    for function, description, hints in TOOLS:
        tool = Tool.from_function(bind(function, root, settings), description=description, annotations=hints)
        # FuncMetadata reads its argument model at each call: the wrapped one answers -32602 instead of a tool error.
        tool.fn_metadata.arg_model = rejecting_invalid_params(tool.name, tool.fn_metadata.arg_model)
        declared.append(tool)
    return MCPServer("jarvis-files", version=__version__, tools=declared)


def rejecting_invalid_params(tool: str, model: type[ArgModelBase]) -> type[ArgModelBase]:
    """`model` whose validation errors are raised as JSON-RPC invalid params; its fields and schema are the same."""

    class Arguments(model):  # type: ignore[valid-type, misc]
        @model_validator(mode="wrap")
        @classmethod
        def _as_invalid_params(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
            try:
                return handler(data)
            except ValidationError as exc:
                problems = "; ".join(
                    f"{'.'.join(map(str, error['loc'])) or 'arguments'}: {error['msg']}" for error in exc.errors()
                )
                question = data.get(QUESTION.name) if isinstance(data, dict) else None
                Request.receive(tool, question if isinstance(question, str) else None).invalid(problems)
                raise invalid_params(tool, problems) from exc

    Arguments.__name__ = model.__name__
    return Arguments


def invalid_params(tool: str, problems: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Invalid params for {tool}: {problems}")


def _result(text: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)
