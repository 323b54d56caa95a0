"""Match-3 rules on an anonymous grid of kinds: what does swapping two cells clear?"""

from __future__ import annotations

from collections.abc import Sequence

Cell = tuple[int, int]   # 1-based (row, column)


def _run(grid: Sequence[Sequence[int]], row: int, col: int, dr: int, dc: int) -> list[Cell]:
    """Cells of the straight run of equal kinds through (row, col) along (dr, dc); 0-based in."""
    kind = grid[row][col]
    cells = [(row, col)]
    for sign in (1, -1):
        r, c = row + sign * dr, col + sign * dc
        while 0 <= r < len(grid) and 0 <= c < len(grid[0]) and grid[r][c] == kind:
            cells.append((r, c))
            r, c = r + sign * dr, c + sign * dc
    return cells


def swap_gain(grid: Sequence[Sequence[int]], a: Cell, b: Cell, min_line: int = 3) -> int:
    """How many cells immediate lines of ≥ ``min_line`` would clear after swapping a and b
    (1-based)."""
    rows, cols = len(grid), len(grid[0]) if grid else 0
    (ar, ac), (br, bc) = (a[0] - 1, a[1] - 1), (b[0] - 1, b[1] - 1)
    if not (0 <= ar < rows and 0 <= ac < cols and 0 <= br < rows and 0 <= bc < cols):
        return 0
    if abs(ar - br) + abs(ac - bc) != 1 or grid[ar][ac] == grid[br][bc]:
        return 0
    work = [list(row) for row in grid]
    work[ar][ac], work[br][bc] = work[br][bc], work[ar][ac]
    cleared: set[tuple[int, int]] = set()
    for r, c in ((ar, ac), (br, bc)):
        for dr, dc in ((0, 1), (1, 0)):
            run = _run(work, r, c, dr, dc)
            if len(run) >= min_line:
                cleared.update(run)
    return len(cleared)


def adjacent_pairs(rows: int, columns: int) -> list[tuple[Cell, Cell]]:
    """Every horizontally or vertically adjacent pair of a rows × columns board (1-based)."""
    pairs = []
    for r in range(1, rows + 1):
        for c in range(1, columns + 1):
            if c < columns:
                pairs.append(((r, c), (r, c + 1)))
            if r < rows:
                pairs.append(((r, c), (r + 1, c)))
    return pairs


def longest_line(grid: Sequence[Sequence[int]], a: Cell, b: Cell) -> int:
    """The longest straight run through a or b after swapping them (0 if not adjacent)."""
    rows, cols = len(grid), len(grid[0]) if grid else 0
    (ar, ac), (br, bc) = (a[0] - 1, a[1] - 1), (b[0] - 1, b[1] - 1)
    if not (0 <= ar < rows and 0 <= ac < cols and 0 <= br < rows and 0 <= bc < cols):
        return 0
    if abs(ar - br) + abs(ac - bc) != 1 or grid[ar][ac] == grid[br][bc]:
        return 0
    work = [list(row) for row in grid]
    work[ar][ac], work[br][bc] = work[br][bc], work[ar][ac]
    return max(len(_run(work, r, c, dr, dc))
               for r, c in ((ar, ac), (br, bc)) for dr, dc in ((0, 1), (1, 0)))
