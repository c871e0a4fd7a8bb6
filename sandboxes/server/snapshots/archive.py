"""The snapshot file: an uncompressed tar of each context's pickled state (opaque bytes to us:
only a kernel unpickles them), the workdir's files, and last a manifest with every member's
CRC-32, so a damaged or truncated file is caught before anything is restored from it. A
context's state has a CRC-32 for each MiB instead: its parts are read one at a time, some long
after the restore (deferred.py), and each block is checked before any of its bytes reach a kernel.

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
        self.block_checksums: dict[str, list[int]] = {}  # a CRC-32 for each CHUNK of a member
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
            "block_size": CHUNK,
            "block_checksums": self.block_checksums,
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
    """A member of unknown size: a placeholder header, the bytes as they come (a CRC-32 for each
    CHUNK of them), and at the end the header rewritten with the size. GNU headers hold any size
    in the same block, so the rewrite never moves the data (readers take GNU and PAX headers side
    by side)."""

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
        self.blocks: list[int] = []  # the CRC-32 of each whole CHUNK so far; self.crc: the rest
        self.header_size = len(self._header())
        self.file.write(self._header())

    def room(self) -> int:
        return self.writer.limit - self.start - self.header_size - self.size

    def write(self, data: memoryview) -> None:
        if len(data) > self.room():
            raise too_large(self.writer.limit)
        self.file.write(data)
        while data:
            piece = data[: CHUNK - self.size % CHUNK]
            self.crc = zlib.crc32(piece, self.crc)
            self.size += len(piece)
            data = data[len(piece) :]
            if self.size % CHUNK == 0:
                self.blocks.append(self.crc)
                self.crc = 0

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
        self.writer.block_checksums[self.info.name] = self.blocks + ([self.crc] if self.size % CHUNK else [])


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
        self.block_checksums: dict[str, list[int]] = self.manifest.get("block_checksums") or {}
        if self.block_checksums and self.manifest.get("block_size") != CHUNK:
            raise SnapshotCorrupt("the snapshot file's checksums are of blocks this service does not read")

    def close(self) -> None:
        self.tar.close()

    def __enter__(self) -> ArchiveReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def read_chunks(self, name: str, start: int = 0, length: int | None = None) -> Iterator[memoryview]:
        """The member's bytes (``length`` of them from ``start``: a part of a namespace), read
        straight from the file into one reused buffer (each chunk is valid until the next is
        asked for). SnapshotCorrupt if they are not as saved: a member summed by blocks before a
        damaged block is handed on, one summed whole after its last chunk (a whole read only)."""
        member = self.members.get(name)
        expected, blocks = self.checksums.get(name), self.block_checksums.get(name)
        if member is None or (expected is None and blocks is None) or not member.isreg():
            raise SnapshotCorrupt(f"the snapshot has no {name}")
        length = member.size - start if length is None else length
        if start < 0 or length < 0 or start + length > member.size:
            raise SnapshotCorrupt(f"the snapshot's {name} is shorter than its parts")
        if blocks is not None:
            return self._read_checked_blocks(member, blocks, start, length)
        return self._read_summed(member, expected, start, length)

    def _read_checked_blocks(
        self, member: tarfile.TarInfo, blocks: list[int], start: int, length: int
    ) -> Iterator[memoryview]:
        """The range's bytes, a whole CHUNK read and checked at a time."""
        if len(blocks) != -(-member.size // CHUNK):
            raise SnapshotCorrupt(f"the snapshot's {member.name} does not match its checksums")
        buffer = memoryview(bytearray(CHUNK))
        end = start + length
        for index in range(start // CHUNK, -(-end // CHUNK)):
            begins = index * CHUNK
            block = buffer[: min(CHUNK, member.size - begins)]
            self._read_fully(member, block, begins)
            if zlib.crc32(block) != blocks[index]:
                raise SnapshotCorrupt(f"the snapshot's {member.name} is damaged (checksum mismatch)")
            yield block[max(start - begins, 0) : min(end - begins, len(block))]

    def _read_summed(
        self, member: tarfile.TarInfo, expected: int | None, start: int, length: int
    ) -> Iterator[memoryview]:
        """The range's bytes; the member's one checksum is checked after its last chunk, and only
        on a whole read (a snapshot written before block checksums: a part is not checked)."""
        whole = start == 0 and length == member.size
        buffer = memoryview(bytearray(max(1, min(CHUNK, length))))
        crc, done = 0, 0
        while done < length:
            chunk = buffer[: self._read_some(member, buffer[: min(length - done, len(buffer))], start + done)]
            crc = zlib.crc32(chunk, crc)
            yield chunk
            done += len(chunk)
        if whole and crc != expected:
            raise SnapshotCorrupt(f"the snapshot's {member.name} is damaged (checksum mismatch)")

    def _read_fully(self, member: tarfile.TarInfo, into: memoryview, at: int) -> None:
        done = 0
        while done < len(into):
            done += self._read_some(member, into[done:], at + done)

    def _read_some(self, member: tarfile.TarInfo, into: memoryview, at: int) -> int:
        """Read into ``into`` from ``at`` in the member's data; how many bytes (never 0)."""
        fd = self.tar.fileobj.fileno()  # type: ignore[union-attr]
        try:
            count = os.preadv(fd, [into], member.offset_data + at)
        except OSError as exc:
            raise SnapshotCorrupt(f"the snapshot's {member.name} cannot be read ({describe(exc)})") from None
        if not count:
            raise SnapshotCorrupt(f"the snapshot's {member.name} is truncated")
        return count

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
