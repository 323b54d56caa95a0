"""swap_gain: the Match-3 arithmetic the greedy actor relies on."""

from lingxi.actor.actors.match3 import adjacent_pairs, swap_gain

GRID = [
    [0, 1, 0, 0],
    [2, 0, 3, 4],
    [5, 0, 4, 1],
    [2, 3, 3, 1],
]


def test_swap_that_completes_a_row():
    # Swapping (1,2) with (2,2) puts a 0 into row 1 -> 0 0 0 0 = 4 cells.
    assert swap_gain(GRID, (1, 2), (2, 2)) == 4


def test_swap_that_completes_a_column_and_counts_each_cell_once():
    grid = [[1, 0, 1], [0, 1, 0], [1, 0, 1]]
    # (2,1)<->(2,2): column 1 becomes 1 1 1 and column 2 becomes 0 0 0.
    assert swap_gain(grid, (2, 1), (2, 2)) == 6


def test_non_matching_same_kind_and_non_adjacent_swaps_gain_nothing():
    assert swap_gain(GRID, (4, 1), (4, 2)) == 0
    assert swap_gain(GRID, (1, 3), (1, 4)) == 0          # same kind
    assert swap_gain(GRID, (1, 1), (3, 1)) == 0          # not neighbours
    assert swap_gain(GRID, (4, 4), (4, 5)) == 0          # off the board


def test_adjacent_pairs_count():
    assert len(adjacent_pairs(8, 8)) == 112
    assert len(adjacent_pairs(5, 7)) == 5 * 6 + 4 * 7
