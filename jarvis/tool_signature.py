"""A tool's input, read from its handler's signature: the one declaration of every parameter.

A handler is a plain function `jarvis_x(context: ToolContext, action: Action, name: Annotated[...] = None, ...)`.
Its annotations (a `Literal` for a closed set, `Annotated[T, Field(description=...)]`, a default for an
optional parameter) become a pydantic model; the model gives the published JSON schema and validates each
call's arguments, so a parameter is added by adding it to the handler. Nothing here knows about MCP.

Whether an action changes anything is data declared next to its `Literal` (`EFFECTS`), so read-only mode
(`JARVIS_READ_ONLY`) can drop the actions that write from the schema and refuse them if called anyway.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, create_model
from pydantic_core import ErrorDetails

from jarvis.errors import InvalidInput, quoted
from jarvis.tool_context import ToolContext

Handler = Callable[..., str]
READ_ONLY_NOTE = "Jarvis is read-only here (JARVIS_READ_ONLY=true)"


@dataclass(frozen=True)
class WritesWhen:
    """The action changes something only when this parameter is given, e.g. `config_sync` with `auto_fix`."""

    parameter: str


# What one action does to the machine: only reads, writes, or writes when a parameter is given.
Effect = Literal["reads", "writes"] | WritesWhen
ACTION = "action"


@dataclass(frozen=True)
class ToolSignature:
    name: str
    handler: Handler
    model: type[BaseModel]
    effects: Mapping[str, Effect]  # the actions served, each with its effect
    refused: tuple[str, ...]  # actions that write, left out in read-only mode
    read_only: bool

    @classmethod
    def of(
        cls, handler: Handler, effects: Mapping[Any, Effect] | None = None, *, read_only: bool = False
    ) -> ToolSignature:
        """The signature of `handler`; in read-only mode only its actions that do not always write."""
        hints = typing.get_type_hints(handler, include_extras=True)
        parameters = list(inspect.signature(handler).parameters.values())[1:]  # the first is the ToolContext
        actions = _literal_values(hints[ACTION]) if ACTION in hints else ()
        effects = dict(effects or {})
        if set(effects) != set(actions):
            raise TypeError(f"{handler.__name__}: EFFECTS must name every action exactly ({', '.join(actions)})")
        refused = tuple(a for a in actions if read_only and effects[a] == "writes")
        served = {a: effects[a] for a in actions if a not in refused}
        fields: dict[str, Any] = {}
        for parameter in parameters:
            hint = hints[parameter.name]
            if parameter.name == ACTION and refused and served:  # none served: the tool is dropped
                hint = _narrowed(hint, tuple(served))
            default = ... if parameter.default is inspect.Parameter.empty else parameter.default
            fields[parameter.name] = (hint, default)
        model = create_model(f"{handler.__name__}_arguments", __config__=ConfigDict(extra="ignore"), **fields)
        return cls(handler.__name__, handler, model, served, refused, read_only)

    @property
    def parameters(self) -> list[str]:
        return list(self.model.model_fields)

    @property
    def serves_nothing(self) -> bool:
        """Read-only mode removed every action: the tool is not served at all."""
        return bool(self.refused) and not self.effects

    @property
    def only_reads(self) -> bool:
        """No action left that writes unconditionally (a `WritesWhen` one is refused when it would write)."""
        return all(effect == "reads" or (self.read_only and isinstance(effect, WritesWhen))
                   for effect in self.effects.values())  # fmt: skip

    def json_schema(self) -> dict[str, Any]:
        return self.model.model_json_schema()

    def arguments(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Validated keyword arguments for the handler; bad input is an `InvalidInput` naming the valid values."""
        given = {key: value for key, value in raw.items() if value is not None}
        action = given.get(ACTION)
        if isinstance(action, str) and action in self.refused:
            raise InvalidInput(
                f"Action {quoted(action)} changes things and {READ_ONLY_NOTE}. Valid actions: {', '.join(self.effects)}"
            )
        try:
            validated = self.model.model_validate(given)
        except ValidationError as exc:
            raise InvalidInput(_explain(exc.errors()[0], self.model)) from exc
        arguments = {name: getattr(validated, name) for name in self.model.model_fields}
        effect = self.effects.get(arguments.get(ACTION) or "")
        if self.read_only and isinstance(effect, WritesWhen) and arguments.get(effect.parameter):
            raise InvalidInput(
                f"{arguments[ACTION]} with {effect.parameter} changes things and {READ_ONLY_NOTE}; "
                f"call it without {effect.parameter}."
            )
        return arguments

    def call(self, context: ToolContext, raw: Mapping[str, Any]) -> str:
        return self.handler(context, **self.arguments(raw))


def _literal_values(hint: Any) -> tuple[str, ...]:
    """The values of a `Literal` parameter, through `Annotated[...]` and `| None`."""
    if get_origin(hint) is Annotated:
        return _literal_values(get_args(hint)[0])
    if get_origin(hint) is Literal:
        return tuple(get_args(hint))
    for arm in get_args(hint):
        if values := _literal_values(arm):
            return values
    return ()


def _narrowed(hint: Any, values: tuple[str, ...]) -> Any:
    """The `action` annotation with only `values` left in its `Literal`, keeping its `Annotated` metadata."""
    narrowed = cast(Any, Literal)[values]
    if get_origin(hint) is Annotated:
        return Annotated[(narrowed, *hint.__metadata__)]
    return narrowed


def _explain(error: ErrorDetails, model: type[BaseModel]) -> str:
    """pydantic's first error as a sentence that names the parameter and, for a closed set, its values."""
    name = str(error["loc"][0]) if error["loc"] else "arguments"
    field = model.model_fields.get(name)
    valid = _literal_values(field.annotation) if field else ()
    if error["type"] == "missing":
        return f"{name} is required." + (f" Valid {name}s: {', '.join(valid)}" if valid else "")
    if error["type"] == "literal_error" or (valid and error["input"] not in valid):
        return str(InvalidInput.choice(name, error["input"], valid))
    where = "".join(f"[{part}]" for part in error["loc"][1:])
    reason = str(error["msg"]).removeprefix("Value error, ")
    return f"Invalid {name}{where} {quoted(error['input'])}: {reason}."
