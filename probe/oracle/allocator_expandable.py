"""Expandable segments (``expandable_segments:True``) for the caching-allocator simulation (allocator.py).

Follows ExpandableSegment and DeviceCachingAllocator's ``find_expandable_block``, ``map_block``,
``try_allocate_expandable_block`` and ``unmap_block`` (c10/cuda/CUDACachingAllocator.cpp): one address range per stream
and pool, mapped in pages of 2 MiB (small pool) or 20 MiB (large pool) at the lowest address with room, so a free block
at the end of the mapped range grows in place; only whole free pages are unmapped when the cache is released.
"""
from .allocator_config import INF, LARGE_BUFFER, SMALL_BUFFER, Block


class Segment:
    """An expandable segment: a reserved address range mapped in pages (ExpandableSegment)."""

    def __init__(self, base, page, pages):
        self.base, self.page, self.size = base, page, page * pages


class ExpandableSegments:
    """The expandable-segment methods of CachingAllocator (a mixin: it reads the allocator's pools and counters)."""

    def _expandable_block(self, pool, stream, size):
        """``try_allocate_expandable_block``: maps pages at the lowest address with room, growing a free tail."""
        cand = self._find_expandable(pool, stream, size)
        if not cand.mapped:
            cand = self._map(pool, cand, min(cand.size, size))
            if cand is None:
                return None
        while cand.size < size:
            cand = self._map(pool, cand.next, min(size - cand.size, cand.next.size))
            if cand is None:
                return None
        pool.remove(cand)
        return cand

    def _find_expandable(self, pool, stream, size):
        free = lambda b: b is not None and not b.allocated  # noqa: E731
        for s, _, _, block in pool.unmapped:
            if s != stream:
                continue
            cand = block.prev if free(block.prev) else block
            room, b = 0, cand
            while room < size and free(b):
                room, b = room + b.size, b.next
            if room >= size:
                return cand
        page = SMALL_BUFFER if pool.small else LARGE_BUFFER
        cap = self.cfg.capacity if self.cfg.capacity != INF else 1 << 40
        pages = -(-int(cap * 9 // 8) // page)
        seg = Segment(self._address(page * pages), page, pages)
        block = Block(stream, pool.small, seg.size, seg.base, seg, mapped=False)
        pool.add_unmapped(block)
        return block

    def _map(self, pool, block, size):
        """``map_block``: maps whole pages from the start of an unmapped block; merges with free mapped neighbours."""
        seg = block.seg
        mapped = -(-size // seg.page) * seg.page
        if not self._fits(mapped):
            return None
        pool.remove_unmapped(block)
        block.mapped = True
        if mapped < block.size:
            rest = Block(block.stream, block.small, block.size - mapped, block.addr + mapped, seg, mapped=False)
            rest.prev, rest.next = block, block.next
            if block.next is not None:
                block.next.prev = rest
            block.next, block.size = rest, mapped
            pool.add_unmapped(rest)
        self._merge(block, block.prev, pool)
        self._merge(block, block.next, pool)
        pool.add(block)
        self._reserve(mapped, block.stream)
        return block

    def _unmap(self, pool, block):
        """``unmap_block``: returns the pages lying wholly inside a free block; the partial pages stay mapped."""
        seg = block.seg
        first = -(-(block.addr - seg.base) // seg.page)
        last = (block.addr + block.size - seg.base) // seg.page
        if first >= last:
            return
        pool.remove(block)
        start, length = seg.base + first * seg.page, (last - first) * seg.page
        before, after = start - block.addr, block.addr + block.size - start - length
        if before > 0:
            b = Block(block.stream, block.small, before, block.addr, seg)
            b.prev, b.next = block.prev, block
            if block.prev is not None:
                block.prev.next = b
            block.prev = b
            pool.add(b)
        if after > 0:
            a = Block(block.stream, block.small, after, start + length, seg)
            a.prev, a.next = block, block.next
            if block.next is not None:
                block.next.prev = a
            block.next = a
            pool.add(a)
        block.addr, block.size, block.mapped = start, length, False
        self._merge(block, block.prev, pool)
        self._merge(block, block.next, pool)
        pool.add_unmapped(block)
        self._unreserve(length, block.stream)
