"""Background tasks of `upp/contextualize`, reported by `upp/get_tasks` (upp/03).

A task is `pending` when submitted, `running` while its job runs on a small thread pool, then
`completed` with the job's result or `failed` with an error message. Retention policy (upp/03
asks implementations to document it): a finished task is kept for one hour after it finished,
then forgotten; unfinished tasks are kept until they finish. Unknown ids are simply not reported.

A job returns what `TaskStatus.result` shows; the service passes jobs that return a callable
rendering the events *now* (so an event deleted since is not reported from a task's memory).
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

log = logging.getLogger("memconform.reference_impl.upp.tasks")

RETENTION = timedelta(hours=1)
WORKERS = 2


@dataclass
class Task:
    task_id: str
    created_at: datetime
    status: str = "pending"
    result: Callable[[], list[Any]] | None = None
    error: str | None = None
    completed_at: datetime | None = None


class TaskRunner:
    """Runs jobs in the background and keeps their status. `clock` gives aware UTC datetimes;
    `format_time` renders them for the wire."""

    def __init__(self, clock: Callable[[], datetime], format_time: Callable[[datetime], str]):
        self._clock = clock
        self._format = format_time
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="upp-task")
        self._closed = False

    def submit(self, job: Callable[[], Callable[[], list[Any]]]) -> str:
        task = Task(f"task_{uuid.uuid4()}", self._clock())
        with self._lock:
            if self._closed:
                raise RuntimeError("the task runner is closed")
            self._tasks[task.task_id] = task
        self._pool.submit(self._run, task, job)
        return task.task_id

    def statuses(self, task_ids: list[str]) -> list[dict[str, Any]]:
        """One TaskStatus per known id, in the order asked (unknown ids left out)."""
        with self._lock:
            self._expire()
            known = [self._tasks[t] for t in task_ids if t in self._tasks]
            snapshot = [(t.task_id, t.status, t.result, t.error, t.created_at, t.completed_at) for t in known]
        out = []
        for task_id, status, result, error, created_at, completed_at in snapshot:
            out.append({
                "task_id": task_id,
                "status": status,
                "result": result() if status == "completed" and result is not None else None,
                "error": error if status == "failed" else None,
                "created_at": self._format(created_at),
                "completed_at": self._format(completed_at) if completed_at is not None else None,
            })
        return out

    def forget(self, task_id: str) -> None:
        """Drop a task now, whatever the retention policy says."""
        with self._lock:
            self._tasks.pop(task_id, None)

    def close(self, wait: bool = True) -> None:
        with self._lock:
            self._closed = True
        self._pool.shutdown(wait=wait, cancel_futures=True)

    # -- internals ------------------------------------------------------------------------------

    def _run(self, task: Task, job: Callable[[], Callable[[], list[Any]]]) -> None:
        with self._lock:
            task.status = "running"
        try:
            render = job()
        except Exception as exc:  # the task fails; the message is what a client may see
            message = getattr(exc, "message", None) or "the background ingest failed"
            if not getattr(exc, "message", None):
                log.exception("background task %s failed", task.task_id)
            with self._lock:
                task.status, task.error, task.completed_at = "failed", str(message), self._clock()
            return
        self._complete(task, render)

    def _complete(self, task: Task, render: Callable[[], list[Any]]) -> None:
        with self._lock:
            task.status, task.result, task.completed_at = "completed", render, self._clock()

    def _expire(self) -> None:
        cutoff = self._clock() - RETENTION
        for task_id in [t.task_id for t in self._tasks.values()
                        if t.completed_at is not None and t.completed_at < cutoff]:
            del self._tasks[task_id]
