"""SQLite engines: every connection set up with the pragmas its use needs, and transactions
begun explicitly, in the mode given (Python's sqlite3 would begin them on its own)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import Engine, create_engine, event


def sqlite_engine(url: str, *, begin: str, pragmas: Iterable[str], timeout: float) -> Engine:
    """An engine whose connections run ``PRAGMA p`` for each of ``pragmas`` when opened, wait
    ``timeout`` seconds for a lock and start each transaction with ``BEGIN {begin}``."""
    engine = create_engine(url, connect_args={"timeout": timeout, "check_same_thread": False})
    pragmas = tuple(pragmas)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # transactions are begun below, explicitly
        cursor = dbapi_connection.cursor()
        for pragma in pragmas:
            cursor.execute(f"PRAGMA {pragma}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(f"BEGIN {begin}")

    return engine
