"""The JSON API, through real requests: auth, personas, validation, events, uploads."""
