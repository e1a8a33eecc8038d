"""Validators against sources no one here wrote: OpenAI's OpenAPI document, the Anthropic SDK's
generated types, the xAI SDK's protos (the conformance suite: `test_conformance_*.py`).

Why: every test of Tribunal talks to emulators written in this repository, so a mistaken idea of a
vendor's API can sit in an adapter and in its emulator at once and pass every test. Each emulator
answer and each request Tribunal sends is checked here against the vendor's own published schema,
closed (a field the vendor does not define is an error, as a real API refuses an unknown request
parameter), so neither side can drift from the vendor without a red test.

* OpenAI: `specs/openai-openapi.json` (source and date in `specs/README.md`), validated with
  `jsonschema` (Draft 2020-12, OpenAPI 3.1's dialect) through a `referencing` registry.
* Anthropic: the installed SDK's pydantic models and request TypedDicts (`anthropic.types`),
  validated in pydantic's strict mode with every extra key refused, at every depth.
* xAI: the SDK's protobuf messages; bytes must parse with no unknown field and re-serialise to the
  same bytes, and a recorded request body must parse back into its message with no unknown key.
"""

from __future__ import annotations

import collections.abc
import copy
import functools
import json
import operator
import types
import typing
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import typing_extensions
from google.protobuf import json_format
from google.protobuf.message import Message
from google.protobuf.unknown_fields import UnknownFieldSet
from jsonschema.protocols import Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

SPECS = Path(__file__).with_name("specs")
OPENAI_SPEC = SPECS / "openai-openapi.json"
OPENAI_URI = "urn:openai-openapi"

# ---------------------------------------------------------------------------------------------
# OpenAI: the OpenAPI document, closed
# ---------------------------------------------------------------------------------------------

_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "unevaluatedItems", "contains", "not", "if", "then", "else",
                  "propertyNames")


def _close(schema: Any, *, in_all_of: bool = False) -> Any:
    """`schema` with every object schema used whole made closed (`unevaluatedProperties: false`).

    An `allOf` member is left open (its siblings define the rest of the object: the schema that
    holds the `allOf` is closed at its use instead), and so is a schema that already says what
    other keys may hold (`additionalProperties`). A `$ref` used whole becomes
    `{"$ref": ..., "unevaluatedProperties": false}`: Draft 2020-12 counts the properties the
    referenced schema (and its `allOf`) evaluated, so the referenced definition itself stays as the
    vendor wrote it. `nullable: true` (an OpenAPI 3.0 keyword the document still uses, which Draft
    2020-12 ignores) is read as the document means it: null is allowed too.
    """
    if isinstance(schema, list):
        return [_close(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _SUBSCHEMA_MAPS and isinstance(value, dict):
            out[key] = {k: _close(v) for k, v in value.items()}
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            out[key] = [_close(v) for v in value]
        elif key == "allOf" and isinstance(value, list):
            out[key] = [_close(v, in_all_of=True) for v in value]
        elif key in _SUBSCHEMA_ONE and isinstance(value, dict):
            out[key] = _close(value)
        else:
            out[key] = value
    if out.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    open_ended = "additionalProperties" in out or "unevaluatedProperties" in out
    is_object = "properties" in out or "allOf" in out or "$ref" in out
    if not in_all_of and is_object and not open_ended:
        out["unevaluatedProperties"] = False
    return out


def strict_openapi(document: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI document with every component schema's inside closed (`_close`); the component
    definitions themselves stay open, as `allOf` members elsewhere, and are closed where used."""
    doc = copy.copy(document)
    doc["components"] = dict(document["components"])
    doc["components"]["schemas"] = {
        name: _close(schema, in_all_of=True) for name, schema in document["components"]["schemas"].items()
    }
    return doc


@cache
def openai_document() -> dict[str, Any]:
    """The vendored OpenAPI document, as published."""
    data: dict[str, Any] = json.loads(OPENAI_SPEC.read_text())
    return data


@cache
def _openai_registry() -> Registry:
    resource: Resource[Any] = Resource.from_contents(strict_openapi(openai_document()),
                                                     default_specification=DRAFT202012)
    registry: Registry = Registry().with_resource(OPENAI_URI, resource)
    return registry


@cache
def openai_validator(schema: str) -> Validator:
    """A validator of one closed component schema (`Response`, `CreateResponse`, `Batch`, ...)."""
    root = {"$ref": f"{OPENAI_URI}#/components/schemas/{schema}", "unevaluatedProperties": False}
    validator: Validator = jsonschema.Draft202012Validator(root, registry=_openai_registry())
    return validator


def openai_errors(schema: str, instance: Any) -> list[str]:
    """Every way `instance` breaks OpenAI's `schema` (empty: it conforms), each with its path."""
    errors = sorted(openai_validator(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    return [f"{schema} at {'/'.join(map(str, e.absolute_path)) or '(root)'}: {_leaf(e).message}" for e in errors]


def _leaf(error: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """The deepest cause of an error (an `anyOf` failure names only its branches otherwise)."""
    return jsonschema.exceptions.best_match([error, *error.context]) if error.context else error


def header_errors(path: str, method: str, status: str, headers: dict[str, str]) -> list[str]:
    """Every response header the document types for `method path` at `status` that `headers` breaks."""
    doc = openai_document()
    response = doc["paths"][path][method]["responses"].get(status, {})
    if "$ref" in response:
        response = doc["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
    problems = []
    for name, spec in (response.get("headers") or {}).items():
        value = headers.get(name.lower())
        if value is None:
            continue
        schema = spec.get("schema", {})
        parsed: Any = value
        if schema.get("type") == "integer":
            try:
                parsed = int(value)
            except ValueError:
                problems.append(f"{name}: {value!r} is not an integer")
                continue
        problems += [f"{name}: {e.message}" for e in jsonschema.Draft202012Validator(schema).iter_errors(parsed)]
    return problems


# ---------------------------------------------------------------------------------------------
# Anthropic: the SDK's generated types, strict and closed
# ---------------------------------------------------------------------------------------------


def _extras(value: Any, path: str) -> Iterator[str]:
    """Paths of every key a validated model kept as an extra (the SDK's models allow extras)."""
    if isinstance(value, pydantic.BaseModel):
        for key in value.model_extra or {}:
            yield f"{path}.{key}"
        for name in type(value).model_fields:
            yield from _extras(getattr(value, name), f"{path}.{name}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _extras(item, f"{path}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _extras(item, f"{path}.{key}")


def anthropic_response_errors(model: type[pydantic.BaseModel], raw: str | bytes) -> list[str]:
    """Every way the JSON `raw` breaks the SDK's `model`: pydantic's strict JSON mode (no coercion
    but JSON's own: a string is a datetime), and every key the model does not define."""
    try:
        value = model.model_validate_json(raw, strict=True)
    except pydantic.ValidationError as exc:
        return [f"{model.__name__}: {e['loc']}: {e['msg']}" for e in exc.errors()]
    return [f"{model.__name__}: {p}: not a field of the vendor's type" for p in _extras(value, "")]


def _typeddicts(tp: Any, seen: set[type]) -> None:
    """Collect every TypedDict reachable from the type `tp` (through unions, lists, Annotated...)."""
    if typing_extensions.is_typeddict(tp):  # the SDK's are typing_extensions TypedDicts
        if tp in seen:
            return
        seen.add(tp)
        for base in getattr(tp, "__orig_bases__", ()):  # pydantic reads each base's own annotations
            _typeddicts(base, seen)
        for hint in typing.get_type_hints(tp, include_extras=True).values():
            _typeddicts(hint, seen)
        return
    for arg in typing.get_args(tp):
        _typeddicts(arg, seen)


def _listed(tp: Any) -> Any:
    """`tp` with every `Iterable[X]` read as `list[X]`: the SDK types its lists as iterables, which
    pydantic validates lazily (and a string, being iterable, would pass as a list of blocks)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is None or origin is typing.Literal or not args:
        return tp
    if origin is collections.abc.Iterable:
        return list[_listed(args[0])]  # type: ignore[misc]
    if origin is typing.Annotated:
        return typing.Annotated[(_listed(args[0]), *tp.__metadata__)]
    if origin is typing.Union or origin is types.UnionType:
        return functools.reduce(operator.or_, [_listed(a) for a in args])
    return origin[tuple(_listed(a) for a in args)] if len(args) > 1 else origin[_listed(args[0])]


def closed_params_adapter(params: Any) -> pydantic.TypeAdapter[Any]:
    """A strict TypeAdapter of the SDK's request TypedDict `params` refusing, at every depth, a key
    the SDK does not define.

    The SDK's TypedDicts carry no pydantic configuration; each reachable one is given
    `extra="forbid"` (and its iterables read as lists, `_listed`) while the adapter is built
    (pydantic reads both then) and restored right after, so the SDK's classes are left as they were.
    """
    found: set[type] = set()
    _typeddicts(params, found)
    saved = {td: (td.__dict__.get("__pydantic_config__"), td.__dict__["__annotations__"]) for td in found}
    hints = {td: typing.get_type_hints(td, include_extras=True) for td in found}
    try:
        for td in found:
            td.__pydantic_config__ = pydantic.ConfigDict(  # type: ignore[attr-defined]
                extra="forbid", strict=True, arbitrary_types_allowed=True)  # file uploads: IO[bytes]
            td.__annotations__ = {name: _listed(hint) for name, hint in hints[td].items()}
        return pydantic.TypeAdapter(params)
    finally:
        for td, (config, annotations) in saved.items():
            td.__annotations__ = annotations
            if config is None:
                del td.__pydantic_config__  # type: ignore[attr-defined]
            else:
                td.__pydantic_config__ = config  # type: ignore[attr-defined]


def anthropic_request_errors(adapter: pydantic.TypeAdapter[Any], body: dict[str, Any]) -> list[str]:
    """Every way a request body breaks the SDK's request type (`closed_params_adapter`)."""
    try:
        value = adapter.validate_json(json.dumps(body))
        _consume(value)
    except pydantic.ValidationError as exc:
        return [f"{e['loc']}: {e['msg']}" for e in exc.errors()]
    # the request types also take the SDK's response models (a content block sent back), which
    # keep extra keys instead of refusing them
    return [f"{p}: not a field of the vendor's type" for p in _extras(value, "")]


def _consume(value: Any) -> None:
    """Validate what pydantic validates lazily: the SDK types its lists as `Iterable[...]`, which
    pydantic checks item by item only as they are iterated (raising `ValidationError` then)."""
    if isinstance(value, dict):
        for item in value.values():
            _consume(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _consume(item)
    elif not isinstance(value, str | bytes) and isinstance(value, Iterator):
        for item in value:
            _consume(item)


# ---------------------------------------------------------------------------------------------
# xAI: the SDK's protos
# ---------------------------------------------------------------------------------------------


def proto_bytes_errors(message: type[Message], raw: bytes) -> list[str]:
    """Every way the wire bytes `raw` are not exactly a `message`: unknown fields (a field number
    the proto does not define), or bytes that do not re-serialise the same."""
    try:
        parsed = message.FromString(raw)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends, reported as a finding
        return [f"{message.__name__}: does not parse: {exc}"]
    problems = []
    if len(UnknownFieldSet(parsed)):
        problems.append(f"{message.__name__}: fields the proto does not define")
    if parsed.SerializeToString() != raw:
        problems.append(f"{message.__name__}: does not re-serialise to the bytes received")
    return problems


def proto_dict_errors(message: type[Message], body: dict[str, Any]) -> list[str]:
    """Every way a recorded body (`MessageToDict` with proto field names) is not a `message`:
    keys the proto does not define, values of the wrong type, or a lossy round trip."""
    try:
        parsed = json_format.ParseDict(body, message(), ignore_unknown_fields=False)
    except json_format.ParseError as exc:
        return [f"{message.__name__}: {exc}"]
    again = json_format.MessageToDict(parsed, preserving_proto_field_name=True)
    return [] if again == body else [f"{message.__name__}: the body does not round-trip"]
