"""The tidy table every stage builds on: a :class:`Table` holds the points (:mod:`.curves`), the
run facts (:mod:`.run_table`) and the x axis (:mod:`.axis`)."""

from saturate.table.table import Table, as_table, concat_tables

__all__ = ["Table", "as_table", "concat_tables"]
