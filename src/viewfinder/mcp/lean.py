"""What tools/list says about each tool's results, said once.

Pydantic gives every schema and property a `title` that repeats its name, and tools that change
a record answer with the whole record: a diff's schema came with get_diff, review_diff,
approve_diff and push_screenshot, a thread's with five comment tools. An agent reads the list
before every session, so the list carries each record's full description once, with the tool
that reads it; tools that change a record describe only the top of what they answer.
"""

from __future__ import annotations

from typing import Any

_STRUCTURE = ("type", "enum", "const", "format", "additionalProperties")


def untitled(schema: Any) -> Any:
    """The schema without `title` keywords (property names called "title" stay)."""
    if isinstance(schema, list):
        return [untitled(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title":
            continue
        if key in ("properties", "$defs"):
            lean[key] = {name: untitled(sub) for name, sub in value.items()}
        else:
            lean[key] = untitled(value)
    return lean


def top_level(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's own properties with their types and descriptions; nested records are
    plain objects (their fields are described by the tool that reads them)."""
    defs = schema.get("$defs", {})

    def shape(prop: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in prop:
            target = defs.get(prop["$ref"].rsplit("/", 1)[-1], {})
            return {k: target[k] for k in _STRUCTURE if k in target} or {"type": "object"}
        for union in ("anyOf", "oneOf"):
            if union in prop:
                # Shallow options may coincide (a union of records is "an object"): keep each
                # once, and say anyOf, since oneOf would refuse a value matching two of them.
                options: list[dict[str, Any]] = []
                for option in map(shape, prop[union]):
                    if option not in options:
                        options.append(option)
                return options[0] if len(options) == 1 else {"anyOf": options}
        out = {k: prop[k] for k in _STRUCTURE if k in prop}
        if prop.get("type") == "array" and isinstance(prop.get("items"), dict):
            out["items"] = shape(prop["items"])
        return out or {"type": "object"}

    lean: dict[str, Any] = {"type": "object"}
    properties: dict[str, Any] = {}
    for name, prop in schema.get("properties", {}).items():
        properties[name] = shape(prop)
        if "description" in prop:
            properties[name]["description"] = prop["description"]
    lean["properties"] = properties
    for key in ("required", "additionalProperties", "description"):
        if key in schema:
            lean[key] = schema[key]
    return lean
