"""Arguments as the client sent them: a string stays a string where the tool takes one.

The SDK parses every string argument that looks like JSON for any parameter not typed exactly `str`, to help
clients that send arrays as JSON text. For an optional string (`str | None`) that turns a description "[]" or
a path "{}" into a list or an object the schema then refuses, and "null" into no value at all. Here the parsed
value is kept only when the parameter takes that kind of value besides strings (`args` as a JSON array).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Annotated, Any, Union, get_args, get_origin

from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import BaseModel, PrivateAttr, WithJsonSchema, create_model


class StringsKept(FuncMetadata):
    """The SDK's argument metadata, with the types of the handler's own signature (`declared`) deciding which
    JSON-looking strings stay strings (the SDK's argument model passes everything through)."""

    declared: Annotated[type[BaseModel] | None, WithJsonSchema(None)] = None

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        fields = (self.declared or self.arg_model).model_fields
        for key, value in data.items():
            field = fields.get(key)
            if field is not None and parsed[key] is not value and _keeps_string(field.annotation, parsed[key]):
                parsed[key] = value
        return parsed


class LoadedOnFirstCall(StringsKept):
    """`StringsKept` whose models are made on the tool's first call, by `load` (the handler's own argument
    model): a start that lists the tools from the cache then imports no tool and builds no model."""

    _load: Callable[[], type[BaseModel]] = PrivateAttr()

    def __init__(self, *, load: Callable[[], type[BaseModel]], **values: Any) -> None:
        super().__init__(**values)
        self._load = load

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        if self.declared is None:  # two first calls at once build the same models: harmless
            declared = self._load()
            fields: dict[str, Any] = {name: (Any, None) for name in declared.model_fields}
            self.arg_model = create_model(f"{declared.__name__}_passthrough", __base__=ArgModelBase, **fields)
            self.declared = declared
        return super().validate_arguments(arguments_to_validate)


def _keeps_string(annotation: Any, parsed: Any) -> bool:
    options = get_args(annotation) if get_origin(annotation) in (Union, types.UnionType) else (annotation,)
    if str not in options:
        return False
    others = tuple(get_origin(option) or option for option in options if option not in (str, type(None)))
    return not (others and isinstance(parsed, others))
