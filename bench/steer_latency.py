#!/usr/bin/env python3
"""How long steered input waits: `turn/steer` while a turn runs a command,
through the real `parley app-server` over pipes, N times, medians and p99.

Figures, each from the client's receive times:
- ack: `turn/steer` sent -> its reply;
- join: the command's `item/completed` -> the steered `userMessage`'s
  `item/started` (the input joins the turn just before the model's next
  request, so this is what steering adds between a step and that request);
- answered: the command's `item/completed` -> the model's answer to the
  steered text completed (`agentMessage` `item/completed`): the next model
  request itself included (in-process for the scripted model; a loopback
  HTTP round trip with parley-mock-model).

Usage: steer_latency.py PARLEY [RUNS] [MOCK]   (bench/README.md)
  with MOCK (build/release/bench/parley-mock-model) the HTTP Responses
  provider is measured; without, the scripted model.
"""
import os
import shutil
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "transport"))
import app_server_peer  # noqa: E402

parley = os.path.abspath(sys.argv[1])
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 200
mock_binary = sys.argv[3] if len(sys.argv) > 3 else None

root = tempfile.mkdtemp(prefix="parley-steer-bench-")
home, work = os.path.join(root, "home"), os.path.join(root, "work")
os.makedirs(home)
os.makedirs(work)
env = dict(os.environ, CODEX_HOME=home, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
mock = None
if mock_binary:
    mock = app_server_peer.Mock(mock_binary, "--record=0")
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write('model = "mock-model"\nmodel_provider = "mock"\n'
                '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                'wire_api = "responses"\nrequires_openai_auth = false\n' % mock.url)
    first, steered = "mock: shell sleep 0.05", "mock: say steered"
else:
    first, steered = "run: sleep 0.05", "say: steered"

peer = app_server_peer.StdioPeer([parley, "app-server", "--home", home, "--cwd", work,
                                  "--store", "memory"], env, os.path.join(root, "stderr.log"))
thread = peer.start_thread(approvalPolicy="never", sandbox="danger-full-access")


def on(method, kind, turn, text=None):
    def pred(m):
        p = m.get("params") or {}
        item = p.get("item") or {}
        return (m.get("method") == method and p.get("turnId") == turn
                and item.get("type") == kind
                and (text is None or text in str(item.get("content"))))
    return pred


ack, join, answered = [], [], []
for _ in range(runs):
    turn = peer.start_turn(thread, first)
    peer.wait(on("item/started", "commandExecution", turn))
    sent_at = app_server_peer.time.monotonic()
    reply = peer.call("turn/steer", {"threadId": thread, "expectedTurnId": turn,
                                     "input": [{"type": "text", "text": steered}]})
    assert "result" in reply, reply
    ack.append(reply["_at"] - sent_at)
    done = peer.wait(on("item/completed", "commandExecution", turn))["_at"]
    joined = peer.wait(on("item/started", "userMessage", turn, steered))["_at"]
    said = peer.wait(on("item/completed", "agentMessage", turn))["_at"]
    peer.wait(lambda m: m.get("method") == "turn/completed"
              and m["params"]["turn"]["id"] == turn)
    peer.kept.clear()
    join.append(joined - done)
    answered.append(said - done)

peer.stop()
if mock:
    mock.stop()
shutil.rmtree(root, ignore_errors=True)


def figure(name, xs):
    xs = sorted(x * 1000 for x in xs)
    p99 = xs[min(len(xs) - 1, int(len(xs) * 0.99))]
    print("%-9s p50 %7.3f ms   p99 %7.3f ms   (%d runs)" % (name, statistics.median(xs), p99,
                                                            len(xs)))


print("model:", "parley-mock-model (HTTP Responses)" if mock else "scripted")
figure("ack", ack)
figure("join", join)
figure("answered", answered)
