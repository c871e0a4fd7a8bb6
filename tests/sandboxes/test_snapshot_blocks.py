"""A saved namespace is checked a MiB at a time: any range of it reads back as written, and a
damaged block is refused before any of its bytes are handed on (the whole member's checksum
would speak only after the last byte, and never for a part read alone)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from sandboxes.errors import SnapshotCorrupt
from sandboxes.server.snapshots.archive import CHUNK, ArchiveReader, ArchiveWriter

MEMBER = "contexts/c.pkl"
SIZE = 3 * CHUNK + CHUNK // 2


def written(path: Path, data: bytes) -> Path:
    """A snapshot file holding ``data`` as a streamed member, written in pieces of odd sizes."""
    writer = ArchiveWriter(path, limit=1 << 30)
    member = writer.begin_member(MEMBER)
    pieces = random.Random(7)
    at = 0
    while at < len(data):
        size = pieces.choice([1, 4095, 65536, 700_000, CHUNK + 3])
        member.write(memoryview(data[at : at + size]))
        at += size
    member.finish()
    writer.finish({})
    return path


def read(path: Path, start: int, length: int | None = None) -> bytes:
    with ArchiveReader(path) as reader:
        return b"".join(bytes(chunk) for chunk in reader.read_chunks(MEMBER, start, length))


@pytest.fixture
def data() -> bytes:
    return random.Random(1).randbytes(SIZE)


@pytest.mark.parametrize(
    ("start", "length"),
    [
        (0, None),
        (0, SIZE),
        (1, CHUNK),
        (CHUNK - 1, 2),
        (CHUNK, CHUNK),
        (SIZE - 5, 5),
        (2 * CHUNK + 9, 0),
        (SIZE, 0),
    ],
)
def test_any_range_reads_back_as_written(tmp_path, data, start, length):
    path = written(tmp_path / "s.snapshot", data)
    end = SIZE if length is None else start + length
    assert read(path, start, length) == data[start:end]


def test_the_manifest_holds_one_checksum_a_block(tmp_path, data):
    with ArchiveReader(written(tmp_path / "s.snapshot", data)) as reader:
        assert len(reader.block_checksums[MEMBER]) == 4
        assert MEMBER not in reader.checksums


def test_a_damaged_block_is_refused_before_its_bytes_are_handed_on(tmp_path, data):
    path = written(tmp_path / "s.snapshot", data)
    with ArchiveReader(path) as reader:
        offset = reader.members[MEMBER].offset_data
    damaged = bytearray(path.read_bytes())
    damaged[offset + 2 * CHUNK + 100] ^= 0x01
    path.write_bytes(damaged)

    assert read(path, 0, 2 * CHUNK) == data[: 2 * CHUNK]  # blocks 0 and 1 are intact
    handed_on = []
    with ArchiveReader(path) as reader, pytest.raises(SnapshotCorrupt, match="damaged"):
        for chunk in reader.read_chunks(MEMBER, CHUNK + 10, CHUNK):
            handed_on.append(bytes(chunk))
    assert b"".join(handed_on) == data[CHUNK + 10 : 2 * CHUNK]  # block 1's bytes, none of block 2's


def test_a_member_shorter_than_its_checksums_say_is_refused(tmp_path, data):
    path = written(tmp_path / "s.snapshot", data[:CHUNK])
    with ArchiveReader(path) as reader:
        reader.block_checksums[MEMBER].append(0)
        with pytest.raises(SnapshotCorrupt, match="does not match its checksums"):
            list(reader.read_chunks(MEMBER))
