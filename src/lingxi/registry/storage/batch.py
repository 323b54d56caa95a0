"""Group commit: concurrent writes share one transaction and one commit (one fsync).

Every write needs the log head, so writes run one after another whatever we do;
what costs is each one's commit, which waits for the disk while holding the
head. Here a writer queues its work and waits for the process's commit lock;
whoever holds it takes every queued write (up to ``limit``), runs each in its
own savepoint in order and commits once, then hands each writer its own
answer or its own error. A write that fails is rolled back to its savepoint
and cannot fail the others; a failed commit fails every write in the batch,
so nothing is acknowledged that did not commit. A batch of one write needs no
savepoint: if it fails, its transaction is rolled back and what a refusal still
records (its spent nonce) is committed in a transaction of its own. The log head
row is moved once per batch, by ``finish``, to the head of its last good write.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import Connection

from lingxi.registry.storage import driver

# work(conn, head) -> (answer, head after it); refused(conn, error) runs after its rollback
Work = Callable[[Connection, Any], tuple[dict[str, Any], Any]]
Refused = Callable[[Connection, BaseException], None]
# finish(conn, head at the start, head after the batch): before the commit
Finish = Callable[[Connection, Any, Any], None]


class _Failed(Exception):
    """A lone write failed: its transaction is rolled back (its error is on the job)."""


@dataclass
class _Job:
    work: Work
    refused: Refused
    answer: dict[str, Any] | None = None
    error: BaseException | None = None
    done: bool = False


class GroupCommit:
    """Runs queued writes in batches inside ``begin()`` (a transaction holding the head)."""

    def __init__(self, begin: Callable[[], AbstractContextManager[tuple[Connection, Any]]],
                 limit: int = 64, finish: Finish | None = None) -> None:
        self._begin = begin
        self._finish = finish or (lambda conn, start, end: None)
        self.limit = limit
        self._queue: list[_Job] = []
        self._queue_lock = threading.Lock()
        self._commit_lock = threading.Lock()
        self.batches = 0  # how many transactions committed, for tests and benchmarks
        self._here = threading.local()  # the batch run_many holds open on this thread

    def run_many(self, actions: list[Callable[[], Any]]) -> list[tuple[Any, BaseException | None]]:
        """Run whole write actions (each one making its writes through :meth:`run`) in one
        transaction and one commit, in order, on the calling thread (a process's one
        writer thread: no other thread waits on the commit lock or is woken per write).

        Each action's writes get their own savepoint, as a queued batch's do; an action
        that raises is told its own error and cannot fail the others; a failed commit
        fails every action, so none is acknowledged that did not commit. One action
        alone takes the lone-write path (no savepoint). Returns ``(result, error)`` per
        action, in order."""
        if len(actions) == 1:
            return [_attempt(actions[0])]
        outcomes: list[tuple[Any, BaseException | None]] = []
        with self._commit_lock:
            try:
                with self._begin() as (conn, start):
                    heads, broken = [start], list[BaseException]()
                    self._here.batch = (conn, heads, broken)
                    try:
                        outcomes = [_attempt(action) for action in actions]
                    finally:
                        self._here.batch = None
                    if broken:
                        raise broken[0]  # rolls the whole transaction back
                    self._finish(conn, start, heads[-1])
                self.batches += 1
            except BaseException as error:  # noqa: BLE001 - the commit failed: nobody succeeded
                return [(None, error) for _ in actions]
        return outcomes

    def run(self, work: Work, refused: Refused) -> dict[str, Any]:
        job = _Job(work, refused)
        open_batch = getattr(self._here, "batch", None)
        if open_batch is not None:  # inside run_many on this thread: join its transaction
            conn, heads, broken = open_batch
            try:
                heads.append(self._one(conn, heads[-1], job))
            except BaseException as error:
                broken.append(error)  # not this write's own refusal: the batch cannot commit
                raise
            if job.error is not None:
                raise job.error
            assert job.answer is not None
            return job.answer
        with self._queue_lock:
            self._queue.append(job)
        with self._commit_lock:
            while not job.done:
                self._batch()
        if job.error is not None:
            raise job.error
        assert job.answer is not None
        return job.answer

    def _batch(self) -> None:
        with self._queue_lock:
            batch, self._queue = self._queue[:self.limit], self._queue[self.limit:]
        if len(batch) == 1:
            self._alone(batch[0])
            return
        try:
            with self._begin() as (conn, start):
                head = start
                for job in batch:
                    head = self._one(conn, head, job)
                self._finish(conn, start, head)
            self.batches += 1
        except BaseException as error:  # noqa: BLE001 - the commit failed: nobody succeeded
            for job in batch:
                if job.error is None:
                    job.answer, job.error = None, error
        finally:
            for job in batch:
                job.done = True

    def _alone(self, job: _Job) -> None:
        """One write in its own transaction, without a savepoint."""
        try:
            try:
                with self._begin() as (conn, start):
                    try:
                        job.answer, head = job.work(conn, start)
                    except Exception as error:  # noqa: BLE001 - this write's own failure
                        job.error = error
                        raise _Failed from None
                    self._finish(conn, start, head)
                self.batches += 1
            except _Failed:
                assert job.error is not None
                with self._begin() as (conn, _):
                    job.refused(conn, job.error)
                self.batches += 1
        except BaseException as error:  # noqa: BLE001 - the commit failed: it did not happen
            if job.error is None:
                job.answer, job.error = None, error
        finally:
            job.done = True

    @staticmethod
    def _one(conn: Connection, head: Any, job: _Job) -> Any:
        """``job`` in its own savepoint of the open transaction; the head after it."""
        driver.savepoint(conn)
        try:
            job.answer, after = job.work(conn, head)
        except driver.EarlierWriteFailed:
            raise  # not this write's: the batch cannot commit
        except Exception as error:  # noqa: BLE001 - this write's own failure, told to it alone
            driver.roll_back(conn)
            job.error = error
            job.refused(conn, error)
            return head
        # No RELEASE (one statement, on PostgreSQL one round trip, less per write): the next
        # write's savepoint of the same name shadows this one (on both databases a rollback
        # goes to the newest of the name) and the commit ends them all.
        return after


def _attempt(action: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    try:
        return action(), None
    except Exception as error:  # noqa: BLE001 - the action's own failure, told to it alone
        return None, error
