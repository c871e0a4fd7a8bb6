"""The analyst agent: model providers, the tool loop and its tools."""
