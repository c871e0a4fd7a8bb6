"""The snapshot file: an uncompressed tar of each context's pickled state (opaque bytes to us:
only a kernel unpickles them), the workdir's files, and last a manifest with every member's
CRC-32, so a damaged or truncated file is caught before anything is restored from it.

CRC-32 rather than a cryptographic hash: it guards against damage, not against an attacker
(the store is sandboxd's own), and it is three times faster than SHA-256 here.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from sandboxes.errors import SnapshotCorrupt, SnapshotTooLarge
from sandboxes.server import files

FORMAT = 1
MANIFEST = "manifest.json"
WORKDIR_PREFIX = "workdir/"
CHUNK = 1 << 20


class _Checksummed(io.RawIOBase):
    """Reads through to ``stream``, summing what passes."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.crc = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.crc = zlib.crc32(data, self.crc)
        return data


class ArchiveWriter:
    """Build a snapshot file at ``path`` holding at most ``limit`` bytes."""

    def __init__(self, path: Path, limit: int) -> None:
        self.path = path
        self.limit = limit
        self.tar = tarfile.open(path, "w", format=tarfile.PAX_FORMAT, copybufsize=CHUNK)
        self.checksums: dict[str, int] = {}
        self.skipped: list[str] = []
        self.file_count = 0

    def remaining(self) -> int:
        return self.limit - self.tar.offset

    def add_stream(self, name: str, stream: IO[bytes], size: int, mode: int = 0o644) -> None:
        if size > self.remaining():
            raise too_large(self.limit)
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = size, mode, int(time.time())
        summed = _Checksummed(stream)
        try:
            self.tar.addfile(info, summed)
        except OSError as exc:  # the file shrank while it was read
            raise SnapshotCorrupt(f"{name} changed while the snapshot was taken") from exc
        self.checksums[name] = summed.crc

    def begin_member(self, name: str) -> StreamedMember:
        """A member written as its bytes arrive, its size known only at its end."""
        return StreamedMember(self, name)

    def add_workdir(self, workdir: Path, *, skip: frozenset[str]) -> None:
        """Every folder and regular file of the workdir; links and special files are listed as skipped."""
        for path, fd in files.walk(workdir, skip=skip):
            if fd is None:
                info = tarfile.TarInfo(WORKDIR_PREFIX + path)
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                self.tar.addfile(info)
            elif fd < 0:
                self.skipped.append(files.shown_name(path))
            else:
                with os.fdopen(fd, "rb") as stream:
                    self.add_stream(WORKDIR_PREFIX + path, stream, os.fstat(stream.fileno()).st_size)
                self.file_count += 1

    def finish(self, manifest: dict[str, Any]) -> dict[str, Any]:
        """Write the manifest last and close; the manifest as written."""
        manifest = {
            **manifest,
            "format": FORMAT,
            "files": {"count": self.file_count, "skipped": self.skipped},
            "checksums": self.checksums,
        }
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mtime = len(data), int(time.time())
        self.tar.addfile(info, io.BytesIO(data))
        self.tar.close()
        return manifest

    def abort(self) -> None:
        self.tar.close()
        self.path.unlink(missing_ok=True)


class StreamedMember:
    """A member of unknown size: a placeholder header, the bytes as they come, and at the end the
    header rewritten with the size. GNU headers hold any size in the same block, so the
    rewrite never moves the data (readers take GNU and PAX headers side by side)."""

    def __init__(self, writer: ArchiveWriter, name: str) -> None:
        self.writer = writer
        self.file = writer.tar.fileobj
        assert self.file is not None
        self.info = tarfile.TarInfo(name)
        self.info.mode, self.info.mtime = 0o644, int(time.time())
        self.start = writer.tar.offset
        self.reset()

    def _header(self) -> bytes:
        self.info.size = self.size
        return self.info.tobuf(tarfile.GNU_FORMAT, "utf-8", "surrogateescape")

    def reset(self) -> None:
        """Forget the bytes written so far: another attempt follows."""
        self.file.seek(self.start)
        self.file.truncate()
        self.size = self.crc = 0
        self.header_size = len(self._header())
        self.file.write(self._header())

    def room(self) -> int:
        return self.writer.limit - self.start - self.header_size - self.size

    def write(self, data: memoryview) -> None:
        if len(data) > self.room():
            raise too_large(self.writer.limit)
        self.file.write(data)
        self.size += len(data)
        self.crc = zlib.crc32(data, self.crc)

    def finish(self) -> None:
        remainder = self.size % tarfile.BLOCKSIZE
        if remainder:
            self.file.write(tarfile.NUL * (tarfile.BLOCKSIZE - remainder))
        end = self.file.tell()
        header = self._header()
        assert len(header) == self.header_size  # the name decides its length, not the size
        self.file.seek(self.start)
        self.file.write(header)
        self.file.seek(end)
        self.writer.tar.offset = end
        self.writer.checksums[self.info.name] = self.crc


class ArchiveReader:
    """A snapshot file, checked: its manifest first, each member's checksum as it is read."""

    def __init__(self, path: Path) -> None:
        try:
            self.tar = tarfile.open(path, "r:")
            self.members = {member.name: member for member in self.tar.getmembers()}
            manifest_member = self.members[MANIFEST]
            stream = self.tar.extractfile(manifest_member)
            assert stream is not None
            self.manifest = json.loads(stream.read())
        except (tarfile.TarError, KeyError, ValueError, OSError, AssertionError, EOFError) as exc:
            raise SnapshotCorrupt(f"the snapshot file is damaged or truncated ({describe(exc)})") from None
        if not isinstance(self.manifest, dict) or self.manifest.get("format") != FORMAT:
            raise SnapshotCorrupt("the snapshot file has no manifest this service understands")
        self.checksums: dict[str, int] = self.manifest.get("checksums") or {}

    def close(self) -> None:
        self.tar.close()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_chunks(self, name: str, start: int = 0, length: int | None = None) -> Iterator[memoryview]:
        """The member's bytes (``length`` of them from ``start``: a part of a namespace), read
        straight from the file into one reused buffer (each chunk is valid until the next is
        asked for); SnapshotCorrupt (after the last chunk) if a whole member is not as saved."""
        member = self.members.get(name)
        expected = self.checksums.get(name)
        if member is None or expected is None or not member.isreg():
            raise SnapshotCorrupt(f"the snapshot has no {name}")
        whole = start == 0 and (length is None or length == member.size)
        length = member.size - start if length is None else length
        if start < 0 or length < 0 or start + length > member.size:
            raise SnapshotCorrupt(f"the snapshot's {name} is shorter than its parts")
        buffer = memoryview(bytearray(max(1, min(CHUNK, length))))
        offset, left, crc = member.offset_data + start, length, 0
        fd = self.tar.fileobj.fileno()  # type: ignore[union-attr]
        while left:
            try:
                count = os.preadv(fd, [buffer[: min(left, len(buffer))]], offset)
            except OSError as exc:
                raise SnapshotCorrupt(f"the snapshot's {name} cannot be read ({describe(exc)})") from None
            if not count:
                raise SnapshotCorrupt(f"the snapshot's {name} is truncated")
            chunk = buffer[:count]
            crc = zlib.crc32(chunk, crc)
            yield chunk
            offset, left = offset + count, left - count
        if whole and crc != expected:
            raise SnapshotCorrupt(f"the snapshot's {name} is damaged (checksum mismatch)")

    def copy_to(self, name: str, fd: int) -> None:
        with os.fdopen(fd, "wb") as out:
            for chunk in self.read_chunks(name):
                out.write(chunk)

    def restore_workdir(self, workdir: Path, owner: tuple[int, int] | None) -> None:
        with files.Filler(workdir, owner) as filler:
            for name, member in self.members.items():
                if not name.startswith(WORKDIR_PREFIX):
                    continue
                path = name[len(WORKDIR_PREFIX) :]
                if member.isdir():
                    filler.make_dir(path)
                elif member.isfile():
                    self.copy_to(name, filler.create_file(path))


def too_large(limit: int) -> SnapshotTooLarge:
    return SnapshotTooLarge(f"the snapshot would be larger than the limit of {limit} bytes")


def describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
