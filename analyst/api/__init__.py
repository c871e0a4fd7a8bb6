"""The JSON API, for scripts and for the browser app: thin views over the services."""
