#!/usr/bin/env python3
"""Attacks a fresh `esctl serve` the way a hostile client or a careless operator would, in
bounded loops, and checks that the server answers as RELIABILITY.md ("The server under attack")
says. Run by scripts/abuse-test.sh, which builds esctl; standard library only.

    abuse_test.py ESCTL [--short] [--only NAME,...]

Each scenario starts its own server on a fresh store on a free loopback port and stops it with
SIGTERM, expecting exit 0. Every loop is bounded in count and every wait in time. --short runs
smaller counts (what `make test` runs). Prints one line per check and a table of figures (peak
memory under never-reading subscribers, time to heal); exits 1 when any check fails.
"""

import json
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid

FAILURES = []
FIGURES = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        FAILURES.append(what)
    return condition


def figure(name, value):
    print(f"      figure: {name}: {value}", flush=True)
    FIGURES.append((name, value))


class Served:
    """One `esctl serve` on a fresh store (or the store given), on a free loopback port."""

    def __init__(self, esctl, args=(), nofile=None, store=None, work=None):
        self.work = work or tempfile.mkdtemp(prefix="abuse-")
        self.store = store or os.path.join(self.work, "store")
        self.esctl = esctl
        self.err_path = os.path.join(self.work, f"serve-{time.monotonic_ns()}.err")
        if not os.path.exists(os.path.join(self.store, "data.mdb")):
            subprocess.run([esctl, "init", "--db", self.store], check=True, stdout=subprocess.DEVNULL)

        def limits():
            if nofile:
                resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

        self.err = open(self.err_path, "w")
        self.process = subprocess.Popen(
            [esctl, "serve", "--db", self.store, "--port", "0", "--log-level", "notice", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err, preexec_fn=limits)
        deadline = time.monotonic() + 60
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            if self.process.poll() is not None:
                raise RuntimeError(f"esctl serve ended before listening: {self.log()}")
            match = re.search(r"serving .* on http://127\.0\.0\.1:(\d+)", self.log())
            if match:
                self.port = int(match.group(1))
            else:
                time.sleep(0.05)
        if self.port is None:
            raise RuntimeError(f"esctl serve did not say where it listens within 60 s: {self.log()}")

    def log(self):
        with open(self.err_path) as f:
            return f.read()

    def rss_mb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0

    def descriptors(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def alive(self):
        return self.process.poll() is None

    def stop(self, what):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            status = "killed after 60 s"
        self.err.close()
        check(status == 0, f"{what}: the server stops on SIGTERM with exit 0 (got {status})")
        return status

    def request(self, method, path, body=b"", headers=None, timeout=30):
        return request(self.port, method, path, body, headers, timeout)


def request(port, method, path, body=b"", headers=None, timeout=30):
    """One request on its own connection; returns (status, headers, body) or (0, {}, error)."""
    headers = dict(headers or {})
    headers.setdefault("Host", f"127.0.0.1:{port}")
    headers.setdefault("Connection", "close")
    if body and "Content-Type" not in headers:
        headers["Content-Type"] = "application/json"
    if body and "Transfer-Encoding" not in headers:
        headers["Content-Length"] = str(len(body))
    head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(head.encode() + body)
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                data += chunk
    except OSError as error:
        return 0, {}, str(error).encode()
    return parse(data)


def parse(data):
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    try:
        status = int(lines[0].split(" ")[1])
    except (IndexError, ValueError):
        return 0, {}, data
    fields = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        fields[name.strip().lower()] = value.strip()
    if fields.get("transfer-encoding") == "chunked":
        body = dechunk(body)
    return status, fields, body


def dechunk(body):
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return out


def append(served, stream, count=1, data_bytes=10):
    """Appends `count` events of about `data_bytes` bytes of JSON data; returns the status."""
    data = json.dumps("x" * max(data_bytes - 2, 0))
    events = ",".join(f'{{"type":"Big","data":{data}}}' for _ in range(count))
    status, _, _ = served.request("POST", f"/streams/{stream}", f"[{events}]".encode())
    return status


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


# The scenarios --------------------------------------------------------------------------------


def descriptors(esctl, short):
    """Idle connections and dropped waits past the descriptor limit (ulimit -n 256)."""
    # The connections past the cap and its reserve wait in the kernel's backlog until the served
    # ones go: idle, they are closed after --idle-timeout, and only then are the waiting ones
    # accepted and refused with 503. A short idle timeout lets that happen within the probe's
    # deadline (at the default 30 s, probed one by one with 5 s each, this took a minute).
    served = Served(esctl, args=("--idle-timeout", "4"), nofile=256)
    held = []
    refused = 0
    for _ in range(300):
        try:
            held.append(socket.create_connection(("127.0.0.1", served.port), timeout=2))
        except OSError:
            break
    # A request on a connection past the cap is answered 503; the server stays up. The last 40
    # are asked at once and read against one deadline.
    probes = held[-40:]
    for s in probes:
        try:
            s.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        except OSError:
            pass
    deadline = time.monotonic() + 20
    for s in probes:
        try:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            if s.recv(64).startswith(b"HTTP/1.1 503"):
                refused += 1
        except OSError:
            pass
    check(served.alive(), "300 idle connections under ulimit -n 256: the server is alive")
    check(refused > 0, f"300 idle connections under ulimit -n 256: connections past the cap get 503 ({refused} of the last 40)")
    figure("descriptors held by the server with 300 connections open (limit 256)", served.descriptors())
    for s in held:
        s.close()
    check(wait_for(lambda: served.request("GET", "/health")[0] == 200, 30), "after they close, /health answers 200")
    drops = 300 if short else 1100
    for _ in range(drops):
        try:
            with socket.create_connection(("127.0.0.1", served.port), timeout=5) as s:
                s.sendall(b"GET /projections/count-by-type?minPosition=100000&timeout=300 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        except OSError:
            pass
    baseline_ok = wait_for(lambda: served.descriptors() < 120, 60)
    check(served.alive() and baseline_ok, f"{drops} dropped waits: the server is alive and frees their descriptors ({served.descriptors()} open)")
    # As after the idle connections: the last dropped waits' connections may still count
    # against the cap for a moment after their descriptors are freed.
    check(wait_for(lambda: served.request("GET", "/health")[0] == 200, 30), "after the dropped waits, /health answers 200")
    served.stop("descriptors")


def slow_headers(esctl, short):
    """Connections that never finish their headers, closed after --idle-timeout."""
    served = Served(esctl, args=["--idle-timeout", "2"])
    count = 50 if short else 200
    sockets = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", served.port), timeout=10)
        s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0")
        sockets.append(s)
    started = time.monotonic()
    closed = 0
    for s in sockets:
        try:
            s.settimeout(max(0.1, 60 - (time.monotonic() - started)))
            if s.recv(1024) == b"":
                closed += 1
        except OSError:
            pass
        s.close()
    check(closed == count, f"{count} slow-header connections are closed by the server after --idle-timeout 2 ({closed} closed)")
    figure("time to close slow-header connections (--idle-timeout 2)", f"{time.monotonic() - started:.1f} s")
    served.stop("slow headers")


def slow_subscribers(esctl, short):
    """Subscribers that never read, on 1 MB events: memory bounded, others served, cut after stalling."""
    served = Served(esctl, args=["--stall-timeout", "10"])
    events = 20
    for i in range(events):
        append(served, f"big-{i}", 1, 1_000_000)
    idle = served.rss_mb()
    figure("server memory, idle, after 20 events of 1 MB", f"{idle:.0f} MB")
    count = 100 if short else 300
    subscribers = []
    statuses = {}
    for _ in range(count):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(10)
        s.connect(("127.0.0.1", served.port))
        s.sendall(b"GET /subscribe?from=start HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
        subscribers.append(s)
    opened = time.monotonic()
    for s in subscribers:
        try:
            status = s.recv(12)[9:12].decode()
        except OSError:
            status = "none"
        statuses[status] = statuses.get(status, 0) + 1
    peak = 0.0
    for _ in range(30):
        peak = max(peak, served.rss_mb())
        time.sleep(0.1)
    figure(f"server memory, peak, {count} subscribers that never read (1 MB events)", f"{peak:.0f} MB")
    figure(f"answers to {count} subscribers (default --max-subscribers 256)", statuses)
    check(peak < 512, f"{count} never-reading subscribers on 1 MB events: the server stays under 512 MB ({peak:.0f} MB)")
    status, _, body = served.request("GET", "/events?limit=1")
    check(status == 200, "meanwhile another client reads /events (200)")
    check(served.request("GET", "/health")[0] == 200, "meanwhile /health answers 200")
    served_count = statuses.get("200", 0)
    # A failure detector, not a speed test: on a loaded machine the cuts come late, not never.
    cut = wait_for(lambda: served.log().count("took nothing written") >= served_count, 120)
    check(cut, f"all {served_count} never-reading subscribers are cut after --stall-timeout 10")
    figure("time from the last subscriber's request until every stalled one was cut (--stall-timeout 10)",
           f"{time.monotonic() - opened:.1f} s")
    for s in subscribers:
        s.close()
    wait_for(lambda: False, 3)
    after = served.rss_mb()
    figure("server memory 3 s after the subscribers left", f"{after:.0f} MB")
    check(after < idle + 128, f"after they leave the server returns near its idle size ({after:.0f} MB, idle {idle:.0f} MB)")
    served.stop("slow subscribers")


def bodies(esctl, short):
    """Bodies over --max-body, with and without Content-Length, written whole before reading."""
    served = Served(esctl)
    big = b'[{"type":"T","data":"' + b"x" * (5 << 20) + b'"}]'
    status, _, body = served.request("POST", "/streams/s-1", big)
    check(status == 413 and b"payloadTooLarge" in body, f"a 5 MiB body with Content-Length: 413 payloadTooLarge (got {status})")
    chunks = b"".join(b"%x\r\n%s\r\n" % (65536, b"x" * 65536) for _ in range(80)) + b"0\r\n\r\n"
    status, _, body = served.request("POST", "/streams/s-1", chunks, {"Transfer-Encoding": "chunked", "Content-Type": "application/json"})
    check(status == 413 and b"payloadTooLarge" in body, f"a 5 MiB chunked body: 413 payloadTooLarge (got {status})")
    check(served.request("GET", "/stats")[0] == 200 and head(served) == 0, "nothing was written")
    served.stop("bodies")


def head(served):
    status, _, body = served.request("GET", "/stats")
    try:
        return json.loads(body)["headPosition"]
    except (ValueError, KeyError):
        return -1


def other_sites(esctl, short):
    """Pages of other origins, forms, images and DNS-rebinding requests."""
    served = Served(esctl)
    port = served.port
    tries = [
        ("a form's text/plain append", "POST", "/streams/o-1", b'[{"type":"T"}]', {"Content-Type": "text/plain"}, 415),
        ("a fetch from another origin", "POST", "/streams/o-1", b'[{"type":"T"}]', {"Origin": "http://evil.example"}, 403),
        ("a purge from another origin", "POST", "/purge", b"", {"Origin": "http://evil.example"}, 403),
        ("an <img> of the chat room", "GET", "/chat/room?x", b"", {"Sec-Fetch-Site": "cross-site"}, 403),
        ("a rebinding page's read", "GET", "/events", b"", {"Host": f"rebind.evil.example:{port}"}, 421),
        ("a rebinding page's write", "POST", "/streams/o-1", b'[{"type":"T"}]', {"Host": "rebind.evil.example"}, 421),
    ]
    for what, method, path, body, headers, expected in tries:
        status, _, _ = served.request(method, path, body, headers)
        check(status == expected, f"{what}: {expected} (got {status})")
    check(head(served) == 0, "nothing was written by other sites' requests")
    served.stop("other sites")


def sigterm_under_load(esctl, short):
    """SIGTERM while 8 clients append: exit 0, and every acknowledged append is in the store."""
    served = Served(esctl)
    acknowledged = []
    lock = threading.Lock()
    stop = threading.Event()

    def client(n):
        for i in range(2000):
            if stop.is_set():
                return
            event_id = str(uuid.uuid4())
            status, _, _ = served.request("POST", f"/streams/load-{n}", f'[{{"type":"T","id":"{event_id}"}}]'.encode(), timeout=10)
            if status == 201:
                with lock:
                    acknowledged.append(event_id)
            elif status == 0:
                return

    threads = [threading.Thread(target=client, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    wait_for(lambda: len(acknowledged) >= 100, 30)
    status = served.stop("SIGTERM under load")
    stop.set()
    for t in threads:
        t.join(timeout=60)
    replay = subprocess.run([esctl, "replay", "--db", served.store, "--json"], capture_output=True, text=True, timeout=120)
    stored = {json.loads(line)["id"].lower() for line in replay.stdout.splitlines() if line.strip()}
    missing = [i for i in acknowledged if i.lower() not in stored]
    check(status == 0 and not missing, f"{len(acknowledged)} appends acknowledged before the stop, {len(missing)} missing after it")


def disk_full(esctl, short):
    """A disk that fills and frees: appends fail, then succeed, and the projections catch up."""
    work = tempfile.mkdtemp(prefix="abuse-disk-")
    mounted = shutil.which("mount") is not None and subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", work], capture_output=True).returncode == 0
    if not mounted:
        print("skip  a disk that fills and frees: cannot mount a small tmpfs here (needs root and CAP_SYS_ADMIN)", flush=True)
        return
    try:
        # Given a store on a 48 MB file system, a third of which a filler file takes
        filler = os.path.join(work, "filler")
        with open(filler, "wb") as f:
            f.write(b"\1" * (16 << 20))
        served = Served(esctl, work=work)
        # When 1 MB appends run until the disk is full
        failed = 0
        for i in range(60):
            status = append(served, f"fill-{i}", 1, 1_000_000)
            if status >= 500:
                failed = status
                break
        check(failed >= 500, f"appends on a full disk fail with a 5xx (got {failed})")
        check(served.alive(), "the server is alive on a full disk")
        # Then, once the filler is removed, appends succeed again and the projections catch up
        os.remove(filler)
        healed_at = time.monotonic()
        check(wait_for(lambda: append(served, "after", 1, 1_000_000) == 201, 30), "after space is freed, a 1 MB append succeeds")

        def caught_up():
            status, _, body = served.request("GET", "/projections")
            try:
                return status == 200 and all(p["lag"] == 0 for p in json.loads(body))
            except (ValueError, KeyError):
                return False

        check(wait_for(caught_up, 60), "the live projections catch up by themselves")
        figure("time for appends and projections to heal after a full disk is freed", f"{time.monotonic() - healed_at:.1f} s")
        log = served.log()
        if "live projections stopped" in log:
            check("live projections resumed" in log, "the projections logged that they stopped, and that they resumed")
        served.stop("disk full")
    finally:
        subprocess.run(["umount", "-l", work], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


def deleted_store(esctl, short):
    """The store's directory deleted while serving: writes are refused, not lost."""
    served = Served(esctl)
    check(append(served, "before", 1) == 201, "an append before the deletion: 201")
    shutil.rmtree(served.store)
    status = append(served, "after", 1)
    check(status == 503, f"an append after the store's directory was deleted: 503, not a lost 201 (got {status})")
    check("deleted or replaced" in served.log(), "the server logs that its data file is gone")
    served.stop("deleted store")


def streamed_appends(esctl, short):
    """POST /append/stream: a huge line, a client that never reads answers, garbage lines, a
    trickle into a refused stream; memory and the store stay bounded."""
    served = Served(esctl, ["--max-body", "65536", "--stall-timeout", "3", "--body-timeout", "3"])
    stream_head = (b"POST /append/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\n"
                   b"Transfer-Encoding: chunked\r\n")

    def chunk(data):
        return b"%x\r\n%s\r\n" % (len(data), data)

    def answers(s, seconds):
        s.settimeout(seconds)
        out = b""
        try:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                out += data
        except (socket.timeout, ConnectionResetError):
            pass
        return out

    rss_before = served.rss_mb()
    # A 20 MiB line with no newline, then a good line: the long one 413 (never held), the next one written.
    s = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    s.sendall(stream_head + b"\r\n")
    for _ in range(20):
        s.sendall(chunk(b"x" * (1 << 20)))
    s.sendall(chunk(b'\n{"stream":"big-1","type":"T"}\n') + b"0\r\n\r\n")
    out = answers(s, 10)
    s.close()
    check(b'"line":1,"status":413' in out and b'"line":2,"stream":"big-1"' in out,
          "a 20 MiB line: answered 413, and the line after it appended")
    # Garbage, deep nesting, an empty stream name, a bad expectedVersion: each answered 400.
    s = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    s.sendall(stream_head + b"\r\n" + chunk(b"\x00\xff garbage\n" + b"[" * 5000 + b'\n{"stream":"","type":"T"}\n'
                                            b'{"stream":"g-1","type":"T","expectedVersion":"nope"}\n') + b"0\r\n\r\n")
    out = answers(s, 10)
    s.close()
    refused = out.count(b'"status":400')
    check(refused == 4, f"four bad lines: four 400 answers (got {refused})")
    # A client that appends and never reads: TCP holds it back, the stall timeout cuts it.
    s = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(stream_head + b"\r\n")
    s.settimeout(2)
    sent = 0
    line = chunk(b'{"stream":"r-1","type":"T","data":{"pad":"' + b"y" * 200 + b'"}}\n')
    try:
        for _ in range(200000):
            s.sendall(line)
            sent += 1
    except (socket.timeout, OSError):
        pass
    figure("streamed lines a non-reading client got in before TCP held it", sent)
    check(sent < 200000, f"a client that never reads answers is held back ({sent} lines sent)")
    # Closed by the stall timeout or by the body timeout (its body stopped too), whichever comes first.
    check(wait_for(lambda: "nothing written to it" in served.log() or "streamed request body sent nothing" in served.log(), 30),
          "and its connection is closed after the stall or body timeout")
    s.close()
    # A refused stream (a foreign origin: 403) that the client keeps trickling into is cut.
    s = socket.create_connection(("127.0.0.1", served.port), timeout=10)
    s.sendall(stream_head + b"Origin: http://evil.example\r\n\r\n")
    started = time.monotonic()
    try:
        while time.monotonic() - started < 30:
            s.sendall(chunk(b" "))
            time.sleep(0.4)
    except OSError:
        pass
    s.close()
    check(time.monotonic() - started < 30, f"a trickle into a refused stream is cut (after {time.monotonic() - started:.1f} s)")
    rss_after = served.rss_mb()
    figure("streamed appends: RSS before and after (MiB)", f"{rss_before:.1f} -> {rss_after:.1f}")
    check(rss_after < rss_before + 64, f"memory stays bounded ({rss_before:.1f} -> {rss_after:.1f} MiB)")
    check(served.alive() and served.request("GET", "/health")[0] == 200, "the server still answers")
    served.stop("streamed-appends")


SCENARIOS = [
    ("descriptors", descriptors),
    ("slow-headers", slow_headers),
    ("slow-subscribers", slow_subscribers),
    ("bodies", bodies),
    ("streamed-appends", streamed_appends),
    ("other-sites", other_sites),
    ("sigterm", sigterm_under_load),
    ("disk-full", disk_full),
    ("deleted-store", deleted_store),
]


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 64
    esctl = args[0]
    short = "--short" in args
    only = None
    if "--only" in args:
        only = set(args[args.index("--only") + 1].split(","))
    for name, scenario in SCENARIOS:
        if only and name not in only:
            continue
        print(f"== {name}", flush=True)
        started = time.monotonic()
        try:
            scenario(esctl, short)
        except Exception as error:  # a scenario that breaks is a failure, not a crash of the script
            check(False, f"{name}: {error!r}")
        print(f"   ({time.monotonic() - started:.1f} s)", flush=True)
    print("\nfigures:")
    for name, value in FIGURES:
        print(f"  {name}: {value}")
    if FAILURES:
        print(f"\n{len(FAILURES)} check(s) failed:", file=sys.stderr)
        for what in FAILURES:
            print(f"  {what}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
