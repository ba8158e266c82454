"""A command run without typer, for the one whose start-up people time: `viewfinder diff`.
Loading typer, and the pydantic adapters with which it checks every option's value, costs a
diff more than its comparison as a process.

The options are read from the command's own signature, declared as plain data with
cli/params.py (from which typer is given the same declarations), so nothing is declared twice
and typer is not imported. Only plain command lines are parsed here: long options,
``--name=value``, positionals, ``--``. Anything else (help, a short or unknown option, a value
that does not convert or lies out of range, a missing argument, a bad value found by the
command before it does anything) returns None, and the caller hands the command line to typer,
which parses it again and says what is wrong in its usual words."""

from __future__ import annotations

import gc
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from viewfinder.cli.params import Argument, BadValue, declarations

# Paths come as str: a parameter of another type (pathlib.Path, say) is typer's to parse.
CONVERT: dict[Any, Callable[[str], Any]] = {str: str, float: float, int: int}


@dataclass(frozen=True)
class _Param:
    name: str
    convert: Callable[[str], Any]
    flag: bool = False
    many: bool = False
    low: float | None = None
    high: float | None = None


def run(command: Callable[..., Any], argv: list[str]) -> int | None:
    """Run ``command`` on ``argv`` and return 0, or None when typer must do it. A command
    exits with another code by raising SystemExit, as it does under typer."""
    try:
        options, arguments = _signature(command)
    except (TypeError, KeyError):
        return None  # a parameter of a kind not handled here
    values = _parse(argv, options, arguments)
    if values is None:
        return None
    # The process ends with the command. Its imports (numpy's most) would start the cyclic
    # collector dozens of times and the interpreter collects every object again on exit, for a
    # comparison that makes next to no cyclic garbage: about a sixth of the process's time.
    # Objects frozen before exit are not collected on exit.
    gc.disable()
    try:
        command(**values)
    except BadValue:
        gc.enable()
        return None  # found before any work: typer reports it
    except SystemExit:
        gc.freeze()
        raise
    gc.freeze()
    return 0


def _signature(command: Callable[..., Any]) -> tuple[dict[str, _Param], list[_Param]]:
    options: dict[str, _Param] = {}
    arguments: list[_Param] = []
    for name, (hint, declared) in declarations(command).items():
        base = _plain(hint)
        many = typing.get_origin(base) is list
        kind = typing.get_args(base)[0] if many else base
        if isinstance(declared, Argument):
            arguments.append(_Param(name, CONVERT[kind]))
            continue
        if kind is bool and not declared.names:
            raise TypeError(name)  # a --name/--no-name pair: typer's to parse
        convert = bool if kind is bool else CONVERT[kind]
        param = _Param(name, convert, kind is bool, many, declared.min, declared.max)
        for decl in declared.names or [f"--{name.replace('_', '-')}"]:
            if not decl.startswith("--"):
                raise TypeError(name)
            options[decl] = param
    return options, arguments


def _plain(hint: Any) -> Any:
    """``X | None`` as X."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(rest) == 1:
            return rest[0]
    return hint


def _parse(
    argv: list[str], options: dict[str, _Param], arguments: list[_Param]
) -> dict[str, Any] | None:
    values: dict[str, Any] = {}
    positionals: list[str] = []
    tokens = iter(argv)
    for token in tokens:
        if token == "--":
            positionals.extend(tokens)
            break
        if not token.startswith("-") or token == "-":
            positionals.append(token)
            continue
        name, given, value = token.partition("=")
        param = options.get(name)
        if param is None:
            return None  # --help, a short option, an unknown one
        if param.flag:
            if given:
                return None
            values[param.name] = True
            continue
        if not given:
            following = next(tokens, None)
            if following is None:
                return None
            value = following
        converted = _convert(param, value)
        if converted is None:
            return None
        if param.many:
            values.setdefault(param.name, []).append(converted)
        else:
            values[param.name] = converted
    if len(positionals) != len(arguments):
        return None
    for param, text in zip(arguments, positionals, strict=True):
        values[param.name] = param.convert(text)
    return values


def _convert(param: _Param, text: str) -> Any:
    try:
        value = param.convert(text)
    except ValueError:
        return None
    if value != value:  # NaN: typer's to refuse
        return None
    if (param.low is not None and value < param.low) or (
        param.high is not None and value > param.high
    ):
        return None
    return value
