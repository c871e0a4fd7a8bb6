"""Files in a sandbox's workdir, walked with O_NOFOLLOW so no path or symlink ever leads out."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path, PurePosixPath

from sandboxes.errors import FileNotFound, FileTooLarge, InvalidPath, QuotaExceeded

CHUNK = 256 << 10
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
FIFO_WRITE_FLAGS = os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
FIFO_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC


def split(path: str) -> list[str]:
    """The components of a relative path inside the workdir; InvalidPath for anything else."""
    if not path or "\x00" in path:
        raise InvalidPath("a file path is required")
    pure = PurePosixPath(path)
    if pure.is_absolute():
        raise InvalidPath(f"{path!r} is absolute; paths are relative to the sandbox's workdir")
    parts = [p for p in pure.parts if p != "."]
    if ".." in parts:
        raise InvalidPath(f"{path!r} leaves the workdir ('..' is not allowed)")
    return parts


@contextlib.contextmanager
def open_dir(
    workdir: Path, parts: list[str], *, create: bool = False, owner: tuple[int, int] | None = None
) -> Iterator[int]:
    """A descriptor of the folder ``parts`` under ``workdir``; no component may be a symlink.
    With ``create``, missing folders are made (belonging to ``owner`` where given)."""
    fd = os.open(workdir, DIR_FLAGS)
    try:
        for index, name in enumerate(parts):
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, 0o755, dir_fd=fd)
                    if owner:
                        os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
            try:
                child = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _path_error(exc, "/".join(parts[: index + 1])) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _path_error(exc: OSError, shown: str) -> Exception:
    if exc.errno == errno.ENOENT:
        return FileNotFound(f"{shown!r} does not exist")
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        return InvalidPath(f"{shown!r} is a symbolic link or not a folder; links are not followed")
    if exc.errno == errno.ENOSPC:
        return QuotaExceeded("the sandbox's disk quota is full")
    return InvalidPath(f"{shown!r}: {exc.strerror}")


async def write(
    workdir: Path,
    path: str,
    chunks: AsyncIterator[bytes],
    *,
    max_bytes: int,
    owner: tuple[int, int] | None = None,
) -> int:
    """Stream ``chunks`` to ``path`` atomically: a failed or oversized upload leaves nothing.
    The file (and any folder made for it) belongs to ``owner`` where given."""
    *folders, name = split(path) or [""]
    if not name:
        raise InvalidPath("a file name is required")
    with open_dir(workdir, folders, create=True, owner=owner) as dir_fd:
        temp = f".upload-{secrets.token_hex(8)}"
        fd = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dir_fd
        )
        size = 0
        try:
            if owner:
                os.fchown(fd, *owner)
            with os.fdopen(fd, "wb", closefd=True) as out:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise FileTooLarge(f"the file is larger than the limit of {max_bytes} bytes")
                    out.write(chunk)
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            os.unlink(temp, dir_fd=dir_fd)
            if exc.errno == errno.EISDIR:
                raise InvalidPath(f"{path!r} is a folder") from None
            raise _path_error(exc, path) from None
        except BaseException:
            os.unlink(temp, dir_fd=dir_fd)
            raise
    return size


def open_for_read(workdir: Path, path: str) -> tuple[int, int]:
    """(descriptor, size) of the regular file at ``path``."""
    *folders, name = split(path) or [""]
    with open_dir(workdir, folders) as dir_fd:
        try:
            fd = os.open(name, READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            raise _path_error(exc, path) from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InvalidPath(f"{path!r} is not a regular file")
    return fd, info.st_size


def iter_file(fd: int) -> Iterator[bytes]:
    with os.fdopen(fd, "rb") as stream:
        while chunk := stream.read(CHUNK):
            yield chunk


def list_dir(workdir: Path, path: str) -> list[dict[str, object]]:
    parts = split(path) if path not in ("", ".") else []
    prefix = "/".join(parts)
    entries = []
    with open_dir(workdir, parts) as dir_fd, os.scandir(dir_fd) as scan:
        for entry in scan:
            if entry.name.startswith(".upload-"):
                continue
            info = entry.stat(follow_symlinks=False)
            kind = (
                "dir" if stat.S_ISDIR(info.st_mode) else "symlink" if stat.S_ISLNK(info.st_mode) else "file"
            )
            entries.append(
                {
                    "name": entry.name,
                    "path": f"{prefix}/{entry.name}" if prefix else entry.name,
                    "type": kind,
                    "size": info.st_size,
                    "modified": info.st_mtime,
                }
            )
    return sorted(entries, key=lambda e: (e["type"] != "dir", str(e["name"])))


def walk(workdir: Path, *, skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, int | None]]:
    """Every folder and regular file under ``workdir`` as (relative path, descriptor or None for a
    folder), parents first; links and special files come as (path, -1). Descriptors are the
    caller's to close. Top-level names in ``skip`` are left out."""
    root = os.open(workdir, DIR_FLAGS)
    try:
        yield from _walk_fd(root, "", skip)
    finally:
        os.close(root)


def _walk_fd(dir_fd: int, prefix: str, skip: frozenset[str]) -> Iterator[tuple[str, int | None]]:
    for name in sorted(os.listdir(dir_fd)):
        if not prefix and name in skip or name.startswith(".upload-"):
            continue
        path = f"{prefix}{name}"
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISDIR(info.st_mode):
            child = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
            try:
                yield path, None
                yield from _walk_fd(child, path + "/", skip)
            finally:
                os.close(child)
        elif stat.S_ISREG(info.st_mode):
            yield path, os.open(name, READ_FLAGS, dir_fd=dir_fd)
        else:
            yield path, -1


def create_file(workdir: Path, path: str, *, owner: tuple[int, int] | None = None) -> int:
    """A new, empty regular file at ``path`` (its folders made) for writing; its descriptor."""
    *folders, name = split(path)
    with open_dir(workdir, folders, create=True, owner=owner) as dir_fd:
        try:
            fd = os.open(name, CREATE_FLAGS, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            raise _path_error(exc, path) from None
    if owner:
        os.fchown(fd, *owner)
    return fd


def make_fifo(workdir: Path, path: str, *, owner: tuple[int, int] | None = None) -> None:
    """A named pipe at ``path`` (its folders made), readable by ``owner`` where given."""
    *folders, name = split(path)
    with open_dir(workdir, folders, create=True, owner=owner) as dir_fd:
        try:
            os.mkfifo(name, 0o600, dir_fd=dir_fd)
            if owner:
                os.chown(name, *owner, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as exc:
            raise _path_error(exc, path) from None


def open_fifo_for_writing(workdir: Path, path: str) -> int | None:
    """A non-blocking descriptor of the named pipe at ``path`` once a reader has it open; None
    while none has. InvalidPath if ``path`` is not a named pipe (nothing is written to it then)."""
    return _open_fifo(workdir, path, FIFO_WRITE_FLAGS)


def open_fifo_for_reading(workdir: Path, path: str) -> int:
    """A non-blocking descriptor of the named pipe at ``path``; InvalidPath if it is not one."""
    fd = _open_fifo(workdir, path, FIFO_READ_FLAGS)
    assert fd is not None  # only a writer waits for the other end
    return fd


def _open_fifo(workdir: Path, path: str, flags: int) -> int | None:
    *folders, name = split(path)
    with open_dir(workdir, folders) as dir_fd:
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # opened for writing, with no reader yet
                return None
            raise _path_error(exc, path) from None
    if not stat.S_ISFIFO(os.fstat(fd).st_mode):
        os.close(fd)
        raise InvalidPath(f"{path!r} is not a named pipe")
    return fd


def make_dir(workdir: Path, path: str, *, owner: tuple[int, int] | None = None) -> None:
    with open_dir(workdir, split(path), create=True, owner=owner):
        pass


def remove_tree(workdir: Path, path: str) -> None:
    """Delete the file or the folder, with all it holds, at ``path``: links inside are removed,
    never followed. FileNotFound when nothing is there."""
    parts = split(path)
    if not parts:
        raise InvalidPath("say which file or folder to remove; the workdir itself cannot be")
    *folders, name = parts
    with open_dir(workdir, folders) as dir_fd:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            raise FileNotFound(f"{path!r} does not exist") from None
        if stat.S_ISDIR(info.st_mode):
            shutil.rmtree(name, dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)


def remove(workdir: Path, path: str) -> None:
    """Delete the file at ``path`` if it is there."""
    *folders, name = split(path)
    with contextlib.suppress(FileNotFound, InvalidPath), open_dir(workdir, folders) as dir_fd:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            os.unlink(name, dir_fd=dir_fd)
