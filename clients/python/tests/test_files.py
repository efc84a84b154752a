"""Large files: streamed to and from the byte-stream file routes, never held whole."""

from __future__ import annotations

import hashlib
import io
import os
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memql_workbench import CallerError, WorkbenchClient

MIB = 1024 * 1024
BIG = 21 * MIB + 12345


class TrackedReader(io.RawIOBase):
    """A binary file that records how much each read asked for."""

    def __init__(self, path: Path) -> None:
        self._file = open(path, "rb")  # noqa: SIM115
        self.reads: list[int] = []

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def read(self, size: int = -1) -> bytes:
        self.reads.append(size)
        return self._file.read(size)

    def close(self) -> None:
        self._file.close()
        super().close()


class TrackedWriter(io.RawIOBase):
    """A binary sink that hashes what it is given and records the largest write."""

    def __init__(self) -> None:
        self.hash = hashlib.sha256()
        self.largest = 0
        self.total = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        chunk = bytes(data)
        self.hash.update(chunk)
        self.largest = max(self.largest, len(chunk))
        self.total += len(chunk)
        return len(chunk)


@pytest.fixture
def big_file(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "big.bin"
    digest = hashlib.sha256()
    with open(path, "wb") as out:
        left = BIG
        while left:
            chunk = os.urandom(min(left, MIB))
            digest.update(chunk)
            out.write(chunk)
            left -= len(chunk)
    return path, digest.hexdigest()


def test_a_21_mib_file_goes_up_and_comes_down_a_chunk_at_a_time(
    client: WorkbenchClient, run_id: str, big_file: tuple[Path, str], tmp_path: Path
) -> None:
    path, sha256 = big_file
    reader = TrackedReader(path)
    tracemalloc.start()
    try:
        written = client.upload_file(run_id, "data/big.bin", reader, mode="640")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        reader.close()
    assert written["path"] == "data/big.bin"
    assert written["size"] == BIG == written["bytesWritten"]
    assert written.get("upload", {}).get("complete") is True
    assert len(reader.reads) > 20 and max(reader.reads) <= MIB, "read a chunk at a time"
    assert peak < 8 * MIB, f"the upload held {peak} bytes at its peak"

    checked = client.exec(run_id, "sha256sum data/big.bin && stat -c %a data/big.bin")["stdout"].split()
    assert checked == [sha256, "data/big.bin", "640"]

    to = tmp_path / "copy.bin"
    progress: list[tuple[int, int | None]] = []
    got = client.download_file(
        run_id, "data/big.bin", to, on_progress=lambda n, total: progress.append((n, total))
    )
    assert (got.bytes, got.sha256) == (BIG, sha256)
    assert to.stat().st_size == BIG
    assert progress[-1] == (BIG, BIG) and len(progress) > 20

    sink = TrackedWriter()
    streamed = client.download_file(run_id, "data/big.bin", sink, chunk_size=256 * 1024)
    assert streamed.sha256 == sha256 == sink.hash.hexdigest() and sink.total == BIG
    assert sink.largest <= 256 * 1024


def test_uploads_from_a_path_a_generator_and_bytes(
    client: WorkbenchClient, run_id: str, tmp_path: Path
) -> None:
    source = tmp_path / "src.txt"
    source.write_bytes(b"from a path\n" * 1000)
    assert client.upload_file(run_id, "p.txt", source)["size"] == 12000

    def chunks() -> Iterator[bytes]:
        for i in range(100):
            yield f"chunk {i:03}\n".encode()

    assert client.upload_file(run_id, "g.txt", chunks())["size"] == 1000
    assert b"".join(client.iter_file(run_id, "g.txt", chunk_size=100)).startswith(b"chunk 000\nchunk 001\n")
    assert client.upload_file(run_id, "empty.txt", b"")["size"] == 0
    assert b"".join(client.iter_file(run_id, "empty.txt")) == b""
    assert b"".join(client.iter_file(run_id, "p.txt")) == source.read_bytes()
    with pytest.raises(TypeError):
        client.upload_file(run_id, "s.txt", "not a path")  # type: ignore[arg-type]


def test_file_refusals_carry_their_code_and_status(
    client: WorkbenchClient, run_id: str, tmp_path: Path
) -> None:
    to = tmp_path / "never.bin"
    with pytest.raises(CallerError) as missing:
        client.download_file(run_id, "nowhere.bin", to)
    assert (missing.value.code, missing.value.status) == ("path_not_found", 404)
    assert not to.exists(), "no partial file is left behind"
    with pytest.raises(CallerError) as escaping:
        client.upload_file(run_id, "../outside.bin", b"x")
    assert (escaping.value.code, escaping.value.status) == ("invalid_path", 400)
    with pytest.raises(CallerError) as other:
        client.upload_file("run-00000000-0000-0000-0000-000000000000", "x.bin", b"x")
    assert (other.value.code, other.value.status) == ("not_found", 404)
    with pytest.raises(CallerError) as long_path:
        client.iter_file(run_id, "a" * 5000).__next__()
    assert long_path.value.code == "invalid_arguments" and long_path.value.status is None
