"""zstd frames are decompressed up to a cap, never past it."""

from __future__ import annotations

import pytest

from memwarden.openclaw.sqlite_tail import MAX_EVENT_BYTES, decompress_capped, zstd_library

zstd = zstd_library()


def _streamed(chunk: bytes, times: int) -> bytes:
    """Compress `chunk` repeated `times` times as one frame that does not state its size."""
    compressor = zstd.ZstdCompressor(level=1)
    return b"".join(compressor.compress(chunk) for _ in range(times)) + compressor.flush()


def test_decompress_capped_content_up_to_the_limit_comes_back_whole():
    content = b'{"type":"message"}' * 1000

    assert decompress_capped(zstd.compress(content)) == content
    assert decompress_capped(_streamed(b"a", MAX_EVENT_BYTES)) == b"a" * MAX_EVENT_BYTES


@pytest.mark.timeout(60)
def test_decompress_capped_a_1_gib_bomb_stops_one_byte_past_the_cap():
    bomb = _streamed(bytes(16 * 1024 * 1024), 64)  # 1 GiB of zeros in about 32 KB

    assert len(bomb) < 64 * 1024
    assert decompress_capped(bomb) == bytes(MAX_EVENT_BYTES + 1)


def test_decompress_capped_smaller_limit_applies():
    assert decompress_capped(zstd.compress(b"x" * 101), limit=100) == b"x" * 101
    assert decompress_capped(zstd.compress(b"x" * 200), limit=100) == b"x" * 101


def test_decompress_capped_not_zstd_is_none():
    assert decompress_capped(b"\x00\x11\x22\x33") is None


def test_decompress_capped_a_cut_frame_is_none():
    whole = zstd.compress(b'{"type":"message"}' * 1000)
    assert decompress_capped(whole[: len(whole) // 2]) is None
