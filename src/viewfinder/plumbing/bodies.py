"""Request bodies of the front doors built on FastAPI: read strictly, as JSON means them. A
number is not a string, a boolean is not a number, and a field nobody declared is an error
(a typo would otherwise be ignored in silence)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field
from pydantic_core import PydanticCustomError


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


def _whole_number(value: Any) -> Any:
    """JSON's integers: 3 and 3.0 (the same number), never true or "3"."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PydanticCustomError("int_type", "Input should be a valid integer")
    if isinstance(value, float):
        if not value.is_integer():
            raise PydanticCustomError("int_from_float", "Input should be a whole number")
        return int(value)
    return value


JsonInt = Annotated[int, Field(strict=False), BeforeValidator(_whole_number)]
