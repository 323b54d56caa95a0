"""Option validation against parameters, including nested table columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from lingxi.contract import OptionsError, load_spec

HERO_DUEL = Path(__file__).resolve().parents[2] / "src" / "lingxi" / "protocols" / "hero-duel"

BALANCE = {
    "hp": 500, "mana": 100, "mana_regen": 5, "atk": 30,
    "skill_a": {"dmg": 60, "cost": 20, "cd": 2},
    "skill_b": {"dmg": 90, "cost": 40, "cd": 3},
    "ult": {"dmg": 200, "cost": 80, "cd": 6},
}


@pytest.fixture
def hero():
    """The built-in hero-duel protocol: a balance table with nested object columns."""
    return load_spec(HERO_DUEL)


def error_lines(error: OptionsError) -> list[str]:
    return [f"{f.path}: {f.message}" for f in error.findings if f.is_error]


def test_valid_table_and_scalars(hero):
    options = hero.check_options({"balance": BALANCE, "max_rounds": 30, "host_hero": "axe"})
    assert options.values["balance"] == BALANCE and options.warnings == []


def test_table_errors_name_the_dotted_path(hero):
    balance = {**BALANCE, "skill_a": {"dmg": 60, "cost": 20, "cd": 100}}
    with pytest.raises(OptionsError) as caught:
        hero.check_options({"balance": balance})
    assert error_lines(caught.value) == ["balance.skill_a.cd: above max 99"]
    assert caught.value.code == "options.out_of_range" and caught.value.exit_code == 1


def test_table_columns_are_all_required_and_unknown_keys_rejected(hero):
    balance = {k: v for k, v in BALANCE.items() if k != "atk"}
    balance["crit"] = 5
    balance["ult"] = {"dmg": 1, "cost": 1}
    balance["skill_b"] = 7
    balance["mana"] = True
    with pytest.raises(OptionsError) as caught:
        hero.check_options({"balance": balance})
    assert {(f.path, f.code) for f in caught.value.findings} == {
        ("balance.crit", "options.unknown_field"),
        ("balance.atk", "options.missing_field"),
        ("balance.ult.cd", "options.missing_field"),
        ("balance.skill_b", "options.wrong_type"),
        ("balance.mana", "options.wrong_type"),
    }


def test_table_with_enum_and_boolean_leaves(base_spec):
    base_spec["parameters"]["t"] = {"type": "table", "columns": {
        "mode": {"type": "enum", "values": ["x", "y"]}, "on": {"type": "boolean"}}}
    spec = load_spec(base_spec)
    assert spec.check_options({"t": {"mode": "x", "on": False}}).values["t"]["on"] is False
    findings = spec.option_findings({"t": {"mode": "z", "on": 1}})
    assert [(f.path, f.code) for f in findings] == [
        ("t.mode", "options.bad_value"), ("t.on", "options.wrong_type")]


def test_undeclared_keys_are_warnings_and_never_in_values(base_spec):
    spec = load_spec(base_spec)
    options = spec.check_options({"max_attempts": 5, "price": "10 credits"})
    assert options.values == {"max_attempts": 5}
    assert [(w.path, w.code, w.severity) for w in options.warnings] == [
        ("price", "options.undeclared", "warning")]


def test_defaults_are_applied_and_copied(corpus):
    spec = load_spec(corpus["lantern-maze"])
    values = spec.check_options({}).values
    assert values == {"size": 8, "dark": False, "theme": "stone",
                      "welcome": "mind the minotaur", "maze_id": "maze-1"}
    assert spec.check_options({"size": 7}).values["size"] == 7
    values["size"] = 99
    assert spec.check_options({}).values["size"] == 8
    table = load_spec(corpus["arena-clash"]).check_options({}).values["balance"]
    table["weapon"]["reload"]["ticks"] = 50
    again = load_spec(corpus["arena-clash"]).check_options({}).values["balance"]
    assert again["weapon"]["reload"]["ticks"] == 3


def test_values_are_a_copy_of_the_input(hero):
    balance = {k: (dict(v) if isinstance(v, dict) else v) for k, v in BALANCE.items()}
    options = hero.check_options({"balance": balance})
    balance["hp"] = 1
    assert options.values["balance"]["hp"] == 500


@pytest.mark.parametrize("options,path,code", [
    ({"max_attempts": 0}, "max_attempts", "options.out_of_range"),
    ({"max_attempts": 21}, "max_attempts", "options.out_of_range"),
    ({"max_attempts": "3"}, "max_attempts", "options.wrong_type"),
    ({"max_attempts": True}, "max_attempts", "options.wrong_type"),
    ([], "$", "options.not_object"),
    (None, "$", "options.not_object"),
])
def test_scalar_option_errors(base_spec, options, path, code):
    spec = load_spec(base_spec)
    with pytest.raises(OptionsError) as caught:
        spec.check_options(options)
    assert [(f.path, f.code) for f in caught.value.findings] == [(path, code)]


def test_text_and_id_parameters(corpus, hero):
    arena = load_spec(corpus["arena-clash"])
    assert arena.check_options({"arena": "#" * 4096}).values["arena"]
    with pytest.raises(OptionsError) as caught:
        arena.check_options({"arena": "#" * 4097, "arena_id": "two words"})
    assert [f.code for f in caught.value.findings] == ["options.too_long", "options.bad_value"]
    with pytest.raises(OptionsError):
        hero.check_options({"host_hero": "bad hero name"})


def test_machine_type_parameters(corpus):
    notary = load_spec(corpus["notary"])
    good = {"notary_key": "ab" * 32, "seal_hash": "cd" * 32, "stamp": "ef" * 64,
            "voucher": "T-1"}
    assert notary.check_options(good).values == good
    findings = notary.option_findings({"notary_key": "AB" * 32, "voucher": ""})
    assert [(f.path, f.code) for f in findings] == [
        ("notary_key", "options.bad_value"), ("voucher", "options.bad_value")]
    cards = load_spec(corpus["blind-cards"])
    findings = cards.option_findings({"sealed_rules": "", "table_blob": "", "deck_seed": "0"})
    # an empty ot_blob (table_blob) is accepted, like the published validator does
    assert {f.path for f in findings if f.code == "options.bad_value"} == {
        "sealed_rules", "deck_seed"}
