"""Regressions for the core seams: one nonce rule, honest adversarial results,
injected entropy, the Compute action, peer receipts of the wrong shape."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from auction_protocol import SPEC as AUCTION
from auction_protocol import write as write_auction
from click.testing import CliRunner
from session_helpers import LOOP_SPEC, PingPong

from lingxi.cli import cli
from lingxi.contract import SpecError, load_spec
from lingxi.contract.commit_reveal import CommitReveal
from lingxi.session import SessionConfig, load_protocol, run_pair
from lingxi.session.adversarial import run_adversarial
from lingxi.session.core.adversaries import MutateNth
from lingxi.session.core.entropy import seeded
from lingxi.session.core.events import Send, Start
from lingxi.session.core.modes.loop import SessionLoopMachine
from lingxi.session.drivers.memory import LocalPair
from lingxi.session.net import memory_session
from lingxi.session.record.receipts import check_receipt, settle
from lingxi.session.record.transcript import Transcript

runner = CliRunner()


def run(*args: str):
    return runner.invoke(cli, list(args))


# ------------------------------------------------------------- one nonce rule


def test_an_alphanumeric_nonce_charset_is_refused_when_the_spec_loads(tmp_path: Path) -> None:
    """Regression: validate said ok, then every session aborted with hooks.invalid_message."""
    spec = {**AUCTION, "commit_reveal": {"nonce_length": 20, "nonce_charset": "alphanumeric"}}
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    assert [f.code for f in info.value.findings if f.is_error] == ["spec.bad_commit_reveal"]
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    result = run("protocol", "validate", str(tmp_path))
    assert result.exit_code == 1 and "nonce_charset" in result.output


@pytest.mark.parametrize("length", [16, 17, 33, 64])
def test_every_nonce_length_validate_accepts_runs(tmp_path: Path, length: int) -> None:
    spec = {**AUCTION, "commit_reveal": {"nonce_length": length, "nonce_charset": "hex (0-9a-f)"}}
    loaded = load_spec(spec)
    nonce = CommitReveal.from_block(spec["commit_reveal"]).make_nonce(seeded(length))
    assert len(nonce) == length
    loaded.check_message({"action": "reveal", "round": 1, "bid": 3, "nonce": nonce},
                         "host_to_guest")
    folder = write_auction(tmp_path / "auction")
    (folder / "spec.json").write_text(json.dumps(spec))
    result = run_pair(load_protocol(folder), options={"lots": 2}, seed=1)
    assert result.host.status == result.guest.status == "completed", result.guest.reason


# ------------------------------------------------------ honest adversarial runs


def test_shadow_judge_catches_a_lie_in_a_field_not_named_like_hero_duel(tmp_path: Path) -> None:
    protocol = load_protocol(write_auction(tmp_path / "auction"))
    honest = run_pair(protocol, options={"lots": 3}, seed=2)
    assert honest.guest.status == "completed"
    checked = [e for e in honest.events["guest"] if e["event"] == "shadow_judge.checked"]
    assert checked and checked[0]["fields"] == ["guest_budget", "host_budget", "winner"]

    def overcharge(payload):
        payload["guest_budget"] -= 5  # the host says the guest paid more than it bid
        return payload

    lied = run_pair(protocol, options={"lots": 3}, seed=2,
                    adversary=("host", MutateNth("settle", overcharge, 2)))
    assert lied.guest.code == "session.balance_mismatch" and lied.guest.by == "local"
    violation = next(e for e in lied.events["guest"] if e["event"] == "violation")
    assert set(violation["evidence"]["diff"]) == {"guest_budget"}


def test_adversarial_run_probes_the_judged_fields_and_reports_rules_apart(tmp_path: Path) -> None:
    folder = write_auction(tmp_path / "auction")
    result = run("protocol", "test", str(folder), "--adversarial", "--json",
                 "--state-dir", str(tmp_path / "state"))
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["adversarial"]
    lie = next(r for r in report["results"] if r["case"].startswith("shadow-judge lie"))
    assert lie["ok"] and lie["detected"] == "session.balance_mismatch"
    assert lie["case"] == "shadow-judge lie in settle.guest_budget"
    assert report["rules"], "rule probes ran"
    counted = {r["case"] for r in report["results"]}
    assert not counted & {p["probe"] for p in report["rules"]}
    assert {p["reaction"] for p in report["rules"]} <= {"aborted", "ended", "continued",
                                                         "engine", "stuck"}
    text = run("protocol", "test", str(folder), "--adversarial",
               "--state-dir", str(tmp_path / "state2")).output
    assert text.index("adversarial:") < text.index("rules (the hooks' duty")


def test_shadow_judge_spec_without_a_pure_judge_gives_no_traceback(tmp_path: Path) -> None:
    """Regression: KeyError: None in the adversarial library for such a spec."""
    folder = write_auction(tmp_path / "auction", pure=False)
    result = run("protocol", "test", str(folder), "--adversarial", "--json",
                 "--state-dir", str(tmp_path / "state"))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    report = json.loads(result.output)["adversarial"]
    lie = next(r for r in report["results"] if r["case"].startswith("shadow-judge lie"))
    assert not lie["applicable"] and "compared no field" in lie["detail"]


def test_rule_probes_are_never_counted_as_cheats_detected() -> None:
    report = run_adversarial(load_protocol("rock-paper-scissors"), seed=1)
    data = report.to_dict()
    assert data["detected"] == sum(1 for r in report.results if r.applicable and r.ok)
    assert data["rules"] and all("probe" in p for p in data["rules"])


# ------------------------------------------------------------------- entropy


def _first_commit(**kwargs) -> str:
    protocol = load_protocol("rock-paper-scissors")
    from lingxi.session.core.registry import make_machine

    host = make_machine("host", protocol.spec, protocol.hooks("host", 1),
                        options={}, config=SessionConfig(control_mode="autonomous"), **kwargs)
    guest = make_machine("guest", protocol.spec, protocol.hooks("guest", 1),
                         config=SessionConfig(control_mode="autonomous"), **kwargs)
    result = LocalPair(host, guest, seed=1).run()
    return next(e["payload"]["hash"] for e in result.events["host"]
                if e["event"] == "message.sent" and e["message"] == "commit")


def test_nonces_come_from_the_os_unless_a_source_is_injected() -> None:
    """Regression: the default was random.Random(0), so forgetting rng leaked nonces."""
    assert _first_commit() != _first_commit()  # same game seed, fresh nonces
    assert _first_commit(entropy=seeded("x")) == _first_commit(entropy=seeded("x"))


def test_host_help_says_seed_never_touches_nonces() -> None:
    text = run("host", "--help").output + run("guest", "--help").output
    assert text.count("never nonces or keys") == 2


# ------------------------------------------------------------------- compute


class Squarer(SessionLoopMachine):
    """Pings carry the square of n, computed through a Compute action."""

    threads: list[str] = []

    def compose(self, mine):
        if self.role == "guest" and "ping" in mine:
            n = self.hooks.state.get("n", 0) + 1
            self.hooks.state["n"] = n

            def work(n=n):
                Squarer.threads.append(threading.current_thread().name)
                return n * n

            self.compute("square", work, lambda value, n=n: self.send(
                {"action": "ping", "n": n if value == n * n else 99}))
            return
        super().compose(mine)


def _squarers():
    spec = load_spec(LOOP_SPEC)
    from lingxi.hooks import HookContext

    return [Squarer(role=role, spec=spec, hooks=PingPong(HookContext(role, spec)),
                    options={"rounds": 3} if role == "host" else None, entropy=seeded(role))
            for role in ("host", "guest")]


def test_compute_runs_inline_in_the_memory_driver() -> None:
    Squarer.threads.clear()
    host, guest = _squarers()
    result = LocalPair(host, guest).run()
    assert result.host.status == "completed" and result.host.rounds == 3
    assert Squarer.threads == [threading.current_thread().name] * 3


def test_compute_actions_are_emitted_and_resumed() -> None:
    _, guest = _squarers()
    guest.handle(Start())
    from lingxi.session.core.events import Compute, ComputeDone, ControlReceived

    actions = guest.handle(ControlReceived("offer", {"protocol_id": guest.spec.protocol_id,
                                                     "options": {"rounds": 3}}))
    computes = [a for a in actions if isinstance(a, Compute)]
    assert len(computes) == 1 and not [a for a in actions if isinstance(a, Send)
                                       and a.message == "ping"]
    sent = guest.handle(ComputeDone(computes[0].name, computes[0].work()))
    assert [a.payload for a in sent if isinstance(a, Send)] == [{"action": "ping", "n": 1}]


def test_a_failed_compute_is_a_violation_not_a_crash() -> None:
    _, guest = _squarers()
    guest.handle(Start())
    from lingxi.session.core.events import ComputeDone, ControlReceived, Finish

    guest.handle(ControlReceived("offer", {"protocol_id": guest.spec.protocol_id,
                                           "options": {"rounds": 3}}))
    out = guest.handle(ComputeDone("square", ValueError("bad proof")))
    finish = next(a for a in out if isinstance(a, Finish))
    assert finish.outcome.status == "aborted" and "bad proof" in finish.outcome.reason


def test_compute_runs_in_a_worker_thread_in_the_network_driver() -> None:
    Squarer.threads.clear()

    class Ready:
        spec = load_spec(LOOP_SPEC)

        def hooks(self, role, seed):
            from lingxi.hooks import HookContext

            return PingPong(HookContext(role, self.spec))

    from lingxi.session.core import registry
    from lingxi.session.core.descriptor import FlowMode

    original = registry.flow_mode("session_loop")
    registry.register(FlowMode("session_loop", lambda spec: Squarer, original.hook_methods))
    try:
        host, guest = asyncio.run(memory_session(Ready(), options={"rounds": 2}))
    finally:
        registry.register(original)
    assert host.outcome.status == "completed" and guest.outcome.status == "completed"
    assert len(Squarer.threads) == 2
    assert all(name != threading.main_thread().name for name in Squarer.threads)


# ------------------------------------------------------------ peer receipts


@pytest.mark.parametrize("field,value", [("chains", [1]), ("chains", "x"), ("count", "x"),
                                         ("head", 7), ("count", [1]), ("chains", None)])
def test_a_peer_receipt_of_the_wrong_shape_is_reported_not_raised(field, value) -> None:
    transcript = Transcript()
    transcript.add("host_to_guest", {"payload": {"action": "x"}}, "sent")
    receipt = {"kind": "lingxi.session.receipt/1", "session_id": "s", "protocol_id": "p",
               "role": "guest", "public_key": "ab" * 32, "status": "completed",
               "chains": transcript.heads(), "head": transcript.head(), "signature": "cd" * 64}
    if field == "count":
        receipt["chains"] = {**receipt["chains"],
                             "host_to_guest": {"count": value, "head": "0" * 64}}
    else:
        receipt[field] = value
    problems = check_receipt(receipt, transcript)
    assert problems and problems[0].startswith("receipt.malformed")
    mine = {"local": True}
    record = settle(mine, receipt, transcript, peer_key="ab" * 32, session_id="s")
    assert record["local"] is mine and record["peer_problems"] == problems


def test_an_in_memory_protocol_test_imports_no_network_module(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from lingxi.cli import cli\n"
        f"r = CliRunner().invoke(cli, ['protocol', 'test', 'rock-paper-scissors', "
        f"'--state-dir', {str(tmp_path)!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "print(' '.join(m for m in ('ssl', 'socket', 'asyncio') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == ""


# ------------------------------------------------------------- the catalogue


def test_the_cache_reverifies_ids_and_skeletons_specs_without_hooks(tmp_path: Path,
                                                                   monkeypatch) -> None:
    from lingxi.errors import LingxiError
    from lingxi.hooks import skeleton_status
    from lingxi.protocols.catalogue import cache_dir, ensure_hooks, folder_for_id, store_spec
    from lingxi.session import flow_mode

    monkeypatch.setenv("LINGXI_HOME", str(tmp_path))
    document = json.loads((load_protocol("word-count").folder / "spec.json").read_text())
    document["rules"] = {**document.get("rules", {}), "fetched": "from a registry"}
    pid, folder = store_spec(document)
    assert folder == cache_dir(pid) and folder.is_relative_to(tmp_path / "protocols")
    written = ensure_hooks(folder, flow_mode("request_response").skeleton_methods(document))
    assert written is not None and skeleton_status(written).is_skeleton
    assert ensure_hooks(folder, []) is None  # never overwrites hooks
    with pytest.raises(LingxiError) as info:
        load_protocol(folder)
    assert info.value.code == "hooks.skeleton"
    tampered = dict(document, rules={"changed": "yes"})
    (folder / "spec.json").write_text(json.dumps(tampered))
    with pytest.raises(LingxiError) as info:
        folder_for_id(pid)
    assert info.value.code == "protocol.id_mismatch"
    for bad in ("AAAAAAAA/etc", "../" * 3, pid.upper(), pid[:-1]):
        with pytest.raises(LingxiError) as info:
            cache_dir(bad)
        assert info.value.code == "protocol.bad_id"


# ------------------------------------------------------- the signed result


@pytest.mark.parametrize("protocol,options", [("rock-paper-scissors", {"best_of": 3}),
                                              ("guess-number", {}), ("crazy-eights", {})])
def test_both_receipts_sign_the_winner_the_game_ended_with(protocol, options) -> None:
    """The registry rates a session only from the ``result`` both receipts sign."""
    result = run_pair(load_protocol(protocol), options=options, seed=5)
    assert result.host.ok and result.receipt_problems == {"host": [], "guest": []}
    winner = result.host.summary["winner"]
    assert winner in ("host", "guest", "draw") and result.guest.summary["winner"] == winner
    assert {role: r.get("result") for role, r in result.receipts.items()} == \
        {"host": winner, "guest": winner}


def test_an_aborted_session_signs_no_result() -> None:
    def lie(payload):
        return {**payload, "round_winner": "host" if payload["round_winner"] != "host"
                else "guest"}

    result = run_pair(load_protocol("rock-paper-scissors"), options={"best_of": 3}, seed=5,
                      adversary=("host", MutateNth("round_result", lie, 1)))
    assert not result.guest.ok
    for receipt in result.receipts.values():
        assert receipt["status"] == "aborted" and "result" not in receipt


def test_a_result_rewritten_after_signing_breaks_the_signature() -> None:
    result = run_pair(load_protocol("rock-paper-scissors"), options={"best_of": 3}, seed=5)
    receipt = {**result.receipts["host"]}
    forged = "the receipt's Ed25519 signature does not verify"
    assert forged not in check_receipt(receipt, Transcript())
    receipt["result"] = "guest" if receipt["result"] != "guest" else "host"
    assert forged in check_receipt(receipt, Transcript())
    receipt["result"] = "nobody"
    assert check_receipt(receipt, Transcript())[0].startswith("receipt.malformed: result")
