"""The sandbox against hostile samples: writes outside its directory, network, forks, loops, memory."""
from __future__ import annotations

import os
import socket
import threading

import pytest

from synth.sandbox import ForkServer, SandboxLimits
from synth.sandbox import run_python as fresh_interpreter

FAST = SandboxLimits(wall_s=2.0, cpu_s=1, memory_mb=256, file_mb=1)


@pytest.fixture(scope="module", params=["fresh", "fork_server"])
def run_python(request):
    """Both ways of starting a sandboxed child must hold the same line."""
    if request.param == "fresh":
        yield fresh_interpreter
        return
    server = ForkServer()
    yield server.run
    server.close()


def _gone(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_hostile_writes_stay_inside(run_python, tmp_path):
    target = tmp_path / "escaped.txt"
    outside_dir = tmp_path / "made_by_sample"
    src = f"""
import os
tries = {{}}
def attempt(name, fn):
    try:
        fn()
        tries[name] = "done"
    except Exception as e:
        tries[name] = type(e).__name__
attempt("open", lambda: open({str(target)!r}, "w").write("x"))
attempt("os.open", lambda: os.close(os.open({str(target)!r}, os.O_CREAT | os.O_WRONLY)))
attempt("rename", lambda: (open("a.txt", "w").close(), os.rename("a.txt", {str(target)!r})))
attempt("mkdir", lambda: os.mkdir({str(outside_dir)!r}))
attempt("relative", lambda: open("../escaped_rel.txt", "w").write("x"))
attempt("inside", lambda: open("mine.txt", "w").write("ok"))
print(sorted(tries.items()))
"""
    res = run_python(src, FAST)
    assert res.ok, res.stderr
    assert not target.exists() and not outside_dir.exists()
    assert "('inside', 'done')" in res.stdout          # the sandbox's own directory stays writable
    assert "('open', 'done')" not in res.stdout and "('relative', 'done')" not in res.stdout
    assert {"open", "os.mkdir", "os.rename"} <= set(res.blocked)


def test_hook_alone_stops_dir_fd_writes(run_python, tmp_path):
    # as root without the uid drop, the audit hook is the only guard of the file system
    src = f"import os\nfd = os.open({str(tmp_path)!r}, os.O_RDONLY)\nos.close(os.open('x', os.O_CREAT | os.O_WRONLY, dir_fd=fd))"
    res = run_python(src, FAST, drop_uid=False)
    assert res.status == "blocked" and res.blocked == ["open"] and not (tmp_path / "x").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop layer needs root")
def test_uid_drop_alone_stops_writes(run_python, tmp_path):
    target = tmp_path / "escaped.txt"   # tmp_path is root's, mode 0700
    res = run_python(f"open({str(target)!r}, 'w').write('x')", FAST, audit_hook=False)
    assert "uid_drop" in res.layers and res.status == "error" and "PermissionError" in res.stderr
    assert not target.exists()


@pytest.fixture
def loopback_server():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            got.append(conn.recv(100) or b"<connected>")
            conn.close()

    th = threading.Thread(target=serve, daemon=True)
    th.start()
    yield srv.getsockname()[1], got
    stop.set()
    th.join(2)
    srv.close()


def test_network_blocked(run_python, loopback_server):
    port, got = loopback_server
    src = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\ns.sendall(b'escaped')\n"
    res = run_python(src, FAST)
    assert res.status == "blocked" and "import" in res.blocked
    res = run_python(f"import _socket\n_socket.socket().connect(('127.0.0.1', {port}))", FAST)
    assert res.status == "blocked"
    if "netns" in res.layers or "userns+netns" in res.layers:  # the namespace alone holds too
        res = run_python(src, FAST, audit_hook=False, drop_uid=False)
        assert res.status == "error" and ("unreachable" in res.stderr or "refused" in res.stderr), res.stderr
    assert got == []


def test_runaway_samples_are_killed_and_recorded(run_python):
    loop = run_python("while True:\n    pass", FAST)
    assert loop.status in ("cpu_limit", "timeout") and loop.wall_s < FAST.wall_s + 1.5 and _gone(loop.pid)
    sleeper = run_python("import time\ntime.sleep(60)", SandboxLimits(wall_s=1.0, cpu_s=1))
    assert sleeper.status == "timeout" and sleeper.wall_s < 2.5 and _gone(sleeper.pid)
    bomb = run_python("import os\nwhile True:\n    os.fork()", FAST)
    assert bomb.status == "blocked" and bomb.blocked[0] == "os.fork" and _gone(bomb.pid)
    hog = run_python("xs = []\nwhile True:\n    xs.append(bytearray(10**7))", FAST)
    assert hog.status == "memory_limit"
    big = run_python("with open('big.bin', 'wb') as f:\n    f.write(b'x' * (4 << 20))", FAST)
    assert big.status == "file_limit"


def test_fork_limit_holds_without_the_audit_hook(run_python):  # RLIMIT_NPROC (as root: after the uid drop)
    res = run_python("import os\ntry:\n    os.fork()\nexcept OSError as e:\n    print('refused', e.errno)\n", FAST,
                     audit_hook=False)
    assert res.ok and res.stdout.startswith("refused"), (res.stdout, res.stderr)


def test_clean_code_runs_with_cleared_environment(run_python):
    res = run_python("import os, re\nprint(sorted(os.environ), re.sub('a', 'b', 'aa'), os.getcwd() != '/')", FAST)
    # the interpreter itself may set LC_CTYPE (PEP 538 locale coercion); nothing of ours gets through
    assert res.ok and res.stdout.split(" ", 1)[0] in ("[]", "['LC_CTYPE']") and res.stdout.split()[-2:] == ["bb", "True"]
