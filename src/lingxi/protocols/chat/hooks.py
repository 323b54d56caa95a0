"""Chat hooks: lines from the local person go out; peer lines are kept, never interpreted.

Only the last KEPT lines stay in memory, so a long (or flooding) chat costs
the same as a short one; the state folder has the whole conversation.
"""

from lingxi.hooks import HookResult, Hooks

KEPT = 500


class ChatHooks(Hooks):
    def _keep(self, who, text):
        lines = self.state["transcript"]
        lines.append((who, text))
        del lines[:-KEPT]

    def proto_start(self):
        self.state.update(seq=0, peer_seq=0, transcript=[])

    def proto_next_message(self, allowed, decision=None):
        if "join" in allowed:
            return HookResult(response={"action": "join",
                                        "nickname": self.ctx.options["guest_nickname"]})
        return HookResult()

    def proto_on_message(self, message):
        action = message["action"]
        if action == "join":
            return HookResult(response={"action": "ready",
                                        "nickname": self.ctx.options["host_nickname"]})
        if action == "chat":
            if message["seq"] != self.state["peer_seq"] + 1:
                return HookResult(abort=f"chat line {message['seq']} is out of sequence")
            self.state["peer_seq"] = message["seq"]
            self._keep(self.ctx.peer, message["text"])
        return None

    def proto_on_input(self, line):
        if line.strip() in ("/quit", "/end"):
            return HookResult(completed=True)
        if not line.strip():
            return None
        self.state["seq"] += 1
        self._keep(self.ctx.role, line)
        return HookResult(response={"action": "chat", "seq": self.state["seq"], "text": line})

    def proto_describe(self, message):
        """The chat's words: each line numbered; who joined and when the chat is open."""
        if message["action"] == "chat":
            return f"#{message['seq']}: {message['text']}"
        if message["action"] == "join":
            return f"{message['nickname']} joins the chat"
        if message["action"] == "ready":
            return f"{message['nickname']} is here: type a line (Enter sends it, /quit leaves)"
        if message["action"] == "end":
            return "the chat is over"
        return None

    def proto_finish(self, outcome):
        return {"lines": len(self.state.get("transcript", []))}
