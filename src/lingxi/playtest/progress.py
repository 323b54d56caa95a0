"""A Rich progress bar on stderr while a play runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from lingxi.playtest.runner import StepInfo


@contextmanager
def progress_reporter(budget: int, *, enabled: bool = True) -> Iterator[Callable[[StepInfo], None]]:
    """Yields the ``on_step`` callback for PlayRun; shows nothing when disabled."""
    if not enabled:
        yield lambda info: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]play[/]"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=False) as bar:
        task = bar.add_task("play", total=budget, status="")

        def on_step(info: StepInfo) -> None:
            status = f"{info.selection_type:<9} score {info.score if info.score is not None else '-'}"
            bar.update(task, completed=info.index, status=status)

        yield on_step
