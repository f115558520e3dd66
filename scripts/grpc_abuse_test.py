#!/usr/bin/env python3
"""Attacks a fresh `esctl serve --grpc-port 0` over gRPC the way a hostile or broken client would,
in bounded loops, and checks that every bad call gets a gRPC status and one sentence, writes
nothing and leaves the server up: protobuf that does not decode, messages over the 4 MiB limit, a
compressed flag with no encoding, unknown fields, empty and huge queries, `limit` 0 and 2^32-1, a
missing or wrong API key, subscribers that never read (on 10 KB and on 1 MB events) and ones that
leave, streams left inside large messages, 500 idle HTTP/2 connections, SIGTERM during appends
and with a subscription open. Run by scripts/grpc-abuse-test.sh, which installs the HTTP/2 library (h2) it
speaks raw gRPC with.

    grpc_abuse_test.py ESCTL [--only NAME,...]

Each scenario starts its own server on a fresh store on a free loopback port (`--port 0
--grpc-port 0`) and stops it with SIGTERM, expecting exit 0. Every loop is bounded in count and
every wait in time, and a wait that runs out says what never arrived. Prints one PASS or FAIL
line per check, a line per figure (memory, descriptors, times, the statuses answered) and a
summary; exits 1 when any check fails. A check that fails because of the server is marked BUG.
"""

import base64
import os
import re
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import h2.config
import h2.connection
import h2.errors
import h2.events
import h2.exceptions
import h2.settings
import hyperframe.frame

RESULTS = []  # (scenario, passed, what)
FIGURES = []  # (scenario, name, value)
SERVERS = []  # every server started, to stop at exit
WORK = []  # the temporary directories made, removed at exit (unless GRPC_ABUSE_KEEP is set)
SCENARIO = ["-"]

DCB = "/umadb.v1.DCB/"
HEALTH_CHECK = "/grpc.health.v1.Health/Check"
STATUS_NAMES = {
    0: "OK", 1: "CANCELLED", 2: "UNKNOWN", 3: "INVALID_ARGUMENT", 4: "DEADLINE_EXCEEDED", 5: "NOT_FOUND",
    6: "ALREADY_EXISTS", 7: "PERMISSION_DENIED", 8: "RESOURCE_EXHAUSTED", 9: "FAILED_PRECONDITION",
    10: "ABORTED", 11: "OUT_OF_RANGE", 12: "UNIMPLEMENTED", 13: "INTERNAL", 14: "UNAVAILABLE",
    15: "DATA_LOSS", 16: "UNAUTHENTICATED",
}
H2_ERRORS = {0: "NO_ERROR", 1: "PROTOCOL_ERROR", 2: "INTERNAL_ERROR", 3: "FLOW_CONTROL_ERROR", 7: "REFUSED_STREAM", 8: "CANCEL",
             11: "ENHANCE_YOUR_CALM"}
ERROR_TYPES = {0: "IO", 1: "SERIALIZATION", 2: "INTEGRITY", 3: "CORRUPTION", 4: "INTERNAL", 5: "AUTHENTICATION", 6: "INVALID_ARGUMENT"}


def check(condition, what, bug=None):
    """One PASS/FAIL line. `bug`: what the failure says about the server, printed with it."""
    line = ("PASS  " if condition else "FAIL  ") + f"{SCENARIO[0]}: {what}"
    if not condition and bug:
        line += f"\n      BUG (server): {bug}"
    print(line, flush=True)
    RESULTS.append((SCENARIO[0], bool(condition), what + (f" -- BUG (server): {bug}" if not condition and bug else "")))
    return bool(condition)


def figure(name, value):
    print(f"      figure: {name}: {value}", flush=True)
    FIGURES.append((SCENARIO[0], name, value))


# Protocol buffers, by hand ---------------------------------------------------------------------


def varint(n):
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def field(number, value):
    """A field: an int as a varint, bytes or str length-delimited."""
    if isinstance(value, bool) or isinstance(value, int):
        return varint(number << 3) + varint(int(value))
    if isinstance(value, str):
        value = value.encode()
    return varint(number << 3 | 2) + varint(len(value)) + value


def event(event_type, data=b"", tags=(), event_uuid=None, extra=b""):
    return (field(1, event_type) + b"".join(field(2, t) for t in tags) + field(3, data)
            + (field(4, event_uuid) if event_uuid else b"") + extra)


def query(items):
    """A Query of items, each (types, tags)."""
    return b"".join(field(1, b"".join(field(1, t) for t in types) + b"".join(field(2, t) for t in tags)) for types, tags in items)


def append_request(events, condition_query=None):
    body = b"".join(field(1, e) for e in events)
    if condition_query is not None:
        body += field(2, field(1, condition_query))
    return body


def read_request(query_bytes=None, start=None, backwards=None, limit=None, batch_size=None):
    body = b""
    if query_bytes is not None:
        body += field(1, query_bytes)
    for number, value in ((2, start), (3, backwards), (4, limit), (6, batch_size)):
        if value is not None:
            body += field(number, value)
    return body


def parse(data):
    """The fields of a message: [(number, wire type, value)], values as ints or bytes."""
    out = []
    i = 0

    def read_varint():
        nonlocal i
        result = shift = 0
        while True:
            byte = data[i]
            i += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result

    while i < len(data):
        key = read_varint()
        number, wire = key >> 3, key & 7
        if wire == 0:
            value = read_varint()
        elif wire == 1:
            value = data[i:i + 8]
            i += 8
        elif wire == 2:
            length = read_varint()
            value = data[i:i + length]
            i += length
        elif wire == 5:
            value = data[i:i + 4]
            i += 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, wire, value))
    return out


def first(fields, number, default=None):
    return next((value for n, _, value in fields if n == number), default)


def sequenced(messages):
    """The events of Read or Subscribe responses: [(position, uuid, type, data length)]."""
    out = []
    for message in messages:
        for number, _, value in parse(message):
            if number != 1:
                continue
            fields = parse(value)
            inner = parse(first(fields, 2, b""))
            out.append((first(fields, 1, 0), first(inner, 4, b"").decode(), first(inner, 1, b"").decode(),
                        len(first(inner, 3, b""))))
    return out


def frame(message, compressed=False):
    """A gRPC length-prefixed message."""
    return bytes([1 if compressed else 0]) + struct.pack(">I", len(message)) + message


# gRPC over raw HTTP/2 ---------------------------------------------------------------------------


class Answer:
    """What came back on one stream."""

    def __init__(self):
        self.headers = []
        self.trailers = []
        self.messages = []
        self.buffer = b""
        self.reset = None
        self.ended = False
        self.timed_out = False
        self.error = None
        self.stream_id = None

    def _value(self, name):
        for key, value in self.trailers + self.headers:
            if key == name:
                return value
        return None

    @property
    def status(self):
        value = self._value("grpc-status")
        return int(value) if value is not None and value.isdigit() else None

    @property
    def message(self):
        value = self._value("grpc-message")
        return urllib.parse.unquote(value) if value is not None else ""

    @property
    def details(self):
        """The ErrorResponse of grpc-status-details-bin: (message, error type), or None."""
        value = self._value("grpc-status-details-bin")
        if value is None:
            return None
        fields = parse(base64.b64decode(value + "=" * (-len(value) % 4)))
        return first(fields, 1, b"").decode(errors="replace"), first(fields, 2, 0)

    @property
    def ok(self):
        return self.status == 0

    def one_sentence(self):
        """A non-OK status with a message of one line."""
        message = self.message.strip()
        return self.status not in (None, 0) and bool(message) and "\n" not in message and len(message) < 500

    def describe(self):
        if self.status is not None:
            text = f"grpc-status {self.status} {STATUS_NAMES.get(self.status, '?')}"
            if self.message:
                text += f" {self.message!r}"
            if self.details:
                text += f" details ErrorResponse{{{self.details[0]!r}, {ERROR_TYPES.get(self.details[1], self.details[1])}}}"
            return text
        if self.reset is not None:
            return f"RST_STREAM {H2_ERRORS.get(self.reset, self.reset)} and no grpc-status"
        if self.timed_out:
            return "no answer before the timeout"
        return f"no grpc-status ({self.error or 'stream ended without one'})"


class Connection:
    """One HTTP/2 connection speaking gRPC, one call at a time (a never-reading subscriber's
    stream may stay open beside them). `window`: the stream receive window announced in SETTINGS
    (default 65,535; then every received byte is acknowledged and the connection window opened
    to 1 GiB); with a window, received data is never acknowledged (no WINDOW_UPDATE)."""

    def __init__(self, port, timeout=10, window=None, rcvbuf=None, validate=True):
        self.port = port
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.sock.settimeout(timeout)
        self.sock.connect(("127.0.0.1", port))
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(
            client_side=True, header_encoding="utf-8", validate_outbound_headers=validate, normalize_outbound_headers=validate))
        self._keep_open_on_graceful_goaway()
        self.acknowledge = window is None
        if window is not None:
            codes = h2.settings.SettingCodes
            self.h2.local_settings = h2.settings.Settings(
                client=True, initial_values={codes.INITIAL_WINDOW_SIZE: window, codes.MAX_CONCURRENT_STREAMS: 100})
        self.h2.initiate_connection()
        if self.acknowledge:
            self.h2.increment_flow_control_window(1 << 30)
        self.streams = {}
        self.goaway = None
        self.closed = False
        self.flush()

    def _keep_open_on_graceful_goaway(self):
        """h2 closes its side on any GOAWAY, and then refuses the frames after it, even in the
        same read: the answers of the calls a graceful GOAWAY (NO_ERROR) lets finish, and the
        PING that follows it. On a graceful one, only report it, and keep the connection open."""
        table = self.h2._frame_dispatch_table
        goaway_frame = next(kind for kind in table if kind.__name__ == "GoAwayFrame")
        original = table[goaway_frame]

        def receive_goaway(frame):
            if frame.error_code != 0:
                return original(frame)
            ev = h2.events.ConnectionTerminated()
            ev.error_code = h2.errors._error_code_from_int(frame.error_code)
            ev.last_stream_id = frame.last_stream_id
            ev.additional_data = frame.additional_data or None
            return [], [ev]

        table[goaway_frame] = receive_goaway

    def flush(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def pump(self, deadline):
        """Reads what arrives before the deadline and handles it; False once the connection ended."""
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise socket.timeout("deadline")
        self.sock.settimeout(remaining)
        data = self.sock.recv(1 << 20)
        if not data:
            self.closed = True
            for answer in self.streams.values():
                if not answer.ended:
                    answer.error = answer.error or "the server closed the connection"
                    answer.ended = True
            return False
        for ev in self.h2.receive_data(data):
            self.handle(ev)
        self.flush()
        return True

    def handle(self, ev):
        answer = self.streams.get(getattr(ev, "stream_id", None))
        if isinstance(ev, h2.events.DataReceived):
            if self.acknowledge:
                self.h2.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            if answer is None:
                return
            answer.buffer += ev.data
            while len(answer.buffer) >= 5:
                length = struct.unpack(">I", answer.buffer[1:5])[0]
                if len(answer.buffer) < 5 + length:
                    break
                answer.messages.append(answer.buffer[5:5 + length])
                answer.buffer = answer.buffer[5 + length:]
        elif answer is None:
            if isinstance(ev, h2.events.ConnectionTerminated):
                self.terminated(ev)
        elif isinstance(ev, h2.events.ResponseReceived):
            answer.headers = list(ev.headers)
        elif isinstance(ev, h2.events.TrailersReceived):
            answer.trailers = list(ev.headers)
        elif isinstance(ev, h2.events.StreamEnded):
            answer.ended = True
        elif isinstance(ev, h2.events.StreamReset):
            answer.reset = ev.error_code
            answer.ended = True

    def terminated(self, ev):
        self.goaway = (int(ev.error_code), ev.last_stream_id)
        for sid, answer in self.streams.items():
            if not answer.ended and (ev.error_code != 0 or sid > (ev.last_stream_id or 0)):
                answer.error = f"GOAWAY {H2_ERRORS.get(int(ev.error_code), ev.error_code)} (last stream {ev.last_stream_id})"
                answer.ended = True

    def call(self, path, message=b"", body=None, metadata=(), timeout=10, until=None):
        """One call: sends `body` (default: `message` framed) and reads until the stream ends, the
        timeout, or `until(answer)` holds. `path` is a DCB method's name or a full path."""
        answer = Answer()
        if self.goaway is not None or self.closed:
            answer.error = "connection closed or going away"
            return answer
        path = path if path.startswith("/") else DCB + path
        body = frame(message) if body is None else body
        deadline = time.monotonic() + timeout
        try:
            sid = self.h2.get_next_available_stream_id()
            answer.stream_id = sid
            self.streams[sid] = answer
            self.h2.send_headers(sid, [
                (":method", "POST"), (":scheme", "http"), (":authority", f"127.0.0.1:{self.port}"), (":path", path),
                ("te", "trailers"), ("content-type", "application/grpc"), *metadata])
            self.flush()
            sent = 0
            while sent < len(body) and not answer.ended:
                size = min(self.h2.local_flow_control_window(sid), self.h2.max_outbound_frame_size, len(body) - sent)
                if size <= 0:
                    if not self.pump(deadline):
                        break
                    continue
                self.h2.send_data(sid, body[sent:sent + size])
                sent += size
                self.flush()
            if not answer.ended:
                self.h2.end_stream(sid)
                self.flush()
            while not answer.ended and not (until and until(answer)):
                if not self.pump(deadline):
                    break
        except socket.timeout:
            answer.timed_out = True
        except h2.exceptions.StreamClosedError:
            # The server reset the stream while the body was being sent: read what it said.
            try:
                while not answer.ended and self.pump(deadline):
                    pass
            except (socket.timeout, OSError, h2.exceptions.ProtocolError) as error:
                answer.error = answer.error or repr(error)
        except (h2.exceptions.ProtocolError, OSError) as error:
            answer.error = repr(error)
        return answer


def call(port, path, message=b"", timeout=10, **options):
    """One call on its own connection."""
    try:
        connection = Connection(port, timeout=timeout)
    except OSError as error:
        answer = Answer()
        answer.error = f"cannot connect: {error}"
        return answer
    try:
        return connection.call(path, message, timeout=timeout, **options)
    finally:
        connection.close()


def frames(state):
    """The whole HTTP/2 frames in state["buffer"] (taken off it)."""
    out = []
    buffer = state["buffer"]
    while len(buffer) >= 9:
        header, length = hyperframe.frame.Frame.parse_frame_header(memoryview(buffer[:9]))
        if len(buffer) < 9 + length:
            break
        header.parse_body(memoryview(buffer[9:9 + length]))
        out.append(header)
        buffer = buffer[9 + length:]
    state["buffer"] = buffer
    return out


# The server -------------------------------------------------------------------------------------


def esctl_run(esctl, args, timeout=120):
    """Runs esctl, retrying for a while when the binary is missing (rebuilt under us)."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return subprocess.run([esctl, *args], capture_output=True, text=True, timeout=timeout)
        except OSError:  # missing, or being written (ETXTBSY)
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


class Served:
    """One `esctl serve --port 0 --grpc-port 0` on a fresh store (or the store given)."""

    def __init__(self, esctl, args=(), store=None, work=None):
        if work is None:
            work = tempfile.mkdtemp(prefix="grpc-abuse-")
            WORK.append(work)
        self.work = work
        self.store = store or os.path.join(self.work, "store")
        self.err_path = os.path.join(self.work, f"serve-{time.monotonic_ns()}.err")
        if not os.path.exists(os.path.join(self.store, "data.mdb")):
            init = esctl_run(esctl, ["init", "--db", self.store])
            if init.returncode != 0:
                raise RuntimeError(f"esctl init failed ({init.returncode}): {init.stderr.strip()}")
        self.err = open(self.err_path, "w")
        deadline = time.monotonic() + 60
        while True:
            try:
                self.process = subprocess.Popen(
                    [esctl, "serve", "--db", self.store, "--port", "0", "--grpc-port", "0", "--log-level", "warning", *args],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)
        SERVERS.append(self.process)
        self.port = None
        while time.monotonic() < deadline and self.port is None:
            if self.process.poll() is not None:
                raise RuntimeError(f"esctl serve ended ({self.process.returncode}) before listening: {self.log()}")
            match = re.search(r"over gRPC \(umadb\.v1\.DCB\) on https?://127\.0\.0\.1:(\d+)", self.log())
            if match:
                self.port = int(match.group(1))
            else:
                time.sleep(0.05)
        if self.port is None:
            raise RuntimeError(f"esctl serve did not say where it serves gRPC within 60 s: {self.log()}")

    def log(self):
        with open(self.err_path) as f:
            return f.read()

    def rss_mb(self):
        return self._status("VmRSS")

    def peak_mb(self):
        return self._status("VmHWM")

    def _status(self, key):
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith(key + ":"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0.0

    def descriptors(self):
        try:
            return len(os.listdir(f"/proc/{self.process.pid}/fd"))
        except OSError:
            return -1

    def alive(self):
        return self.process.poll() is None

    def call(self, path, message=b"", **options):
        return call(self.port, path, message, **options)

    def head(self, metadata=()):
        """The head position (0 when empty), or None when Head fails."""
        answer = self.call("Head", metadata=metadata)
        return first(parse(answer.messages[0]), 1, 0) if answer.ok and answer.messages else None

    def up(self, metadata=()):
        """Whether the server answers Head and health Check, each within 10 s."""
        health = self.call(HEALTH_CHECK, b"")
        serving = health.ok and bool(health.messages) and first(parse(health.messages[0]), 1) == 1
        return self.alive() and serving and self.head(metadata) is not None

    def stop(self, what, bound=60):
        started = time.monotonic()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(timeout=bound)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
            status = f"still running {bound} s after SIGTERM, killed"
        took = time.monotonic() - started
        self.err.close()
        check(status == 0, f"{what}: the server stops on SIGTERM with exit 0 (got {status}, {took:.1f} s)")
        crash = re.search(r"(Fatal error|Precondition failed|Assertion failed|Segmentation fault|panic).*", self.log())
        check(crash is None, f"{what}: no crash in the server's log" + (f" (found {crash.group(0)!r})" if crash else ""))
        return status, took


def append(port_or_connection, events, metadata=(), timeout=30):
    """Appends; returns the Answer and the position (None when refused)."""
    message = append_request(events)
    if isinstance(port_or_connection, Connection):
        answer = port_or_connection.call("Append", message, metadata=metadata, timeout=timeout)
    else:
        answer = call(port_or_connection, "Append", message, metadata=metadata, timeout=timeout)
    position = first(parse(answer.messages[0]), 1, 0) if answer.ok and answer.messages else None
    return answer, position


def read_all(port, request=b"", metadata=(), timeout=60):
    answer = call(port, "Read", request, metadata=metadata, timeout=timeout)
    return answer, (sequenced(answer.messages) if answer.ok else [])


def refused(served, what, answer, expected=None, head_before=None):
    """The checks every refused call gets: a non-OK status with one sentence (`expected`, when
    given, is recorded beside what came back), nothing written, the server up."""
    figure(f"{what}: answer", answer.describe())
    said = answer.one_sentence()
    bug = f"no gRPC status: {answer.describe()}" if not said and answer.status is None else None
    check(said, f"{what}: a non-OK gRPC status and one sentence ({answer.describe()})", bug=bug)
    if expected is not None and answer.status is not None and answer.status != 0:
        check(answer.status == expected,
              f"{what}: status {expected} {STATUS_NAMES[expected]} (got {answer.status} {STATUS_NAMES.get(answer.status)})")
    if head_before is not None:
        now = served.head()
        check(now == head_before, f"{what}: nothing written (head {head_before} before, {now} after)")


# The scenarios ----------------------------------------------------------------------------------


def malformed(esctl):
    """Valid gRPC framing around bytes that are not the message: answered, nothing written; a
    stream's HTTP/2 protocol error resets that stream only."""
    served = Served(esctl)
    _, head = append(served.port, [event("Seed", b"1"), event("Seed", b"2"), event("Seed", b"3")])
    check(head == 3, f"3 seed events appended (head {head})")
    garbage = b"\x0a\xff\xff\xff"  # field 1, a length that runs past the end
    valid = append_request([event("Valid", b"v")])
    # (what, method, body, the status expected: 3 where the message does not decode; broken
    # framing is recorded only: the face answers 13 INTERNAL)
    tries = [
        ("Append whose field 1 length runs past the end", "Append", frame(garbage), 3),
        ("Append of 64 bytes 0xff", "Append", frame(b"\xff" * 64), 3),
        ("Append with an event type that is not UTF-8", "Append", frame(field(1, field(1, b"\xff\xfe") + field(3, b"x"))), 3),
        ("Read whose field 1 length runs past the end", "Read", frame(garbage), 3),
        ("Subscribe whose field 1 length runs past the end", "Subscribe", frame(garbage), 3),
        ("Head of 8 bytes 0xff", "Head", frame(b"\xff" * 8), 3),
        ("Append whose gRPC frame declares 100 bytes and ends after 10", "Append", b"\x00" + struct.pack(">I", 100) + valid[:10], None),
        ("Append with two messages on the unary call", "Append", frame(valid) + frame(valid), None),
        ("Append with no message at all", "Append", b"", None),
    ]
    for what, method, body, expected in tries:
        answer = served.call(method, body=body, timeout=10)
        refused(served, what, answer, expected=expected, head_before=3)
    # A header HTTP/2 forbids (RFC 9113 8.2.2) is a stream error: that stream is reset, the
    # connection and its other calls go on.
    connection = Connection(served.port, timeout=10, validate=False)
    bad = connection.call("Head", b"", metadata=(("connection", "keep-alive"),), timeout=5)
    check(bad.reset is not None and bad.status is None, f"a call with a `connection` header is reset ({bad.describe()})")
    after = connection.call("Head", b"", timeout=10)
    check(after.ok, f"the same connection still serves a call after that stream's protocol error ({after.describe()})")
    connection.close()
    check(served.up(), "the server still answers Head and health Check")
    served.stop("malformed")


def oversize(esctl):
    """Messages past the 4 MiB request limit (and one just under it)."""
    served = Served(esctl)
    limit = 4 << 20

    def sized(total):
        """An Append request of exactly `total` bytes (one event whose data fills it)."""
        size = total - 20
        for _ in range(10):
            message = append_request([event("Big", b"z" * size)])
            if len(message) == total:
                return message
            size += total - len(message)
        raise RuntimeError(f"no Append request of {total} bytes")

    under = sized(limit)
    answer = served.call("Append", under, timeout=30)
    check(answer.ok and len(under) == limit,
          f"an Append of exactly 4 MiB ({len(under)} bytes) is taken ({answer.describe()})")
    head = served.head()
    connection = Connection(served.port, timeout=30)
    tries = [
        ("an Append of 4 MiB + 1 byte", frame(sized(limit + 1))),
        ("an Append of 16 MiB", frame(sized(16 << 20))),
        ("an Append whose frame declares 4 GiB - 1 and sends 3 bytes", b"\x00\xff\xff\xff\xff" + b"abc"),
    ]
    for what, body in tries:
        answer = connection.call("Append", body=body, timeout=30)
        refused(served, what, answer, expected=8, head_before=head)
    after = connection.call("Head", b"", timeout=10)
    check(after.ok, f"the same connection still serves a call after them ({after.describe()})")
    connection.close()
    check(served.up(), "the server still answers Head and health Check")
    served.stop("oversize")


def leave_streams(served, connection, body, count=8):
    """Opens `count` Append streams on `connection`, sends `body` on each and never ends them;
    returns their answers after 2 s (those answered by then ended)."""
    deadline = time.monotonic() + 60
    answers = []
    try:
        for _ in range(count):
            sid = connection.h2.get_next_available_stream_id()
            answer = Answer()
            answer.stream_id = sid
            connection.streams[sid] = answer
            answers.append(answer)
            connection.h2.send_headers(sid, [
                (":method", "POST"), (":scheme", "http"), (":authority", f"127.0.0.1:{served.port}"), (":path", DCB + "Append"),
                ("te", "trailers"), ("content-type", "application/grpc")])
            sent = 0
            while sent < len(body) and not answer.ended:
                size = min(connection.h2.local_flow_control_window(sid), connection.h2.max_outbound_frame_size, len(body) - sent)
                if size <= 0:
                    connection.pump(deadline)
                    continue
                connection.h2.send_data(sid, body[sent:sent + size])
                sent += size
                connection.flush()
        settle = time.monotonic() + 2
        while time.monotonic() < settle:
            try:
                connection.pump(settle)
            except socket.timeout:
                break
    except (OSError, h2.exceptions.ProtocolError) as error:
        check(False, f"{count} streams of {len(body)} bytes each are sent ({error!r})")
    return answers


def held_requests(esctl):
    """Streams left open with large requests: one connection holds at most 16 MiB of requests
    not yet ended, whether inside a message or whole (past it, the stream that crossed gets
    RESOURCE_EXHAUSTED), the server's memory stays within a bound, nothing is written, and the
    connection serves on."""
    served = Served(esctl)
    _, head = append(served.port, [event("Seed", b"1")])
    tries = [
        # 3 MiB of a message that declares 4 MiB: 24 MiB if all 8 were held.
        ("inside a 4 MiB message", b"\x00" + struct.pack(">I", 4 << 20) + b"z" * ((3 << 20) - 5)),
        # A whole message of 3 MiB, and no end of stream: the call waits for the end with it.
        ("with a whole 3 MiB message", frame(append_request([event("Big", b"z" * ((3 << 20) - 64))]))),
    ]
    for what, body in tries:
        connection = Connection(served.port, timeout=60)
        rss_before = served.rss_mb()
        answers = leave_streams(served, connection, body)
        rss_during = served.rss_mb()
        refused_ = [a for a in answers if a.ended]
        figure(f"streams left {what}", f"{len(answers)}, of which {len(refused_)} answered: "
               + ", ".join(sorted(set(a.describe() for a in refused_))))
        figure(f"server memory while streams are left {what}", f"{rss_before} MB before, {rss_during} MB during")
        # The bound counts the storage a message's bytes take (grown by doubling: 3 MiB of an
        # unfinished one take 4 MiB), so 3 to 5 of the 8 streams fit within it.
        check(3 <= len(refused_) <= 5 and all(a.status == 8 for a in refused_),
              f"streams left {what}: those past 16 MiB held (3 to 5 of 8) are answered RESOURCE_EXHAUSTED, the others wait "
              f"({len(refused_)} answered)")
        check(rss_during is not None and rss_before is not None and rss_during - rss_before < 64,
              f"streams left {what}: the server's memory grows by less than 64 MB ({rss_before} MB before, {rss_during} MB during)")
        after = connection.call("Head", b"", timeout=10)
        check(after.ok, f"streams left {what}: the same connection still serves a call beside them ({after.describe()})")
        connection.close()
    check(served.head() == head, f"nothing written (head {head} before, {served.head()} after)")
    check(served.up(), "the server still answers Head and health Check")
    served.stop("held requests")


def compressed(esctl):
    """The compressed flag without an encoding, and an encoding the server does not take."""
    served = Served(esctl)
    _, head = append(served.port, [event("Seed", b"1")])
    valid = append_request([event("Valid", b"v")])
    # The gRPC specification's answers: INTERNAL for a compressed message without an encoding,
    # UNIMPLEMENTED for an encoding the server does not take.
    tries = [
        ("an Append with the compressed flag and no grpc-encoding", (), frame(valid, compressed=True), 13),
        ("an Append with the compressed flag, grpc-encoding gzip and bytes that are not gzip",
         (("grpc-encoding", "gzip"),), frame(b"not gzip at all", compressed=True), 12),
    ]
    for what, metadata, body, expected in tries:
        answer = served.call("Append", body=body, metadata=metadata, timeout=10)
        refused(served, what, answer, expected=expected, head_before=head)
    check(served.up(), "the server still answers Head and health Check")
    served.stop("compressed")


def unknown_fields(esctl):
    """Fields the proto does not define, of every wire type, at every level: ignored."""
    served = Served(esctl)
    unknown = (field(99, 5) + varint(100 << 3 | 1) + b"\x01" * 8 + field(101, b"unknown bytes")
               + varint(102 << 3 | 5) + b"\x02" * 4)
    entry = field(1, "k") + field(2, "v") + unknown
    the_event = event("Known", b"data", tags=["t1"], extra=field(5, entry) + unknown)
    answer = served.call("Append", field(1, the_event) + unknown)
    position = first(parse(answer.messages[0]), 1, 0) if answer.ok and answer.messages else None
    check(answer.ok and position == 1, f"an Append with unknown fields in the request, the event and its metadata: OK, position 1 ({answer.describe()})")
    answer, events = read_all(served.port, read_request(query([(["Known"], ["t1"])]), limit=10) + unknown)
    check(answer.ok and [(e[0], e[2], e[3]) for e in events] == [(1, "Known", 4)],
          f"a Read with unknown fields: OK, the event as appended ({answer.describe()}, {events})")
    answer = served.call("Head", unknown)
    check(answer.ok, f"a Head with unknown fields: OK ({answer.describe()})")
    answer = served.call("Subscribe", field(2, 1) + unknown, timeout=1.5)
    check(answer.timed_out and answer.status is None and answer.reset is None,
          f"a Subscribe with unknown fields stays open ({answer.describe()})")
    answer = served.call(HEALTH_CHECK, unknown)
    check(answer.ok, f"a health Check with unknown fields: OK ({answer.describe()})")
    served.stop("unknown fields")


def queries(esctl):
    """Empty queries match everything; 10,000 items are taken, 10,001 refused; a 2.7 MB query answered."""
    served = Served(esctl)
    events = [event(f"Q{i % 4}", b"x", tags=[f"t{i % 5}"]) for i in range(20)]
    _, head = append(served.port, events)
    check(head == 20, f"20 events appended (head {head})")
    answer, found = read_all(served.port, read_request(b""))
    check(answer.ok and len(found) == 20, f"a Read with a query of no items reads all 20 events ({answer.describe()}, {len(found)})")
    answer, found = read_all(served.port, read_request(query([((), [f"t{i}"]) for i in range(10_000)])))
    check(answer.ok and len(found) == 20, f"a query of 10,000 items is taken and matches all 20 ({answer.describe()}, {len(found)})")
    over = query([((), [f"t{i}"]) for i in range(10_001)])
    for what, method, message in [
        ("a Read with a query of 10,001 items", "Read", read_request(over)),
        ("a Subscribe with a query of 10,001 items", "Subscribe", field(1, over)),
        ("an Append whose condition has 10,001 items", "Append", append_request([event("Never", b"")], condition_query=over)),
    ]:
        answer = served.call(method, message, timeout=30)
        refused(served, what, answer, expected=3, head_before=20)
        details = answer.details
        check(details is not None and details[1] == 6,
              f"{what}: the details trailer is ErrorResponse INVALID_ARGUMENT ({details})")
    long_tags = query([((), [f"{i:06d}-" + "x" * 57 + f"-{j}" for j in range(4)]) for i in range(10_000)])
    started = time.monotonic()
    answer, found = read_all(served.port, read_request(long_tags), timeout=60)
    took = time.monotonic() - started
    figure("a Read with a query of 10,000 items of 4 tags of 66 bytes", f"{len(long_tags) / 1e6:.1f} MB, answered in {took:.2f} s")
    check(answer.ok and found == [], f"it is answered OK with no events within 60 s ({answer.describe()}, {took:.1f} s)")
    check(served.up(), "the server still answers Head and health Check")
    served.stop("queries")


def limits(esctl):
    """`limit` 0 and 2^32-1, batch sizes 0 and 2^32-1, the last positions."""
    served = Served(esctl)
    _, head = append(served.port, [event("L", str(i).encode()) for i in range(50)])
    check(head == 50, f"50 events appended (head {head})")
    answer = served.call("Read", read_request(limit=0))
    check(answer.ok and answer.messages == [], f"a Read with limit 0: OK and no message ({answer.describe()}, {len(answer.messages)} messages)")
    answer, found = read_all(served.port, read_request(limit=2**32 - 1))
    check(answer.ok and [e[0] for e in found] == list(range(1, 51)),
          f"a Read with limit 2^32-1 reads all 50 events in order ({answer.describe()}, {len(found)})")
    answer, found = read_all(served.port, read_request(backwards=True, limit=2**32 - 1))
    check(answer.ok and [e[0] for e in found] == list(range(50, 0, -1)),
          f"a backwards Read with limit 2^32-1 reads all 50 events from the last ({answer.describe()}, {len(found)})")
    for batch in (0, 2**32 - 1):
        answer, found = read_all(served.port, read_request(batch_size=batch))
        check(answer.ok and len(found) == 50, f"a Read with batch_size {batch} reads all 50 ({answer.describe()}, {len(found)})")
    answer, found = read_all(served.port, read_request(start=2**64 - 1))
    check(answer.ok and found == [], f"a Read from start 2^64-1: OK and no events ({answer.describe()})")
    answer = served.call("Subscribe", field(2, 2**64 - 1), timeout=5)
    check(answer.ok and answer.messages == [], f"a Subscribe after 2^64-1 ends at once, OK ({answer.describe()})")
    check(served.up(), "the server still answers Head and health Check")
    served.stop("limits")


def api_key(esctl):
    """With --token: no key, a wrong key, a right one; health needs none."""
    token = "grpc-abuse-test-token-7f3a9c"
    served = Served(esctl, args=["--token", token])
    good = (("authorization", f"Bearer {token}"),)
    _, head = append(served.port, [event("Seed", b"1")], metadata=good)
    check(head == 1, f"an Append with the key: OK (position {head})")
    wrong_keys = [
        ("no authorization", ()),
        ("a wrong key", (("authorization", "Bearer not-the-token-at-all-0000"),)),
        ("the key without 'Bearer '", (("authorization", token),)),
        ("the key with a character more", (("authorization", f"Bearer {token}x"),)),
        ("'Bearer ' and nothing", (("authorization", "Bearer "),)),
    ]
    for what, metadata in wrong_keys:
        answer = served.call("Head", b"", metadata=metadata)
        check(answer.status == 16 and answer.one_sentence(), f"Head with {what}: 16 UNAUTHENTICATED and a sentence ({answer.describe()})")
        details = answer.details
        check(details is not None and details[1] == 5 and details[0],
              f"Head with {what}: grpc-status-details-bin is ErrorResponse AUTHENTICATION (5) with a message ({details})")
    for method, message in [("Append", append_request([event("Intruder", b"x")])), ("Read", b""), ("Subscribe", b""),
                            ("GetTrackingInfo", field(1, "s"))]:
        answer = served.call(method, message, metadata=wrong_keys[1][1], timeout=5)
        check(answer.status == 16 and answer.details is not None and answer.details[1] == 5 and not answer.messages,
              f"{method} with a wrong key: 16 UNAUTHENTICATED, AUTHENTICATION, nothing sent ({answer.describe()})")
    check(served.head(good) == 1, "nothing was written by the calls without the key (head 1)")
    health = served.call(HEALTH_CHECK, b"")
    check(health.ok and health.messages and first(parse(health.messages[0]), 1) == 1,
          f"health Check without a key: SERVING ({health.describe()})")
    check(served.up(good), "the server still answers Head (with the key) and health Check")
    served.stop("api key")


def tcp_state(local_port, remote_port):
    """The state of a loopback TCP socket from /proc/net/tcp (hex state), or None."""
    try:
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                parts = line.split()
                if int(parts[1].split(":")[1], 16) == local_port and int(parts[2].split(":")[1], 16) == remote_port:
                    return parts[3]
    except OSError:
        pass
    return None


def stalled_subscriber(esctl):
    """Subscribers that never read, on 20,000 events of 10 KB: memory bounded, others served."""
    served = Served(esctl, args=["--max-subscribers", "4"])
    started = time.monotonic()
    connection = Connection(served.port, timeout=60)
    block = os.urandom(10_240)
    head = 0
    for batch in range(100):  # 100 appends of 200 events of 10 KB: 2 MB each
        answer, head = append(connection, [event("Big", block[:8] + struct.pack(">I", batch * 200 + i) + block[12:], tags=["big"])
                                           for i in range(200)], timeout=60)
        if not answer.ok:
            break
    connection.close()
    check(head == 20_000, f"20,000 events of 10 KB appended in 100 bounded batches (head {head})")
    figure("time to append 20,000 events of 10 KB (100 appends of 2 MB)", f"{time.monotonic() - started:.1f} s")
    idle = served.rss_mb()
    figure("server memory before the subscribers (VmRSS)", f"{idle:.0f} MB")
    # One subscriber whose socket is never read (its TCP window closes too), one whose HTTP/2
    # stack runs (pings answered) but whose stream window is never reopened, each with an
    # HTTP/2 stream window of 1 KB and a 4 KB socket buffer; then the same with batch_size 4096.
    subscribers = []
    stop_reading = threading.Event()

    def h2_only(c):
        while not stop_reading.is_set():
            try:
                c.pump(time.monotonic() + 0.5)
            except socket.timeout:
                continue
            except (OSError, h2.exceptions.ProtocolError):
                return

    readers = []
    opened = time.monotonic()
    for batch_size in (None, 4096):
        for reads_h2 in (False, True):
            c = Connection(served.port, timeout=10, window=1024, rcvbuf=4096)
            message = field(2, 0) + (field(3, batch_size) if batch_size else b"")
            c.call("Subscribe", message, until=lambda a: True)
            subscribers.append((c, batch_size, reads_h2))
            if reads_h2:
                t = threading.Thread(target=h2_only, args=(c,), daemon=True)
                t.start()
                readers.append(t)
        if batch_size is None:
            peak = idle
            for _ in range(30):
                peak = max(peak, served.rss_mb())
                time.sleep(0.1)
            figure("server memory, 2 never-reading subscribers of the default batch size (1024 events, about 10 MB)",
                   f"{peak:.0f} MB (+{peak - idle:.0f})")
            check(peak - idle < 64, f"2 never-reading subscribers (default batch): the server grows less than 64 MB (+{peak - idle:.0f} MB)")
    # Meanwhile other clients append and read, each call within 5 s.
    worst = 0.0
    failed = []
    peak = idle
    for i in range(20):
        t0 = time.monotonic()
        answer, position = append(served.port, [event("Other", b"o", tags=["other"])], timeout=5)
        worst = max(worst, time.monotonic() - t0)
        if not answer.ok:
            failed.append(f"append {i}: {answer.describe()}")
        t0 = time.monotonic()
        answer, found = read_all(served.port, read_request(query([((), ["other"])]), backwards=True, limit=5), timeout=5)
        worst = max(worst, time.monotonic() - t0)
        if not answer.ok or not found:
            failed.append(f"read {i}: {answer.describe()}")
        peak = max(peak, served.rss_mb())
    for _ in range(30):
        peak = max(peak, served.rss_mb())
        time.sleep(0.1)
    check(not failed, f"meanwhile 20 appends and 20 reads by other clients succeed, each within 5 s ({failed[:3]})")
    figure("slowest of those 40 calls", f"{worst * 1000:.0f} ms")
    figure("server memory, peak, 4 never-reading subscribers (2 of batch 1024, 2 of batch 4096 = 40 MB)",
           f"{peak:.0f} MB (+{peak - idle:.0f})")
    check(peak - idle < 256,
          f"with 4 never-reading subscribers (2 asking batches of 40 MB) the server grows less than 256 MB (+{peak - idle:.0f} MB)")
    # Is the subscriber whose socket is never read cut by keepalive (a ping unanswered 10 s)?
    stalled = subscribers[0][0]
    local = stalled.sock.getsockname()[1]
    cut = False
    while time.monotonic() < opened + 20 and not cut:
        state = tcp_state(served.port, local)
        cut = state is None or state in ("04", "05", "07", "09", "0B")  # the server's side closing or gone
        time.sleep(0.5)
    figure("the subscriber whose socket is never read, closed by the server 20 s after it subscribed", "yes" if cut else "no")
    stop_reading.set()
    for t in readers:
        t.join(timeout=5)
    for c, _, _ in subscribers:
        c.close()
    time.sleep(3)
    after = served.rss_mb()
    figure("server memory 3 s after the subscribers left", f"{after:.0f} MB (idle {idle:.0f} MB)")
    probe = Connection(served.port, timeout=5)
    answer = probe.call("Subscribe", field(2, 20_000) + field(1, query([(["None"], [])])), timeout=2)
    probe.close()
    check(answer.status is None and answer.timed_out,
          f"3 s after the 4 never-reading subscribers left, their --max-subscribers 4 slots are free: a new Subscribe is taken "
          f"({answer.describe()})",
          bug=("the handlers of subscribers that left keep running (gRPC Swift 2 signals cancellation through "
               "ServerContext.cancellation, not by cancelling the task) and keep their slots" if answer.status == 8 else None))
    check(served.up(), "the server still answers Head and health Check")
    served.stop("stalled subscriber")


def stalled_big_events(esctl):
    """One never-reading subscriber asking batches of 4096 on 150 events of 1 MB."""
    served = Served(esctl)
    connection = Connection(served.port, timeout=60)
    block = os.urandom(1 << 20)
    head = 0
    for batch in range(50):  # 50 appends of 3 events of 1 MB
        answer, head = append(connection, [event("Huge", struct.pack(">I", batch * 3 + i) + block[4:]) for i in range(3)], timeout=60)
        if not answer.ok:
            break
    connection.close()
    check(head == 150, f"150 events of 1 MB appended in 50 bounded batches (head {head})")
    time.sleep(1)
    idle = served.rss_mb()
    subscriber = Connection(served.port, timeout=10, window=1024, rcvbuf=4096)
    subscriber.call("Subscribe", field(2, 0) + field(3, 4096), until=lambda a: True)
    peak = idle
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline:
        peak = max(peak, served.rss_mb())
        time.sleep(0.1)
    figure("server memory, one never-reading subscriber with batch_size 4096 on 150 events of 1 MB",
           f"{idle:.0f} MB -> {peak:.0f} MB (+{peak - idle:.0f})")
    check(peak - idle < 64, f"one never-reading subscriber (batch_size 4096) on 1 MB events: the server grows less than 64 MB (+{peak - idle:.0f} MB)",
          bug=("Subscribe reads a whole batch, up to 4096 events, into memory whatever their size, and holds it while "
               "the client does not read: memory is bounded by batch_size x event size, not by bytes (the HTTP face "
               "bounds a live stream by --subscriber-buffer); --max-subscribers such subscribers multiply it (Read "
               "builds its batches the same way; not measured here)"))
    answer = served.call("Head", b"", timeout=5)
    check(answer.ok, f"meanwhile another client's Head is answered within 5 s ({answer.describe()})")
    subscriber.close()
    served.stop("stalled subscriber, 1 MB events")


def dropped_subscribers(esctl):
    """Subscribers and health watchers that leave (connection closed, or the call cancelled with
    RST_STREAM) on a quiet store: their --max-subscribers slots come back."""
    served = Served(esctl, args=["--max-subscribers", "4"])
    append(served.port, [event("Seed", b"1")])
    # Past the limit: RESOURCE_EXHAUSTED, and a sentence whose advice is an option esctl serve has.
    live = [Connection(served.port, timeout=5) for _ in range(4)]
    taken = [c.call("Subscribe", field(2, 0), timeout=1) for c in live]
    check(all(a.timed_out and a.status is None for a in taken), f"4 Subscribe calls under --max-subscribers 4 are taken ({[a.describe() for a in taken]})")
    answer = served.call("Subscribe", field(2, 0), timeout=5)
    check(answer.status == 8 and answer.one_sentence(), f"a 5th Subscribe: 8 RESOURCE_EXHAUSTED and a sentence ({answer.describe()})")
    helped = esctl_run(esctl, ["serve", "--help"]).stdout
    named = re.findall(r"--[a-z][a-z-]+", answer.message)
    missing = [option for option in named if not re.search(re.escape(option) + r"\b", helped)]
    check(not missing, f"the options that sentence names ({', '.join(named) or 'none'}) are options of esctl serve",
          bug=f"it names {', '.join(missing)}, which `esctl serve` does not have (it has --max-subscribers)")
    for c in live:
        c.close()
    append(served.port, [event("Wake", b"w")])  # frees the slots of subscriptions that left (see below)
    time.sleep(1)
    cancellation_bug = ("gRPC Swift 2 tells a handler its RPC was cancelled through ServerContext.cancellation, not by "
                        "cancelling its task: the handler keeps waiting ({}) and keeps its slot")

    def accepted(path, message):
        """Whether a new stream is taken (no status within 2 s) rather than refused; it is then closed."""
        c = Connection(served.port, timeout=5)
        answer = c.call(path, message, timeout=2)
        c.close()
        return answer.status is None and answer.timed_out, answer

    def leave(path, message, how):
        connections = []
        for _ in range(4):
            c = Connection(served.port, timeout=5)
            answer = c.call(path, message, until=lambda a: True)
            connections.append((c, answer))
        time.sleep(0.5)
        for c, answer in connections:
            if how == "close":
                c.close()
            else:
                c.h2.reset_stream(answer.stream_id, 8)
                c.flush()
        return connections

    for what, path, message, waiting in [
        ("Subscribe", "Subscribe", field(2, 0), "Subscribe waits for the next commit"),
        ("health Watch", "/grpc.health.v1.Health/Watch", b"", "Watch waits for the serving status to change, i.e. until the server stops"),
    ]:
        for how in ("close", "reset"):
            kept = leave(path, message, how)
            time.sleep(2)
            taken, answer = accepted(path, message)
            check(taken, f"4 {what} calls of a limit of 4 whose clients left ({'connection closed' if how == 'close' else 'RST_STREAM CANCEL'}): "
                         f"2 s later a new {what} is taken ({answer.describe()})",
                  bug=cancellation_bug.format(waiting) if answer.status == 8 else None)
            for c, _ in kept:
                c.close()
            # What frees the slots: a commit wakes waiting subscriptions, whose next write fails.
            append(served.port, [event("Wake", b"w")])
            time.sleep(1)
            if not taken and what == "Subscribe":
                freed, _ = accepted(path, message)
                figure(f"a commit frees the Subscribe slots of clients that left ({how})", "yes" if freed else "no")
                append(served.port, [event("Wake", b"w")])
                time.sleep(1)
            if not taken and what != "Subscribe":
                break  # held until the server stops: the next variant would find no slot either
    check(served.up(), "the server still answers Head and health Check")
    served.stop("dropped subscribers")


def idle_connections(esctl):
    """500 HTTP/2 connections that finish their preface and SETTINGS, then idle."""
    served = Served(esctl)
    before_fds = served.descriptors()
    before_rss = served.rss_mb()
    held = []
    failures = []
    started = time.monotonic()
    for i in range(500):
        if time.monotonic() - started > 60:
            failures.append(f"only {i} opened within 60 s")
            break
        try:
            s = socket.create_connection(("127.0.0.1", served.port), timeout=5)
            c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
            c.initiate_connection()
            s.sendall(c.data_to_send())
            got_settings = False
            while not got_settings:
                data = s.recv(65536)
                if not data:
                    raise OSError("closed before its SETTINGS")
                got_settings = any(isinstance(ev, h2.events.RemoteSettingsChanged) for ev in c.receive_data(data))
            s.sendall(c.data_to_send())  # the SETTINGS ACK
            held.append(s)
        except OSError as error:
            failures.append(f"connection {i}: {error}")
            if len(failures) > 5:
                break
    opened = time.monotonic() - started
    check(len(held) == 500, f"500 connections complete the preface and SETTINGS within 60 s ({len(held)} in {opened:.1f} s; {failures[:3]})")
    fds = served.descriptors()
    rss = served.rss_mb()
    figure("server descriptors, before and with 500 idle connections", f"{before_fds} -> {fds}")
    figure("server memory, before and with 500 idle connections", f"{before_rss:.0f} MB -> {rss:.0f} MB")
    t0 = time.monotonic()
    answer, position = append(served.port, [event("Fresh", b"f")], timeout=10)
    read, found = read_all(served.port, b"", timeout=10)
    check(answer.ok and read.ok and len(found) == 1,
          f"a new client's Append and Read succeed beside them ({answer.describe()}, {read.describe()}, {time.monotonic() - t0:.2f} s)")
    check(served.up(), "the server answers Head and health Check")
    # docs/grpc.md: the server pings a quiet connection every 5 s and closes one that sends
    # nothing at all for 30 s (not even a ping's answer). These never answer: within 40 s of the
    # last one's SETTINGS, each should have been closed.
    selector = selectors.DefaultSelector()
    seen = {}
    for s in held:
        s.setblocking(False)
        selector.register(s, selectors.EVENT_READ)
        seen[s] = {"buffer": b"", "goaway": False, "closed": False}
    deadline = started + opened + 40
    while time.monotonic() < deadline and not all(v["closed"] for v in seen.values()):
        for key, _ in selector.select(timeout=0.5):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if not data:
                seen[s]["closed"] = True
                selector.unregister(s)
                continue
            seen[s]["buffer"] += data
            seen[s]["goaway"] |= any(isinstance(f, hyperframe.frame.GoAwayFrame) for f in frames(seen[s]))
    selector.close()
    given_up = sum(v["goaway"] for v in seen.values())
    closed = sum(v["closed"] for v in seen.values())
    figure("idle connections that never answer pings, 40 s after opening",
           f"{given_up} of {len(held)} sent a GOAWAY, {closed} closed; server descriptors {served.descriptors()}")
    check(closed == len(held), f"the server closes idle connections that never answer its pings within 40 s ({closed} of {len(held)} closed, "
                               f"{given_up} sent a GOAWAY)",
          bug=("a connection that answers no ping stays open, contrary to docs/grpc.md" if closed < len(held) else None))
    for s in held:
        s.close()
    check(served.up(), "after they close, the server answers Head and health Check")
    figure("server descriptors after they closed", served.descriptors())
    served.stop("idle connections")


def sigterm(esctl):
    """SIGTERM while 6 clients append: exit 0, and every acknowledged append is in the store."""
    served = Served(esctl)
    acknowledged = []  # (last position, [uuids])
    answered_at = []
    answers = {}
    lock = threading.Lock()
    stop = threading.Event()

    def client(n):
        try:
            connection = Connection(served.port, timeout=10)
        except OSError:
            return
        try:
            for i in range(3000):
                if stop.is_set():
                    return
                ids = [str(uuid.uuid4()) for _ in range(1 + i % 3)]
                answer, position = append(connection, [event("Load", b"x" * 100, tags=[f"client-{n}"], event_uuid=u) for u in ids],
                                          timeout=15)
                with lock:
                    if answer.ok:
                        acknowledged.append((position, ids))
                        answered_at.append(time.monotonic())
                    else:
                        key = answer.describe()
                        answers[key] = answers.get(key, 0) + 1
                if not answer.ok:
                    return
        finally:
            connection.close()

    threads = [threading.Thread(target=client, args=(n,), daemon=True) for n in range(6)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 30
    while len(acknowledged) < 300 and time.monotonic() < deadline:
        time.sleep(0.05)
    check(len(acknowledged) >= 300, f"6 clients appending: 300 appends acknowledged within 30 s ({len(acknowledged)})")
    signalled = time.monotonic()
    status, took = served.stop("SIGTERM during appends", bound=30)
    figure("time from SIGTERM to exit", f"{took:.2f} s")
    figure("appends acknowledged after SIGTERM was sent (in flight then)", sum(1 for t in list(answered_at) if t >= signalled))
    stop.set()
    for t in threads:
        t.join(timeout=30)
    check(not any(t.is_alive() for t in threads), "every client thread ended within 30 s of the stop")
    figure("answers to the appends that were not acknowledged", answers or "none")
    again = Served(esctl, store=served.store, work=served.work)
    answer, found = read_all(again.port, b"", timeout=120)
    stored = {position: event_uuid for position, event_uuid, _, _ in found}
    missing = 0
    for position, ids in acknowledged:
        for offset, event_uuid in enumerate(ids):
            if stored.get(position - len(ids) + 1 + offset) != event_uuid:
                missing += 1
    count = sum(len(ids) for _, ids in acknowledged)
    check(answer.ok and missing == 0,
          f"after a restart, all {len(acknowledged)} acknowledged appends ({count} events) are at their positions ({missing} missing; "
          f"{len(found)} events stored; {answer.describe()})")
    figure("events stored beyond the acknowledged ones (appends committed, their answers lost in the stop)", len(found) - count)
    positions = [p for p, _ in acknowledged]
    check(len(positions) == len(set(positions)), "no two acknowledged appends share a position")
    again.stop("the restarted server")


def stop_with_subscriber(esctl):
    """SIGTERM with a subscription open: the subscription ends at once with its status, and the
    server exits 0 well within its grace (4 s), not cut off by it."""
    served = Served(esctl)
    append(served.port, [event("Seed", b"1")])
    connection = Connection(served.port, timeout=10)
    answer = connection.call("Subscribe", b"", timeout=10, until=lambda a: len(a.messages) >= 1)
    check(not answer.ended and len(answer.messages) >= 1, f"a subscription is open with its first batch ({answer.describe()})")
    _, took = served.stop("a subscription open", bound=30)
    check(took < 2.5, f"the server exits within 2.5 s of SIGTERM, before its 4 s grace would cut the subscription ({took:.2f} s)")
    deadline = time.monotonic() + 5
    try:
        while not answer.ended and connection.pump(deadline):
            pass
    except (socket.timeout, OSError, h2.exceptions.ProtocolError):
        pass
    check(answer.ended and answer.status == 0, f"the subscription ended with status OK, not a cut connection ({answer.describe()})")
    connection.close()


def tls(esctl):
    """--tls-cert/--tls-key with --token: UmaDB's own client (which sends an API key only over
    TLS) appends and reads with the key, is refused without it, and plaintext is not served."""
    import umadb  # UmaDB's client, from the same venv
    work = tempfile.mkdtemp(prefix="grpc-abuse-tls-")
    WORK.append(work)
    # A CA and a leaf for localhost and 127.0.0.1 (rustls refuses a self-signed CA as a leaf).
    def openssl(*args):
        done = subprocess.run(["openssl", *args], cwd=work, capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"openssl {' '.join(args)}: {done.stderr.strip()}")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=grpc-abuse-test CA")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "leaf.csr", "-subj", "/CN=localhost")
    with open(os.path.join(work, "leaf.ext"), "w") as f:
        f.write("basicConstraints=CA:FALSE\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "cert.pem",
            "-days", "2", "-extfile", "leaf.ext")
    token = "grpc-abuse-tls-token-4d1e8b"
    served = Served(esctl, args=["--token", token, "--tls-cert", os.path.join(work, "cert.pem"),
                                 "--tls-key", os.path.join(work, "key.pem")], work=work)
    url = f"https://localhost:{served.port}"
    ca = os.path.join(work, "ca.pem")

    def bounded(what, call, seconds=20):
        box = {}
        def run():
            try:
                box["value"] = call()
            except Exception as error:  # the answer under test, whatever its class
                box["error"] = error
        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        thread.join(seconds)
        if thread.is_alive():
            return None, f"{what}: no answer within {seconds} s"
        return box.get("value"), box.get("error")

    client = umadb.Client(url, ca_path=ca, api_key=token)
    position, error = bounded("append over TLS", lambda: client.append([umadb.Event("Tls", b"\x00bytes")]))
    check(position == 1 and error is None, f"UmaDB's client appends over TLS with the API key (position {position}, {error})")
    events, error = bounded("read over TLS", lambda: [e.event.data for e in client.read()])
    check(events == [b"\x00bytes"] and error is None, f"and reads the bytes back ({events}, {error})")
    wrong = umadb.Client(url, ca_path=ca, api_key="not-the-token-at-all-00000")
    _, error = bounded("head with a wrong key", lambda: wrong.head())
    check(isinstance(error, umadb.AuthenticationError), f"a wrong API key raises umadb.AuthenticationError ({error!r})")
    _, error = bounded("head over plaintext", lambda: umadb.Client(f"http://127.0.0.1:{served.port}").head())
    check(error is not None, f"a plaintext client is not served on the TLS port ({type(error).__name__})")
    served.stop("TLS")


SCENARIOS = [
    ("malformed", malformed),
    ("oversize", oversize),
    ("compressed", compressed),
    ("held-requests", held_requests),
    ("unknown-fields", unknown_fields),
    ("queries", queries),
    ("limits", limits),
    ("api-key", api_key),
    ("stalled-subscriber", stalled_subscriber),
    ("stalled-big-events", stalled_big_events),
    ("dropped-subscribers", dropped_subscribers),
    ("idle-connections", idle_connections),
    ("sigterm", sigterm),
    ("stop-with-subscriber", stop_with_subscriber),
    ("tls", tls),
]


def stop_servers():
    for process in SERVERS:
        if process.poll() is None:
            process.kill()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
    if os.environ.get("GRPC_ABUSE_KEEP"):
        print(f"kept the stores and server logs: {' '.join(WORK)}", file=sys.stderr)
    else:
        for work in WORK:
            shutil.rmtree(work, ignore_errors=True)


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 64
    esctl = args[0]
    only = None
    if "--only" in args:
        only = set(args[args.index("--only") + 1].split(","))
        unknown = only - {name for name, _ in SCENARIOS}
        if unknown:
            print(f"unknown scenario(s): {', '.join(sorted(unknown))}; known: {', '.join(n for n, _ in SCENARIOS)}", file=sys.stderr)
            return 64
    began = time.monotonic()
    timings = {}
    try:
        for name, scenario in SCENARIOS:
            if only and name not in only:
                continue
            SCENARIO[0] = name
            print(f"== {name}", flush=True)
            started = time.monotonic()
            try:
                scenario(esctl)
            except Exception as error:  # a scenario that breaks is a failure, not a crash of the script
                check(False, f"the scenario ended early: {error!r}")
            timings[name] = time.monotonic() - started
            print(f"   ({timings[name]:.1f} s)", flush=True)
    finally:
        stop_servers()
    print("\nsummary:")
    for name in timings:
        results = [passed for scenario, passed, _ in RESULTS if scenario == name]
        verdict = "PASS" if all(results) else "FAIL"
        print(f"  {verdict}  {name:<20} {results.count(True)} passed, {results.count(False)} failed ({timings[name]:.1f} s)")
    print("\nfigures:")
    for scenario, name, value in FIGURES:
        if not name.endswith(": answer"):
            print(f"  {scenario}: {name}: {value}")
    passed = sum(1 for _, p, _ in RESULTS if p)
    failed = len(RESULTS) - passed
    print(f"\n{passed} passed, {failed} failed ({time.monotonic() - began:.0f} s)")
    if failed:
        print(f"\n{failed} check(s) failed:", file=sys.stderr)
        for scenario, p, what in RESULTS:
            if not p:
                print(f"  {scenario}: {what}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
