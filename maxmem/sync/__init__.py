"""Sync: folder sync between your own machines (folder, ledger, changefiles), and the push
to a shared PostgreSQL + pgvector that several agents search (pgconnect, pgschema, pgpush,
pgstatus, pgsearch, terms)."""
