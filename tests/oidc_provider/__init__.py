"""A real OpenID provider for the single sign-on tests: django-oauth-toolkit with OpenID Connect,
run as a process of its own (its own settings and SQLite database) on a loopback port."""
