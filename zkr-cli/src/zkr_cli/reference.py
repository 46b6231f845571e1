"""The reference of every operation, generated from the operation table and its models.

``zkr COMMAND --help`` and the reference part of ``docs/cli.md`` are both rendered from here: the
summary and description of the table's row, the request's fields (type, default, description, from
the pydantic models) and one example request built from the request model. Nothing about a request
is written by hand a second time, so an operation added to the table is documented everywhere.
"""

from __future__ import annotations

import enum
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    from zkr.operations import Operation

__all__ = [
    "EPOCH_NOTE",
    "FieldRow",
    "command_help",
    "example_request",
    "markdown_reference",
    "request_fields",
    "response_text",
    "type_text",
]

#: Said wherever a timestamp can appear.
EPOCH_NOTE = "Timestamps are integers: seconds since the Unix epoch (1970-01-01T00:00:00Z)."

#: A timestamp used by generated examples (2026-01-01T00:00:00Z).
_EXAMPLE_TIME = 1_767_225_600

#: Friendlier example values for common field names (anything else gets ``<name>``).
_EXAMPLE_TEXT = {
    "tenant_id": "demo",
    "person_id": "me",
    "query": "plans",
    "text": "I prefer short plans.",
    "subject": "me",
    "predicate": "prefers",
    "value": "short plans",
    "day": "2026-01-01",
    "summary": "Planned the week.",
}


def _is_model(annotation: Any) -> bool:
    from pydantic import BaseModel

    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _options(annotation: Any) -> tuple[list[Any], bool]:
    """The non-null members of a union, and whether null is one of them (constraints dropped)."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _options(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [_options(m)[0][0] for m in typing.get_args(annotation)]
        return [m for m in members if m is not type(None)], type(None) in members
    return [annotation], False


def type_text(annotation: Any) -> str:
    """A JSON type as a reader says it: ``integer``, ``array of string``, ``object or null``."""
    members, nullable = _options(annotation)
    text = " or ".join(_one_type(member) for member in members)
    return f"{text} or null" if nullable else text


def _one_type(annotation: Any) -> str:
    annotation = _options(annotation)[0][0]
    origin = typing.get_origin(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation)
        return f"array of {type_text(item)}"
    if origin is dict:
        return "object"
    if origin is typing.Literal:
        return " or ".join(json.dumps(value) for value in typing.get_args(annotation))
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "one of " + ", ".join(str(member.value) for member in annotation)
    if _is_model(annotation):
        return "object"
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _nested_model(annotation: Any) -> type[BaseModel] | None:
    members, _ = _options(annotation)
    for member in members:
        if _is_model(member):
            return typing.cast("type[BaseModel]", member)
    return None


def _json_name(name: str, info: FieldInfo) -> str:
    return info.alias or name


@dataclass(frozen=True)
class FieldRow:
    """One request field, nested fields named by their dotted path (``claim.valid_from``)."""

    path: str
    type: str
    required: bool
    default: str | None
    description: str


def _default_text(info: FieldInfo) -> str | None:
    if info.is_required():
        return None
    from zkr.settings import setting_for_factory

    setting = setting_for_factory(info.default_factory)
    if setting is not None:
        # The built-in default, not this process's $ZKR_...: the reference reads the same
        # wherever it is generated (the description names the variable).
        return json.dumps(setting.default)
    default = info.get_default(call_default_factory=True)
    if isinstance(default, enum.Enum):
        default = default.value
    return json.dumps(default)


def _rows(model: type[BaseModel], prefix: str) -> Iterator[FieldRow]:
    for name, info in model.model_fields.items():
        path = prefix + _json_name(name, info)
        yield FieldRow(
            path=path,
            type=type_text(info.annotation),
            required=info.is_required(),
            default=_default_text(info),
            description=(info.description or "").strip(),
        )
        nested = _nested_model(info.annotation)
        if nested is not None:
            yield from _rows(nested, path + ".")


def request_fields(model: type[BaseModel]) -> list[FieldRow]:
    """Every field of *model*, nested ones after their parent."""
    return list(_rows(model, ""))


def _example_value(name: str, annotation: Any) -> Any:
    members, _ = _options(annotation)
    annotation = members[0]
    origin = typing.get_origin(annotation)
    if origin is list:
        (item,) = typing.get_args(annotation)
        return [_example_value(name.removesuffix("s"), item)]
    if origin is dict:
        return {}
    if origin is typing.Literal:
        return typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return next(iter(annotation)).value
    if _is_model(annotation):
        return example_request(annotation)
    if annotation is bool:
        return True
    if annotation is int:
        return _EXAMPLE_TIME if name.endswith("_at") or name == "valid_from" else 1
    if annotation is float:
        return 0.5
    return _EXAMPLE_TEXT.get(name, f"<{name}>")


def example_request(model: type[BaseModel]) -> dict[str, Any]:
    """A request holding every required field of *model* (nested required objects included)."""
    return {
        _json_name(name, info): _example_value(name, info.annotation)
        for name, info in model.model_fields.items()
        if info.is_required()
    }


def _example_line(operation: Operation) -> str:
    body = json.dumps(example_request(operation.request), ensure_ascii=False, separators=(",", ":"))
    return f"printf '%s' '{body}' | zkr --db memory.db {operation.name}"


def response_text(operation: Operation) -> str:
    """What the command prints, in words: ``RetrievalPack: A bounded, cited answer …``."""
    response = operation.response
    members, nullable = _options(response)
    parts = []
    for member in members:
        if typing.get_origin(member) is list:
            (item,) = typing.get_args(member)
            parts.append(f"an array of {item.__name__}: {_doc_line(item)}")
        elif _is_model(member):
            parts.append(f"{member.__name__}: {_doc_line(member)}")
        else:
            parts.append(type_text(member))
    text = "; or ".join(parts)
    return f"{text} Or null." if nullable else text


def _doc_line(cls: type) -> str:
    doc = cls.__dict__.get("__doc__") or ""
    # Docstrings are reStructuredText; help and Markdown show ``literal`` as `literal`.
    return " ".join(doc.strip().split("\n\n")[0].split()).replace("``", "`")


def _default_column(row: FieldRow) -> str:
    return "required" if row.required else f"default {row.default}"


def command_help(operation: Operation) -> str:
    """``zkr COMMAND --help``: summary, description, request fields, response and an example."""
    import textwrap

    rows = request_fields(operation.request)
    width = max(len(row.path) for row in rows) if rows else 0
    lines = [
        f"zkr --db PATH {operation.name}: {operation.summary}",
        "",
        *textwrap.wrap(operation.description, 100),
        "",
        "Request (one JSON object on stdin):",
    ]
    for row in rows:
        lines.append(f"  {row.path:<{width}}  {row.type}, {_default_column(row)}")
        lines.extend(
            textwrap.wrap(
                row.description,
                100,
                initial_indent=" " * (width + 4),
                subsequent_indent=" " * (width + 4),
            )
        )
    lines += [
        "",
        "Prints (one JSON line on stdout):",
        *textwrap.wrap(response_text(operation), 98, initial_indent="  ", subsequent_indent="  "),
        "",
        "Example:",
        "  " + _example_line(operation),
        "",
        EPOCH_NOTE,
    ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_reference(operations: typing.Iterable[Operation]) -> str:
    """The reference part of ``docs/cli.md``: one section per operation, in table order."""
    out = [EPOCH_NOTE, ""]
    for operation in operations:
        out += [
            f"### `{operation.name}`",
            "",
            f"{operation.summary[:1].upper()}{operation.summary[1:]}. {operation.description}",
            "",
            "| field | type | default | description |",
            "|---|---|---|---|",
        ]
        for row in request_fields(operation.request):
            out.append(
                f"| `{row.path}` | {_cell(row.type)} | {_cell(_default_column(row))} "
                f"| {_cell(row.description)} |"
            )
        out += [
            "",
            f"Prints {_cell(response_text(operation))}",
            "",
            "```sh",
            _example_line(operation),
            "```",
            "",
        ]
    return "\n".join(out)
