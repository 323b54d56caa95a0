"""Word-count service hooks: the host counts, the guest checks the delivery."""

from lingxi.hooks import DecisionPoint, HookResult, Hooks


def count(text):
    return {"lines": len(text.splitlines()), "words": len(text.split()),
            "characters": len(text)}


class WordCountHooks(Hooks):
    def proto_decision_point(self, allowed):
        if "request" in allowed:
            return DecisionPoint(message="the text to count (one line; Enter sends it)",
                                 view={"ask": "text to count"},
                                 default=self.ctx.options["sample_text"])
        return None

    def proto_next_message(self, allowed, decision=None):
        if "request" in allowed:
            text = decision if isinstance(decision, str) else self.ctx.options["sample_text"]
            self.state["text"] = text
            return HookResult(response={"action": "request", "text": text})
        return HookResult()

    def proto_on_message(self, message):
        action = message["action"]
        if action == "request":
            counts = count(message["text"])
            self.state["counts"] = counts
            return HookResult(response=[{"action": "progress", "percent": 50},
                                        {"action": "delivery", **counts}])
        if action == "delivery":
            delivered = {k: message[k] for k in ("lines", "words", "characters")}
            self.state["counts"] = delivered
            ok = delivered == count(self.state["text"])
            self.state["accepted"] = ok
            return HookResult(response={"action": "ack", "accepted": ok})
        if action == "ack":
            self.state["accepted"] = message["accepted"]
        elif action == "error":
            return HookResult(abort=f"peer reported {message['reason']}")
        return None

    def proto_describe(self, message):
        """The service's words: what was asked, delivered and accepted."""
        action = message["action"]
        if action == "request":
            return f"count the words of a text of {len(message['text'])} characters"
        if action == "progress":
            return f"counting: {message['percent']}%"
        if action == "delivery":
            return (f"delivered: {message['lines']} lines, {message['words']} words, "
                    f"{message['characters']} characters")
        if action == "ack":
            return "the counts are accepted" if message["accepted"] else \
                "the counts are refused: they do not match the text"
        return None

    def proto_finish(self, outcome):
        return {"counts": self.state.get("counts"), "accepted": self.state.get("accepted")}
