"""Run untrusted Python (generated code and its tests) in a limited child process.

Why: a generated function is kept only when its tests pass when executed, and generated code
can loop, fork, allocate without bound, write files or open sockets. `run_python(source)` runs
it in a fresh interpreter and reports what happened (`SandboxResult.status`); `ForkServer.run`
(and `run_sandboxed`, its shared instance) gives the same child from a fork of a trusted server
process, without the interpreter start that dominates a run's cost.

Layers, outermost first, and what each one stops:
- process: `python -I -S -B` in a new session (own process group), environment cleared,
  stdin /dev/null, stdout/stderr to capped files, cwd a fresh temporary directory removed after.
  The wall-clock limit kills the whole process group (SIGKILL), whatever the code is doing.
- rlimits set in the child before user code runs (soft = hard, so the code cannot raise them):
  RLIMIT_CPU (CPU seconds), RLIMIT_AS (address space: a memory hog gets MemoryError),
  RLIMIT_FSIZE (largest file it may write), RLIMIT_NPROC = 0 (no fork or thread start),
  RLIMIT_NOFILE, RLIMIT_CORE = 0.
- network namespace: the child calls unshare(CLONE_NEWNET) (as root) or
  unshare(CLONE_NEWUSER | CLONE_NEWNET) (where unprivileged user namespaces are allowed). It
  then has only a down loopback: no route to any host, the machine's own loopback included.
  `SandboxResult.layers` says whether this layer was active.
- uid drop, as root only: an allowlist of standard modules is imported, then the child becomes
  nobody (65534) with no supplementary groups. As root RLIMIT_NPROC means nothing (the kernel
  exempts uid 0); as nobody it applies, and files the code does not own are read-only to it.
- an audit hook (sys.addaudithook) installed before user code: refuses writes, renames,
  removals and mode changes outside the sandbox directory; socket creation and use; fork,
  exec, spawn, subprocess, os.system, kill; ctypes; imports of socket/ctypes/subprocess
  modules. Each refusal raises PermissionError and is recorded on stderr.

What it does not stop: reads of world-readable files; CPU and memory use up to the limits;
file-system calls that raise no audit event (os.mkfifo, os.mknod can make an empty special file
in a directory the child may write, such as /tmp);
a hostile sample that escapes the audit hook (CPython documents hooks as no sandbox) can
write to world-writable directories when no uid drop happened (not root) and reach the
network when no network namespace was available; the code can forge its own stdout. Without
root or user namespaces, the rlimits, process-group kill and audit hook are the layers left.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field

NOBODY = 65534
BLOCK_MARK = "cidermill-sandbox: blocked "
OUTPUT_CAP = 64 * 1024          # bytes of stdout/stderr read back
MAIN = "main.py"

# Modules importable after the uid drop (the interpreter's own files may be unreadable to nobody).
# Kept short: each import costs start-up time on every run.
PREIMPORT = ("bisect", "collections", "functools", "heapq", "itertools", "math", "operator", "re", "string")

# Child side, shared by both ways of starting a child: limits, namespace, uid drop, audit hook.
# `enter_sandbox(cfg)` returns the user's source (read before the hook goes in); `run_code` runs it.
CHILD = r'''
import os, sys, resource, json

def enter_sandbox(cfg):
    layers = []
    if cfg["netns"]:
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            if os.geteuid() == 0 and libc.unshare(0x40000000) == 0:
                layers.append("netns")
            elif libc.unshare(0x10000000 | 0x40000000) == 0:
                layers.append("userns+netns")
            del libc
        except Exception:
            pass
    if os.geteuid() == 0 and cfg["drop_uid"]:
        for name in cfg["preimport"]:
            __import__(name)
    def lim(r, v):
        resource.setrlimit(r, (v, v))
    lim(resource.RLIMIT_CORE, 0)
    lim(resource.RLIMIT_CPU, cfg["cpu_s"])
    lim(resource.RLIMIT_FSIZE, cfg["fsize"])
    lim(resource.RLIMIT_NOFILE, 64)
    if os.geteuid() == 0 and cfg["drop_uid"]:
        os.setgroups([])
        os.setgid(cfg["uid"])
        os.setuid(cfg["uid"])
        layers.append("uid_drop")
    lim(resource.RLIMIT_NPROC, 0)
    lim(resource.RLIMIT_AS, cfg["memory"])
    layers.append("rlimits")
    if cfg["hook"]:
        layers.append("audit_hook")
    os.write(2, ("cidermill-sandbox: layers " + ",".join(layers) + "\n").encode())
    with open(cfg["main"], encoding="utf-8") as f:
        src = f.read()
    if cfg["hook"]:
        sys.addaudithook(make_hook(os.path.realpath(os.getcwd()), "cidermill-sandbox: blocked "))
    return src

def make_hook(root, mark):
    sep = os.sep
    realpath, join, fsdecode = os.path.realpath, os.path.join, os.fsdecode
    WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    PATH_EVENTS = {"os.remove", "os.rename", "os.mkdir", "os.rmdir", "os.chmod", "os.chown", "os.symlink",
                   "os.link", "os.truncate", "os.utime", "os.chflags", "os.lchflags", "os.setxattr",
                   "os.removexattr", "shutil.rmtree", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
                   "shutil.copytree", "shutil.move", "shutil.chown", "shutil.make_archive", "shutil.unpack_archive"}
    DENY_PREFIX = ("socket.", "subprocess.", "ctypes.", "os.exec", "os.spawn", "os.posix_spawn", "os.fork",
                   "os.system", "os.kill", "os.killpg", "os.startfile", "pty.", "signal.pthread_kill",
                   "os.setuid", "os.setgid", "os.setreuid", "os.setregid", "os.setgroups", "resource.setrlimit",
                   "resource.prlimit", "sys.remote_exec", "_posixsubprocess.", "os.putenv", "os.chdir",
                   "os.fchdir", "os.chroot", "mmap.", "webbrowser.", "urllib.", "http.", "ftplib.", "smtplib.")
    DENY_IMPORT = {"socket", "_socket", "ssl", "_ssl", "ctypes", "_ctypes", "subprocess", "_posixsubprocess",
                   "multiprocessing", "_multiprocessing", "pty", "mmap"}

    def inside(p):
        if isinstance(p, int):
            return True  # an fd the process already holds
        try:
            full = realpath(join(root, fsdecode(p)))
        except Exception:
            return False
        return full == root or full.startswith(root + sep)

    def deny(event, what):
        os.write(2, (mark + event + " " + str(what)[:200] + "\n").encode("utf-8", "replace"))
        raise PermissionError("sandbox: " + event + " refused")

    isdir = os.path.isdir

    def hook(event, args):
        if event == "open":
            path, mode, flags = args
            writing = bool((flags or 0) & WRITE_FLAGS) or any(c in (mode or "") for c in "wax+")
            if path is not None and not inside(path):
                # a directory fd from outside would let dir_fd= calls write there
                if writing or (not isinstance(path, int) and isdir(path)):
                    deny(event, path)
        elif event in PATH_EVENTS:
            for a in args:
                if isinstance(a, (str, bytes, os.PathLike)) and not inside(a):
                    deny(event, a)
        elif event.startswith(DENY_PREFIX):
            deny(event, args[:1])
        elif event == "import" and args[0].split(".")[0] in DENY_IMPORT:
            deny(event, args[0])
    return hook

def run_code(src):
    exec(compile(src, "main.py", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
'''

# A fresh interpreter per run: the child's first code.
BOOTSTRAP = CHILD + r'''
_src = enter_sandbox(json.loads(sys.argv[1]))
del enter_sandbox, make_hook
run_code(_src)
'''

# The fork server: a trusted interpreter that never runs user code itself. Per request (one
# JSON line on stdin) it forks; the child starts a session, points fds 0-2 at /dev/null and the
# output files, closes every other fd (the server's pipes included), enters the sandbox and runs
# the code. The server answers {"pid"} at once and {"pid", "rc"} when the child is reaped.
FORK_SERVER = CHILD + r'''
import traceback
for _name in json.loads(sys.argv[1]):
    __import__(_name)

def _child(req):
    os.setsid()
    fds = [os.open(os.devnull, os.O_RDONLY), os.open(req["out"], os.O_WRONLY), os.open(req["err"], os.O_WRONLY)]
    for i, fd in enumerate(fds):
        os.dup2(fd, i)
    os.closerange(3, 1 << 16)
    os.chdir(req["work"])
    code = 1
    try:
        src = enter_sandbox(req["cfg"])
        run_code(src)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException as e:
        try:
            os.write(2, (type(e).__name__ + "\n").encode())
            traceback.print_exc()
        except BaseException:
            pass
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:
        pass
    os._exit(code)

while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    req = json.loads(line)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        try:
            _child(req)
        finally:
            os._exit(1)
    sys.stdout.write(json.dumps({"pid": pid}) + "\n")
    sys.stdout.flush()
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(json.dumps({"pid": pid, "rc": os.waitstatus_to_exitcode(status)}) + "\n")
    sys.stdout.flush()
'''


@dataclass
class SandboxLimits:
    wall_s: float = 5.0
    cpu_s: int = 4
    memory_mb: int = 512
    file_mb: int = 8

    def check(self) -> "SandboxLimits":
        from corpus.errors import ConfigError
        if not (0 < self.wall_s <= 600 and 1 <= self.cpu_s <= 600 and 64 <= self.memory_mb <= 1 << 16
                and 0 <= self.file_mb <= 1 << 14):
            raise ConfigError(f"sandbox limits out of range: {self}")
        return self


@dataclass
class SandboxResult:
    status: str                 # ok | error | timeout | cpu_limit | memory_limit | file_limit | blocked
    returncode: int | None
    wall_s: float
    stdout: str
    stderr: str
    blocked: list[str] = field(default_factory=list)   # audit events refused, in order
    layers: list[str] = field(default_factory=list)    # protections that were active
    pid: int = 0                                       # the child's pid (= its process group id)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def _read_capped(f) -> str:
    f.seek(0)
    return f.read(OUTPUT_CAP).decode("utf-8", "replace")


def _classify(rc: int | None, timed_out: bool, stderr: str, blocked: list[str]) -> str:
    if timed_out:
        return "timeout"
    if rc == 0:
        return "ok"
    if rc in (-signal.SIGXCPU, -signal.SIGKILL):
        return "cpu_limit"
    if rc == -signal.SIGXFSZ or "File too large" in stderr:
        return "file_limit"
    if "MemoryError" in stderr:
        return "memory_limit"
    if blocked:
        return "blocked"
    return "error"


def _prepare(source: str, lim: SandboxLimits, audit_hook: bool, network_namespace: bool,
             drop_uid: bool) -> tuple[str, str, dict]:
    """(work dir holding main.py, io dir for the output files, child cfg)."""
    work = tempfile.mkdtemp(prefix="cidermill-sandbox-")
    io_dir = tempfile.mkdtemp(prefix="cidermill-sandbox-io-")  # outputs live outside the code's directory
    main = os.path.join(work, MAIN)
    with open(main, "w", encoding="utf-8") as f:
        f.write(source)
    if os.geteuid() == 0 and drop_uid:
        os.chown(work, NOBODY, NOBODY)
        os.chown(main, NOBODY, NOBODY)
    for name in ("out", "err"):
        open(os.path.join(io_dir, name), "wb").close()
    cfg = {"cpu_s": int(lim.cpu_s), "memory": int(lim.memory_mb) << 20, "fsize": int(lim.file_mb) << 20,
           "netns": network_namespace, "drop_uid": drop_uid, "uid": NOBODY, "hook": audit_hook,
           "main": main, "preimport": list(PREIMPORT)}
    return work, io_dir, cfg


def _kill_group(pid: int) -> None:
    try:  # the whole group: anything that slipped past the limits dies with it
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _result(io_dir: str, rc: int | None, timed_out: bool, wall: float, pid: int) -> SandboxResult:
    with open(os.path.join(io_dir, "out"), "rb") as out, open(os.path.join(io_dir, "err"), "rb") as err:
        stdout, stderr = _read_capped(out), _read_capped(err)
    layers, blocked, rest = [], [], []
    for line in stderr.splitlines():
        if line.startswith("cidermill-sandbox: layers "):
            layers = [x for x in line.split(" ", 2)[2].split(",") if x]
        elif line.startswith(BLOCK_MARK):
            blocked.append(line[len(BLOCK_MARK):].split(" ", 1)[0])
        else:
            rest.append(line)
    stderr = "\n".join(rest)
    rc = None if timed_out else rc
    return SandboxResult(_classify(rc, timed_out, stderr, blocked), rc, round(wall, 4), stdout, stderr, blocked,
                         layers, pid)


def run_python(source: str, limits: SandboxLimits | None = None, *, audit_hook: bool = True,
               network_namespace: bool = True, drop_uid: bool = True) -> SandboxResult:
    """Run `source` as a script in a fresh sandboxed interpreter; never raises for anything the
    code does. audit_hook / network_namespace / drop_uid switch single layers off (tests use
    that to show the other layers hold on their own)."""
    lim = (limits or SandboxLimits()).check()
    work, io_dir, cfg = _prepare(source, lim, audit_hook, network_namespace, drop_uid)
    try:
        with open(os.path.join(io_dir, "out"), "wb") as out, open(os.path.join(io_dir, "err"), "wb") as err:
            t0 = time.perf_counter()
            proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", "-c", BOOTSTRAP, json.dumps(cfg)], cwd=work,
                                    env={}, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    start_new_session=True, close_fds=True)
            timed_out = False
            try:
                proc.wait(timeout=lim.wall_s)
            except subprocess.TimeoutExpired:
                timed_out = True
            finally:
                _kill_group(proc.pid)
                rc = proc.wait()
            wall = time.perf_counter() - t0
        return _result(io_dir, rc, timed_out, wall, proc.pid)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(io_dir, ignore_errors=True)


class ForkServerError(RuntimeError):
    pass


class ForkServer:
    """Sandboxed runs without an interpreter start each: a trusted server process (FORK_SERVER)
    forks one child per run, and the child enters the same sandbox as `run_python`'s. Same
    results, same layers; one run at a time per server (a lock), restarted if it dies or after
    this process forks."""

    def __init__(self):
        self._proc: subprocess.Popen | None = None
        self._owner = 0
        self._buf = b""
        self._lock = threading.Lock()

    def _start(self) -> None:
        self.close()
        self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-B", "-c", FORK_SERVER, json.dumps(PREIMPORT)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      env={}, cwd="/", start_new_session=True, close_fds=True)
        self._owner, self._buf = os.getpid(), b""

    def close(self) -> None:
        if self._proc is not None and self._owner == os.getpid():
            self._proc.kill()
            self._proc.wait()
        self._proc = None

    def _readline(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        fd = self._proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                raise ForkServerError("fork server exited")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def run(self, source: str, limits: SandboxLimits | None = None, *, audit_hook: bool = True,
            network_namespace: bool = True, drop_uid: bool = True) -> SandboxResult:
        lim = (limits or SandboxLimits()).check()
        with self._lock:
            if self._proc is None or self._owner != os.getpid() or self._proc.poll() is not None:
                self._start()
            work, io_dir, cfg = _prepare(source, lim, audit_hook, network_namespace, drop_uid)
            try:
                req = {"cfg": cfg, "work": work, "out": os.path.join(io_dir, "out"), "err": os.path.join(io_dir, "err")}
                t0 = time.perf_counter()
                try:
                    self._proc.stdin.write((json.dumps(req) + "\n").encode())
                    self._proc.stdin.flush()
                    started = self._readline(30.0)
                    if started is None:
                        raise ForkServerError("fork server did not answer")
                    pid = started["pid"]
                    done = self._readline(lim.wall_s)
                    timed_out = done is None
                    _kill_group(pid)
                    if done is None:
                        done = self._readline(30.0)
                    if done is None:
                        raise ForkServerError("fork server did not reap its child")
                except (OSError, ValueError, ForkServerError):
                    self.close()  # a broken server is replaced on the next run
                    raise
                wall = time.perf_counter() - t0
                return _result(io_dir, done["rc"], timed_out, wall, pid)
            finally:
                shutil.rmtree(work, ignore_errors=True)
                shutil.rmtree(io_dir, ignore_errors=True)


_LOCAL = threading.local()
SERVERS: list[ForkServer] = []   # every thread's server (benches read their CPU time)


def thread_server() -> ForkServer:
    """This thread's fork server: threads of one process (Beam's workers) run in parallel."""
    server = getattr(_LOCAL, "server", None)
    if server is None:
        server = _LOCAL.server = ForkServer()
        SERVERS.append(server)
    return server


def run_sandboxed(source: str, limits: SandboxLimits | None = None, **layers) -> SandboxResult:
    """The fast path: this thread's fork server, or a fresh interpreter if the server fails."""
    try:
        return thread_server().run(source, limits, **layers)
    except ForkServerError:
        return run_python(source, limits, **layers)
