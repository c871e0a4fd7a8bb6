"""The analyst Django app: sessions, the agent and the browser UI."""
