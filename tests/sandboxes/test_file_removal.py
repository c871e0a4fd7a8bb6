"""Removing files: a file or a whole folder goes, links in it are removed and never followed,
and nothing outside the workdir can be named."""

import pytest

from sandboxes import AsyncSandbox, FileNotFound, InvalidPath
from tests.conftest import workdir_of


def names(sandbox, folder="."):
    return sorted(entry.name for entry in sandbox.files.list(folder))


def test_a_file_is_removed_and_its_neighbours_stay(sandbox):
    sandbox.files.write("data/a.csv", b"a\n1\n")
    sandbox.files.write("data/b.csv", b"b\n2\n")
    sandbox.files.remove("data/a.csv")
    assert names(sandbox, "data") == ["b.csv"]
    assert sandbox.run_code("import os; os.path.exists('data/a.csv')").text == "False"


def test_a_folder_goes_with_all_it_holds(sandbox):
    sandbox.run_code(
        "import os; os.makedirs('data/pack/deep/er'); open('data/pack/deep/er/x.csv', 'w').write('1')"
    )
    sandbox.files.write("data/pack/y.csv", b"2")
    sandbox.files.remove("data/pack")
    assert names(sandbox, "data") == []


def test_a_link_inside_is_removed_not_followed(sandbox, sandboxd, tmp_path):
    """A kernel can plant a link to a host folder it cannot see; removing the folder that holds
    it must not delete what the link points at."""
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    sandbox.files.write("data/pack/x.csv", b"1")
    (workdir_of(sandboxd, sandbox) / "data" / "pack" / "link").symlink_to(outside)
    sandbox.files.remove("data/pack")
    assert (outside / "keep.txt").read_text() == "mine"
    assert names(sandbox, "data") == []


def test_a_link_as_the_path_itself_is_removed_not_followed(sandbox, sandboxd, tmp_path):
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    sandbox.files.write("data/x.csv", b"1")
    (workdir_of(sandboxd, sandbox) / "data" / "link").symlink_to(outside)
    sandbox.files.remove("data/link")
    assert (outside / "keep.txt").read_text() == "mine"
    assert names(sandbox, "data") == ["x.csv"]


@pytest.mark.parametrize("path", ["", ".", "..", "../x", "/etc/passwd", "data/../../x"])
def test_the_workdir_and_paths_outside_it_cannot_be_removed(sandbox, path):
    sandbox.files.write("data/x.csv", b"1")
    with pytest.raises(InvalidPath):
        sandbox.files.remove(path)
    assert names(sandbox, "data") == ["x.csv"]


def test_removing_what_is_not_there_says_so(sandbox):
    with pytest.raises(FileNotFound):
        sandbox.files.remove("data/never.csv")
    with pytest.raises(FileNotFound):
        sandbox.files.remove("nowhere/never.csv")


@pytest.mark.asyncio
async def test_the_async_sdk_removes_too(sandbox, sandboxd):
    sandbox.files.write("data/a.csv", b"1")
    connected = await AsyncSandbox.connect(sandbox.sandbox_id, url=sandboxd.url, token=sandboxd.token)
    try:
        await connected.files.remove("data/a.csv")
    finally:
        await connected.close()
    assert names(sandbox, "data") == []
