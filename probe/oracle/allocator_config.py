"""The caching allocator's constants, ``PYTORCH_CUDA_ALLOC_CONF`` options, request rounding and the Block record
(allocator.py and allocator_expandable.py use them).

Constants of c10/cuda/CUDACachingAllocator.cpp; option parsing as AllocatorConfig::parseArgs reads them; ``round_size``
and ``get_allocation_size`` of DeviceCachingAllocator.
"""
MIN_BLOCK = 512                 # kMinBlockSize
SMALL_SIZE = 1 << 20            # kSmallSize: largest small-pool request
SMALL_BUFFER = 2 << 20          # kSmallBuffer: small-pool segment (and expandable page)
LARGE_BUFFER = 20 << 20         # kLargeBuffer: segment for 1–10 MiB requests (and expandable large page)
MIN_LARGE_ALLOC = 10 << 20      # kMinLargeAlloc
ROUND_LARGE = 2 << 20           # kRoundLarge
INF = float("inf")


class Config:
    """``PYTORCH_CUDA_ALLOC_CONF`` options the simulation honours, and the bytes the allocator may reserve."""

    def __init__(self, max_split_size=INF, divisions=None, expandable=False, capacity=INF, max_non_split_rounding=LARGE_BUFFER):
        self.max_split_size, self.expandable, self.capacity = max_split_size, expandable, capacity
        self.max_non_split_rounding = max_non_split_rounding
        self.divisions = divisions or [0] * 16  # one entry per power-of-two interval from 1 MiB to 64 GiB

    @classmethod
    def parse(cls, text, capacity=INF):
        """Reads "expandable_segments:True,max_split_size_mb:128,roundup_power2_divisions:[256:1,>:8]"."""
        cfg = cls(capacity=capacity)
        for key, value in _split_options(text or ""):
            if key == "expandable_segments":
                cfg.expandable = value.lower() == "true"
            elif key == "max_split_size_mb":
                cfg.max_split_size = max(int(value), LARGE_BUFFER >> 20) << 20
            elif key == "max_non_split_rounding_mb":
                cfg.max_non_split_rounding = int(value) << 20
            elif key == "roundup_power2_divisions":
                cfg.divisions = _parse_divisions(value)
        return cfg

    def divisions_for(self, size):
        index = max(0, size.bit_length() - 1 - 20)
        return self.divisions[min(index, 15)]


def _split_options(text):
    out, depth, cur = [], 0, ""
    for ch in text + ",":
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            if ":" in cur:
                key, value = cur.split(":", 1)
                out.append((key.strip(), value.strip()))
            cur = ""
        else:
            cur += ch
    return out


def _parse_divisions(value):
    """``parseRoundUpPower2Divisions``: one value for every interval, or "[256:1,512:2,>:8]" (boundaries in MiB, interval
    index log2 of the boundary; the first value also fills the intervals below it, ">" those after the last one)."""
    if not value.startswith("["):
        return [int(value)] * 16
    table, last, first = [0] * 16, 0, True
    for item in value.strip("[]").split(","):
        bound, div = (x.strip() for x in item.split(":"))
        if bound == ">":
            table[last + 1:] = [int(div)] * (15 - last)
            continue
        index = min(int(bound).bit_length() - 1, 15)
        if first:
            table[:index] = [int(div)] * index
            first = False
        table[index], last = int(div), index
    return table


def round_size(size, cfg):
    """``round_size``: at least 512 B, a multiple of 512 B, or the next power-of-2 division of the size's interval."""
    if size < MIN_BLOCK:
        return MIN_BLOCK
    div = cfg.divisions_for(size)
    if div > 1 and size > MIN_BLOCK * div:
        if size & (size - 1) == 0:
            return size
        floor2 = 1 << (size.bit_length() - 1)
        step = floor2 >> (div.bit_length() - 1)
        if step == 0:
            return floor2 << 1
        low = size & ~(step - 1)
        return size if low == size else low + step
    return -(-size // MIN_BLOCK) * MIN_BLOCK


def allocation_size(size):
    """``get_allocation_size``: the bytes cudaMalloc is asked for when no cached block fits."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return LARGE_BUFFER
    return -(-size // ROUND_LARGE) * ROUND_LARGE


class Block:
    __slots__ = ("stream", "small", "size", "addr", "allocated", "prev", "next", "seg", "mapped", "requested")

    def __init__(self, stream, small, size, addr, seg=None, mapped=True):
        self.stream, self.small, self.size, self.addr, self.seg, self.mapped = stream, small, size, addr, seg, mapped
        self.allocated, self.prev, self.next, self.requested = False, None, None, 0

    def is_split(self):
        return self.prev is not None or self.next is not None
