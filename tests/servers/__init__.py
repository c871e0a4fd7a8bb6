"""Real servers the connection tests reach, each on loopback and cleaned up afterwards: a private
MariaDB, a fresh database on the running Postgres, a local HTTP API and an S3 store (moto)."""
