"""The shared fan-out pool: order kept, failures in place, nested fan-outs never wait on the pool."""

import threading

from jarvis.concurrency import WORKERS, map_concurrently


def test_results_keep_order_and_exceptions_take_their_place() -> None:
    def work(n: int) -> int:
        if n == 3:
            raise ValueError("three")
        return n * 10

    results = map_concurrently(work, [1, 2, 3, 4])
    assert results[:2] == [10, 20]
    assert results[3] == 40
    assert isinstance(results[2], ValueError)


def test_items_run_at_the_same_time() -> None:
    barrier = threading.Barrier(4, timeout=5)  # raises unless four calls are in flight together
    assert map_concurrently(lambda _: barrier.wait() >= 0, range(4)) == [True] * 4


def test_nested_fan_out_completes_even_when_it_outnumbers_the_pool() -> None:
    def outer(n: int) -> int:
        return sum(r for r in map_concurrently(lambda m: m, range(WORKERS)) if isinstance(r, int)) + n

    expected = sum(range(WORKERS))
    assert map_concurrently(outer, range(WORKERS * 2)) == [expected + n for n in range(WORKERS * 2)]
