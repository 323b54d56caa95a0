"""The skeleton check reads only statements: it meets every statement ast.walk meets, in
the same order, so the names it lists (sentinels, methods still to write) are the same."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import lingxi
from lingxi.hooks.skeleton import _statements, skeleton_status

NESTED = '''
LINGXI_SKELETON = False
x: int = 1
class A:
    AIGENORA_SKELETON = 1
    def f(self):
        raise NotImplementedError("LINGXI_SKELETON_NOT_IMPLEMENTED: f")
    async def g(self):
        try:
            pass
        except* ValueError:
            LINGXI_SKELETON = True
        else:
            def inner():
                raise NotImplementedError("AIGENORA_SKELETON_NOT_IMPLEMENTED: inner")
        finally:
            for _ in []:
                pass
            else:
                while True:
                    with open("x"):
                        match 1:
                            case 1:
                                def deep():
                                    raise NotImplementedError("LINGXI_SKELETON_NOT_IMPLEMENTED")
                            case _:
                                pass
                    break
        raise NotImplementedError("LINGXI_SKELETON_" "NOT_IMPLEMENTED: g")
if True:
    def h():
        raise NotImplementedError("LINGXI_SKELETON_NOT_IMPLEMENTED: h")
lam = lambda: (y := 3)
'''


def _walked(tree: ast.AST) -> list[ast.AST]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.stmt)]


def test_every_statement_in_walk_order() -> None:
    tree = ast.parse(NESTED)
    assert _statements(tree) == _walked(tree)
    root = Path(lingxi.__file__).parent
    for path in sorted(root.rglob("*.py"))[:400]:
        tree = ast.parse(path.read_bytes())
        assert _statements(tree) == _walked(tree), path


def test_status_of_a_nested_skeleton(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks.py"
    hooks.write_text(NESTED, encoding="utf-8")
    status = skeleton_status(hooks)
    assert status.markers == ["AIGENORA_SKELETON", "LINGXI_SKELETON"]
    assert status.pending == ["f", "g", "h", "inner", "deep"]  # breadth first, as ast.walk
    tree = ast.parse(NESTED)
    by_walk = [node.name for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
               and any(isinstance(stmt, ast.Raise) for stmt in node.body)]
    assert status.pending == by_walk
    assert status.is_skeleton


@pytest.mark.parametrize("name", ["rock-paper-scissors", "crazy-eights"])
def test_built_in_hooks_are_not_skeletons(name: str) -> None:
    from lingxi.protocols import builtin_dir

    folder = builtin_dir(name)
    assert folder is not None
    assert not skeleton_status(folder / "hooks.py").is_skeleton
