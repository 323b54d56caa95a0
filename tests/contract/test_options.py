"""Option validation against parameters, including nested table columns."""

from __future__ import annotations

import pytest

from lingxi.contract import OptionsError, load_spec

BALANCE = {
    "hp": 500, "mana": 100, "mana_regen": 5, "atk": 30,
    "skill_a": {"dmg": 60, "cost": 20, "cd": 2},
    "skill_b": {"dmg": 90, "cost": 40, "cd": 3},
    "ult": {"dmg": 200, "cost": 80, "cd": 6},
}


@pytest.fixture
def hero(protocol_vectors):
    return load_spec(protocol_vectors["hero-duel.spec.json"][0])


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


def test_defaults_are_applied_and_copied(protocol_vectors):
    spec = load_spec(protocol_vectors["crazy-eights.spec.json"][0])
    values = spec.check_options({}).values
    assert values == {"hand_size": 5, "min_think_seconds": 0, "max_think_seconds": 120}
    assert spec.check_options({"hand_size": 7}).values["hand_size"] == 7
    values["hand_size"] = 99
    assert spec.check_options({}).values["hand_size"] == 5


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


def test_text_and_id_parameters(protocol_vectors):
    tank = load_spec(protocol_vectors["tank-battle.spec.json"][0])
    assert tank.check_options({"map_text": "#" * 32768}).values["map_text"]
    with pytest.raises(OptionsError) as caught:
        tank.check_options({"map_text": "#" * 32769, "pickup_mode": "all"})
    assert [f.code for f in caught.value.findings] == ["options.too_long", "options.bad_value"]
    hero = load_spec(protocol_vectors["hero-duel.spec.json"][0])
    with pytest.raises(OptionsError):
        hero.check_options({"host_hero": "bad hero name"})
