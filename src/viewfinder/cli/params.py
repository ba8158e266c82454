"""A command's parameters declared as plain data, for the command whose start-up people time:
`viewfinder diff`. Loading typer costs that command, as a process, more than its comparison.

A command marked with ``plain`` declares its parameters with this module's Argument and Option
(in ``Annotated``, as with typer's). cli/quick.py reads them to run a plain command line without
importing typer; for anything else main.build_app gives typer the command through ``typed``, the
same declarations as typer's own, so each option is declared once and typer gives its usual
help and errors. The fields are the ones both understand; a command needing more of typer
declares its parameters with typer's."""

from __future__ import annotations

import functools
import inspect
import os
import typing
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_PLAIN: set[Callable[..., Any]] = set()


class Argument:
    """``path=True`` on a ``str`` parameter: typer's help calls it a path, and the command is
    still given a str (see ``typed``)."""

    def __init__(
        self, *, help: str | None = None, metavar: str | None = None, path: bool = False
    ) -> None:
        self.help, self.metavar, self.path = help, metavar, path


class Option:
    """``Option("--name", ...)`` names the option; without names it is ``--param-name`` (and,
    for a bool, ``--param-name/--no-param-name``, as typer makes it)."""

    def __init__(
        self,
        *names: str,
        help: str | None = None,
        metavar: str | None = None,
        min: float | None = None,
        max: float | None = None,
        path: bool = False,
    ) -> None:
        self.names, self.help, self.metavar, self.min, self.max = names, help, metavar, min, max
        self.path = path


class BadValue(ValueError):
    """A parameter's value refused by the command before it does anything: typer reports it as
    its own BadParameter, with the command's usage."""


def plain(command: F) -> F:
    """Mark ``command`` as declaring its parameters with Argument and Option from here."""
    _PLAIN.add(command)
    return command


def declarations(command: Callable[..., Any]) -> dict[str, tuple[Any, Argument | Option]]:
    """Each parameter's type and declaration, in order; TypeError for one declared otherwise."""
    hints = typing.get_type_hints(command, include_extras=True)
    found: dict[str, tuple[Any, Argument | Option]] = {}
    for name in inspect.signature(command).parameters:
        hint = hints.get(name)
        if typing.get_origin(hint) is not Annotated:
            raise TypeError(name)
        kind, declared = typing.get_args(hint)[:2]
        if not isinstance(declared, Argument | Option):
            raise TypeError(name)
        found[name] = kind, declared
    return found


def typed(command: F) -> F:
    """``command`` as typer reads it, when it is marked ``plain``; any other, unchanged."""
    if command not in _PLAIN:
        return command
    from pathlib import Path

    import typer

    signature = inspect.signature(command)
    params = declarations(command)
    parameters = []
    paths = set()
    for parameter in signature.parameters.values():
        kind, declared = params[parameter.name]
        if declared.path:
            # Typer parses it as a path (and says so in the help); the command gets a str.
            kind = Path | None if kind == str | None else Path
            paths.add(parameter.name)
        if isinstance(declared, Argument):
            info = typer.Argument(help=declared.help, metavar=declared.metavar)
        else:
            info = typer.Option(
                *declared.names,
                help=declared.help,
                metavar=declared.metavar,
                min=declared.min,
                max=declared.max,
            )
        parameters.append(parameter.replace(annotation=Annotated[kind, info]))

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        for name in paths & kwargs.keys():
            if kwargs[name] is not None:
                kwargs[name] = os.fspath(kwargs[name])
        try:
            return command(*args, **kwargs)
        except BadValue as exc:
            raise typer.BadParameter(str(exc)) from None

    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return typing.cast(F, run)
