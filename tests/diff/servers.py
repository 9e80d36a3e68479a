"""Start and stop the two servers under comparison.

Both get the same command line: `BINARY --port N --dir D --save ''`, a free
loopback port and a fresh temporary directory.  Output goes to D/server.log.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from resp import free_port  # tests/helpers, on sys.path through difftest

HOST = "127.0.0.1"




class ServerError(Exception):
    pass


class Server:
    def __init__(self, binary, label, extra_args=()):
        # Absolute: the server runs with its temporary directory as cwd.
        if os.sep in binary:
            binary = os.path.abspath(binary)
        else:
            binary = shutil.which(binary) or binary
        self.binary = binary
        self.label = label
        self.proc = None
        self.port = None
        self.dir = None
        self.log_path = None
        self.starts = 0
        # Extra command-line arguments; "{dir}" becomes the server's
        # temporary directory (e.g. --ssd-dir {dir}/ssd).
        self.extra_args = list(extra_args)

    def start(self):
        last = None
        for _ in range(5):
            try:
                self._start_once()
                return
            except ServerError as e:
                last = e
                self.stop()
        raise last

    def _start_once(self):
        self.dir = tempfile.mkdtemp(prefix="goblin-diff-%s-" % self.label)
        self.port = free_port()
        self.log_path = os.path.join(self.dir, "server.log")
        log = open(self.log_path, "wb")
        argv = [self.binary, "--port", str(self.port), "--dir", self.dir,
                "--save", ""]
        argv += [a.replace("{dir}", self.dir) for a in self.extra_args]
        try:
            self.proc = subprocess.Popen(argv, stdout=log,
                                         stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL,
                                         cwd=self.dir, start_new_session=True)
        finally:
            log.close()
        self.starts += 1
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise ServerError("%s (%s) exited with code %s at start-up:\n%s"
                                  % (self.label, self.binary,
                                     self.proc.returncode, self.log_tail()))
            try:
                s = socket.create_connection((HOST, self.port), timeout=1)
                try:
                    s.sendall(b"*1\r\n$4\r\nPING\r\n")
                    s.settimeout(2)
                    data = b""
                    while not data.endswith(b"\r\n"):
                        chunk = s.recv(100)
                        if not chunk:
                            break
                        data += chunk
                    if data.startswith(b"+PONG"):
                        return
                finally:
                    s.close()
            except OSError:
                pass
            time.sleep(0.05)
        raise ServerError("%s (%s) did not answer PING on port %d:\n%s"
                          % (self.label, self.binary, self.port,
                             self.log_tail()))

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def exit_status(self):
        if self.proc is None:
            return "not started"
        rc = self.proc.poll()
        if rc is None:
            return "running"
        if rc < 0:
            try:
                return "killed by %s" % signal.Signals(-rc).name
            except ValueError:
                return "killed by signal %d" % -rc
        return "exited with code %d" % rc

    def log_tail(self, n=15):
        try:
            with open(self.log_path, "rb") as f:
                lines = f.read().decode("utf-8", "replace").splitlines()
            return "\n".join("    | " + l for l in lines[-n:])
        except OSError:
            return "    | (no log)"

    def stop(self, keep_dir=False):
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    self.proc.terminate()
                    self.proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
                except OSError:
                    pass
            self.proc = None
        if self.dir and not keep_dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def restart(self):
        self.stop()
        self.start()
