"""zkr-postgres: zkr databases replicated into PostgreSQL (pgvector), served per person."""
