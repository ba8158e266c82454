"""Request bodies of the front doors built on FastAPI: read strictly, as JSON means them. A
number is not a string, a boolean is not a number, and a field nobody declared is an error
(a typo would otherwise be ignored in silence)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Body(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
