"""The caching-allocator model (oomdoctor/memory/allocator.py) against the rules of PyTorch's allocator."""
from oomdoctor.memory.allocator import (
    LARGE_BUFFER,
    SMALL_BUFFER,
    Allocator,
    replay,
    round_size,
    segment_size,
)

MIB = 1 << 20


def test_sizes_round_to_512_bytes_and_segments_follow_the_request_size():
    assert round_size(1) == 512 and round_size(513) == 1024
    assert segment_size(1000) == SMALL_BUFFER            # <= 1 MiB: a 2 MiB small-pool segment
    assert segment_size(5 * MIB) == LARGE_BUFFER         # 1-10 MiB: a 20 MiB segment
    assert segment_size(11 * MIB) == 12 * MIB            # >= 10 MiB: rounded up to 2 MiB


def test_small_and_mid_requests_share_segments():
    al = Allocator()
    al.malloc(1000)
    al.malloc(5 * MIB)
    al.malloc(5 * MIB)
    assert al.reserved == SMALL_BUFFER + LARGE_BUFFER and al.allocated == 1024 + 10 * MIB


def test_a_freed_block_is_reused_for_the_same_size_so_a_repeated_step_reserves_nothing_more():
    step = [("alloc", "a", 300 * MIB), ("alloc", "b", 600 * MIB), ("free", "a"), ("free", "b")]
    once, twice = replay(step), replay(step * 2)
    assert once.max_reserved == twice.max_reserved == 900 * MIB


def test_a_slightly_longer_batch_cannot_use_the_cached_blocks_and_keeps_them_reserved():
    def batch(n, scale):
        return [("alloc", f"x{n}", int(400 * MIB * scale)), ("free", f"x{n}")]
    al = replay(batch(1, 0.99) + batch(2, 1.0))
    assert al.max_allocated == 400 * MIB and al.max_reserved > 790 * MIB       # segments never merge


def test_releasing_whole_idle_segments_lets_the_longer_batch_fit_on_a_full_card():
    events = [("alloc", "x1", 396 * MIB), ("free", "x1"), ("alloc", "x2", 400 * MIB)]
    al = replay(events, capacity=500 * MIB)             # the OOM retry frees the idle 396 MiB segment
    assert al.reserved == 400 * MIB


def test_a_block_split_for_a_smaller_request_leaves_its_rest_idle():
    al = replay([("alloc", "big", 100 * MIB), ("free", "big"), ("alloc", "small", 60 * MIB),
                 ("alloc", "other", 60 * MIB)])
    assert al.allocated == 120 * MIB and al.reserved == 160 * MIB and al.idle == 40 * MIB


def test_expandable_segments_reuse_the_freed_tail_for_a_larger_request():
    events = [("alloc", "x1", 396 * MIB), ("free", "x1"), ("alloc", "x2", 400 * MIB)]
    assert replay(events, expandable=True).max_reserved == 400 * MIB
    assert replay(events).max_reserved == 796 * MIB
