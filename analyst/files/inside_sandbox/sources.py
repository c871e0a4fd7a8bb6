"""A stored file opened as its readers take it (gzip or not), and the pandas call that loads it,
as the report gives it."""

import gzip
import io

from .report import Refused, human_size


def open_bytes(path: str, compression: str | None):
    return gzip.open(path, "rb") if compression == "gzip" else open(path, "rb")


def binary_source(path: str, compression: str | None, limits: dict):
    """What pyarrow reads: the path, or (gzip) the decompressed bytes, if small enough."""
    if compression != "gzip":
        return path
    with gzip.open(path, "rb") as file:
        data = file.read(limits["max_unpacked_bytes"] + 1)
    if len(data) > limits["max_unpacked_bytes"]:
        raise Refused(
            f"it unpacks to more than {human_size(limits['max_unpacked_bytes'])}; upload it uncompressed"
        )
    return io.BytesIO(data)


def gzip_load_call(function: str, path: str, kwargs: dict, compression: str | None) -> str:
    if compression != "gzip":
        return load_call(function, path, kwargs)
    arguments = "".join(f", {key}={value!r}" for key, value in kwargs.items())
    return f"{function}(__import__('gzip').open({path!r}){arguments})"


def load_call(function: str, path: str, kwargs: dict) -> str:
    arguments = "".join(f", {key}={value!r}" for key, value in kwargs.items())
    return f"{function}({path!r}{arguments})"
