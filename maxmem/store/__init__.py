"""brain.db: the connection, the schema, and the write path below Brain.

`db` wraps the apsw connection (pragmas, sqlite-vec, `atomic()`) and `migrations`
holds the append-only schema: the bottom floor. A write's first step is `records`
(input checked, secrets out, the row's values) and its last is `rows` (the rows with
their change log, `changes`, and the search indexes' derived state: vectors and
neighbour windows); `usage` writes recall counts in batches, off the search path.
"""
