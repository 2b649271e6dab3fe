"""A small model of PyTorch's CUDA caching allocator, to replay a sequence of allocations and frees and read
what torch.cuda.max_memory_reserved would report beside max_memory_allocated.

Mechanics, as pytorch/pytorch implements them (c10/core/AllocatorConfig.h constants; c10/core/
CachingDeviceAllocator.h get_round_size / get_allocation_size; c10/cuda/CUDACachingAllocator.cpp malloc,
get_free_block, should_split, alloc_block, free_block, release_cached_blocks):
  - every request rounds up to a multiple of 512 B (kMinBlockSize);
  - requests of at most 1 MiB (kSmallSize) come from the small pool, whose segments are 2 MiB (kSmallBuffer);
    larger ones from the large pool: under 10 MiB (kMinLargeAlloc) a new segment is 20 MiB (kLargeBuffer),
    from 10 MiB up a segment of the request rounded up to 2 MiB (kRoundLarge);
  - a request takes the smallest cached free block of its pool that is large enough (best fit); the block is
    split when what remains is at least 512 B (small pool) or more than 1 MiB (large pool);
  - a freed block merges with free neighbours of its own segment only: segments never merge;
  - when no cached block fits and the device has no room for a new segment, every cached block that is a
    whole segment is released (cudaFree) and the request retried; only then is OOM raised;
  - expandable_segments:True maps more pages at the end of one growing segment per pool instead of new
    segments, so freed space at the end is reused by any size (modelled as one segment that grows).
No torch here: sizes are plain integers of bytes.
"""
from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20
SMALL_BUFFER = 2 << 20
LARGE_BUFFER = 20 << 20
MIN_LARGE_ALLOC = 10 << 20
ROUND_LARGE = 2 << 20


def round_size(n_bytes: int) -> int:
    return max(MIN_BLOCK, -(-n_bytes // MIN_BLOCK) * MIN_BLOCK)


def segment_size(rounded: int) -> int:
    if rounded <= SMALL_SIZE:
        return SMALL_BUFFER
    if rounded < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-rounded // ROUND_LARGE) * ROUND_LARGE


@dataclass
class _Block:
    segment: int
    offset: int
    size: int
    free: bool = True


@dataclass
class Allocator:
    """Replays malloc/free; `capacity` (bytes) bounds the segments, None for an unbounded device."""

    capacity: int | None = None
    expandable: bool = False
    allocated: int = 0
    reserved: int = 0
    max_allocated: int = 0
    max_reserved: int = 0
    _segments: dict = field(default_factory=dict)     # id -> (pool, [blocks in address order])
    _free: dict = field(default_factory=lambda: {True: [], False: []})   # small? -> sorted [(size, seg, off)]
    _live: dict = field(default_factory=dict)         # handle -> block
    _next_seg: int = 0
    _next_handle: int = 0

    # ------------------------------------------------------------------ public
    def malloc(self, n_bytes: int) -> int:
        size = round_size(n_bytes)
        small = size <= SMALL_SIZE
        block = self._best_fit(small, size)
        if block is None:
            block = self._new_segment(small, size)
        block = self._split(block, size, small)
        block.free = False
        self.allocated += block.size
        self.max_allocated = max(self.max_allocated, self.allocated)
        handle = self._next_handle
        self._next_handle += 1
        self._live[handle] = block
        return handle

    def free(self, handle: int) -> None:
        block = self._live.pop(handle)
        self.allocated -= block.size
        block.free = True
        small, blocks = self._segments[block.segment]
        i = blocks.index(block)
        # merge with free neighbours inside the segment
        for j in (i + 1, i - 1):
            if 0 <= j < len(blocks) and blocks[j].free:
                other = blocks[j]
                self._unlist(small, other)
                block.offset = min(block.offset, other.offset)
                block.size += other.size
                blocks.remove(other)
        self._list(small, block)

    def empty_cache(self) -> None:
        """Release every cached block that is a whole segment (torch.cuda.empty_cache, and the OOM retry)."""
        for seg, (small, blocks) in list(self._segments.items()):
            if len(blocks) == 1 and blocks[0].free:
                self._unlist(small, blocks[0])
                self.reserved -= blocks[0].size
                del self._segments[seg]

    @property
    def idle(self) -> int:
        """Reserved but unallocated bytes now."""
        return self.reserved - self.allocated

    # ------------------------------------------------------------------ internals
    def _best_fit(self, small: bool, size: int) -> _Block | None:
        pool = self._free[small]
        i = bisect.bisect_left(pool, (size, -1, -1))
        if i == len(pool):
            return None
        _, seg, off = pool[i]
        block = next(b for b in self._segments[seg][1] if b.offset == off)
        self._unlist(small, block)
        return block

    def _new_segment(self, small: bool, size: int) -> _Block:
        if self.expandable and not small:
            return self._grow(size)
        seg_bytes = segment_size(size)
        if self.capacity is not None and self.reserved + seg_bytes > self.capacity:
            self.empty_cache()
            if self.reserved + seg_bytes > self.capacity:
                raise MemoryError(f"cannot reserve {seg_bytes} bytes: {self.reserved} of {self.capacity} reserved")
        seg = self._next_seg
        self._next_seg += 1
        block = _Block(seg, 0, seg_bytes)
        self._segments[seg] = (small, [block])
        self.reserved += seg_bytes
        self.max_reserved = max(self.max_reserved, self.reserved)
        return block

    def _grow(self, size: int) -> _Block:
        """Expandable segments: one large-pool segment; a free block at its end grows to the request."""
        seg = -1
        if seg not in self._segments:
            self._segments[seg] = (False, [])
        blocks = self._segments[seg][1]
        if blocks and blocks[-1].free:
            tail = blocks[-1]
            self._unlist(False, tail)
        else:
            end = blocks[-1].offset + blocks[-1].size if blocks else 0
            tail = _Block(seg, end, 0)
            blocks.append(tail)
        extra = -(-(size - tail.size) // ROUND_LARGE) * ROUND_LARGE
        if self.capacity is not None and self.reserved + extra > self.capacity:
            raise MemoryError(f"cannot map {extra} more bytes")
        tail.size += extra
        self.reserved += extra
        self.max_reserved = max(self.max_reserved, self.reserved)
        return tail

    def _split(self, block: _Block, size: int, small: bool) -> _Block:
        rest = block.size - size
        if (rest >= MIN_BLOCK) if small else (rest > SMALL_SIZE):
            blocks = self._segments[block.segment][1]
            tail = _Block(block.segment, block.offset + size, rest)
            blocks.insert(blocks.index(block) + 1, tail)
            block.size = size
            self._list(small, tail)
        return block

    def _list(self, small: bool, block: _Block) -> None:
        bisect.insort(self._free[small], (block.size, block.segment, block.offset))

    def _unlist(self, small: bool, block: _Block) -> None:
        pool = self._free[small]
        i = bisect.bisect_left(pool, (block.size, block.segment, block.offset))
        del pool[i]


def replay(events: Iterable[Sequence[Any]], capacity: int | None = None, expandable: bool = False) -> Allocator:
    """Replay ("alloc", name, bytes) / ("free", name) events; returns the allocator with its peaks."""
    al = Allocator(capacity=capacity, expandable=expandable)
    handles: dict[Any, Any] = {}
    for ev in events:
        if ev[0] == "alloc":
            handles[ev[1]] = al.malloc(int(ev[2]))
        elif ev[0] == "free":
            al.free(handles.pop(ev[1]))
        elif ev[0] == "empty_cache":
            al.empty_cache()
    return al
