"""Exporters that copy brain.db to a shared store (PostgreSQL + pgvector)."""
