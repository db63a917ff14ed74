"""A simulation of PyTorch's CUDA caching allocator (the native backend), for replaying an allocation trace.

Follows ``DeviceCachingAllocator`` in c10/cuda/CUDACachingAllocator.cpp (torch 2.x) and the allocator section of
docs/source/notes/cuda.rst (``PYTORCH_CUDA_ALLOC_CONF``); the facts it rests on are listed in docs/engine-memory.md
#the-caching-allocator. Written for ShardLens from those rules, not copied:

- ``round_size``: requests are rounded up to 512 B (kMinBlockSize), or to the next power-of-2 division when
  ``roundup_power2_divisions`` applies to the size's interval (1 MiB … 64 GiB, one setting per power of two).
- ``get_pool``: ≤ 1 MiB (kSmallSize) goes to the small pool, larger requests to the large pool; free blocks are kept
  per pool ordered by (stream, size, address), so a block freed on one stream only serves that stream.
- ``get_free_block``: best fit, the smallest cached block of the stream at least as large as the request; with
  ``max_split_size`` a request below it never takes an oversize block and one above it only a block less than
  ``max_non_split_rounding`` (20 MiB, kLargeBuffer) larger.
- ``get_allocation_size``: a new segment is 2 MiB (kSmallBuffer) for small requests, 20 MiB (kLargeBuffer) for
  requests below 10 MiB (kMinLargeAlloc), else the request rounded up to 2 MiB (kRoundLarge).
- ``should_split``: the small pool (and every pool with expandable segments) splits when ≥ 512 B remain; the large
  pool when the request is below ``max_split_size`` and more than 1 MiB remains. ``free_block`` merges a freed block
  with free neighbours of its segment.
- ``malloc`` at capacity: a failed cudaMalloc first frees oversize cached blocks (``release_available_cached_blocks``,
  only with ``max_split_size``), then every unsplit cached block of both pools (``release_cached_blocks``; expandable
  segments unmap their free pages), then retries once; a second failure is an out-of-memory error.
- ``expandable_segments``: one segment per stream and pool that maps pages (2 MiB small, 20 MiB large) on demand at
  its lowest free address (``find_expandable_block``, ``map_block``), best fit counting a free block's unmapped tail.

Not simulated: CUDA graph pools, ``garbage_collection_threshold``, ``record_stream`` (a block is reusable when freed),
the cudaMallocAsync backend. Sizes are bytes; ``allocated`` counts block sizes, as torch.cuda.memory_allocated does.
"""
from bisect import bisect_left, insort

from .allocator_config import (  # noqa: F401  (re-exported for callers of the simulation)
    INF, LARGE_BUFFER, MIN_BLOCK, ROUND_LARGE, SMALL_SIZE, Block, Config, allocation_size, round_size)
from .allocator_expandable import ExpandableSegments


class Pool:
    """Free mapped blocks by (stream, size, address) and unmapped expandable ranges by (stream, address)."""

    def __init__(self, small):
        self.small, self.keys, self.by_key, self.unmapped = small, [], {}, []

    def add(self, b):
        key = (b.stream, b.size, b.addr)
        insort(self.keys, key)
        self.by_key[key] = b

    def remove(self, b):
        key = (b.stream, b.size, b.addr)
        del self.keys[bisect_left(self.keys, key)]
        del self.by_key[key]

    def add_unmapped(self, b):
        insort(self.unmapped, (b.stream, b.addr, id(b), b))

    def remove_unmapped(self, b):
        self.unmapped.remove((b.stream, b.addr, id(b), b))


class CachingAllocator(ExpandableSegments):
    """One device's caching allocator. ``malloc`` returns a Block (None when out of memory); ``free`` takes it back."""

    def __init__(self, cfg=None):
        self.cfg = cfg or Config()
        self.pools = {True: Pool(True), False: Pool(False)}
        self.allocated = self.reserved = self.requested = 0
        self.peak_allocated = self.peak_reserved = self.peak_requested = 0
        self.retries = self.ooms = self.segments = 0
        self.streams, self.peak_streams = {}, {}
        self._next_addr = 1 << 40

    # -- bookkeeping -------------------------------------------------------------------------------------------------
    def _reserve(self, nbytes, stream):
        self.reserved += nbytes
        self.streams[stream] = self.streams.get(stream, 0) + nbytes
        if self.reserved > self.peak_reserved:
            self.peak_reserved, self.peak_streams = self.reserved, dict(self.streams)

    def _unreserve(self, nbytes, stream):
        self.reserved -= nbytes
        self.streams[stream] -= nbytes

    def _fits(self, nbytes):
        return self.reserved + nbytes <= self.cfg.capacity

    def _address(self, nbytes):
        addr = self._next_addr
        self._next_addr += -(-nbytes // ROUND_LARGE) * ROUND_LARGE + ROUND_LARGE
        return addr

    # -- malloc / free -----------------------------------------------------------------------------------------------
    def malloc(self, nbytes, stream="default"):
        cfg = self.cfg
        size = round_size(nbytes, cfg)
        pool = self.pools[size <= SMALL_SIZE]
        block = self._get_free_block(pool, stream, size)
        if block is None:
            alloc = allocation_size(size)
            block = self._alloc_block(pool, stream, size, alloc)
            if block is None and self._release_available(pool, stream, size):
                block = self._alloc_block(pool, stream, size, alloc)
            if block is None:
                self.retries += 1
                self._release_cached()
                block = self._alloc_block(pool, stream, size, alloc)
            if block is None:
                self.ooms += 1
                return None
        if self._should_split(block, size):
            rest = Block(stream, block.small, block.size - size, block.addr + size, block.seg)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next, block.size = rest, size
            pool.add(rest)
        block.allocated, block.requested = True, nbytes
        self.allocated += block.size
        self.requested += nbytes
        self.peak_allocated = max(self.peak_allocated, self.allocated)
        self.peak_requested = max(self.peak_requested, self.requested)
        return block

    def free(self, block):
        block.allocated = False
        self.allocated -= block.size
        self.requested -= block.requested
        pool = self.pools[block.small]
        for other in (block.prev, block.next):
            self._merge(block, other, pool)
        pool.add(block)

    def _should_split(self, block, size):
        remaining = block.size - size
        if block.small or self.cfg.expandable:
            return remaining >= MIN_BLOCK
        return size < self.cfg.max_split_size and remaining > SMALL_SIZE

    def _merge(self, dst, src, pool):
        """``try_merge_blocks``: absorbs a free neighbour of the same mapping state; returns the bytes absorbed."""
        if src is None or src.allocated or src.mapped != dst.mapped:
            return 0
        if src.mapped:
            pool.remove(src)
        else:
            pool.remove_unmapped(src)
        if dst.prev is src:
            dst.addr, dst.prev = src.addr, src.prev
            if src.prev is not None:
                src.prev.next = dst
        else:
            dst.next = src.next
            if src.next is not None:
                src.next.prev = dst
        dst.size += src.size
        return src.size

    def _get_free_block(self, pool, stream, size):
        keys = pool.keys
        i = bisect_left(keys, (stream, size, -1))
        if i == len(keys) or keys[i][0] != stream:
            return None
        block = pool.by_key[keys[i]]
        if block.seg is not None and self.cfg.expandable:
            # A free block followed by unmapped pages counts at the size it can grow to.
            grow = lambda b: b.size + (b.next.size if b.next is not None and not b.next.mapped else 0)  # noqa: E731
            while i + 1 < len(keys) and keys[i + 1][0] == stream and grow(pool.by_key[keys[i + 1]]) < grow(block):
                i += 1
                block = pool.by_key[keys[i]]
        limit = self.cfg.max_split_size
        if size < limit <= block.size or (size >= limit and block.size >= size + self.cfg.max_non_split_rounding):
            return None
        pool.remove(block)
        return block

    def _alloc_block(self, pool, stream, size, alloc):
        if self.cfg.expandable:
            return self._expandable_block(pool, stream, size)
        if not self._fits(alloc):
            return None
        self.segments += 1
        self._reserve(alloc, stream)
        return Block(stream, pool.small, alloc, self._address(alloc))

    # -- at capacity ---------------------------------------------------------------------------------------------------
    def _release_available(self, pool, stream, size):
        """``release_available_cached_blocks``: frees oversize cached blocks of the stream (only with max_split_size)."""
        limit = self.cfg.max_split_size
        if limit == INF:
            return False
        want = max(size, limit)
        keys = pool.keys
        i = bisect_left(keys, (stream, want, -1))
        if i < len(keys) and keys[i][0] == stream:
            self._release_block(pool, pool.by_key[keys[i]])
            return True
        released, i = 0, i - 1
        while i >= 0 and released < want and keys[i][0] == stream and keys[i][1] >= limit:
            block = pool.by_key[keys[i]]
            released += block.size
            self._release_block(pool, block)
            i -= 1
        return released >= want

    def _release_block(self, pool, block):
        pool.remove(block)
        self.segments -= 1
        self._unreserve(block.size, block.stream)

    def _release_cached(self):
        """``release_cached_blocks``: every unsplit cached block goes back to the device; expandable pages unmap."""
        for pool in (self.pools[False], self.pools[True]):
            blocks = [pool.by_key[k] for k in list(pool.keys)]
            for block in blocks:
                if block.seg is not None:
                    self._unmap(pool, block)
                elif not block.is_split():
                    self._release_block(pool, block)
