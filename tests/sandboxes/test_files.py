"""Files: streamed uploads under a size limit, confined to the workdir, read and listed."""

import io
import os

import pytest

from sandboxes import FileNotFound, FileTooLarge, InvalidPath
from tests.conftest import workdir_of

MAX_UPLOAD = 32 << 20  # SANDBOXD_MAX_UPLOAD in the tests' sandboxd


def test_binary_round_trip(sandbox):
    payload = bytes(range(256)) * 1000
    info = sandbox.files.write("data/blob.bin", payload)
    assert (info.path, info.size) == ("data/blob.bin", len(payload))
    assert sandbox.files.read("data/blob.bin", format="bytes") == payload


def test_a_file_object_is_streamed_in_chunks(sandbox):
    sent = []

    class Recording(io.BytesIO):
        def read(self, size=-1):
            chunk = super().read(size)
            sent.append(len(chunk))
            return chunk

    payload = os.urandom(3 << 20)
    sandbox.files.write("data/big.bin", Recording(payload))
    assert max(sent) < len(payload), "the SDK read the whole file at once"
    assert sandbox.run_code("len(open('data/big.bin', 'rb').read())").text == str(len(payload))


def test_a_large_file_is_read_in_chunks(sandbox):
    sandbox.run_code("open('out.bin', 'wb').write(bytes(range(256)) * 16384)")  # 4 MiB
    chunks = list(sandbox.files.read_chunks("out.bin"))
    assert len(chunks) > 1, "the SDK read the whole file at once"
    assert b"".join(chunks) == bytes(range(256)) * 16384
    with pytest.raises(FileNotFound):
        next(iter(sandbox.files.read_chunks("missing.bin")))


def test_generator_uploads_stream_too(sandbox):
    sandbox.files.write("data/lines.csv", (f"{i}\n".encode() for i in range(1000)))
    assert sandbox.files.read("data/lines.csv").count("\n") == 1000


def test_over_the_limit_is_refused_and_leaves_nothing(sandbox, sandboxd):
    def too_much():  # no content-length: the limit must hold while streaming
        for _ in range(MAX_UPLOAD // (1 << 20) + 2):
            yield b"\0" * (1 << 20)

    with pytest.raises(FileTooLarge):
        sandbox.files.write("data/huge.bin", too_much())
    with pytest.raises(FileTooLarge):
        sandbox.files.write("data/huge.bin", b"\0" * (MAX_UPLOAD + 1))
    leftovers = [p.name for p in workdir_of(sandboxd, sandbox).rglob("*") if p.is_file()]
    assert leftovers == []
    assert [e.name for e in sandbox.files.list("data")] == []


@pytest.mark.parametrize("path", ["../outside.txt", "data/../../outside.txt", "/etc/passwd", "", "a\0b"])
def test_paths_leaving_the_workdir_are_refused(sandbox, path):
    with pytest.raises(InvalidPath):
        sandbox.files.write(path, b"x")
    with pytest.raises(InvalidPath):
        sandbox.files.read(path)


def test_symlinks_pointing_out_are_not_followed(sandbox, sandboxd):
    sandbox.run_code("import os; os.symlink('/', 'root'); os.symlink('/etc/passwd', 'passwd')")
    for path in ("root/etc/passwd", "passwd"):
        with pytest.raises(InvalidPath):
            sandbox.files.read(path)
    with pytest.raises(InvalidPath):
        sandbox.files.write("root/tmp/planted", b"x")
    with pytest.raises(InvalidPath):
        sandbox.files.list("root")
    assert {e.name: e.type for e in sandbox.files.list()}["root"] == "symlink"


def test_missing_files(sandbox):
    with pytest.raises(FileNotFound):
        sandbox.files.read("nope.csv")
    with pytest.raises(FileNotFound):
        sandbox.files.list("no/such/folder")


def test_two_sandboxes_never_see_each_others_files(make_sandbox):
    first, second = make_sandbox(), make_sandbox()
    first.files.write("mine.csv", "a\n")
    with pytest.raises(FileNotFound):
        second.files.read("mine.csv")
    assert second.run_code("import os; os.path.exists('mine.csv')").text == "False"
