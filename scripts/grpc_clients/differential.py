"""A differential test of two servers of UmaDB's wire protocol (`umadb.v1.DCB`): ours
(`esctl serve --grpc-port`) and UmaDB 0.7.8's own (`umadb` from PyPI), both on fresh empty stores.

    differential.py OURS_URL UMADB_URL [--seed N] [--count N] [--call-timeout S]
                    [--avoid CASE]... [-v]

Run by scripts/grpc-differential.sh, which starts both servers. From the seed, it generates a
random sequence of operations with UmaDB's own Python client (`umadb.Client`), runs each against
ours and then against UmaDB, and compares the two answers; it stops at the first difference and
prints the seed, the operation's index, the operation and both answers (exit status 1).

The operations:
- appends of 1 to 5 events: types from a small set, tags from a small set (and "order:K" tags,
  one entity per decision), data of random bytes, text, JSON with and without white space,
  sometimes 20 KB; metadata dicts; uuids fresh, absent, the nil UUID, or reused from an earlier
  event (so that the store holds a uuid many times, and a later conditional append can be a
  retry of earlier events);
- conditional appends: the query by types, tags, several items, an empty item, no item; `after`
  absent, 0, the head, older, the position a read-before-decide saw, beyond the head (up to
  2^63); so that both passes and conflicts happen;
- retries of earlier conditional appends with the same uuids (exactly, with other tracking info,
  other data, or reordered or changed uuids), and appends made of earlier events' uuids: a retry
  of an append that wrote must be answered with the position it was answered with then;
- tracking info on some appends (positions from 1, increasing, equal or lower; sources incl.
  the empty one), appends of no events (tracking info alone, or a condition the model knows
  matches nothing: see the table below);
- reads: query, start (incl. 0, past the head, 2^63, 2^64-1), backwards, limit (incl. 0 and
  2^32-1), batch size (through the client's `batch_size`: none, 0, 1, 2, 3, 7, 5000), compared
  batch by batch: each batch's events (position, type, tags, data, uuid, metadata as a dict,
  tracking info) and the read's `head()` after it;
- head(), get_tracking_info() (recorded, unknown and empty sources);
- appends both servers refuse alike (ValueError): a metadata value of 70,000 bytes, a tracking
  source of 300 bytes, a type or a tag of 5,000 bytes;
- subscriptions opened along the way (query, `after` incl. 2^64-1), which then see the live
  appends; checked now and then and at the end, with fresh ones, each collected up to the last
  matching event within a bounded time (the events in order; batch boundaries are timing and
  not compared).

Answers are compared exactly; an error is compared by its exception class (umadb.IntegrityError,
ValueError, umadb.CorruptionError, ...), never by its message. Besides the comparison, the
script keeps a model of the log (what each agreed append wrote) to choose its operations, and
checks it against a full read at the end: a difference there is a bug of this script.

Where the servers differ on purpose (docs/grpc.md, "Where this server answers differently from
UmaDB"), the random mix never goes: no name, tag, size or tracking position outside the
store's limits, no reserved metadata key, no `after` of 2^64-1, no append of no events whose
condition matches. Each such difference is instead checked by name once the comparison is over
(`Run.probes`, in this order, on the stores the run left), each side against its own documented
answer ("ok": the call succeeds; "-": not sent):

| probe                        | the call                                          | ours           | UmaDB 0.7.8                  |
|------------------------------|---------------------------------------------------|----------------|------------------------------|
| no-events-matching-condition | append([], condition: Query() matching, after 0)  | IntegrityError | - (its server crashes: index out of bounds, db.rs:1009) |
| tracking-position-0          | 1 event, TrackingInfo(new source, 0)              | ValueError     | ok (records 0)               |
| empty-event-type             | 1 event of type ""                                | ValueError     | ok                           |
| event-type-of-201-bytes      | 1 event of a 201-byte type                        | ValueError     | ok                           |
| control-character-in-type    | 1 event of type "t\\x01"                          | ValueError     | ok                           |
| 33-tags                      | 1 event with 33 tags                              | ValueError     | ok                           |
| same-tag-twice               | 1 event with tags ["a", "a"]                      | ValueError     | ok                           |
| empty-tag                    | 1 event with tag ""                               | ValueError     | ok                           |
| metadata-key-$uuid           | 1 event with metadata {"$uuid": ...}              | ValueError     | ok                           |
| metadata-key-$tracking       | 1 event with metadata {"$tracking": ...}          | ValueError     | ok                           |
| metadata-over-64-KiB         | 1 event with a metadata value of 65,535 bytes     | ValueError     | ok                           |
| tracking-source-of-197-bytes | 1 event, TrackingInfo(197-byte source, 1)         | ValueError     | ok (up to 255)               |
| get-tracking-of-197-bytes    | get_tracking_info(197-byte source)                | ValueError     | ok (None)                    |
| 10001-events                 | an append of 10,001 events                        | ValueError     | ok                           |
| query-of-10001-items         | read(query of 10,001 items)                       | ValueError     | ok                           |
| empty-type-in-query          | read(Query([QueryItem(types=[""])]))              | ValueError     | ok                           |
| query-type-of-201-bytes      | read(Query([QueryItem(types=[201-byte type])]))   | ValueError     | ok                           |
| after-2^64-1                 | 1 event, condition on a tag after 2^64-1 (an event with it appended first) | ok (checked from the head: nothing after it) | IntegrityError (adds 1, wraps to 0: the whole log) |

One difference is UmaDB's own, and happens in the mix; it is recognised by name where it shows:

| name                          | when                                                   | ours           | UmaDB 0.7.8 |
|-------------------------------|--------------------------------------------------------|----------------|-------------|
| umadb-integrity-error-too-big | a condition fails on an event with data of about 1.5 KB or more | IntegrityError | a plain Exception ("h2 protocol error"; larger: GOAWAY header_list_way_too_large, and its client's connection is closed): its error message, sent twice in the trailers (grpc-message and the details), is a Rust debug dump of the condition and of the matching event, data as a list of numbers, more than its own client takes |

It is taken as agreement when the operation is a conditional append, ours answers
IntegrityError and UmaDB a plain Exception that names the h2 error; nothing was written on
either side (a later head or read would show it otherwise), and UmaDB's client is made again.

Not compared at all: error messages (ours are the store's sentences), transport errors (a request
over 4 MiB, undecodable protobuf), which this client cannot send on purpose, and upper-case or
32-digit uuids, which this client always sends hyphenated in lower case.

`--avoid CASE` leaves a case out of the random mix, to look past a difference
already known and reported, until it is fixed; without it, every case is in:

| CASE                         | what is left out                                               |
|------------------------------|----------------------------------------------------------------|
| retry-with-recorded-tracking | tracking info at or below the recorded position on a conditional append all of whose events have uuids (a retry, or maybe one): it gets none, or a position above the recorded one; ours answered such a retry IntegrityError ("already recorded position") when this script was written, where UmaDB answers it as recorded (it checks tracking only after deciding it is no retry) |

Every call runs in a thread joined with a timeout (--call-timeout): a call that does not answer
is reported as such (exit status 3); the caller bounds the whole run. The sequence depends only
on the seed (and the servers' answers, which agree up to the first difference): run it again
with the same seed and count to replay a difference.
"""

import argparse
import json
import random
import sys
import threading
import time
import uuid

import umadb
from umadb import AppendCondition, Event, Query, QueryItem, TrackingInfo

MAX64 = 2**64 - 1
MAX32 = 2**32 - 1

TYPES = ["t1", "t2", "t3", "t4", "Typ ✓ mit Leerzeichen"]
TAGS = ["a", "b", "c", "x:1", "ünï ✓", "with space"]
ENTITIES = [f"order:{k}" for k in range(1, 31)]
SOURCES = ["upstream", "s2", "quelle ✓", ""]
METADATA_KEYS = ["k", "correlation_id", "ünï ✓", "with space", "json", ""]
METADATA_VALUES = ["", "v", "ünïcödé ✓", '{ "a" : 1 }', "line\nbreak\ttab\x00nul", "x" * 300]
# The client's batch size (sent as ReadRequest.batch_size; None: not sent).
BATCH_SIZES = [None, None, 0, 1, 2, 3, 7, 5000]

# The servers, in the order each operation runs on them.
SIDES = ("ours", "umadb")

# The cases --avoid can leave out.
AVOIDABLE = ("retry-with-recorded-tracking",)

# Seconds to wait for a subscription to deliver what it should have.
SUBSCRIPTION_WAIT = 10


class Hang(Exception):
    """A call that did not answer within the call timeout."""


class Err:
    """A call's exception, compared by its class alone."""

    def __init__(self, error):
        self.cls = type(error).__name__
        self.message = str(error)

    def __eq__(self, other):
        return isinstance(other, Err) and self.cls == other.cls

    def __repr__(self):
        message = self.message if len(self.message) <= 300 else self.message[:300] + "..."
        return f"{self.cls}({message!r})"


def bounded(fn, timeout, what):
    """fn() in a daemon thread, joined for `timeout` seconds: its value, or Err for what it
    raised; Hang when it did not end."""
    box = {}

    def run():
        try:
            box["value"] = fn()
        except Exception as error:  # noqa: BLE001 (compared by class)
            box["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        raise Hang(f"{what} did not answer within {timeout} s")
    if "error" in box:
        return Err(box["error"])
    return box["value"]


# MARK: specs: plain data, printable, turned into the client's objects per call


def event_spec(event_type, tags, data, event_uuid, metadata):
    return {"type": event_type, "tags": list(tags), "data": data, "uuid": event_uuid,
            "metadata": dict(metadata)}


def make_event(spec):
    return Event(spec["type"], spec["data"], tags=list(spec["tags"]), uuid=spec["uuid"],
                 metadata=dict(spec["metadata"]) or None)


def make_query(items):
    """None: no query; otherwise a list of (types, tags) items (an empty list: Query())."""
    if items is None:
        return None
    return Query([QueryItem(types=list(types), tags=list(tags)) for types, tags in items])


def normal_event(e):
    """A SequencedEvent as plain, comparable data."""
    tracking = None if e.tracking_info is None else (e.tracking_info.source, e.tracking_info.position)
    ev = e.event
    return (e.position, ev.event_type, tuple(ev.tags), bytes(ev.data),
            None if ev.uuid is None else str(ev.uuid), tuple(sorted(ev.metadata.items())), tracking)


def matches(items, event_type, tags):
    """Whether an event matches a query (None or no items or an empty item: every event)."""
    if not items:
        return True
    return any((not types or event_type in types) and all(t in tags for t in qtags) for types, qtags in items)


def show(value, limit=2000):
    """A printable form of an operation or an answer."""

    def plain(v):
        if isinstance(v, bytes):
            return f"<{len(v)} bytes {v[:24]!r}{'...' if len(v) > 24 else ''}>"
        if isinstance(v, uuid.UUID):
            return str(v)
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, Err):
            return repr(v)
        return v

    text = json.dumps(plain(value), ensure_ascii=False, default=repr)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def first_difference(a, b, path=""):
    """Where two answers first differ: (path, a's part, b's part), or None when equal."""
    if a == b:
        return None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, f"{path}[{i}]")
            if found is not None:
                return found
        if len(a) != len(b):
            n = min(len(a), len(b))
            return (f"{path}[{n}:] (lengths {len(a)} and {len(b)})", list(a[n:n + 3]), list(b[n:n + 3]))
    return (path, a, b)


class Mismatch(Exception):
    pass


# MARK: the model of the log, from the agreed answers


class Model:
    def __init__(self):
        self.events = []  # (type, tags, uuid or None), position = index + 1
        self.tracking = {}  # source -> recorded position

    @property
    def head(self):
        return len(self.events)

    def any_match(self, items, after):
        return any(matches(items, t, tags) for t, tags, _ in self.events[after:])

    def last_match(self, items, after=0, upto=None):
        upto = self.head if upto is None else upto
        for position in range(upto, after, -1):
            t, tags, _ = self.events[position - 1]
            if matches(items, t, tags):
                return position
        return None


# MARK: the run


class Run:
    def __init__(self, urls, seed, count, call_timeout, verbose, avoid=()):
        self.avoid = set(avoid)
        self.urls = urls
        self.seed = seed
        self.count = count
        self.call_timeout = call_timeout
        self.verbose = verbose
        self.rng = random.Random(seed)
        self.model = Model()
        self.clients = {side: {} for side in SIDES}
        self.history = []  # (index, op) of conditional appends, with the agreed answer
        self.subscriptions = []  # {"id", "query", "after", "readers": {side: Reader}}
        self.subscription_clients = []
        self.log = []  # (index, op, answer) of the last operations
        self.index = None
        self.stats = {k: 0 for k in (
            "appends written", "conflicts", "retries answered as recorded", "other errors",
            "empty appends", "reads", "read batches", "heads", "tracking reads",
            "subscriptions", "subscription checks", "probes")}

    # -- plumbing

    def fresh_uuid(self):
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def client(self, side, batch_size=None):
        clients = self.clients[side]
        if batch_size not in clients:
            url = self.urls[side]
            made = bounded(lambda: umadb.Client(url, batch_size=batch_size), self.call_timeout,
                           f"{side}: umadb.Client({url!r}, batch_size={batch_size})")
            if isinstance(made, Err):
                raise Mismatch(f"{side}: could not make a client of {url}: {made!r}")
            clients[batch_size] = made
        return clients[batch_size]

    def call(self, side, op, fn):
        return bounded(lambda: fn(side), self.call_timeout, f"{side}: operation {self.index} {show(op, 300)}")

    def compare(self, op, fn):
        """Runs fn(side) on both sides; the answer when they agree, else Mismatch."""
        answers = {side: self.call(side, op, fn) for side in SIDES}
        self.log.append((self.index, op, answers["ours"]))
        del self.log[:-12]
        if answers["ours"] != answers["umadb"]:
            name = self.known_difference(op, answers)
            if name is None:
                self.fail(op, answers)
            self.stats["known: " + name] = self.stats.get("known: " + name, 0) + 1
            if self.verbose:
                print(f"  {self.index}: {name}: {show(answers, 400)}", file=sys.stderr)
        if self.verbose:
            print(f"  {self.index}: {show(op, 200)} -> {show(answers['ours'], 200)}", file=sys.stderr)
        return answers["ours"]

    def known_difference(self, op, answers):
        """The name of a difference of UmaDB's own this answer shows (the module's docstring), after
        recovering from it; None when it shows none."""
        ours, theirs = answers["ours"], answers["umadb"]
        if (op.get("kind") == "append" and op.get("condition") is not None and isinstance(ours, Err)
                and ours.cls == "IntegrityError" and isinstance(theirs, Err) and theirs.cls == "Exception"
                and ("h2 protocol error" in theirs.message or "header_list_way_too_large" in theirs.message)):
            # The connection may be closed (GOAWAY): a new client, a new connection.
            client = self.clients["umadb"].pop(None)
            bounded(client.close, self.call_timeout, "umadb: close()")
            return "umadb-integrity-error-too-big"
        return None

    def fail(self, op, answers, why="the answers differ"):
        lines = [
            f"differential: MISMATCH (seed {self.seed}, operation {self.index} of {self.count}): {why}",
            f"  operation: {show(op, 6000)}",
            f"  ours:      {show(answers['ours'], 6000)}",
            f"  umadb:     {show(answers['umadb'], 6000)}",
        ]
        where = first_difference(answers["ours"], answers["umadb"])
        if where is not None:
            path, ours, theirs = where
            lines += [f"  first difference at {path or 'the top'}:",
                      f"    ours:  {show(ours, 2000)}", f"    umadb: {show(theirs, 2000)}"]
        lines += [
            "  the operations before it (index, operation, the agreed answer):",
        ]
        for index, past, answer in self.log[:-1]:
            lines.append(f"    {index}: {show(past, 400)} -> {show(answer, 200)}")
        raise Mismatch("\n".join(lines))

    # -- generators

    def gen_data(self):
        r = self.rng.random()
        if r < 0.08:
            return b""
        if r < 0.25:
            return self.rng.choice([b'{ "a" : 1 ,\n  "b" : [ 1, 2 ] }', b'[1,2 , 3]\n', b'  "a string"  ',
                                    b'{"compact":true}', b'{\t"k"\t:\t"v"\t}\r\n'])
        if r < 0.35:
            return "ünïcödé ✓ text".encode()
        if r < 0.40:
            return self.rng.randbytes(self.rng.randint(3000, 20000))
        return self.rng.randbytes(self.rng.randint(1, 64))

    def gen_uuid(self, fresh_only=False):
        r = self.rng.random()
        known = [u for _, _, u in self.model.events if u is not None]
        if fresh_only or r < 0.6:
            return self.fresh_uuid()
        if r < 0.75:
            return None
        if r < 0.8:
            return uuid.UUID(int=0)
        return self.rng.choice(known) if known else self.fresh_uuid()

    def gen_metadata(self):
        if self.rng.random() < 0.5:
            return {}
        keys = self.rng.sample(METADATA_KEYS, self.rng.randint(1, 3))
        return {k: self.rng.choice(METADATA_VALUES + [str(self.fresh_uuid())]) for k in keys}

    def gen_event(self, entity=None, event_type=None, fresh_uuid=False):
        tags = self.rng.sample(TAGS, self.rng.choice([0, 0, 1, 1, 2, 3]))
        if entity is not None:
            tags.insert(self.rng.randint(0, len(tags)), entity)
        return event_spec(event_type or self.rng.choice(TYPES), tags, self.gen_data(),
                          self.gen_uuid(fresh_only=fresh_uuid), self.gen_metadata())

    def gen_items(self, entity=None, allow_none=False):
        """A query's items: None (read only), [] (Query()), or a list of (types, tags)."""
        r = self.rng.random()
        if allow_none and r < 0.3:
            return None
        if r < 0.38:
            return []
        if r < 0.43:
            return [((), ())]
        items = []
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            types = tuple(self.rng.sample(TYPES, self.rng.choice([0, 0, 1, 1, 2])))
            pool = TAGS + ([entity] * 4 if entity else self.rng.sample(ENTITIES, 3))
            tags = tuple(dict.fromkeys(self.rng.sample(pool, self.rng.choice([0, 1, 1, 2]))))
            items.append((types, tags))
        return items

    def gen_after(self, items):
        head = self.model.head
        r = self.rng.random()
        if r < 0.3:
            return None
        if r < 0.35:
            return 0
        if r < 0.55:
            return head
        if r < 0.7:
            return max(0, head - self.rng.randint(1, 6))
        if r < 0.88:
            # What a read-before-decide saw: the last matching event (or nothing).
            return self.model.last_match(items) or 0
        if r < 0.93:
            return self.rng.randint(0, head)
        # Beyond the head: both pass (ours checks from the head, docs/grpc.md).
        return head + self.rng.randint(1, 10) if r < 0.98 else 2**63

    def gen_tracking(self, probability=0.25):
        if self.rng.random() >= probability:
            return None
        source = self.rng.choice(SOURCES)
        recorded = self.model.tracking.get(source, 0)
        r = self.rng.random()
        if r < 0.1 and recorded >= 1:
            position = recorded
        elif r < 0.2 and recorded >= 2:
            position = self.rng.randint(1, recorded - 1)
        elif r < 0.3:
            position = self.rng.randint(1, 20)
        else:
            position = recorded + self.rng.randint(1, 3)
        return (source, position)

    # -- operations

    def gen_op(self):
        kinds = [
            ("append", 18), ("conditional", 26), ("retry", 9), ("retry-of-events", 5),
            ("empty-append", 3), ("read", 22), ("head", 4), ("tracking-read", 5),
            ("subscribe", 2 if len(self.subscriptions) < 4 else 0), ("subscription-check", 1),
            ("refused", 1),
        ]
        kind = self.rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
        return getattr(self, "gen_" + kind.replace("-", "_"))()

    def gen_append(self):
        n = self.rng.randint(1, 5)
        return {"kind": "append", "events": [self.gen_event() for _ in range(n)],
                "condition": None, "tracking": self.gen_tracking()}

    def gen_conditional(self):
        # A decision about one entity, mostly: its events carry its tag, the query asks for it.
        entity = self.rng.choice(ENTITIES)
        n = self.rng.choice([1, 1, 1, 2, 2, 3, 4, 5])
        events = [self.gen_event(entity=entity) for _ in range(n)]
        if self.rng.random() < 0.75:
            items = [(tuple(self.rng.sample(TYPES, self.rng.choice([0, 0, 1, 2]))), (entity,))]
            if self.rng.random() < 0.2:
                items.append(((), (self.rng.choice(ENTITIES),)))
        else:
            items = self.gen_items(entity)
        return self.avoiding_recorded_tracking(
            {"kind": "append", "events": events, "condition": {"query": items, "after": self.gen_after(items)},
             "tracking": self.gen_tracking()})

    def gen_retry(self):
        if not self.history:
            return self.gen_conditional()
        original_index, original = self.rng.choice(self.history)
        op = {"kind": "append", "retry_of": original_index, "events": [dict(e) for e in original["events"]],
              "condition": dict(original["condition"]), "tracking": original["tracking"]}
        r = self.rng.random()
        if r < 0.55:
            op["variant"] = "exact"
        elif r < 0.65:
            op["variant"] = "other tracking info"
            op["tracking"] = self.gen_tracking(probability=0.7)
        elif r < 0.75:
            op["variant"] = "other data"
            for e in op["events"]:
                e["data"] = self.gen_data()
        elif r < 0.85 and len(op["events"]) >= 2:
            op["variant"] = "reordered"
            self.rng.shuffle(op["events"])
        else:
            op["variant"] = "one uuid changed"
            e = self.rng.choice(op["events"])
            e["uuid"] = self.fresh_uuid() if e["uuid"] is not None or self.rng.random() < 0.5 else None
        return self.avoiding_recorded_tracking(op)

    def avoiding_recorded_tracking(self, op):
        """With --avoid retry-with-recorded-tracking, for a conditional append that can be a
        retry (every event has a uuid; reused uuids make any such append one): its tracking info
        none, or above the recorded position."""
        if ("retry-with-recorded-tracking" in self.avoid and op["tracking"] is not None
                and all(e["uuid"] is not None for e in op["events"])):
            source, position = op["tracking"]
            recorded = self.model.tracking.get(source, 0)
            if position <= recorded:
                op["tracking"] = None if self.rng.random() < 0.5 else (source, recorded + self.rng.randint(1, 3))
        return op

    def gen_retry_of_events(self):
        """Earlier consecutive events (their uuids, types, tags) appended again under a condition
        that matches them: a retry when they are the first matches after `after`."""
        with_uuid = [p for p in range(1, self.model.head + 1) if self.model.events[p - 1][2] is not None]
        if not with_uuid:
            return self.gen_conditional()
        start = self.rng.choice(with_uuid)
        positions = [start]
        wanted = self.rng.randint(1, 3)
        while (len(positions) < wanted and positions[-1] < self.model.head
               and self.model.events[positions[-1]][2] is not None):
            positions.append(positions[-1] + 1)
        picked = [self.model.events[p - 1] for p in positions]
        if self.rng.random() < 0.5:
            items = [(tuple(sorted({t for t, _, _ in picked})), ())]
        else:
            items = [((t,), tuple(tags)) for t, tags, _ in picked]
        r = self.rng.random()
        after = start - 1 if r < 0.5 else self.rng.randint(0, start - 1) if r < 0.8 else None
        events = [event_spec(t, tags, self.gen_data(), u, self.gen_metadata()) for t, tags, u in picked]
        return self.avoiding_recorded_tracking(
            {"kind": "append", "retry_of_positions": positions, "events": events,
             "condition": {"query": items, "after": after}, "tracking": self.gen_tracking(0.15)})

    def gen_empty_append(self):
        op = {"kind": "append", "events": [], "condition": None, "tracking": self.gen_tracking(0.6)}
        if op["tracking"] is None or self.rng.random() < 0.4:
            items = self.gen_items()
            after = self.gen_after(items)
            # Never a condition that matches: UmaDB 0.7.8's server crashes on it (the table of
            # intended differences, no-events-matching-condition).
            if after is None or after < self.model.head and self.model.any_match(items, after):
                after = self.model.head
            op["condition"] = {"query": items, "after": after}
        return op

    def gen_read(self):
        head = self.model.head
        r = self.rng.random()
        start = (None if r < 0.4 else 0 if r < 0.45 else self.rng.randint(1, head + 2) if r < 0.8
                 else head if r < 0.88 else 2**63 if r < 0.94 else MAX64)
        r = self.rng.random()
        limit = (None if r < 0.5 else 0 if r < 0.55 else self.rng.randint(1, 12) if r < 0.88
                 else MAX32 if r < 0.94 else head + self.rng.randint(0, 3))
        batch_size = self.rng.choice(BATCH_SIZES)
        if batch_size in (0, 1) and head > 300 and limit is None:
            batch_size = 2  # keeps a read of the whole log under a few hundred round trips
        return {"kind": "read", "query": self.gen_items(allow_none=True), "start": start,
                "backwards": self.rng.random() < 0.35, "limit": limit, "batch_size": batch_size}

    def gen_refused(self):
        """An append both servers refuse alike (ValueError); its other events valid."""
        events = [self.gen_event() for _ in range(self.rng.randint(0, 2))]
        bad = self.gen_event()
        tracking = None
        case = self.rng.choice(["metadata value of 70000 bytes", "tracking source of 300 bytes",
                                "type of 5000 bytes", "tag of 5000 bytes"])
        if case.startswith("metadata"):
            bad["metadata"]["m"] = "v" * 70000
        elif case.startswith("tracking"):
            tracking = ("s" * 300, 1)
        elif case.startswith("type"):
            bad["type"] = "t" * 5000
        else:
            bad["tags"].append("g" * 5000)
        events.insert(self.rng.randint(0, len(events)), bad)
        return {"kind": "append", "refused": case, "events": events, "condition": None, "tracking": tracking}

    def gen_head(self):
        return {"kind": "head"}

    def gen_tracking_read(self):
        return {"kind": "tracking", "source": self.rng.choice(SOURCES + ["never recorded"])}

    def gen_subscribe(self):
        head = self.model.head
        r = self.rng.random()
        after = (None if r < 0.3 else 0 if r < 0.4 else self.rng.randint(0, head) if r < 0.7
                 else head if r < 0.85 else head + self.rng.randint(1, 10) if r < 0.97 else MAX64)
        return {"kind": "subscribe", "query": self.gen_items(allow_none=True), "after": after}

    def gen_subscription_check(self):
        return {"kind": "subscription-check"}

    # -- running operations

    def run_op(self, op):
        kind = op["kind"]
        if kind == "append":
            self.run_append(op)
        elif kind == "read":
            self.run_read(op)
        elif kind == "head":
            self.stats["heads"] += 1
            answer = self.compare(op, lambda side: self.client(side).head())
            if answer != (self.model.head or None):
                self.fail(op, {"ours": answer, "umadb": answer},
                          f"both answer a head other than the script's model ({self.model.head}): a bug of this script?")
        elif kind == "tracking":
            self.stats["tracking reads"] += 1
            self.compare(op, lambda side: self.client(side).get_tracking_info(op["source"]))
        elif kind == "subscribe":
            self.open_subscription(op)
        elif kind == "subscription-check":
            self.check_subscriptions(op)
        else:
            raise AssertionError(kind)

    def run_append(self, op):
        condition = op["condition"]

        def append(side):
            return self.client(side).append(
                [make_event(e) for e in op["events"]],
                condition=None if condition is None else AppendCondition(make_query(condition["query"]), after=condition["after"]),
                tracking_info=None if op["tracking"] is None else TrackingInfo(*op["tracking"]))

        if not op["events"]:
            self.stats["empty appends"] += 1
        answer = self.compare(op, append)
        head = self.model.head
        n = len(op["events"])
        if isinstance(answer, Err):
            self.stats["conflicts" if answer.cls == "IntegrityError" else "other errors"] += 1
        elif n == 0:
            if answer != 0:
                self.fail(op, {"ours": answer, "umadb": answer}, "both answer an append of no events with other than 0")
            if op["tracking"] is not None:
                self.model.tracking[op["tracking"][0]] = op["tracking"][1]
        elif answer == head + n:
            # Written.
            self.stats["appends written"] += 1
            for e in op["events"]:
                self.model.events.append((e["type"], tuple(e["tags"]), e["uuid"]))
            if op["tracking"] is not None:
                self.model.tracking[op["tracking"][0]] = op["tracking"][1]
        elif condition is not None and 1 <= answer <= head:
            # A retry answered as recorded: nothing written.
            self.stats["retries answered as recorded"] += 1
        else:
            self.fail(op, {"ours": answer, "umadb": answer},
                      f"both answer a position the script's model cannot explain (head {head}, {n} events): a bug of this script?")
        if condition is not None and "retry_of_positions" not in op:
            original = op.get("retry_of")
            if original is None:
                if not op["events"]:
                    # Never retried: once its condition matches, it is the append that crashes
                    # UmaDB 0.7.8's server (no-events-matching-condition).
                    return
                op["answer"] = answer
                self.history.append((self.index, op))
            elif op.get("variant") == "exact":
                # A retry of an append that wrote after its `after` (not beyond the head then),
                # all of whose events have uuids and match its query (so they are the first
                # matches after its `after`), is answered with the position it was answered
                # with then (both sides agree already).
                first = dict(self.history)[original]
                query = first["condition"]["query"]
                if (not isinstance(first["answer"], Err) and first["events"]
                        and first["answer"] - len(first["events"]) >= (first["condition"]["after"] or 0)
                        and all(e["uuid"] is not None and matches(query, e["type"], e["tags"]) for e in first["events"])
                        and answer != first["answer"]):
                    self.fail(op, {"ours": answer, "umadb": answer},
                              f"both answer a retry of operation {original} with other than its answer then ({first['answer']})")

    def run_read(self, op):
        self.stats["reads"] += 1

        def read(side):
            response = self.client(side, op["batch_size"]).read(
                query=make_query(op["query"]), start=op["start"], backwards=op["backwards"], limit=op["limit"])
            batches = []
            while True:
                batch = response.next_batch()
                batches.append(([normal_event(e) for e in batch], response.head()))
                if not batch:
                    return batches
                if len(batches) > 5000:
                    raise RuntimeError("more than 5000 batches: a read that does not end?")

        batches = self.compare(op, read)
        if not isinstance(batches, Err):
            self.stats["read batches"] += len(batches) - 1

    # -- subscriptions

    class Reader(threading.Thread):
        """Reads a subscription into a list, in a daemon thread."""

        def __init__(self, subscription):
            super().__init__(daemon=True)
            self.subscription = subscription
            self.events = []
            self.ended = None  # None: still open; "end", or the Err it failed with
            self.lock = threading.Lock()
            self.start()

        def run(self):
            try:
                for e in self.subscription:
                    with self.lock:
                        self.events.append(normal_event(e))
            except Exception as error:  # noqa: BLE001
                self.ended = Err(error)
            else:
                self.ended = "end"

        def state(self):
            with self.lock:
                return list(self.events), self.ended

    def open_subscription(self, op):
        self.stats["subscriptions"] += 1
        subscription_id = len(self.subscriptions) + 1
        readers = {}

        def subscribe(side):
            # A client, and so a connection, of its own: what happens to the others' connections
            # (umadb-integrity-error-too-big) does not reach it.
            client = umadb.Client(self.urls[side])
            self.subscription_clients.append(client)
            readers[side] = Run.Reader(client.subscribe(query=make_query(op["query"]), after=op["after"]))
            return "opened"

        op = dict(op, id=subscription_id)
        answer = self.compare(op, subscribe)
        if answer == "opened":
            self.subscriptions.append({"id": subscription_id, "query": op["query"], "after": op["after"],
                                       "opened at": self.index, "readers": readers})

    def check_subscriptions(self, op):
        for subscription in self.subscriptions:
            self.check_subscription(op, subscription)

    def check_subscription(self, op, subscription):
        """Waits (bounded) until each side's subscription has what the log holds for it up to
        the head, then compares them: events in order, and whether the stream ended."""
        self.stats["subscription checks"] += 1
        after = subscription["after"] or 0
        last = self.model.last_match(subscription["query"], after=min(after, self.model.head))
        readers = subscription["readers"]

        def done(side):
            events, ended = readers[side].state()
            if ended is not None:
                return True
            if after == MAX64:
                return False  # UmaDB ends it at once
            return last is None or (events and events[-1][0] >= last)

        deadline = time.monotonic() + SUBSCRIPTION_WAIT
        while not all(done(side) for side in SIDES) and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.05)  # anything sent past what was waited for shows as a difference
        states = {side: readers[side].state() for side in SIDES}
        check = dict(op, subscription={k: v for k, v in subscription.items() if k != "readers"},
                     waited_for=last)
        self.log.append((self.index, check, states["ours"]))
        if states["ours"] != states["umadb"]:
            self.fail(check, states, "the subscriptions delivered differently")
        events, ended = states["ours"]
        if ended is None and not done("ours"):
            self.fail(check, states, f"neither subscription delivered up to position {last} within {SUBSCRIPTION_WAIT} s")

    # -- the run

    def run(self):
        started = time.monotonic()
        for self.index in range(self.count):
            self.run_op(self.gen_op())
        self.index = "end"
        self.finish()
        probes = self.probes()
        for client in [c for side in SIDES for c in self.clients[side].values()] + self.subscription_clients:
            bounded(client.close, self.call_timeout, "close()")
        print(f"differential: seed {self.seed}: {self.count} operations and the final checks agreed; "
              f"{probes} intended differences confirmed; {self.model.head} events; "
              + ", ".join(f"{v} {k}" for k, v in self.stats.items())
              + f"; in {time.monotonic() - started:.1f} s")

    def finish(self):
        """The checks at the end: every subscription, fresh subscriptions, the whole log (also
        against the model), every source's tracking position."""
        self.check_subscriptions({"kind": "subscription-check (end)"})
        for _ in range(3):
            op = self.gen_subscribe()
            if op["after"] == MAX64:
                op["after"] = self.model.head
            self.open_subscription(op)
            if self.subscriptions and self.subscriptions[-1]["opened at"] == self.index:
                self.check_subscription({"kind": "subscription-check (fresh)"}, self.subscriptions[-1])
        op = {"kind": "read", "query": None, "start": None, "backwards": False, "limit": None, "batch_size": None}
        self.run_read(op)
        events = list(self.client("ours").read())
        got = [(e.event.event_type, tuple(e.event.tags), e.event.uuid) for e in events]
        if got != self.model.events:
            raise Mismatch(f"differential: seed {self.seed}: the log both servers agree on is not the script's "
                           f"model of it (a bug of this script): {show(got, 2000)} != {show(self.model.events, 2000)}")
        for source in SOURCES + ["never recorded"]:
            self.compare({"kind": "tracking", "source": source},
                         lambda side, s=source: self.client(side).get_tracking_info(s))

    # -- the intended differences, by name

    def probes(self):
        if self.model.head == 0:
            self.index = "end (an event for the probes)"
            self.run_append({"kind": "append", "events": [self.gen_event()], "condition": None, "tracking": None})

        def one(event_type="t1", tags=(), metadata=None, tracking=None, condition=None):
            events = [Event(event_type, b"probe", tags=list(tags), metadata=metadata)]
            return lambda c: c.append(events, condition=condition, tracking_info=tracking)

        probes = [
            ("no-events-matching-condition",
             lambda c: c.append([], condition=AppendCondition(Query(), after=0)), "IntegrityError", None),
            ("tracking-position-0", one(tracking=TrackingInfo("probe: a new source", 0)), "ValueError", "ok"),
            ("empty-event-type", one(event_type=""), "ValueError", "ok"),
            ("event-type-of-201-bytes", one(event_type="t" * 201), "ValueError", "ok"),
            ("control-character-in-type", one(event_type="t\x01"), "ValueError", "ok"),
            ("33-tags", one(tags=[f"tag{i}" for i in range(33)]), "ValueError", "ok"),
            ("same-tag-twice", one(tags=["a", "a"]), "ValueError", "ok"),
            ("empty-tag", one(tags=[""]), "ValueError", "ok"),
            ("metadata-key-$uuid", one(metadata={"$uuid": str(uuid.UUID(int=1))}), "ValueError", "ok"),
            ("metadata-key-$tracking", one(metadata={"$tracking": "x"}), "ValueError", "ok"),
            ("metadata-over-64-KiB", one(metadata={"m": "v" * 65535}), "ValueError", "ok"),
            ("tracking-source-of-197-bytes", one(tracking=TrackingInfo("s" * 197, 1)), "ValueError", "ok"),
            ("10001-events", lambda c: c.append([Event("t1", b"") for _ in range(10001)]), "ValueError", "ok"),
            ("query-of-10001-items",
             lambda c: c.read(query=Query([QueryItem(types=["t1"]) for _ in range(10001)]), limit=1).collect_with_head(),
             "ValueError", "ok"),
            ("get-tracking-of-197-bytes", lambda c: c.get_tracking_info("s" * 197), "ValueError", "ok"),
            ("empty-type-in-query",
             lambda c: c.read(query=Query([QueryItem(types=[""])])).collect_with_head(), "ValueError", "ok"),
            ("query-type-of-201-bytes",
             lambda c: c.read(query=Query([QueryItem(types=["t" * 201])])).collect_with_head(), "ValueError", "ok"),
            # A small event to match: UmaDB's refusal of a large one does not reach its client
            # (umadb-integrity-error-too-big).
            ("after-2^64-1",
             lambda c: (c.append([Event("t1", b"anchor", tags=["probe-anchor"])]),
                        c.append([Event("t1", b"probe", tags=["probe-anchor"])],
                                 condition=AppendCondition(Query([QueryItem(tags=["probe-anchor"])]), after=MAX64)))[1],
             "ok", "IntegrityError"),
        ]
        for name, fn, *expected in probes:
            self.index = f"probe {name}"
            self.stats["probes"] += 1
            answers = {}
            for side, want in zip(SIDES, expected):
                if want is None:
                    answers[side] = "not sent"
                    continue
                answer = self.call(side, {"probe": name}, lambda s: fn(self.client(s)))
                got = answer.cls if isinstance(answer, Err) else "ok"
                answers[side] = answer
                if got != want:
                    self.fail({"probe": name, "want": dict(zip(SIDES, expected))},
                              {s: answers.get(s, "(not run yet)") for s in SIDES},
                              f"the intended difference {name} does not show as docs/grpc.md and this script's table say "
                              f"({side}: want {want}, got {answer!r})")
            if self.verbose:
                print(f"  probe {name}: {show(answers, 300)}", file=sys.stderr)
        return len(probes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ours", help="our server's URL (http://127.0.0.1:PORT), a fresh empty store")
    parser.add_argument("umadb", help="UmaDB's server's URL, a fresh empty store")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=400, help="random operations (default 400)")
    parser.add_argument("--call-timeout", type=float, default=30, help="seconds one call may take (default 30)")
    parser.add_argument("--avoid", action="append", default=[], choices=AVOIDABLE,
                        help="leave a case out of the mix (see the module's docstring)")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every operation and its answer")
    args = parser.parse_args()
    run = Run({"ours": args.ours, "umadb": args.umadb}, args.seed, args.count, args.call_timeout, args.verbose, args.avoid)
    try:
        run.index = "start (are the stores empty?)"
        for side in SIDES:
            head = run.call(side, {"kind": "head"}, lambda s: run.client(s).head())
            if head is not None:
                print(f"differential: the {side} store is not empty (head {head!r}): give two fresh servers", file=sys.stderr)
                return 2
        run.run()
    except Mismatch as mismatch:
        print(mismatch)
        avoid = "".join(f" --avoid {case}" for case in args.avoid)
        print(f"  replay: differential.py OURS UMADB --seed {args.seed} --count {args.count}{avoid}")
        return 1
    except Hang as hang:
        print(f"differential: NO ANSWER (seed {args.seed}, operation {run.index} of {args.count}): {hang}")
        for index, past, answer in run.log[-6:]:
            print(f"    {index}: {show(past, 400)} -> {show(answer, 200)}")
        sys.stdout.flush()
        return 3
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Not sys.exit: a call left hanging in a thread would keep the interpreter from exiting.
    import os

    os._exit(code)
