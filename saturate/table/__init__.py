"""The tidy table every stage builds on: a :class:`Table` (:mod:`.table`) holds the points
(:mod:`.curves`, their cells cleaned by :mod:`.cells`, their order by :mod:`.row_order`), the run
facts beside them (:mod:`.run_table`) and the x axis (:mod:`.axis`)."""

from saturate.table.table import Table, as_table, concat_tables

__all__ = ["Table", "as_table", "concat_tables"]
