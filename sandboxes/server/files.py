"""Files in a sandbox's workdir, walked with O_NOFOLLOW so no path or symlink ever leads out.

Everything here blocks: sandboxd calls it in a worker thread, never on its event loop. A kernel
shapes the tree at will (any names, any depth, swapped under us), so nothing recurses and every
failure of the file system is an error the API answers with.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path, PurePosixPath

from sandboxes.errors import FileNotFound, FileTooLarge, InvalidPath, InvalidRequest, QuotaExceeded

CHUNK = 256 << 10
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
FIFO_WRITE_FLAGS = os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
FIFO_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
WRITE_BATCH = 1 << 20  # an upload is written in pieces of about this size, each in a worker thread
MAX_PAGE_FACTOR = 10  # a listing's page may be at most this many times the default
HIDDEN = (".upload-", ".removing-")  # our own, while an upload or a removal is under way
OPEN_CHAIN = 128  # folders a walk keeps open along its path; deeper ones are reached from the last


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
            try:
                child = _open_child(fd, name, create=create, owner=owner)
            except OSError as exc:
                raise _path_error(exc, "/".join(parts[: index + 1])) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_child(fd: int, name: str, *, create: bool, owner: tuple[int, int] | None) -> int:
    """The folder ``name`` in ``fd`` (made first, with ``create``, where it is missing)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=fd)
    except FileNotFoundError:
        if not create:
            raise
    with contextlib.suppress(FileExistsError):
        os.mkdir(name, 0o755, dir_fd=fd)
        if owner:
            os.chown(name, *owner, dir_fd=fd, follow_symlinks=False)
    return os.open(name, DIR_FLAGS, dir_fd=fd)


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
    The file (and any folder made for it) belongs to ``owner`` where given. The file work runs
    in worker threads; a folder on the way swapped for a link is never followed."""
    *folders, name = split(path) or [""]
    if not name:
        raise InvalidPath("a file name is required")
    upload = await asyncio.to_thread(_Upload, workdir, folders, owner)
    size, pending, pending_size = 0, [], 0
    try:
        async for chunk in chunks:
            size += len(chunk)
            if size > max_bytes:
                raise FileTooLarge(f"the file is larger than the limit of {max_bytes} bytes")
            pending.append(chunk)
            pending_size += len(chunk)
            if pending_size >= WRITE_BATCH:
                await asyncio.to_thread(upload.write, b"".join(pending))
                pending, pending_size = [], 0
        await asyncio.to_thread(upload.finish, b"".join(pending), name, path)
    except BaseException:
        await asyncio.to_thread(upload.abort)
        raise
    return size


class _Upload:
    """A hidden temporary file in the upload's folder, renamed into place once whole."""

    def __init__(self, workdir: Path, folders: list[str], owner: tuple[int, int] | None) -> None:
        self.temp = f".upload-{secrets.token_hex(8)}"
        with open_dir(workdir, folders, create=True, owner=owner) as dir_fd:
            self.dir_fd = os.dup(dir_fd)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            self.fd = os.open(self.temp, flags, 0o644, dir_fd=self.dir_fd)
            if owner:
                os.fchown(self.fd, *owner)
        except OSError as exc:
            self.abort()
            raise _path_error(exc, "/".join(folders)) from None

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view) :]
        except OSError as exc:
            raise _path_error(exc, self.temp) from None

    def finish(self, data: bytes, name: str, shown: str) -> None:
        self.write(data)
        try:
            os.rename(self.temp, name, src_dir_fd=self.dir_fd, dst_dir_fd=self.dir_fd)
        except OSError as exc:
            if exc.errno == errno.EISDIR:
                raise InvalidPath(f"{shown!r} is a folder") from None
            raise _path_error(exc, shown) from None
        self.temp = ""
        self.abort()

    def abort(self) -> None:
        """Remove the temporary file (if still there) and close; safe to call twice."""
        if getattr(self, "fd", -1) >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.dir_fd >= 0:
            if self.temp:
                with contextlib.suppress(OSError):  # its folder may have been removed under us
                    os.unlink(self.temp, dir_fd=self.dir_fd)
            os.close(self.dir_fd)
            self.dir_fd = -1


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


def list_page(workdir: Path, path: str, *, limit: int, cursor: str | None = None) -> dict[str, object]:
    """One page of the folder at ``path``: folders first, then by name; at most ``limit`` entries
    from the position ``cursor`` names (an earlier page's ``next``). ``truncated`` says more
    follow. Only the page's entries are looked at closely, so a huge folder costs one pass over
    its names. A name that is not UTF-8 is shown escaped (``\\xff``) and marked ``undecodable``."""
    start = _position(cursor)
    parts = split(path) if path not in ("", ".") else []
    prefix = "/".join(parts)
    with open_dir(workdir, parts) as dir_fd:
        names = _names_folders_first(dir_fd)
        entries = []
        for _, name in names[start : start + limit]:
            try:
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue  # gone since the folder was read
            entries.append(_entry(prefix, name, info))
    more = start + limit < len(names)
    return {"entries": entries, "truncated": more, "next": str(start + limit) if more else None}


def check_page_limit(raw: str | None, default: int) -> int:
    """The ``limit`` a listing was asked for: a whole number from 1 to MAX_PAGE_FACTOR * default."""
    if raw in (None, ""):
        return default
    ceiling = MAX_PAGE_FACTOR * default
    if not raw.isdigit() or not 1 <= int(raw) <= ceiling:
        raise InvalidRequest(f"limit must be a whole number from 1 to {ceiling}")
    return int(raw)


def _position(cursor: str | None) -> int:
    if cursor in (None, ""):
        return 0
    if not cursor.isdigit() or len(cursor) > 12:
        raise InvalidRequest("cursor must be the 'next' of an earlier page")
    return int(cursor)


def _names_folders_first(dir_fd: int) -> list[tuple[bool, str]]:
    with os.scandir(dir_fd) as scan:
        names = [(not _is_dir(entry), entry.name) for entry in scan if not entry.name.startswith(HIDDEN)]
    names.sort()
    return [(not not_dir, name) for not_dir, name in names]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _entry(prefix: str, name: str, info: os.stat_result) -> dict[str, object]:
    kind = "dir" if stat.S_ISDIR(info.st_mode) else "symlink" if stat.S_ISLNK(info.st_mode) else "file"
    shown = shown_name(name)
    entry: dict[str, object] = {
        "name": shown,
        "path": f"{prefix}/{shown}" if prefix else shown,
        "type": kind,
        "size": info.st_size,
        "modified": info.st_mtime,
    }
    if shown != name:
        entry["undecodable"] = True
    return entry


def shown_name(name: str) -> str:
    """``name`` as text that encodes: bytes that are not UTF-8 are written as ``\\xff``."""
    try:
        name.encode()
    except UnicodeEncodeError:
        return os.fsencode(name).decode(errors="backslashreplace")
    return name


def walk(workdir: Path, *, skip: frozenset[str] = frozenset()) -> Iterator[tuple[str, int | None]]:
    """Every folder and regular file under ``workdir`` as (relative path, descriptor or None for a
    folder), parents first; links and special files come as (path, -1). Descriptors are the
    caller's to close. Top-level names in ``skip`` are left out. Iterative, with at most
    OPEN_CHAIN folders open, so a tree of any depth is walked."""
    chain = _Chain(workdir)
    try:
        pending: list[list[str]] = [[]]  # folders still to read, as their components
        while pending:
            parts = pending.pop()
            dir_fd = chain.open(parts)
            prefix = "".join(f"{part}/" for part in parts)
            folders = []
            for name in sorted(os.listdir(dir_fd)):
                if not parts and name in skip or name.startswith(HIDDEN):
                    continue
                path = f"{prefix}{name}"
                info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    yield path, None
                    folders.append([*parts, name])
                elif stat.S_ISREG(info.st_mode):
                    yield path, os.open(name, READ_FLAGS, dir_fd=dir_fd)
                else:
                    yield path, -1
            pending.extend(reversed(folders))  # depth first, in name order
    finally:
        chain.close()


class _Chain:
    """Descriptors of the folders along the walk's current path (the first OPEN_CHAIN of them),
    and of the folder last opened below those, from which its subfolders are reached."""

    def __init__(self, workdir: Path, *, create: bool = False, owner: tuple[int, int] | None = None) -> None:
        self.fds = [os.open(workdir, DIR_FLAGS)]
        self.create, self.owner = create, owner
        self.parts: list[str] = []
        self.extra, self.extra_parts = -1, []  # type: tuple[int, list[str]]

    def open(self, parts: list[str]) -> int:
        if self.extra >= 0 and parts[: len(self.extra_parts)] == self.extra_parts:
            base, rest = self.extra, parts[len(self.extra_parts) :]  # one level down, in a deep walk
        else:
            self._close_extra()
            common = 0
            while common < min(len(parts), len(self.parts)) and parts[common] == self.parts[common]:
                common += 1
            while len(self.parts) > common:
                self.parts.pop()
                os.close(self.fds.pop())
            while len(self.parts) < len(parts) and len(self.fds) <= OPEN_CHAIN:
                self.fds.append(self._child(self.fds[-1], parts[len(self.parts)]))
                self.parts.append(parts[len(self.parts)])
            base, rest = self.fds[-1], parts[len(self.parts) :]
        if not rest:
            return base
        owned = base == self.extra  # ours to close once its child is open
        self.extra, self.extra_parts = -1, []
        try:
            for name in rest:
                child = self._child(base, name)
                if owned:
                    os.close(base)
                base, owned = child, True
        except BaseException:
            if owned:
                os.close(base)
            raise
        self.extra, self.extra_parts = base, list(parts)
        return base

    def _child(self, fd: int, name: str) -> int:
        return _open_child(fd, name, create=self.create, owner=self.owner)

    def _close_extra(self) -> None:
        if self.extra >= 0:
            os.close(self.extra)
        self.extra, self.extra_parts = -1, []

    def close(self) -> None:
        self._close_extra()
        for fd in self.fds:
            os.close(fd)


class Filler:
    """Folders and files made one after another in a workdir (a snapshot's, put back), each
    folder reached from the last ones opened rather than from the top: a deep tree takes time
    in proportion to its size. Links are never followed."""

    def __init__(self, workdir: Path, owner: tuple[int, int] | None) -> None:
        self.chain = _Chain(workdir, create=True, owner=owner)
        self.owner = owner

    def __enter__(self) -> Filler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.chain.close()

    def make_dir(self, path: str) -> None:
        self._folder(split(path))

    def create_file(self, path: str) -> int:
        """A new, empty regular file at ``path`` for writing; its descriptor."""
        *folders, name = split(path)
        dir_fd = self._folder(folders)
        try:
            fd = os.open(name, CREATE_FLAGS, 0o644, dir_fd=dir_fd)
        except OSError as exc:
            raise _path_error(exc, path) from None
        if self.owner:
            os.fchown(fd, *self.owner)
        return fd

    def _folder(self, parts: list[str]) -> int:
        try:
            return self.chain.open(parts)
        except OSError as exc:
            raise _path_error(exc, "/".join(parts)) from None


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
        try:
            if stat.S_ISDIR(info.st_mode):
                _remove_folder(dir_fd, name)
            else:
                os.unlink(name, dir_fd=dir_fd)
        except OSError as exc:  # the kernel changed the tree under us
            raise _path_error(exc, path) from None


def _remove_folder(parent_fd: int, name: str) -> None:
    """shutil.rmtree without its recursion, so a tree of any depth goes: depth first, with at
    most OPEN_CHAIN folders open; a subtree below that is moved up beside ``name`` (a hidden
    name) and removed in its turn."""
    detached = [name]
    while detached:
        stack = [_emptied(parent_fd, detached.pop())]
        try:
            while stack:
                fd, folder, subfolders = stack[-1]
                if not subfolders:
                    stack.pop()
                    os.close(fd)
                    os.rmdir(folder, dir_fd=stack[-1][0] if stack else parent_fd)
                elif len(stack) < OPEN_CHAIN:
                    stack.append(_emptied(fd, subfolders.pop()))
                else:
                    hidden = f".removing-{secrets.token_hex(8)}"
                    os.rename(subfolders.pop(), hidden, src_dir_fd=fd, dst_dir_fd=parent_fd)
                    detached.append(hidden)
        finally:
            for fd, _, _ in stack:
                os.close(fd)


def _emptied(dir_fd: int, name: str) -> tuple[int, str, list[str]]:
    """Open the folder ``name``, delete what it holds but folders; (descriptor, name, folders)."""
    fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    folders = []
    try:
        for child in os.listdir(fd):
            if stat.S_ISDIR(os.stat(child, dir_fd=fd, follow_symlinks=False).st_mode):
                folders.append(child)
            else:
                os.unlink(child, dir_fd=fd)
    except BaseException:
        os.close(fd)
        raise
    return fd, name, folders


def remove(workdir: Path, path: str) -> None:
    """Delete the file at ``path`` if it is there."""
    *folders, name = split(path)
    with contextlib.suppress(FileNotFound, InvalidPath), open_dir(workdir, folders) as dir_fd:
        with contextlib.suppress(FileNotFoundError, IsADirectoryError):
            os.unlink(name, dir_fd=dir_fd)
