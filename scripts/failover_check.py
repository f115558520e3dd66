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
  failover_check.py claimer ESCTL DB NAME SECONDS OUT
      claims a slot each second (the slot is the second) with a conditional append (`esctl
      append --condition`: no `Claimed` event tagged slot:K may exist), racing the other hosts'
      claimers for it;
      an outcome unknown is made again with the same id. Writes each claim won or lost to OUT.
  failover_check.py processor ESCTL DB NAME SECONDS OUT
      reacts to positions 1, 2, ... of the log in turn: for each, one `Reacted` event (its id
      derived from NAME and the position) appended with the tracking position proc-NAME:P
      (`esctl append --batch --track`), made again until answered. Writes each reaction to OUT.
  failover_check.py consumer ESCTL DB NAME SECONDS OUT
      a member NAME of the consumer group `g` (the claims): `esctl group consume --exec` whose
      command appends one `Handled` event per delivery, its id derived from the position, so
      that the effect is recorded once however often the delivery is repeated; restarted when
      it ends early. Writes its deliveries to OUT.
  failover_check.py check URL LOGDIR ESCTL DB [--count-losses]
      reads the whole log and proves: every acknowledged append is there exactly once, at the
      version it expected plus one (no lost update, the shared stream included); positions run
      1..head with no gap; each stream's versions run 1..n; every subscriber saw the log from 1
      in order, each event once, up to where it stopped; each slot was claimed exactly once, by
      the claim that was told it won; each processor's reactions are to 1..n, each once, in
      order; every claim the group `g` settled (through its checkpoint) has its effect (once: its
      id is the position's), no effect is of anything else, and no delivery was acknowledged
      twice; every appender was acknowledged after the last fault healed (LOGDIR/healed). Prints the figures as one JSON object (`lost`: the
      acknowledged appends not in the log); exits 1 with every violation listed when one is
      found, or, with --count-losses (an asynchronous standby), lists them and exits 0.
"""
import http.client
import json
import os
import random
import subprocess
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


def running(end, out):
    """Whether a load process goes on: before its end, and until the script leaves the file
    `stop` beside its output (when the rounds of faults are over)."""
    return time.monotonic() < end and not os.path.exists(os.path.join(os.path.dirname(out), "stop"))


def finish(counts):
    """Ends a load process: with 1 when a request went unanswered and answers are checked
    (FAILOVER_CHECK_LIVENESS: the store must answer through every fault), else 0."""
    sys.exit(1 if counts.get("unanswered") and os.environ.get("FAILOVER_CHECK_LIVENESS") else 0)


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
        while running(end, out):
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
                                      "version": result["version"], "position": result["positions"][0], "at": time.time()}) + "\n")
                log.flush()
                counts["acknowledged"] += 1
            elif status == 409:
                counts["conflicts"] += 1
                if stream != "shared":
                    # Only this appender writes its streams: a conflict is an acknowledged append
                    # lost, which only an asynchronous standby may do (counted, and the stream's
                    # version read again, when losses are counted).
                    print(f"appender {name}: a conflict on its own stream {stream}: {answer[:300]!r}", file=sys.stderr)
                    if not os.environ.get("FAILOVER_CHECK_COUNT_LOSSES"):
                        sys.exit(1)
                    counts["conflictsOnOwnStreams"] = counts.get("conflictsOnOwnStreams", 0) + 1
                    version = stream_version(base, stream)
                    if version is not None:
                        versions[stream] = version
            else:
                counts["unanswered"] += 1
                print(f"appender {name}: no definite answer ({status}): {answer[:300]!r}", file=sys.stderr)
    print(json.dumps({"appender": name, **counts}))
    finish(counts)


def subscriber(base, seconds, out):
    parsed = urllib.parse.urlsplit(base)
    end = time.monotonic() + seconds
    after = 0
    reconnects = 0
    with open(out, "w") as log:
        while running(end, out):
            connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=5)
            try:
                connection.request("GET", f"/subscribe?from={after + 1}")
                response = connection.getresponse()
                if response.status != 200:
                    time.sleep(0.5)
                    continue
                buffer = b""
                while running(end, out):
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


def esctl(command, db, args, timeout=90):
    """Runs `esctl --db DB ARGS`; (exit status, stdout, stderr), status None when it hung."""
    try:
        done = subprocess.run([command, "--db", db, *args], capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as timeout_error:
        # What it said before it was killed (its notices, with --log-level) says where it hung.
        return None, timeout_error.stdout or b"", (timeout_error.stderr or b"") + b"\ntimed out"


def until_answered(command, db, args, definite, retry_also=lambda status, stderr: False):
    """Runs the same esctl command (the same ids) until its exit status is definite (or the
    deadline passes); `retry_also` names definite-looking answers to wait out (beyond the head)."""
    deadline = time.monotonic() + 180
    while True:
        status, stdout, stderr = esctl(command, db, args)
        if status in definite and not retry_also(status, stderr):
            return status, stdout, stderr
        if time.monotonic() > deadline:
            return status, stdout, stderr
        time.sleep(0.2)


def claimer(command, db, name, seconds, out):
    end = time.monotonic() + seconds
    counts = {"claimer": name, "won": 0, "lost": 0, "unanswered": 0}
    last = 0
    with open(out, "w") as log:
        while running(end, out):
            # The slot is the second of the wall clock (the hosts share it): every claimer
            # races for the same slot at about the same time.
            slot = int(time.time())
            if slot <= last:
                time.sleep(max(0.0, slot + 1 - time.time()))
                continue
            last = slot
            claim = str(uuid.uuid4())
            condition = json.dumps({"failIfEventsMatch": [{"types": ["Claimed"], "tags": [f"slot:{slot}"]}]})
            status, stdout, stderr = until_answered(command, db, [
                "append", f"claims-{name}", "Claimed", "--id", claim, "--tag", f"slot:{slot}",
                "--data", json.dumps({"slot": slot}), "--condition", condition, "--json"], {0, 65})
            if status == 0:
                counts["won"] += 1
                log.write(json.dumps({"slot": slot, "id": claim, "won": True, "position": json.loads(stdout)["position"]}) + "\n")
            elif status == 65:
                counts["lost"] += 1
                log.write(json.dumps({"slot": slot, "id": claim, "won": False}) + "\n")
            else:
                counts["unanswered"] += 1
                print(f"claimer {name}: no definite answer ({status}): {stderr[:300]!r}", file=sys.stderr)
            log.flush()
    print(json.dumps(counts))
    finish(counts)


def reaction_id(name, position):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"failover-check/{name}/{position}"))


def processor(command, db, name, seconds, out):
    end = time.monotonic() + seconds
    counts = {"processor": name, "reacted": 0, "processedBefore": 0, "unanswered": 0}
    batch = f"{out}.batch"
    position = 0
    beyond_head = lambda status, stderr: status == 64 and b"head" in stderr
    with open(out, "w") as log:
        while running(end, out):
            position += 1
            with open(batch, "w") as batch_file:
                batch_file.write(json.dumps({"stream": f"reactions-{name}", "type": "Reacted", "id": reaction_id(name, position),
                                        "data": {"to": position}}) + "\n")
            status, _, stderr = until_answered(command, db, ["append", "--batch", batch, "--track", f"proc-{name}:{position}"],
                                               {0, 64, 65}, retry_also=beyond_head)
            # 65: the position was recorded already: by a try of this processor whose answer was lost.
            if status in (0, 65):
                counts["reacted" if status == 0 else "processedBefore"] += 1
                log.write(json.dumps({"position": position, "id": reaction_id(name, position), "status": status}) + "\n")
                log.flush()
            else:
                counts["unanswered"] += 1
                print(f"processor {name}: no definite answer for {position} ({status}): {stderr[:300]!r}", file=sys.stderr)
                break
    print(json.dumps(counts))
    finish(counts)


def effect_id(position):
    return f"00000000-0000-4000-8000-{position:012d}"


def consumer(command, db, name, seconds, out):
    end = time.monotonic() + seconds
    # The effect: one event whose id the position decides, so a repeated delivery records nothing new.
    effect = ('"$ESCTL" --db "$ESCTL_DB" append effects Handled --id "$(printf 00000000-0000-4000-8000-%012d "$ESCTL_POSITION")" '
              '--data "{\\"to\\":$ESCTL_POSITION}" >/dev/null')
    environment = {**os.environ, "ESCTL": command, "ESCTL_DB": db}
    runs = 0
    with open(out, "w") as log:
        while running(end - 2, out):
            runs += 1
            remaining = max(1, int(end - time.monotonic()))
            member = subprocess.Popen([command, "--db", db, "group", "consume", "g", "--member", name, "--poll", "0.5",
                                       "--timeout", str(remaining), "--exec", effect, "--json"],
                                      stdout=log, stdin=subprocess.DEVNULL, env=environment)
            while member.poll() is None and running(end + 60, out):
                time.sleep(0.5)
            if member.poll() is None:
                # Ctrl-C's way out: the command under way is stopped, the member leaves the group.
                member.send_signal(2)
                try:
                    member.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    member.kill()
                    member.wait()
            log.flush()
    print(json.dumps({"consumer": name, "runs": runs}))


def rebuilder(command, db, name, seconds, out):
    """Rebuilds one of the projections the servers keep live (a projection per host, so that
    the two hosts' rebuilds do not meet), again and again through the faults; logs each
    rebuild's exit status (0 done, 69 stopped by a fault, to be made again) and its result."""
    projection = "count-by-type" if name == "app1" else "stream-summary"
    end = time.monotonic() + seconds
    counts = {"rebuilt": 0, "stopped": 0}
    with open(out, "w") as log:
        while running(end, out):
            started = time.time()
            # At notice level, so that a rebuild that hangs leaves word of what it last did.
            status, stdout, stderr = esctl(
                command, db, ["--log-level", "notice", "--apps", "none", "rebuild", projection, "--json"], timeout=600)
            entry = {"projection": projection, "status": status, "started": started, "at": time.time()}
            if status == 0:
                entry["result"] = (ndjson(stdout) or [None])[-1]
                counts["rebuilt"] += 1
            else:
                entry["stderr"] = stderr[-(300 if status is not None else 4000):].decode(errors="replace")
                counts["stopped"] += 1
            log.write(json.dumps(entry) + "\n")
            log.flush()
            time.sleep(1)
    print(json.dumps({"rebuilder": name, **counts}))


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


def caught_up_projections(command, db, head, patience=120):
    """The projections the servers keep live (`--apps none`: the store's own), as `esctl
    projections list --json` lists them, once each has reached `head` or `patience` seconds
    have passed (the servers' live daemons go on while the check runs)."""
    deadline = time.monotonic() + patience
    while True:
        status, stdout, stderr = esctl(command, db, ["--apps", "none", "projections", "list", "--json"])
        if status != 0:
            raise SystemExit(f"check: projections list exited {status}: {stderr[:300]!r}")
        listed = [json.loads(line) for line in stdout.decode().splitlines() if line.strip()]
        if all(projection["checkpoint"] >= head for projection in listed) or time.monotonic() > deadline:
            return listed
        time.sleep(1)


def deep_verification(command, db):
    """What `esctl verify --deep --json` finds: each projection's state against a fold of the
    log to its checkpoint, besides the log's own checks."""
    status, stdout, stderr = esctl(command, db, ["--apps", "none", "verify", "--deep", "--json"], timeout=900)
    try:
        return json.loads(stdout)
    except ValueError:
        return {"ok": False, "problems": [{"check": "verify", "detail": f"exited {status}: {stderr[:300]!r}"}]}


def check(base, logdir, command, db, count_losses=False):
    events = read_log(base)
    status, stdout, stderr = esctl(command, db, ["group", "show", "g", "--json"])
    if status != 0:
        raise SystemExit(f"check: group show g exited {status}: {stderr[:300]!r}")
    group = json.loads(stdout)
    projections = caught_up_projections(command, db, len(events))
    figures, problems = verify(events, group, logdir, projections=projections, verified=deep_verification(command, db))
    print(json.dumps(figures))
    for problem in problems[:50]:
        print(f"check: {problem}", file=sys.stderr)
    # Counting losses (an asynchronous standby): what a failover lost is the figure, and what
    # follows from it (positions taken again, subscribers that saw events now gone) is listed.
    sys.exit(0 if count_losses or not problems else 1)


def lines(path):
    """The lines of a file, read and closed."""
    with open(path) as text:
        return text.read().splitlines()


def verify(events, group, logdir, check_liveness=None, projections=None, verified=None):
    """The figures and the violations of a run: `events` the whole log (the server's JSON
    lines), `group` what `esctl group show g --json` printed, `logdir` the load processes'
    logs, `projections` what `esctl projections list --json` listed once the servers' live
    daemons caught up, `verified` what `esctl verify --deep --json` printed. Pure, so that
    scripts/failover_check_test.py can show each check failing."""
    if check_liveness is None:
        check_liveness = bool(os.environ.get("FAILOVER_CHECK_LIVENESS"))
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
    lost = 0
    figures_extra = {}
    # Every slot claimed exactly once, whatever its claimers were told.
    claimed_by_slot = {}
    for event in events:
        if event["type"] == "Claimed":
            for tag in event.get("tags", []):
                claimed_by_slot.setdefault(tag, []).append(event["id"])
    for slot, holders in sorted(claimed_by_slot.items()):
        if len(holders) != 1:
            problems.append(f"{slot} is claimed {len(holders)} times")
    # Each appender acknowledged appends after the last fault healed: the store came back.
    healed = float(lines(os.path.join(logdir, "healed"))[0]) if os.path.exists(os.path.join(logdir, "healed")) else None
    stalled = []
    settled_by = {}
    for name in sorted(os.listdir(logdir)):
        if not name.endswith(".jsonl"):
            continue
        path = os.path.join(logdir, name)
        if name.startswith("appender-"):
            latest = 0.0
            for line in lines(path):
                ack = json.loads(line)
                latest = max(latest, ack.get("at", 0.0))
                acknowledged += 1
                found = by_id.get(ack["id"], [])
                if not found:
                    lost += 1
                if len(found) != 1:
                    problems.append(f"acknowledged {ack['id']} is in the log {len(found)} times")
                    continue
                event = found[0]
                if (event["stream"], event["version"], event["position"]) != (ack["stream"], ack["version"], ack["position"]):
                    problems.append(f"acknowledged {ack} is in the log as {event['stream']}@{event['version']} at {event['position']}")
                if event["version"] != ack["expected"] + 1:
                    problems.append(f"lost update: {ack['id']} expected version {ack['expected']} but is at {event['version']}")
            if healed is not None and latest <= healed:
                stalled.append(f"{name}: nothing acknowledged after the last fault healed")
        elif name.startswith("consumer-"):
            for line in lines(path):
                if line.startswith("{"):
                    delivery = json.loads(line)
                    if delivery.get("outcome") == "acknowledged":
                        settled_by.setdefault(delivery["position"], []).append(name)
        elif name.startswith("claimer-"):
            claims = [json.loads(line) for line in lines(path)]
            for claim in claims:
                holders = claimed_by_slot.get(f"slot:{claim['slot']}", [])
                if len(holders) == 1 and claim["won"] != (holders[0] == claim["id"]):
                    problems.append(f"{name}: slot {claim['slot']} answered {'won' if claim['won'] else 'lost'}, but its claim is {holders[0]}")
                elif not holders:
                    problems.append(f"{name}: slot {claim['slot']} answered {'won' if claim['won'] else 'lost'}, but nobody holds it")
            figures_extra["claims"] = figures_extra.get("claims", 0) + len(claims)
        elif name.startswith("processor-"):
            host = name[len("processor-"):-len(".jsonl")]
            reactions = [json.loads(line) for line in lines(path)]
            recorded = [e["data"]["to"] for e in events if e["stream"] == f"reactions-{host}"]
            if recorded != list(range(1, len(recorded) + 1)):
                problems.append(f"{name}: the reactions are to {recorded[:20]}..., not 1..{len(recorded)} once each")
            if len(recorded) < len(reactions):
                problems.append(f"{name}: {len(reactions)} reactions answered, {len(recorded)} in the log")
            figures_extra["reactions"] = figures_extra.get("reactions", 0) + len(recorded)
        elif name.startswith("rebuilder-"):
            # A rebuild ends done, or stopped by a fault with storeUnavailable (69) to be made
            # again; what it leaves is checked with the rest by verify --deep.
            for rebuild in (json.loads(line) for line in lines(path)):
                if rebuild["status"] not in (0, 69):
                    problems.append(f"{name}: a rebuild of {rebuild['projection']} exited {rebuild['status']}: {rebuild.get('stderr', '')!r}")
                key = "rebuilds" if rebuild["status"] == 0 else "rebuildsStopped"
                figures_extra[key] = figures_extra.get(key, 0) + 1
        elif name.startswith("subscriber-"):
            seen = [json.loads(line) for line in lines(path)]
            # Events the dying primary showed before they were replicated, written again by
            # their appenders at later positions of the new primary's log (what the reads'
            # replication barrier prevents: docs/SCALING.md, "Reads hand out only what the
            # synchronous standby holds"): a difference as any other, counted apart.
            diverged = [s for s in seen if s["id"] in by_id and by_id[s["id"]][0]["position"] > s["position"]]
            expected = [{"position": e["position"], "id": e["id"]} for e in events[:len(seen)]]
            if seen != expected:
                first = next((i for i, (a, b) in enumerate(zip(seen, expected)) if a != b), min(len(seen), len(expected)))
                problems.append(f"{name}: saw {len(seen)} events; the first that differs from the log is number {first + 1}"
                                + (f" ({len(diverged)} seen before a failover lost them)" if diverged else ""))
            figures_extra["readsLostAtFailover"] = figures_extra.get("readsLostAtFailover", 0) + len(diverged)
    if group is not None:
        effects = [e["data"]["to"] for e in events if e["stream"] == "effects"]
        claims = {e["position"] for e in events if e["stream"].startswith("claims-")}
        # An effect's id is its position's, so the log holds it once by construction: what
        # the group must not do is settle a delivery twice (acknowledged by two members, or
        # twice by one).
        for position, members in sorted(settled_by.items()):
            if len(members) > 1:
                problems.append(f"the group's delivery of {position} was acknowledged {len(members)} times ({', '.join(members)})")
        if not set(effects) <= claims:
            problems.append(f"effects of events that are not claims: {sorted(set(effects) - claims)[:10]}")
        missing = sorted(p for p in claims if p <= group["checkpoint"] and p not in set(effects))
        if missing:
            problems.append(f"claims the group settled without their effect: {missing[:10]}")
        if group["parked"]:
            problems.append(f"the group parked {group['parked']} events")
        figures_extra.update({"effects": len(effects), "acknowledgedDeliveries": sum(map(len, settled_by.values())),
                              "groupCheckpoint": group["checkpoint"]})
    # The servers' live projection daemons went on through every fault: each projection
    # reached the head, passed over nothing, and holds what a fold of the log gives (an event
    # applied twice or missed would change its hash).
    if projections is not None:
        if not projections:
            problems.append("no projection is listed, so the live daemons went unchecked")
        for projection in projections:
            if projection["checkpoint"] < len(events):
                problems.append(f"projection {projection['name']} stopped at {projection['checkpoint']}, the head is {len(events)}: its live daemon did not catch up")
            if projection.get("eventsSkipped", 0) or projection.get("building"):
                problems.append(f"projection {projection['name']} passed over {projection.get('eventsSkipped', 0)} events or is still building")
        figures_extra["projections"] = len(projections)
    if verified is not None:
        for found in verified.get("problems", [])[:20]:
            problems.append(f"verify --deep: {found.get('check')}: {found.get('detail')}")
        if not verified.get("ok") and not verified.get("problems"):
            problems.append("verify --deep did not pass, naming no problem")
        figures_extra["deepVerified"] = bool(verified.get("ok"))
    # A server that stopped answering is a violation when answers are checked (the long run's
    # --liveness); otherwise a figure, so that make test's short run does not fail by chance.
    if check_liveness:
        problems += stalled
    figures = {"events": len(events), "acknowledged": acknowledged, "lost": lost, "streams": len(versions),
               **figures_extra, "stalled": len(stalled), "violations": len(problems)}
    return figures, problems


if __name__ == "__main__":
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "appender" and len(sys.argv) == 6:
        appender(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    elif mode == "subscriber" and len(sys.argv) == 5:
        subscriber(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif mode in ("claimer", "processor", "consumer", "rebuilder") and len(sys.argv) == 7:
        {"claimer": claimer, "processor": processor, "consumer": consumer, "rebuilder": rebuilder}[mode](
            sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), sys.argv[6])
    elif mode == "check" and len(sys.argv) in (6, 7) and sys.argv[6:] in ([], ["--count-losses"]):
        check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], count_losses=len(sys.argv) == 7)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
