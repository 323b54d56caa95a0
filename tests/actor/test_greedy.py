"""greedy-match3 reads the frame's pixels and picks the best immediate swap."""

import io

import pytest
from PIL import Image

from lingxi.actor.actors import create_actor
from lingxi.actor.actors.base import legality_problem
from lingxi.actor.actors.match3 import adjacent_pairs, swap_gain
from lingxi.actor.contracts import validate_selection

from .synth import Style, random_kinds, render
from .test_vision import STYLES
from .views import make_view


def _pair_of(view, candidate_id):
    cand = next(c for c in view["interactionCandidates"]["match3Swaps"]["candidates"]
                if c["candidateId"] == candidate_id)
    a, b = cand["pair"]
    return (a["cell"]["row"], a["cell"]["column"]), (b["cell"]["row"], b["cell"]["column"])


@pytest.mark.parametrize(("style", "rows", "columns", "seed"), [
    ("tiles-gap", 8, 8, 1), ("tiles-touching", 8, 8, 2), ("gems-in-wells", 8, 8, 3),
    ("circles-light-panel", 6, 7, 4), ("letters-on-tiles", 10, 10, 5), ("emoji-in-wells", 8, 8, 6),
])
def test_picks_a_swap_with_the_largest_immediate_match(style, rows, columns, seed):
    if STYLES[style].shape == "emoji":
        from .synth import EMOJI_FONT
        if not EMOJI_FONT.exists():
            pytest.skip("fonts-noto-color-emoji is not installed (make browser installs it)")
    kinds = random_kinds(rows, columns, 5, seed=seed)
    pitch = min(360 // columns, 420 // rows)
    png, _ = render(kinds, pitch=pitch, origin=((390 - columns * pitch) // 2, 140), style=STYLES[style])
    view = make_view(png, rows=rows, columns=columns, seed=seed)
    actor = create_actor("greedy-match3", seed=seed, options={})
    sel = actor.select(view, png)
    validate_selection(sel)
    assert sel["type"] == "swap_pair" and legality_problem(view, sel) is None
    a, b = _pair_of(view, sel["candidateId"])
    best = max(swap_gain(kinds, p, q) for p, q in adjacent_pairs(rows, columns))
    assert best >= 3 and swap_gain(kinds, a, b) == best


def test_prefers_a_five_over_a_three():
    kinds = [[(c + 2 * r) % 6 for c in range(8)] for r in range(8)]
    # Plant a line of five (row 8 = 0 0 x 0 0, a 0 above the gap) next to a line of three.
    kinds[7][:5] = [0, 0, 3, 0, 0]
    kinds[6][2] = 0
    kinds[0][5:8] = [1, 1, 4]
    kinds[1][7] = 1
    gains = {(p, q): swap_gain(kinds, p, q) for p, q in adjacent_pairs(8, 8)}
    assert max(gains.values()) == 5 and 3 in gains.values()   # precondition: fives and threes
    png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    view = make_view(png)
    sel = create_actor("greedy-match3", seed=1, options={}).select(view, png)
    a, b = _pair_of(view, sel["candidateId"])
    assert gains.get((a, b), gains.get((b, a))) == 5


def test_does_not_retry_a_swap_on_the_same_board():
    kinds = random_kinds(8, 8, 6, seed=12)
    png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    view = make_view(png)
    actor = create_actor("greedy-match3", seed=1, options={})
    picks = [actor.select(view, png)["candidateId"] for _ in range(6)]
    assert len(set(picks)) == 6
    # A repaint with different bytes but the same board still counts as the same board.
    again = make_view(png + b"\0")
    assert actor.select(again, png)["candidateId"] not in picks


def _blank_png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (390, 844), (240, 240, 240)).save(out, format="PNG")
    return out.getvalue()


def test_no_board_in_the_frame_explores_an_untried_candidate():
    png = _blank_png()
    view = make_view(png)
    actor = create_actor("greedy-match3", seed=1, options={})
    picks = [actor.select(view, png) for _ in range(5)]
    assert all(p["type"] == "swap_pair" and legality_problem(view, p) is None for p in picks)
    assert len({p["candidateId"] for p in picks}) == 5


def test_no_lattice_target_falls_back_to_legal_random_play():
    png = _blank_png()
    view = make_view(png, rows=None, columns=None)
    actor = create_actor("greedy-match3", seed=1, options={})
    for _ in range(20):
        sel = actor.select(view, png)
        validate_selection(sel)
        assert legality_problem(view, sel) is None


def test_without_swap_pair_it_drags_on_the_lattice():
    kinds = random_kinds(8, 8, 5, seed=13)
    png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    view = make_view(png, types=["tap", "drag", "wait"], with_candidates=False)
    sel = create_actor("greedy-match3", seed=1, options={}).select(view, png)
    validate_selection(sel)
    assert sel["type"] == "drag" and sel["from"]["targetId"] == "l00"
    a = (sel["from"]["cell"]["row"], sel["from"]["cell"]["column"])
    b = (sel["to"]["cell"]["row"], sel["to"]["cell"]["column"])
    assert swap_gain(kinds, a, b) == max(swap_gain(kinds, p, q) for p, q in adjacent_pairs(8, 8))


def _answered(view, responded: bool):
    entry = {"causalGameResponse": responded}
    return {**view, "history": [entry]}  # the actor reads only this field of history


def test_learns_a_longer_match_length_from_unchanged_boards():
    from lingxi.actor.actors.greedy import REJECTIONS_TO_LENGTHEN

    kinds = random_kinds(8, 8, 6, seed=21)
    png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    view = make_view(png)
    actor = create_actor("greedy-match3", seed=1, options={})
    actor.select(view, png)
    for _ in range(REJECTIONS_TO_LENGTHEN):  # the game answers, the board stays as it was
        actor.select(_answered(view, True), png)
    assert actor.min_line == 4
    assert actor.outcomes[3][1] >= REJECTIONS_TO_LENGTHEN - 1


def test_an_unreceived_swap_is_not_counted_as_tried():
    kinds = random_kinds(8, 8, 6, seed=22)
    png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    view = make_view(png)
    actor = create_actor("greedy-match3", seed=1, options={})
    first = actor.select(view, png)["candidateId"]
    again = actor.select(_answered(view, False), png)["candidateId"]
    assert again == first  # the game never got it: try it once more
    third = actor.select(_answered(view, False), png)["candidateId"]
    assert third != first  # but not forever


def _start_screen() -> bytes:
    image = Image.new("RGB", (390, 844), (30, 30, 60))
    from PIL import ImageDraw

    draw = ImageDraw.Draw(image)
    draw.text((150, 200), "MATCH THREE", fill=(230, 230, 230))
    draw.rounded_rectangle([115, 500, 275, 560], radius=12, fill=(40, 180, 90))
    draw.text((175, 522), "Start", fill=(255, 255, 255))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def test_presses_the_most_button_like_region_and_remembers_it():
    from lingxi.actor.buttons import find_buttons

    png = _start_screen()
    best = find_buttons(png)[0]
    assert 110 <= best.x <= 120 and 495 <= best.y <= 505 and best.width > 150
    view = make_view(png, rows=None, columns=None)
    actor = create_actor("greedy-match3", seed=1, options={})
    sel = actor.select(view, png)
    validate_selection(sel)
    assert sel["type"] == "tap" and sel["target"]["targetId"] == "g01"
    cell = sel["target"]["cell"]
    x, y = (cell["column"] - 0.5) * 390 / 8, (cell["row"] - 0.5) * 844 / 17
    assert abs(x - 195) <= 40 and abs(y - 530) <= 40
    board, _ = render(random_kinds(8, 8, 5, seed=3), pitch=45, origin=(15, 140), style=Style())
    actor.select(_answered(make_view(board), True), board)
    assert actor.led_to_board == [(round(best.center[0]), round(best.center[1]))]


def _best_gain(kinds, view, sel):
    a, b = _pair_of(view, sel["candidateId"])
    return swap_gain(kinds, a, b)


def test_the_board_is_fitted_once_while_the_layout_stays():
    # Boards after swaps: other pieces, the same place. One lattice search serves them all,
    # and each pick is as good as a fresh actor's (which fits every frame).
    actor = create_actor("greedy-match3", seed=1, options={})
    for seed in range(20, 24):
        kinds = random_kinds(8, 8, 5, seed=seed)
        png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
        view = make_view(png)
        sel = actor.select(view, png)
        fresh = create_actor("greedy-match3", seed=1, options={}).select(view, png)
        assert _best_gain(kinds, view, sel) == _best_gain(kinds, view, fresh)
        assert actor.last_board is not None
    assert actor.fits == 1


def test_a_board_that_moved_is_fitted_again():
    actor = create_actor("greedy-match3", seed=1, options={})
    kinds = random_kinds(8, 8, 5, seed=30)
    first, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    actor.select(make_view(first), first)
    # the same target set (the view does not show geometry), the board 30 px lower
    kinds = random_kinds(8, 8, 5, seed=32)
    moved, _ = render(kinds, pitch=45, origin=(15, 170), style=Style())
    view = make_view(moved)
    sel = actor.select(view, moved)
    assert actor.fits == 2
    best = max(swap_gain(kinds, p, q) for p, q in adjacent_pairs(8, 8))
    assert _best_gain(kinds, view, sel) == best


def test_a_new_target_set_means_a_new_fit():
    actor = create_actor("greedy-match3", seed=1, options={})
    kinds = random_kinds(8, 8, 5, seed=31)
    png, _ = render(kinds, pitch=45, origin=(15, 140), style=Style())
    actor.select(make_view(png), png)
    view = make_view(png, regions=2)  # another target: the layout changed
    actor.select(view, png)
    assert actor.fits == 2
