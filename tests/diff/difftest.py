#!/usr/bin/env python3
"""Differential tester: goblin-core against a real redis-server 7.0.

Both servers are started on free loopback ports with temporary directories.
For every family, seeded random command streams are pipelined in batches to
both servers and every reply is compared byte for byte at the raw RESP level
(normalize.py lists the few commands compared otherwise: no defined order,
clock, chance).  A fraction of streams runs after HELLO 3 (RESP3).

Reproduce a failure with the command line it prints (--seed, --family,
--stream).  The last line is `N passed, M failed` (N, M count streams); the
exit code is 1 when anything failed.

Standard library only.
"""

import argparse
import collections
import math
import os
import random
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(REPO, "tests", "helpers"))

import families  # noqa: E402
import gencore  # noqa: E402
import normalize  # noqa: E402
import resp  # noqa: E402
import servers  # noqa: E402

REF = 0
SRV = 1


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="tests/diff/run.sh",
        description="Compare goblin-core with redis-server on random command "
                    "streams, reply by reply, byte for byte.")
    p.add_argument("--server",
                   default=os.path.join(REPO, "build-release", "goblin-core"),
                   help="server under test (default: build-release/goblin-core)")
    p.add_argument("--server-arg", action="append", default=None,
                   metavar="ARG",
                   help="extra argument for the server under test (repeat; "
                        "{dir} is its temporary directory)")
    p.add_argument("--reference", default="/usr/bin/redis-server",
                   help="reference server (default: /usr/bin/redis-server)")
    p.add_argument("--commands-per-family", type=int, default=20000,
                   metavar="N", help="commands per family (default 20000)")
    p.add_argument("--stream-length", type=int, default=2000, metavar="N",
                   help="commands per stream (default 2000); each stream "
                        "starts from an empty server on a new connection")
    p.add_argument("--seed", type=int, default=None,
                   help="seed (default: random, printed)")
    p.add_argument("--family", action="append", default=None,
                   help="run only this family (repeatable; comma lists ok)")
    p.add_argument("--stream", type=int, action="append", default=None,
                   help="run only this stream index (repeatable)")
    p.add_argument("--protocol", choices=("2", "3", "mixed"), default="mixed",
                   help="RESP version of the streams (default mixed: every "
                        "third stream after HELLO 3)")
    p.add_argument("--batch", type=int, default=200,
                   help="commands per pipelined batch (default 200)")
    p.add_argument("--mutate", type=float, default=0.04,
                   help="probability that a command is mutated into an "
                        "arity/syntax variant (default 0.04)")
    p.add_argument("--max-reports", type=int, default=20,
                   help="streams whose first mismatch is printed in full "
                        "(default 20); other mismatches get one line, up to "
                        "100")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for a batch's replies (default 30)")
    p.add_argument("--skip", action="append", default=None, metavar="CMDS",
                   help="do not send these commands (comma list; for a server "
                        "that lacks them yet; changes the streams)")
    p.add_argument("--stats", action="store_true",
                   help="print, per command, how many replies were errors "
                        "(to check what the generators cover)")
    p.add_argument("--mismatch-log", metavar="FILE",
                   help="append every mismatch (one line each: family, "
                        "stream, index, command, both replies) to FILE")
    p.add_argument("--dump", metavar="FILE",
                   help="write every command and both replies to FILE")
    p.add_argument("--list-families", action="store_true",
                   help="print the registered families and exit")
    a = p.parse_args(argv)
    if a.family:
        a.family = [f for item in a.family for f in item.split(",") if f]
    a.skip = set(c.upper() for item in (a.skip or []) for c in item.split(",")
                 if c)
    return a


def build_picker(all_fams, fam):
    """Weighted generator choice for one family, with its MIX and CREATORS."""
    mix = dict(getattr(fam, "MIX", {}) or {})
    mixc = float(getattr(fam, "MIX_CREATORS", 0) or 0)
    own = 1.0 - sum(mix.values()) - mixc
    weighted = []

    def add(gens, frac):
        tot = float(sum(w for w, _ in gens))
        if tot > 0 and frac > 0:
            weighted.extend((frac * w / tot, fn) for w, fn in gens)

    add(fam.GENERATORS, own)
    for name, frac in mix.items():
        if name in all_fams:
            add(all_fams[name].GENERATORS, frac)
    if mixc:
        creators = [c for m in all_fams.values()
                    for c in getattr(m, "CREATORS", [])]
        add(creators, mixc)
    return gencore.Picker(weighted)


class StreamAborted(Exception):
    pass


class Runner:
    def __init__(self, args):
        self.args = args
        self.seed = args.seed
        self.servers = [servers.Server(args.reference, "reference"),
                        servers.Server(args.server, "server",
                                       args.server_arg or ())]
        self.reports = 0
        self.short_reports = 0
        self.by_command = collections.Counter()
        self.examples = {}
        self.passed = 0
        self.failed = 0
        self.stats = collections.defaultdict(collections.Counter)
        self.dump = open(args.dump, "w") if args.dump else None
        self.mlog = open(args.mismatch_log, "a") if args.mismatch_log else None

    # -- output ----------------------------------------------------------
    def out(self, s=""):
        sys.stdout.write(s + "\n")
        sys.stdout.flush()

    def repro(self, fam, stream):
        a = self.args
        s = "tests/diff/run.sh --seed %d --family %s --stream %d " \
            "--commands-per-family %d --stream-length %d" % (
                self.seed, fam, stream, a.commands_per_family, a.stream_length)
        if a.protocol != "mixed":
            s += " --protocol " + a.protocol
        if a.skip:
            s += " --skip " + ",".join(sorted(a.skip))
        if a.server != parse_args([]).server:
            s += " --server " + a.server
        if a.reference != parse_args([]).reference:
            s += " --reference " + a.reference
        return s

    def report(self, st, idx, cmd, ref_txt, srv_txt, history, why=None):
        """Print one mismatch (in full for the first --max-reports)."""
        name = cmd.name if cmd is not None else "(none)"
        self.by_command[name] += 1
        if self.mlog:
            self.mlog.write("%s\t%d\t%d\t%s\t%s\t%s\n" % (
                st.fam, st.idx, idx, normalize.fmt_cmd(cmd) if cmd else why,
                ref_txt, srv_txt))
            self.mlog.flush()
        if name not in self.examples:
            self.examples[name] = (normalize.fmt_cmd(cmd) if cmd else "",
                                   ref_txt, srv_txt)
        # In full: the first mismatch of each stream (up to --max-reports);
        # later ones of the same stream are often consequences: one line.
        if not st.reported and self.reports < self.args.max_reports:
            st.reported = True
            self.reports += 1
            self.out("=== MISMATCH: seed=%d family=%s stream=%d (RESP%d) "
                     "command #%d" % (self.seed, st.fam, st.idx, st.proto, idx))
            if why:
                self.out("  problem:   " + why)
            if cmd is not None:
                self.out("  command:   " + normalize.fmt_cmd(cmd))
            self.out("  reference: " + ref_txt)
            self.out("  server:    " + srv_txt)
            if history:
                self.out("  previous commands:")
                for i, c in history:
                    self.out("    #%d %s" % (i, normalize.fmt_cmd(c, 200)))
            self.out("  reproduce: " + self.repro(st.fam, st.idx))
        elif self.short_reports < 100:
            self.short_reports += 1
            self.out("mismatch: family=%s stream=%d #%d %s -> ref %s / srv %s"
                     % (st.fam, st.idx, idx,
                        normalize.fmt_cmd(cmd, 120) if cmd else why,
                        ref_txt[:120], srv_txt[:120]))
        elif self.short_reports == 100:
            self.short_reports += 1
            self.out("(further mismatches are counted, not printed)")

    # -- servers ---------------------------------------------------------
    def start(self):
        for s in self.servers:
            if not os.path.exists(s.binary):
                raise servers.ServerError("%s binary not found: %s"
                                          % (s.label, s.binary))
            s.start()

    def stop(self):
        for s in self.servers:
            s.stop()

    def ensure_alive(self):
        for s in self.servers:
            if not s.alive():
                self.out("note: %s %s; restarting it" % (s.label,
                                                         s.exit_status()))
                s.restart()

    # -- streams ---------------------------------------------------------
    def run(self, fams, all_fams):
        t0 = time.monotonic()
        for name, mod in fams.items():
            picker = build_picker(all_fams, mod)
            n = self.args.commands_per_family
            nstreams = max(1, math.ceil(n / max(1, self.args.stream_length)))
            if nstreams < 3 and n >= 30 and self.args.protocol == "mixed":
                nstreams = 3
            lengths = [n // nstreams + (1 if i < n % nstreams else 0)
                       for i in range(nstreams)]
            fp = ff = 0
            events = 0
            tf = time.monotonic()
            for idx, length in enumerate(lengths):
                if self.args.stream and idx not in self.args.stream:
                    continue
                st = Stream(self, name, idx, length, picker)
                ok = st.run()
                events += st.events
                if ok:
                    fp += 1
                else:
                    ff += 1
            # A clock-tolerant comparison that had to tolerate too often
            # hides a systematic difference (e.g. TTL rounded differently).
            for cname, fn in sorted(normalize.COMPARE.items()):
                if isinstance(fn, normalize.tolerance):
                    if fn.suspicious():
                        self.out("=== MISMATCH: seed=%d family=%s: %s replies "
                                 "differed (by at most %d) in %d of %d "
                                 "comparisons: a systematic difference, not "
                                 "timing jitter" % (self.seed, name, cname,
                                                    fn.tol, fn.tolerated,
                                                    fn.tolerated + fn.equal))
                        self.by_command[cname + " (systematic)"] += 1
                        self.examples.setdefault(
                            cname + " (systematic)",
                            ("", "%d equal" % fn.equal,
                             "%d differ" % fn.tolerated))
                        ff += 1
                        events += 1
                    fn.reset()
            self.passed += fp
            self.failed += ff
            self.out("family %-12s %d streams, %d commands: %d passed, %d "
                     "failed, %d mismatches  (%.1fs)"
                     % (name, fp + ff, sum(lengths) if not self.args.stream
                        else sum(lengths[i] for i in self.args.stream
                                 if i < len(lengths)),
                        fp, ff, events, time.monotonic() - tf))
        self.out("total time %.1fs" % (time.monotonic() - t0))
        if self.args.stats:
            self.out("replies per command (reference side):")
            for cname in sorted(self.stats):
                c = self.stats[cname]
                errs = ", ".join("%s x%d" % (k.decode("latin-1"), v)
                                 for k, v in c.most_common()
                                 if k not in ("ok", "error"))
                self.out("  %-14s ok %5d  err %5d  %s" % (
                    cname, c["ok"], c["error"], errs[:300]))
        if self.by_command:
            self.out("mismatches by command (first of each batch):")
            for cname, cnt in self.by_command.most_common():
                ex = self.examples[cname]
                self.out("  %-14s %5d   e.g. %s" % (cname, cnt, ex[0][:150]))
                self.out("  %-14s         ref %s" % ("", ex[1][:150]))
                self.out("  %-14s         srv %s" % ("", ex[2][:150]))


class Stream:
    def __init__(self, runner, fam, idx, length, picker):
        self.r = runner
        self.fam = fam
        self.idx = idx
        self.length = length
        self.picker = picker
        a = runner.args
        if a.protocol == "mixed":
            self.proto = 3 if idx % 3 == 1 else 2
        else:
            self.proto = int(a.protocol)
        self.rng = random.Random("%d/%s/%d" % (runner.seed, fam, idx))
        self.ctx = gencore.Ctx(self.rng, int(time.time()))
        self.history = collections.deque(maxlen=10)
        self.events = 0
        self.reported = False
        self.conns = None
        self.index = 0

    def connect(self):
        self.close()
        self.conns = [resp.Conn(s.port, host=servers.HOST, name=s.label,
                                timeout=10.0)
                      for s in self.r.servers]

    def close(self):
        if self.conns:
            for c in self.conns:
                c.close()
        self.conns = None

    def setup_cmds(self):
        cmds = [gencore.Cmd(b"FLUSHALL")]
        if self.proto == 3:
            cmds.append(gencore.Cmd(b"HELLO", b"3"))
        return cmds

    def run(self):
        try:
            self.r.ensure_alive()
            self.connect()
            # Setup commands are compared too (index -1).
            self.batch(self.setup_cmds(), setup=True)
            pending = []
            count = 0
            p_mut = self.r.args.mutate
            bsz = max(1, self.r.args.batch)
            skip = self.r.args.skip
            while count < self.length:
                item = self.picker.pick(self.rng)(self.ctx)
                if isinstance(item, gencore.Cmd):
                    if (item.raw is None and item.scan is None
                            and self.rng.random() < p_mut):
                        item = self.ctx.mutate(item)
                    cmds = [item]
                else:
                    cmds = item
                if skip:
                    cmds = [c for c in cmds if c.name not in skip]
                for c in cmds:
                    count += 1
                    if c.scan is not None:
                        if pending:
                            self.batch(pending)
                            pending = []
                        self.scan(c)
                    else:
                        pending.append(c)
                if len(pending) >= bsz:
                    self.batch(pending)
                    pending = []
            if pending:
                self.batch(pending)
            return self.events == 0
        except StreamAborted:
            return False
        finally:
            self.close()

    # -- execution -------------------------------------------------------
    def _fail_conn(self, e, cmds, base):
        """A server closed the connection, hung or spoke bad RESP."""
        conn = getattr(e, "conn", None)
        side = SRV if conn is self.conns[SRV] else REF
        got = getattr(e, "got", [])
        k = len(got)
        cmd = cmds[k] if k < len(cmds) else None
        srvobj = self.r.servers[side]
        if isinstance(e, resp.ReplyTimeout):
            why = "%s did not reply within %.0fs" % (srvobj.label,
                                                     self.r.args.timeout)
        elif isinstance(e, resp.ProtocolError):
            why = "%s sent invalid RESP: %s" % (srvobj.label, e)
        else:
            time.sleep(0.2)
            why = "%s closed the connection (%s)" % (srvobj.label,
                                                     srvobj.exit_status())
        if len(cmds) > 1 and k < len(cmds) - 1:
            why += "; at or after this command of the pipelined batch " \
                   "(add --batch 1 to pinpoint it)"
        hist = list(self.history)
        for i in range(min(k, len(cmds))):
            hist.append((base + i, cmds[i]))
        hist = hist[-10:]
        self.events += 1
        bad = "(%s; got %d of %d replies of the batch)" % (why, k, len(cmds))
        fine = "(replied)"
        self.r.report(self, base + k, cmd, bad if side == REF else fine,
                      bad if side == SRV else fine, hist, why)
        if not srvobj.alive() or not isinstance(e, resp.ProtocolError):
            self.r.out("  %s log tail:\n%s" % (srvobj.label, srvobj.log_tail()))
        # Restart whatever is broken; this stream is over.
        self.close()
        for s in self.r.servers:
            if not s.alive() or isinstance(e, resp.ReplyTimeout):
                s.restart()
        raise StreamAborted()

    def batch(self, cmds, setup=False):
        payload = b"".join(c.raw if c.raw is not None else resp.encode(c.args)
                           for c in cmds)
        n = len(cmds)
        base = -1 if setup else self.index
        try:
            got = resp.exchange([(self.conns[REF], payload, n),
                                 (self.conns[SRV], payload, n)],
                                timeout=self.r.args.timeout)
        except (resp.ConnClosed, resp.ReplyTimeout, resp.ProtocolError) as e:
            self._fail_conn(e, cmds, base)
        mismatch = False
        for i, c in enumerate(cmds):
            a, b = got[REF][i], got[SRV][i]
            idx = base if setup else base + i
            cmp = normalize.comparator_for(c)
            if self.r.args.stats:
                self.r.stats[c.name]["error" if a.is_error() else "ok"] += 1
                if a.is_error():
                    self.r.stats[c.name][a.v[:48]] += 1
            if self.r.dump:
                self.r.dump.write("%s/%d #%d %s\n  ref %s\n  srv %s\n" % (
                    self.fam, self.idx, idx, normalize.fmt_cmd(c),
                    normalize.fmt_raw(a.raw), normalize.fmt_raw(b.raw)))
            if not cmp(a, b) and not mismatch:
                mismatch = True
                self.events += 1
                self.r.report(self, idx, c, normalize.fmt_raw(a.raw),
                              normalize.fmt_raw(b.raw), list(self.history))
            self.history.append((idx, c))
        if not setup:
            self.index += n
        if mismatch:
            self.resync()

    def _send_both(self, cmds):
        payload = b"".join(resp.encode(c.args) for c in cmds)
        try:
            return resp.exchange([(self.conns[REF], payload, len(cmds)),
                                  (self.conns[SRV], payload, len(cmds))],
                                 timeout=self.r.args.timeout)
        except (resp.ConnClosed, resp.ReplyTimeout, resp.ProtocolError) as e:
            self._fail_conn(e, cmds, self.index)

    def resync(self):
        """After a mismatch the two keyspaces may differ: empty both and go
        on with the stream (later mismatches are then new ones).  If the
        server lacks FLUSHALL, delete what KEYS finds in every database."""
        cmds = [gencore.Cmd(b"HELLO", b"%d" % self.proto),
                gencore.Cmd(b"FLUSHALL"), gencore.Cmd(b"SELECT", b"0")]
        got = self._send_both(cmds)
        if not got[SRV][1].is_error():
            return
        conn = self.conns[SRV]
        try:
            for db in range(16):
                sel = resp.exchange([(conn, resp.encode([b"SELECT", b"%d" % db]),
                                      1)], timeout=self.r.args.timeout)[0][0]
                if sel.is_error():
                    break
                keys = resp.exchange([(conn, resp.encode([b"KEYS", b"*"]), 1)],
                                     timeout=self.r.args.timeout)[0][0]
                if keys.is_error() or not keys.is_aggregate():
                    break
                names = [k.v for k in keys.v if k.v is not None]
                if names:
                    resp.exchange([(conn, resp.encode([b"DEL"] + names), 1)],
                                  timeout=self.r.args.timeout)
            resp.exchange([(conn, resp.encode([b"SELECT", b"0"]), 1)],
                          timeout=self.r.args.timeout)
        except (resp.ConnClosed, resp.ReplyTimeout, resp.ProtocolError) as e:
            self._fail_conn(e, [], self.index)

    def scan(self, cmd):
        """Iterate a SCAN-like command to completion on both servers and
        compare the collected (deduplicated, sorted) elements."""
        ci, pairs = cmd.scan
        idx = self.index
        cursors = [b"0", b"0"]
        outcome = [None, None]
        seen = [set(), set()]
        rounds = [0, 0]
        while outcome[REF] is None or outcome[SRV] is None:
            jobs = []
            sides = []
            for side in (REF, SRV):
                if outcome[side] is None:
                    args = list(cmd.args)
                    args[ci] = cursors[side]
                    jobs.append((self.conns[side], resp.encode(args), 1))
                    sides.append(side)
            try:
                got = resp.exchange(jobs, timeout=self.r.args.timeout)
            except (resp.ConnClosed, resp.ReplyTimeout,
                    resp.ProtocolError) as e:
                self._fail_conn(e, [cmd], idx)
            for side, replies in zip(sides, got):
                node = replies[0]
                rounds[side] += 1
                if node.is_error():
                    outcome[side] = ("error", node.raw)
                    continue
                ok = (node.t == "*" and node.v is not None and len(node.v) == 2
                      and node.v[0].t == "$" and node.v[0].v is not None
                      and node.v[0].v.isdigit() and node.v[1].t == "*"
                      and node.v[1].v is not None
                      and all(x.t == "$" and x.v is not None
                              for x in node.v[1].v)
                      and (not pairs or len(node.v[1].v) % 2 == 0))
                if not ok:
                    outcome[side] = ("malformed", node.raw)
                    continue
                els = node.v[1].v
                if pairs:
                    for j in range(0, len(els), 2):
                        seen[side].add((els[j].v, els[j + 1].v))
                else:
                    for x in els:
                        seen[side].add(x.v)
                cursors[side] = node.v[0].v
                if cursors[side] == b"0":
                    outcome[side] = ("ok", tuple(sorted(seen[side])))
                elif rounds[side] > 100000:
                    outcome[side] = ("did not terminate", cursors[side])
        self.index += 1
        if outcome[REF] != outcome[SRV]:
            self.events += 1
            self.r.report(self, idx, cmd, self._fmt_scan(outcome[REF]),
                          self._fmt_scan(outcome[SRV]), list(self.history))
            self.history.append((idx, cmd))
            self.resync()
        else:
            self.history.append((idx, cmd))

    @staticmethod
    def _fmt_scan(o):
        if o[0] in ("error", "malformed"):
            return "%s %s" % (o[0], normalize.fmt_raw(o[1]))
        if o[0] == "ok":
            return "collected %d: %s" % (len(o[1]),
                                         normalize.fmt_raw(list(o[1])))
        return "%s %r" % o


def main(argv):
    args = parse_args(argv)
    if args.list_families:
        for n in families.REGISTRY:
            print(n)
        return 0
    if args.seed is None:
        args.seed = int.from_bytes(os.urandom(4), "little")
    try:
        fams = families.load(args.family)
    except KeyError as e:
        print("error: %s" % e.args[0])
        print("0 passed, 1 failed")
        return 1
    all_fams = families.load_all()
    runner = Runner(args)
    print("seed %d; families: %s; %d commands per family; server %s; "
          "reference %s" % (args.seed, ", ".join(fams),
                            args.commands_per_family, args.server,
                            args.reference))
    sys.stdout.flush()

    def on_term(signum, frame):
        raise SystemExit(130)
    signal.signal(signal.SIGTERM, on_term)
    try:
        try:
            runner.start()
        except servers.ServerError as e:
            print("error: %s" % e)
            print("0 passed, 1 failed")
            return 1
        runner.run(fams, all_fams)
    except KeyboardInterrupt:
        print("interrupted")
        runner.failed += 1
    finally:
        runner.stop()
    if runner.failed:
        print("seed %d (reproduce with --seed %d)" % (args.seed, args.seed))
    print("%d passed, %d failed" % (runner.passed, runner.failed))
    return 1 if runner.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
