"""A zip, unpacked beside itself (data/<zip stem>/...) once it is known to be safe: no bombs, no
path escapes, no links, no passwords, within the limits on members and bytes; whatever a refused
zip wrote is removed again."""

import errno
import os
import shutil
import stat
import zipfile
import zlib

from .report import Refused, human_size, reason


def unpacked(path: str, limits: dict) -> list[str]:
    """Unpack a zip's members to data/<zip stem>/..., refusing bombs, path escapes and links;
    the paths they were unpacked to (each described as its own file by the caller)."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise Refused(f"{path} is a damaged zip archive ({reason(exc)})") from None
    with archive:
        members = _zip_members(archive, path)
        total = _unpacked_size(path, members, limits)
        folder = _unpack_folder(path, total)
        return _unpack_all(archive, members, path, folder, limits)


def _zip_members(archive, path: str) -> list[tuple]:
    """The files in ``archive`` worth unpacking, as (info, the parts of the path to unpack it
    to); raise Refused for a member that would escape its folder, a link, a name holding
    control characters, a password, or no files at all."""
    members = []
    for info in archive.infolist():
        name = info.filename.replace("\\", "/")
        if (
            info.is_dir()
            or name.startswith("__MACOSX/")
            or os.path.basename(name) in (".DS_Store", "Thumbs.db")
        ):
            continue
        parts = name.split("/")
        if name.startswith("/") or ".." in parts or (len(parts[0]) == 2 and parts[0][1] == ":"):
            raise Refused(
                f"{path} is refused: its member {info.filename!r} would be unpacked outside its folder"
            )
        if stat.S_ISLNK(info.external_attr >> 16):
            raise Refused(f"{path} is refused: its member {info.filename!r} is a symbolic link")
        if any(ord(ch) < 32 for ch in name):
            raise Refused(f"{path} is refused: a member's name holds control characters")
        if info.flag_bits & 0x1:
            raise Refused(f"{path} is password-protected; zip it again without a password")
        members.append((info, [part for part in parts if part not in ("", ".")]))
    if not members:
        raise Refused(f"{path} holds no files")
    return members


def _unpacked_size(path: str, members: list[tuple], limits: dict) -> int:
    """What ``members`` unpack to, all together, as their headers say; raise Refused for too
    many members, too large a total, or a member that looks like a zip bomb."""
    if len(members) > limits["max_members"]:
        raise Refused(
            f"{path} holds {len(members)} files; at most {limits['max_members']} are unpacked. "
            "Zip fewer files together"
        )
    total = sum(info.file_size for info, _ in members)
    if total > limits["max_unpacked_bytes"]:
        raise Refused(
            f"{path} is refused: it would unpack to {human_size(total)}, "
            f"more than the limit of {human_size(limits['max_unpacked_bytes'])}"
        )
    for info, _ in members:
        ratio = info.file_size / max(1, info.compress_size)
        if info.file_size > (1 << 20) and ratio > limits["max_ratio"]:
            raise Refused(
                f"{path} is refused as a likely zip bomb: {info.filename!r} would unpack to "
                f"{ratio:.0f} times its packed size (the limit is {limits['max_ratio']})"
            )
    return total


def _unpack_folder(path: str, total: int) -> str:
    """The folder a zip unpacks to (data/<zip stem>), once it is known that ``total`` bytes fit
    on the disk and that nothing but a folder already has that name."""
    stem = os.path.basename(path)
    stem = stem[: -len(".zip")] if stem.lower().endswith(".zip") else stem + "_files"
    folder = os.path.join(os.path.dirname(path), stem)
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        raise Refused(f"{folder} already exists and is not a folder; rename the zip and upload it again")
    free = shutil.disk_usage(os.path.dirname(path) or ".").free
    if total > free:
        raise Refused(
            f"{path} would unpack to {human_size(total)} but the sandbox has {human_size(free)} free"
        )
    return folder


def _unpack_all(archive, members: list, path: str, folder: str, limits: dict) -> list[str]:
    """Unpack every member under ``folder``; on any failure remove what this run wrote (files,
    and the folders it made), so a refused zip leaves nothing behind."""
    written: list[str] = []
    made: list[str] = []
    try:
        for info, parts in members:
            target = os.path.join(folder, *parts)
            if not os.path.realpath(target).startswith(os.path.realpath(folder) + os.sep):
                raise Refused(
                    f"{path} is refused: its member {info.filename!r} would be unpacked outside its folder"
                )
            missing = []
            parent = os.path.dirname(target)
            while not os.path.isdir(parent):
                missing.append(parent)
                parent = os.path.dirname(parent)
            for directory in reversed(missing):
                os.mkdir(directory)
                made.append(directory)
            _unpack_member(archive, info, path, target, limits)
            written.append(target)
    except BaseException:
        for target in written:
            os.unlink(target)
        for directory in reversed(made):
            try:
                os.rmdir(directory)
            except OSError:
                pass
        raise
    return written


def _unpack_member(archive, info, path: str, target: str, limits: dict) -> None:
    """Write one member, counting what it really unpacks to (its header may lie)."""
    if os.path.islink(target):
        os.unlink(target)
    if os.path.isdir(target):
        raise Refused(f"{target} is a folder already; rename the zip and upload it again")
    written = 0
    try:
        with archive.open(info) as source, open(target, "wb") as out:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                if written > info.file_size or written > limits["max_unpacked_bytes"]:
                    raise Refused(
                        f"{path} is refused: its member {info.filename!r} unpacks to more than the zip says"
                    )
                out.write(chunk)
    except BaseException as exc:
        if os.path.exists(target):
            os.unlink(target)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise Refused(f"{path} does not fit in the sandbox's disk once unpacked") from None
        if isinstance(exc, (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError)):
            raise Refused(
                f"{path} is damaged: its member {info.filename!r} cannot be unpacked ({reason(exc)})"
            ) from None
        raise
