#!/usr/bin/env python3
"""A checker in the manner of Jepsen, for the store on a PostgreSQL primary and standby
(scripts/failover-check.sh starts the hosts, the servers and these processes, and injects the
faults). Standard library only.

  failover_check.py appender URL NAME SECONDS OUT
      appends for SECONDS to its own streams (NAME-0 .. NAME-4), each with the version it
      expects and an id of its own, and to the stream `shared` that every appender contends for
      (the version it last read); an append whose outcome is unknown (no answer, 5xx) is made
      again with the same id and expectation until it is answered. Writes one JSON line per
      acknowledged append to OUT.
  failover_check.py subscriber URL SECONDS OUT
      follows the whole log from the start (NDJSON /subscribe), reconnecting after the last
      position seen when the stream breaks; writes each event's position and id to OUT.
  failover_check.py check URL LOGDIR
      reads the whole log and proves: every acknowledged append is there exactly once, at the
      version it expected plus one (no lost update, the shared stream included); positions run
      1..head with no gap; each stream's versions run 1..n; every subscriber saw the log from 1
      in order, each event once, up to where it stopped. Prints the figures as one JSON object;
      exits 1 with every violation listed when one is found.
"""
import http.client
import json
import os
import random
import sys
import time
import urllib.parse
import uuid

TIMEOUT = 30


def request(base, method, path, body=None, headers=None):
    """One HTTP request; (status, body bytes), or (None, reason) when no answer came."""
    parsed = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=TIMEOUT)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as error:
        return None, str(error).encode()
    finally:
        connection.close()


def ndjson(body):
    """The objects of an NDJSON body (the server's pages: one event per line)."""
    return [json.loads(line) for line in body.splitlines() if line.strip()]


def stream_version(base, stream):
    """The stream's version, read from its last event (0 when it has none); None without an answer."""
    status, body = request(base, "GET", f"/streams/{stream}?direction=backward&limit=1")
    if status == 404:
        return 0
    if status != 200:
        return None
    events = ndjson(body)
    return events[0]["version"] if events else 0


def append(base, stream, expected, event_id, data):
    """Appends one event, made again with the same id and expectation while the answer is
    unknown; returns (status, answer) once the server answered with a definite status."""
    body = json.dumps([{"type": "Checked", "id": event_id, "data": data}]).encode()
    headers = {"Content-Type": "application/json", "Expected-Version": "no-stream" if expected == 0 else str(expected)}
    deadline = time.monotonic() + 180
    while True:
        status, answer = request(base, "POST", f"/streams/{stream}", body, headers)
        if status is not None and status < 500:
            return status, answer
        if time.monotonic() > deadline:
            return None, answer
        time.sleep(0.2)


def appender(base, name, seconds, out):
    versions = {f"{name}-{k}": 0 for k in range(5)}
    rng = random.Random(name)
    end = time.monotonic() + seconds
    counts = {"acknowledged": 0, "conflicts": 0, "unanswered": 0, "longestWaitSeconds": 0.0}
    with open(out, "w") as log:
        while time.monotonic() < end:
            if rng.random() < 0.3:
                stream = "shared"
                expected = stream_version(base, stream)
                if expected is None:
                    time.sleep(0.2)
                    continue
            else:
                stream = rng.choice(sorted(versions))
                expected = versions[stream]
            event_id = str(uuid.uuid4())
            asked = time.monotonic()
            status, answer = append(base, stream, expected, event_id, {"by": name})
            counts["longestWaitSeconds"] = round(max(counts["longestWaitSeconds"], time.monotonic() - asked), 3)
            if status in (200, 201):
                result = json.loads(answer)
                if stream != "shared":
                    versions[stream] = result["version"]
                log.write(json.dumps({"id": event_id, "stream": stream, "expected": expected,
                                      "version": result["version"], "position": result["positions"][0]}) + "\n")
                log.flush()
                counts["acknowledged"] += 1
            elif status == 409:
                counts["conflicts"] += 1
                if stream != "shared":
                    # Only this appender writes its streams: a conflict would be a lost answer.
                    print(f"appender {name}: a conflict on its own stream {stream}: {answer[:300]!r}", file=sys.stderr)
                    sys.exit(1)
            else:
                counts["unanswered"] += 1
                print(f"appender {name}: no definite answer ({status}): {answer[:300]!r}", file=sys.stderr)
    print(json.dumps({"appender": name, **counts}))


def subscriber(base, seconds, out):
    parsed = urllib.parse.urlsplit(base)
    end = time.monotonic() + seconds
    after = 0
    reconnects = 0
    with open(out, "w") as log:
        while time.monotonic() < end:
            connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=5)
            try:
                connection.request("GET", f"/subscribe?from={after + 1}")
                response = connection.getresponse()
                if response.status != 200:
                    time.sleep(0.5)
                    continue
                buffer = b""
                while time.monotonic() < end:
                    try:
                        chunk = response.read1(65536)
                    except TimeoutError:
                        continue
                    if not chunk:
                        break
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.strip():
                            event = json.loads(line)
                            log.write(json.dumps({"position": event["position"], "id": event["id"]}) + "\n")
                            after = event["position"]
                    log.flush()
            except (OSError, http.client.HTTPException):
                pass
            finally:
                connection.close()
            reconnects += 1
            time.sleep(0.2)
    print(json.dumps({"subscriber": out, "through": after, "connections": reconnects}))


def read_log(base):
    events, position = [], 1
    while True:
        status, body = request(base, "GET", f"/events?from={position}&limit=10000")
        if status != 200:
            raise SystemExit(f"check: reading the log from {position} answered {status}: {body[:300]!r}")
        page = ndjson(body)
        if not page:
            return events
        events += page
        position = page[-1]["position"] + 1


def check(base, logdir):
    events = read_log(base)
    problems = []
    positions = [event["position"] for event in events]
    if positions != list(range(1, len(events) + 1)):
        problems.append(f"positions are not 1..{len(events)} with no gap")
    by_id = {}
    for event in events:
        by_id.setdefault(event["id"], []).append(event)
    versions = {}
    for event in events:
        versions.setdefault(event["stream"], []).append(event["version"])
    for stream, seen in versions.items():
        if seen != list(range(1, len(seen) + 1)):
            problems.append(f"stream {stream}: versions {seen[:20]}... are not 1..{len(seen)}")
    acknowledged = 0
    for name in sorted(os.listdir(logdir)):
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(logdir, name)
        if name.startswith("appender-"):
            for line in open(path):
                ack = json.loads(line)
                acknowledged += 1
                found = by_id.get(ack["id"], [])
                if len(found) != 1:
                    problems.append(f"acknowledged {ack['id']} is in the log {len(found)} times")
                    continue
                event = found[0]
                if (event["stream"], event["version"], event["position"]) != (ack["stream"], ack["version"], ack["position"]):
                    problems.append(f"acknowledged {ack} is in the log as {event['stream']}@{event['version']} at {event['position']}")
                if event["version"] != ack["expected"] + 1:
                    problems.append(f"lost update: {ack['id']} expected version {ack['expected']} but is at {event['version']}")
        elif name.startswith("subscriber-"):
            seen = [json.loads(line) for line in open(path)]
            expected = [{"position": e["position"], "id": e["id"]} for e in events[:len(seen)]]
            if seen != expected:
                first = next(i for i, (a, b) in enumerate(zip(seen + [None] * len(expected), expected)) if a != b)
                problems.append(f"{name}: saw {len(seen)} events; the first that differs from the log is number {first + 1}")
    figures = {"events": len(events), "acknowledged": acknowledged, "streams": len(versions),
               "violations": len(problems)}
    print(json.dumps(figures))
    for problem in problems[:50]:
        print(f"check: {problem}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "appender" and len(sys.argv) == 6:
        appender(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    elif mode == "subscriber" and len(sys.argv) == 5:
        subscriber(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif mode == "check" and len(sys.argv) == 4:
        check(sys.argv[2], sys.argv[3])
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
