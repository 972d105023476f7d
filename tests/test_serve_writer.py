"""The live service's writer process off the acknowledgements' path (issue 14, Measure: the ack
p99): what start-up made is out of the cyclic garbage collector's reach (`settle_heap`), and the
garbage start-up left is collected first, not frozen."""

from __future__ import annotations

import gc
import weakref

from audit.serve import settle_heap


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_settle_heap_collects_start_up_garbage_then_freezes_the_rest() -> None:
    """A cycle dropped before settling is collected; what is alive is frozen (the collector's
    permanent generation), so a later full collection does not scan it."""
    a, b = _Node(), _Node()
    a.other, b.other = b, a
    dropped = weakref.ref(a)
    kept = _Node()
    kept.other = kept
    del a, b
    gc.disable()  # no collection but the one settle_heap makes
    try:
        settle_heap()
        assert dropped() is None, "a cycle of start-up garbage was frozen instead of collected"
        assert gc.get_freeze_count() > 0
        assert not any(o is kept for g in range(3) for o in gc.get_objects(g)), "a live object is still scanned by full collections"
    finally:
        gc.unfreeze()
        gc.enable()
