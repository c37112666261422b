#!/usr/bin/env python3
"""Attacks on termgate's protocol stream and process lifetime, over real OS pipes.

The client side of every scenario talks to the server through os.pipe()s
(subprocess.PIPE), as the Python SDK and most non-Node clients do; Node's
own child stdio would be socketpairs, which /proc/<pid>/fd cannot reopen.

Usage:
  pipe_attack.py --bin BIN [--mode serve|acp-proxy] [--agent RAW_AGENT]
                 [--server-arg ARG]... [--launcher ARG]... SCENARIO [ARGS]

Scenarios (each prints one JSON object on stdout):
  inject                 a command writes a forged JSON-RPC answer and a broken
                         fragment to /proc/$PPID/fd/1;
                         -> {"opened": bool, "forged_seen": bool, "garbage_lines": n, "client_ok": bool}
  steal                  a command reads /proc/$PPID/fd/0 while the client sends
                         requests; -> {"opened": bool, "stolen_bytes": n, "client_ok": bool}
  escape FORM ENDING     FORM in setsid, setsid-f, node-detached, python-setsid;
                         ENDING in kill, release, sigterm, sigint, eof (under acp-proxy, kill
                         and release are the agent's requests and eof is the editor's);
                         -> {"survivors": n, "exit_status": ..., "leader_exited_with_survivors": bool}

--server-arg is passed to `serve` / `acp-proxy` (before `--`), e.g. a policy
with a sandbox: the same scenarios then show what the sandbox holds.
--launcher (repeatable) prefixes the server's argv, e.g. `setpriv --reuid=65534
--regid=65534 --clear-groups` to run it as an unprivileged user.
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "pipe-attack", "version": "0"},
}
FORGED = '{"jsonrpc":"2.0","id":"forged","result":{"forged":true}}'


class Peer:
    """A child process spoken to in JSON lines over OS pipes."""

    def __init__(self, argv, cwd):
        self.proc = subprocess.Popen(
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        self.lines = []
        self.stderr_lines = []
        self.lock = threading.Condition()
        CURRENT_PEER.append(self)
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr_lines), daemon=True).start()

    def _read(self, stream, into):
        for raw in iter(stream.readline, b""):
            with self.lock:
                into.append(raw.decode("utf-8", "replace").rstrip("\n"))
                self.lock.notify_all()
        with self.lock:
            self.lock.notify_all()

    def send_line(self, text):
        try:
            self.proc.stdin.write((text + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def wait_for(self, predicate, source=None, timeout=10.0):
        source = self.lines if source is None else source
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for line in source:
                    value = predicate(line)
                    if value:
                        return value
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)

    def parsed(self):
        out = []
        for line in list(self.lines):
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append(None)
        return out

    def stop(self, timeout=15):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class McpClient:
    def __init__(self, peer):
        self.peer = peer
        self.next_id = 1

    def call(self, name, arguments, timeout=60.0):
        request_id = self.next_id
        self.next_id += 1
        params = {"name": name, "arguments": arguments, "_meta": MODERN_META}
        self.peer.send_line(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}))
        return self.answer(request_id, timeout)

    def ping(self, request_id, timeout=5.0):
        self.peer.send_line(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}))
        return self.answer(request_id, timeout)

    def answer(self, request_id, timeout):
        def match(line):
            try:
                message = json.loads(line)
            except ValueError:
                return None
            if isinstance(message, dict) and message.get("id") == request_id and ("result" in message or "error" in message):
                return message
            return None

        return self.peer.wait_for(match, timeout=timeout)


CURRENT_PEER = []


def structured(answer):
    if answer is None or "result" not in answer or "structuredContent" not in answer["result"]:
        peer = CURRENT_PEER[-1] if CURRENT_PEER else None
        detail = ""
        if peer is not None:
            detail = "\nserver exit: %r\nserver stderr (tail):\n%s\nstdout (tail):\n%s" % (
                peer.proc.poll(),
                "\n".join(peer.stderr_lines[-20:]),
                "\n".join(line[:300] for line in peer.lines[-5:]),
            )
        raise RuntimeError("no result: %r%s" % (answer, detail))
    return answer["result"]["structuredContent"]


def serve_peer(args):
    argv = args.launcher + ["node", args.bin, "serve", "--log-level", "silent"] + args.server_arg
    return Peer(argv, args.cwd)


# The attacks run as argv commands (python3 -c CODE): the policy judges them as
# one simple command, as it would any program that opens files itself.
INJECT_CODE = r"""
import os
try:
    fd = os.open('/proc/' + str(os.getppid()) + '/fd/1', os.O_WRONLY | os.O_APPEND)
except OSError as error:
    print('denied', error, flush=True)
    raise SystemExit(0)
print('opened', flush=True)
os.write(fd, (FORGED + '\n' + '{"broken').encode())
"""


def inject_spec():
    return {"command": "python3", "args": ["-c", "FORGED = %r\n%s" % (FORGED, INJECT_CODE)]}


STEAL_CODE = r"""
import os, select, sys, time
try:
    fd = os.open('/proc/' + str(os.getppid()) + '/fd/0', os.O_RDONLY | os.O_NONBLOCK)
except OSError as error:
    print('denied', error, flush=True)
    raise SystemExit(0)
print('opened', flush=True)
end = time.monotonic() + 3
with open(sys.argv[1], 'wb') as out:
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                continue
            out.write(data)
            out.flush()
"""


def steal_spec(out_file):
    return {"command": "python3", "args": ["-c", STEAL_CODE, out_file]}


def scenario_inject_serve(args):
    peer = serve_peer(args)
    client = McpClient(peer)
    try:
        created = client.call("terminal_create", inject_spec())
        output = ""
        # The fragment may corrupt the create's own answer (the attack's point): then there is no id to ask about.
        if created is not None and "structuredContent" in created.get("result", {}):
            terminal = created["result"]["structuredContent"]["terminalId"]
            # An answer the fragment corrupted never resolves: short waits from here.
            client.call("terminal_wait_for_exit", {"terminalId": terminal, "timeoutSeconds": 10}, timeout=12.0)
            answer = client.call("terminal_output", {"terminalId": terminal}, timeout=5.0)
            output = answer["result"]["structuredContent"]["output"] if answer and "result" in answer else ""
        else:
            time.sleep(2.0)
        ok = all(client.ping("after-%d" % i) is not None for i in range(3))
        parsed = peer.parsed()
        return {
            "output": output,
            "opened": "opened" in output,
            "forged_seen": any(isinstance(m, dict) and m.get("id") == "forged" for m in parsed),
            "garbage_lines": sum(1 for m in parsed if m is None),
            "client_ok": ok,
        }
    finally:
        peer.stop()


def scenario_steal_serve(args):
    out_file = os.path.join(tempfile.mkdtemp(prefix="termgate-steal-"), "stolen")
    peer = serve_peer(args)
    client = McpClient(peer)
    try:
        terminal = structured(client.call("terminal_create", steal_spec(out_file)))["terminalId"]
        # Give the command time to open (or fail to open) the server's stdin; requests from now on may be stolen.
        time.sleep(1.0)
        answered = 0
        for i in range(5):
            if client.ping("steal-%d" % i, timeout=2.0) is not None:
                answered += 1
            time.sleep(0.1)
        time.sleep(3.0)  # the stealer reads for 3 s at most
        output = ""
        for _ in range(3):  # a request cut by the theft is lost: ask again
            finished = client.call("terminal_output", {"terminalId": terminal}, timeout=3.0)
            if finished is not None and "structuredContent" in finished.get("result", {}):
                output = finished["result"]["structuredContent"]["output"]
                break
        stolen = os.path.getsize(out_file) if os.path.exists(out_file) else 0
        return {"output": output, "opened": "opened" in output, "stolen_bytes": stolen, "client_ok": answered == 5}
    finally:
        peer.stop()


def acp_peer(args, steps, workdir):
    script = os.path.join(workdir, "script.json")
    with open(script, "w") as f:
        json.dump(steps, f)
    argv = (
        args.launcher
        + ["node", args.bin, "acp-proxy", "--log-level", "silent"]
        + args.server_arg
        + ["--", "node", args.agent, script]
    )
    return Peer(argv, args.cwd)


def terminal_request(id_text, method, params):
    body = dict({"sessionId": "s1"}, **params)
    return '{"jsonrpc":"2.0","id":%s,"method":"terminal/%s","params":%s}' % (id_text, method, json.dumps(body))


def agent_saw(peer, text, timeout=10.0):
    return peer.wait_for(lambda l: l if l.startswith("FROM-PROXY ") and text in l else None, peer.stderr_lines, timeout)


def scenario_inject_acp(args):
    workdir = tempfile.mkdtemp(prefix="termgate-acp-attack-")
    steps = [
        {"send": terminal_request("1", "create", inject_spec())},
        {"waitFor": '"id":1,'},
        {"send": terminal_request("2", "wait_for_exit", {"terminalId": "{{terminalId}}"})},
        {"waitFor": '"id":2,'},
        {"send": terminal_request("3", "output", {"terminalId": "{{terminalId}}"})},
        {"waitFor": '"id":3,'},
    ]
    peer = acp_peer(args, steps, workdir)
    try:
        answer = agent_saw(peer, '"id":3,', 20)
        output = json.loads(answer[len("FROM-PROXY "):])["result"]["output"] if answer else ""
        # The editor side still works: a request reaches the agent.
        peer.send_line('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1","marker":"after"}}')
        ok = agent_saw(peer, '"marker":"after"', 5) is not None
        parsed = peer.parsed()
        return {
            "output": output,
            "opened": "opened" in output,
            "forged_seen": any(isinstance(m, dict) and m.get("id") == "forged" for m in parsed),
            "garbage_lines": sum(1 for m in parsed if m is None),
            "client_ok": ok,
        }
    finally:
        peer.stop()


def scenario_steal_acp(args):
    workdir = tempfile.mkdtemp(prefix="termgate-acp-attack-")
    out_file = os.path.join(workdir, "stolen")
    steps = [
        {"send": terminal_request("1", "create", steal_spec(out_file))},
        {"waitFor": '"id":1,'},
        {"sleep": 500},
        {"send": terminal_request("2", "wait_for_exit", {"terminalId": "{{terminalId}}"})},
        {"waitFor": '"id":2,'},
        {"send": terminal_request("3", "output", {"terminalId": "{{terminalId}}"})},
        {"waitFor": '"id":3,'},
    ]
    peer = acp_peer(args, steps, workdir)
    try:
        time.sleep(1.0)
        for i in range(5):
            peer.send_line('{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s1","marker":"m%d"}}' % i)
            time.sleep(0.1)
        received = sum(1 for i in range(5) if agent_saw(peer, '"marker":"m%d"' % i, 5) is not None)
        answer = agent_saw(peer, '"id":3,', 20)
        output = json.loads(answer[len("FROM-PROXY "):])["result"]["output"] if answer else ""
        stolen = os.path.getsize(out_file) if os.path.exists(out_file) else 0
        return {"output": output, "opened": "opened" in output, "stolen_bytes": stolen, "client_ok": received == 5}
    finally:
        peer.stop()


ESCAPES = {
    "setsid": "setsid sleep {m}",
    "setsid-f": "setsid -f sleep {m}; sleep 1000",
    "node-detached": "node -e \"require('child_process').spawn('sleep',['{m}'],{{detached:true,stdio:'ignore'}}).unref()\"; sleep 1000",
    "python-setsid": "python3 -c \"import os\nif os.fork()==0:\n os.setsid(); os.execvp('sleep',['sleep','{m}'])\"; sleep 1000",
}


def pids_running(marker):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % entry, "rb") as f:
                argv = f.read().split(b"\0")
            with open("/proc/%s/stat" % entry) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in argv and state not in ("Z", "X"):
            found.append(int(entry))
    return found


def scenario_escape_acp(args):
    """The same escapes under acp-proxy: the agent creates the terminal; kill and release are its terminal/* requests."""
    form, ending = args.rest
    marker = "1000.%06d" % random.randrange(10**6)
    workdir = tempfile.mkdtemp(prefix="termgate-acp-escape-")
    steps = [
        {"send": terminal_request("1", "create", {"command": ESCAPES[form].format(m=marker)})},
        {"waitFor": '"id":1,'},
        {"sleep": 1500},
    ]
    if ending in ("kill", "release"):
        steps += [
            {"send": terminal_request("2", ending, {"terminalId": "{{terminalId}}"})},
            {"waitFor": '"id":2,'},
        ]
    peer = acp_peer(args, steps, workdir)
    try:
        # The proxy, its agent and the judge start first: generous under load, free when quick.
        deadline = time.monotonic() + 40
        while not pids_running(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = pids_running(marker)
        if not started:
            return {"error": "the escaping process never started", "stderr": peer.stderr_lines[-5:]}
        if ending in ("kill", "release"):
            agent_saw(peer, '"id":2,', 20)
        elif ending in ("sigterm", "sigint"):
            peer.proc.send_signal(signal.SIGTERM if ending == "sigterm" else signal.SIGINT)
            peer.proc.wait(20)
        elif ending == "eof":
            peer.proc.stdin.close()
            peer.proc.wait(20)
        deadline = time.monotonic() + 8
        while pids_running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        return {"survivors": len(pids_running(marker)), "started": len(started)}
    finally:
        for pid in pids_running(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        peer.stop()


def scenario_escape(args):
    form, ending = args.rest
    marker = "1000.%06d" % random.randrange(10**6)
    peer = serve_peer(args)
    client = McpClient(peer)
    survivors = []
    status = None
    leader_exited_with_survivors = False
    try:
        # waitSeconds 0: the handle at once (the escape is watched on the host below), not after
        # the default one-call wait that a leader such as `sleep 1000` would use up.
        terminal = structured(
            client.call("terminal_create", {"command": ESCAPES[form].format(m=marker), "waitSeconds": 0})
        )["terminalId"]
        deadline = time.monotonic() + 30
        while not pids_running(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        started = pids_running(marker)
        if not started:
            return {"error": "the escaping process never started"}
        if form == "setsid":
            waited = structured(client.call("terminal_wait_for_exit", {"terminalId": terminal, "timeoutSeconds": 10}))
            status = waited
        if ending == "kill":
            client.call("terminal_kill", {"terminalId": terminal})
            status = structured(client.call("terminal_wait_for_exit", {"terminalId": terminal, "timeoutSeconds": 15}, timeout=20))
        elif ending == "release":
            client.call("terminal_release", {"terminalId": terminal}, timeout=20)
        elif ending in ("sigterm", "sigint"):
            peer.proc.send_signal(signal.SIGTERM if ending == "sigterm" else signal.SIGINT)
            peer.proc.wait(20)
        elif ending == "eof":
            peer.proc.stdin.close()
            peer.proc.wait(20)
        deadline = time.monotonic() + 8
        while pids_running(marker) and time.monotonic() < deadline:
            time.sleep(0.1)
        survivors = pids_running(marker)
        if isinstance(status, dict):
            leader_exited_with_survivors = bool(status.get("processesLeft"))
        return {
            "survivors": len(survivors),
            "started": len(started),
            "exit_status": status,
            "leader_exited_with_survivors": leader_exited_with_survivors,
        }
    finally:
        for pid in pids_running(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        peer.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--mode", choices=["serve", "acp-proxy"], default="serve")
    parser.add_argument("--agent", help="raw-agent.mjs, for --mode acp-proxy")
    parser.add_argument("--cwd", default=os.getcwd())
    parser.add_argument("--server-arg", action="append", default=[])
    parser.add_argument("--launcher", action="append", default=[], help="argv prefix for the server, e.g. setpriv options")
    parser.add_argument("scenario", choices=["inject", "steal", "escape"])
    parser.add_argument("rest", nargs="*")
    args = parser.parse_args()
    if args.scenario == "escape":
        result = scenario_escape(args) if args.mode == "serve" else scenario_escape_acp(args)
    elif args.mode == "serve":
        result = scenario_inject_serve(args) if args.scenario == "inject" else scenario_steal_serve(args)
    else:
        result = scenario_inject_acp(args) if args.scenario == "inject" else scenario_steal_acp(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
