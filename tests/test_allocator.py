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


def test_a_run_reserves_more_the_more_of_its_batches_are_a_new_longest_one():
    # the same five lengths: met longest first, later batches reuse its blocks; met in rising order, each new
    # longest batch maps its loss tensors' segments beside the cached ones (docs/estimates.md section 27)
    def batch(n, scale):
        logits = int(300 * MIB * scale)          # a bf16 logits tensor, its fp32 copy and fp32 log-softmax
        return [("alloc", f"l{n}", logits), ("alloc", f"u{n}", 2 * logits), ("alloc", f"s{n}", 2 * logits),
                ("free", f"l{n}"), ("free", f"u{n}"), ("free", f"s{n}")]
    scales = [0.96, 0.97, 0.98, 0.99, 1.0]
    rising = replay([ev for n, sc in enumerate(scales) for ev in batch(n, sc)])
    falling = replay([ev for n, sc in enumerate(reversed(scales)) for ev in batch(n, sc)])
    assert rising.max_allocated == falling.max_allocated == 5 * 300 * MIB
    assert falling.max_reserved == falling.max_allocated
    assert rising.max_reserved > 2 * falling.max_reserved


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
