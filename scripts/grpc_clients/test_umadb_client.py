"""UmaDB's own Python client (`umadb` on PyPI) against the server at UMADB_URI.

Run by scripts/grpc-clients-test.sh, which gives every test a freshly started server on an empty
store: each test begins by checking that the store is empty, and counts positions from 1.

What is checked is what UmaDB 0.7.8's own server does, as the client sees it (the script's
`umadb` mode runs these against it), so that another server of the same wire protocol can be
held to it: positions, head, reads (direction, inclusive start, limit, queries, the `head` a
read reports), data and metadata byte for byte, event UUIDs, append conditions and the
idempotent retry, tracking positions, subscriptions (catch-up, then live) and the gRPC health
service.

The client takes event UUIDs as uuid.UUID objects only and writes them on the wire in the
lower-case hyphenated form itself, so the server's normalising of an upper-case UUID cannot be
reached through it; what is checked is that a UUID comes back equal.

Every wait is bounded (WAIT seconds); a stream is read in a daemon thread, so that a server that
never sends fails the test with what never arrived, instead of hanging it.
"""

import os
import queue
import threading
import unittest
import uuid

import umadb
from umadb import AppendCondition, Event, Query, QueryItem, TrackingInfo

# Seconds to wait for anything a stream should send: a live event arrives within milliseconds
# on an idle machine; this leaves room for a loaded one.
WAIT = 10


def positions(events):
    return [e.position for e in events]


class FreshStoreTestCase(unittest.TestCase):
    """A client of the server at UMADB_URI, whose store must be empty at the start."""

    def setUp(self):
        uri = os.environ.get("UMADB_URI")
        if not uri:
            self.fail("UMADB_URI is not set: run this through scripts/grpc-clients-test.sh")
        self.client = umadb.Client(uri)
        self.addCleanup(self.client.close)
        self.assertIsNone(
            self.client.head(),
            "the store is not empty: each test needs a fresh server (scripts/grpc-clients-test.sh)",
        )

    def append_one(self, event_type="t", data=b"d", condition=None, tracking_info=None, **kwargs):
        """Appends one event (kwargs: the Event's tags, uuid, metadata); returns its position."""
        event = Event(event_type, data, **kwargs)
        return self.client.append([event], condition=condition, tracking_info=tracking_info)


class StreamReader(threading.Thread):
    """Reads a subscription or a health watch in a daemon thread into a queue, so that the test
    waits for each item with a timeout (a blocked next() cannot be given one)."""

    _END = object()

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.items = queue.Queue()
        self.start()

    def run(self):
        try:
            for item in self.stream:
                self.items.put(item)
        except BaseException as error:  # noqa: BLE001 (reported by next_item)
            self.items.put(error)
        else:
            self.items.put(self._END)

    def next_item(self, what):
        try:
            item = self.items.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"{what} never arrived within {WAIT} s") from None
        if item is self._END:
            raise AssertionError(f"the stream ended before {what} arrived")
        if isinstance(item, BaseException):
            raise AssertionError(f"the stream failed before {what} arrived: {item!r}")
        return item

    def stop(self):
        self.stream.cancel()
        self.join(timeout=WAIT)
        if self.is_alive():
            raise AssertionError(f"the stream did not end within {WAIT} s of cancel()")


class TestAppendAndHead(FreshStoreTestCase):
    def test_empty_store(self):
        response = self.client.read()
        self.assertEqual([], list(response))
        self.assertIsNone(response.head())
        self.assertEqual(([], None), self.client.read(backwards=True).collect_with_head())

    def test_positions_start_at_1_are_contiguous_and_append_returns_the_last(self):
        self.assertEqual(1, self.append_one())
        self.assertEqual(1, self.client.head())
        self.assertEqual(
            4, self.client.append([Event("t", b"a"), Event("t", b"b"), Event("t", b"c")])
        )
        self.assertEqual(4, self.client.head())
        self.assertEqual(5, self.append_one())
        self.assertEqual([1, 2, 3, 4, 5], positions(self.client.read()))
        self.assertEqual([b"d", b"a", b"b", b"c", b"d"], [e.event.data for e in self.client.read()])

    def test_append_of_no_events_returns_0_and_writes_nothing(self):
        self.assertEqual(0, self.client.append([]))
        self.assertIsNone(self.client.head())
        self.append_one()
        self.assertEqual(0, self.client.append([]))
        self.assertEqual(1, self.client.head())


class TestRead(FreshStoreTestCase):
    # (type, tags) of positions 1 to 5.
    EVENTS = [("A", ["x"]), ("B", ["x", "y"]), ("A", ["y"]), ("C", []), ("B", ["y"])]

    def setUp(self):
        super().setUp()
        self.assertEqual(
            5, self.client.append([Event(t, t.encode(), tags=tags) for t, tags in self.EVENTS])
        )

    def read(self, **kwargs):
        return positions(self.client.read(**kwargs))

    def test_forwards_and_backwards(self):
        self.assertEqual([1, 2, 3, 4, 5], self.read())
        self.assertEqual([5, 4, 3, 2, 1], self.read(backwards=True))
        self.assertEqual(
            ["A", "B", "A", "C", "B"], [e.event.event_type for e in self.client.read()]
        )
        self.assertEqual(
            [["x"], ["x", "y"], ["y"], [], ["y"]], [e.event.tags for e in self.client.read()]
        )

    def test_start_is_inclusive(self):
        self.assertEqual([3, 4, 5], self.read(start=3))
        self.assertEqual([3, 2, 1], self.read(start=3, backwards=True))
        self.assertEqual([5], self.read(start=5))
        self.assertEqual([], self.read(start=6))
        self.assertEqual([1, 2, 3, 4, 5], self.read(start=0))
        # Backwards from past the head begins at the head.
        self.assertEqual([5, 4, 3, 2, 1], self.read(start=1000, backwards=True))

    def test_limit(self):
        self.assertEqual([1, 2], self.read(limit=2))
        self.assertEqual([5, 4], self.read(limit=2, backwards=True))
        self.assertEqual([2, 3], self.read(start=2, limit=2))
        self.assertEqual([3, 2], self.read(start=3, limit=2, backwards=True))
        self.assertEqual([1, 2, 3, 4, 5], self.read(limit=100))
        self.assertEqual([], self.read(limit=0))
        self.assertEqual([1], self.read(limit=1))

    def test_query(self):
        def query(*items, **kwargs):
            return self.read(query=Query(list(items)), **kwargs)

        self.assertEqual([1, 3], query(QueryItem(types=["A"])))
        self.assertEqual([1, 2, 3, 5], query(QueryItem(types=["A", "B"])))
        self.assertEqual([1, 2], query(QueryItem(tags=["x"])))
        # An item matches when the event has every one of its tags.
        self.assertEqual([2], query(QueryItem(tags=["x", "y"])))
        self.assertEqual([2, 5], query(QueryItem(types=["B"], tags=["y"])))
        # An event matches when any item does; each comes once, in position order.
        self.assertEqual([1, 2, 3, 5], query(QueryItem(types=["A"]), QueryItem(tags=["y"])))
        self.assertEqual(
            [5, 3, 2, 1], query(QueryItem(types=["A"]), QueryItem(tags=["y"]), backwards=True)
        )
        self.assertEqual([], query(QueryItem(types=["Z"])))
        self.assertEqual([], query(QueryItem(tags=["x", "z"])))
        self.assertEqual([4], query(QueryItem(types=["C"])))
        # An empty query, and a query of one empty item, match everything.
        self.assertEqual([1, 2, 3, 4, 5], query())
        self.assertEqual([1, 2, 3, 4, 5], query(QueryItem()))
        self.assertEqual([3, 5], query(QueryItem(tags=["y"]), start=3))
        self.assertEqual([2], query(QueryItem(tags=["y"]), limit=1))

    def test_head_without_limit_is_the_store_head(self):
        for kwargs in (
            {},
            {"backwards": True},
            {"start": 2},
            {"query": Query([QueryItem(types=["A"])])},
            {"query": Query([QueryItem(types=["Z"])])},  # matches nothing
            {"start": 6},  # past the head
        ):
            with self.subTest(**kwargs):
                self.assertEqual(5, self.client.read(**kwargs).collect_with_head()[1])

    def test_head_with_limit_is_the_last_event_sent(self):
        cases = [
            ({"limit": 2}, [1, 2], 2),
            ({"limit": 100}, [1, 2, 3, 4, 5], 5),
            ({"limit": 2, "backwards": True}, [5, 4], 4),
            ({"limit": 1, "query": Query([QueryItem(types=["A"])])}, [1], 1),
            ({"limit": 2, "start": 2, "query": Query([QueryItem(tags=["y"])])}, [2, 3], 3),
            # No event sent: no head.
            ({"limit": 1, "query": Query([QueryItem(types=["Z"])])}, [], None),
            ({"limit": 0}, [], None),
        ]
        for kwargs, expected, head in cases:
            with self.subTest(**kwargs):
                events, got_head = self.client.read(**kwargs).collect_with_head()
                self.assertEqual(expected, positions(events))
                self.assertEqual(head, got_head)

    def test_head_of_a_response_being_iterated(self):
        response = self.client.read()
        self.assertEqual(1, next(response).position)
        self.assertEqual(5, response.head())
        self.assertEqual([2, 3, 4, 5], positions(response))
        self.assertEqual(5, response.head())


class TestEventContents(FreshStoreTestCase):
    def test_data_comes_back_byte_for_byte(self):
        payloads = [
            b"",
            b"\x00\xff\xfe\x80 not JSON, not UTF-8 \xc3\x28",
            b'{ "a" : 1 }',  # JSON with white space: must not be re-encoded
            b"[1,2 , 3]\n",
            b'  "a string"  ',
            bytes(range(256)) * 64,
        ]
        last = self.client.append([Event("t", data) for data in payloads])
        self.assertEqual(len(payloads), last)
        self.assertEqual(payloads, [e.event.data for e in self.client.read()])
        self.assertEqual(payloads[::-1], [e.event.data for e in self.client.read(backwards=True)])

    def test_large_events_come_back_whole(self):
        # 6 MB in all: more than the 4 MiB a gRPC message may have by default, so a server must
        # spread a read over several messages (UmaDB 0.7.8 splits at about 3.5 MiB).
        payloads = [bytes([i]) * 1_500_000 for i in range(4)]
        for payload in payloads:
            self.client.append([Event("big", payload)])
        self.assertEqual(payloads, [e.event.data for e in self.client.read()])
        events, head = self.client.read().collect_with_head()
        self.assertEqual(([1, 2, 3, 4], 4), (positions(events), head))

    def test_metadata_round_trip(self):
        metadata = {
            "correlation_id": str(uuid.uuid4()),
            "with spaces": "a value with spaces",
            "empty": "",
            "unicode ✓": "ünïcödé ✓",
            "json": '{ "a" : 1 }',
        }
        self.append_one(metadata=metadata)
        self.append_one()
        first, second = self.client.read()
        # Compared as dicts: the order of the pairs is not kept (UmaDB's Python client passes
        # metadata through a hash map; the same five pairs come back in another order).
        self.assertEqual(metadata, first.event.metadata)
        self.assertEqual({}, second.event.metadata)

    def test_uuid_round_trip(self):
        random = uuid.uuid4()
        # Made from upper case: the client sends it in lower case (see the module's docstring).
        upper = uuid.UUID("ABCDEF01-2345-6789-ABCD-EF0123456789")
        self.client.append(
            [Event("t", b"1", uuid=random), Event("t", b"2", uuid=upper), Event("t", b"3")]
        )
        first, second, third = self.client.read()
        self.assertEqual(random, first.event.uuid)
        self.assertIsInstance(first.event.uuid, uuid.UUID)
        self.assertEqual("abcdef01-2345-6789-abcd-ef0123456789", str(second.event.uuid))
        self.assertIsNone(third.event.uuid)

    def test_type_and_tags_round_trip(self):
        tags = ["order:42", "ünïcödé ✓", "with space", "z", "a"]
        self.append_one(event_type="Type ✓ with space", tags=tags)
        (event,) = self.client.read()
        self.assertEqual("Type ✓ with space", event.event.event_type)
        self.assertEqual(tags, event.event.tags)  # in the order sent
        self.assertIsNone(event.tracking_info)


class TestAppendCondition(FreshStoreTestCase):
    def test_condition_fails_on_a_matching_event_after_the_position(self):
        self.append_one("A", tags=["order:1"])
        self.append_one("B", tags=["order:2"])
        order1 = Query([QueryItem(tags=["order:1"])])
        for condition in (
            AppendCondition(order1),
            AppendCondition(order1, after=0),  # 0 is the whole log too
            AppendCondition(Query([QueryItem(types=["B"])]), after=1),
            AppendCondition(Query()),  # an empty query matches every event
            AppendCondition(Query(), after=1),
        ):
            with self.subTest(condition=repr(condition)):
                with self.assertRaises(umadb.IntegrityError):
                    self.client.append([Event("C", b"1"), Event("C", b"2")], condition=condition)
                self.assertEqual(2, self.client.head(), "a failed append must write nothing")
        self.assertTrue(issubclass(umadb.IntegrityError, ValueError))

    def test_condition_passes_without_a_matching_event_after_the_position(self):
        self.append_one("A", tags=["order:1"])
        self.append_one("B", tags=["order:2"])
        order1 = Query([QueryItem(tags=["order:1"])])
        self.assertEqual(3, self.append_one("C", condition=AppendCondition(order1, after=1)))
        self.assertEqual(
            4, self.append_one("C", condition=AppendCondition(Query([QueryItem(tags=["order:3"])])))
        )
        self.assertEqual(
            5,
            self.append_one(
                "C", condition=AppendCondition(Query([QueryItem(types=["B"], tags=["order:1"])]))
            ),
        )
        self.assertEqual(6, self.append_one("C", condition=AppendCondition(Query(), after=5)))
        self.assertEqual(
            7,
            self.append_one(
                "C", condition=AppendCondition(Query([QueryItem(types=["A", "B"])]), after=2)
            ),
        )

    def test_condition_on_an_empty_store_passes(self):
        self.assertEqual(1, self.append_one(condition=AppendCondition(Query())))

    def test_idempotent_retry_answers_with_the_same_position(self):
        # A retry of a conditional append whose events all have UUIDs: when the condition fails
        # only because of those same events (same UUIDs, same order), it succeeds again with
        # the position it had, and writes nothing.
        self.append_one("other", tags=["order:0"])
        events = [
            Event("Placed", b"1", tags=["order:1"], uuid=uuid.uuid4()),
            Event("Paid", b"2", tags=["order:1"], uuid=uuid.uuid4()),
        ]
        condition = AppendCondition(Query([QueryItem(tags=["order:1"])]), after=1)
        self.assertEqual(3, self.client.append(events, condition=condition))
        self.assertEqual(3, self.client.append(events, condition=condition))
        self.assertEqual(3, self.client.head())
        # Other UUIDs, or the same in another order, are a conflict.
        with self.assertRaises(umadb.IntegrityError):
            self.client.append(
                [Event("Placed", b"1", tags=["order:1"], uuid=uuid.uuid4()), events[1]],
                condition=condition,
            )
        with self.assertRaises(umadb.IntegrityError):
            self.client.append(events[::-1], condition=condition)
        self.assertEqual(3, self.client.head())

    def test_retry_without_uuids_is_a_conflict(self):
        # Only a retry whose events all have UUIDs can be idempotent.
        condition = AppendCondition(Query([QueryItem(tags=["order:1"])]))
        events = [
            Event("Placed", b"1", tags=["order:1"], uuid=uuid.uuid4()),
            Event("Paid", b"2", tags=["order:1"]),
        ]
        self.assertEqual(2, self.client.append(events, condition=condition))
        with self.assertRaises(umadb.IntegrityError):
            self.client.append(events, condition=condition)
        # The nil UUID is a UUID like any other (it comes back as itself).
        nil = [Event("Shipped", b"3", tags=["order:2"], uuid=uuid.UUID(int=0))]
        condition = AppendCondition(Query([QueryItem(tags=["order:2"])]))
        self.assertEqual(3, self.client.append(nil, condition=condition))
        self.assertEqual(3, self.client.append(nil, condition=condition))
        self.assertEqual(uuid.UUID(int=0), list(self.client.read(start=3))[0].event.uuid)
        self.assertEqual(3, self.client.head())

    def test_unconditional_append_is_never_idempotent(self):
        event = Event("t", b"d", uuid=uuid.uuid4())
        self.assertEqual(1, self.client.append([event]))
        self.assertEqual(2, self.client.append([event]))
        self.assertEqual([event.uuid] * 2, [e.event.uuid for e in self.client.read()])


class TestTracking(FreshStoreTestCase):
    def test_tracking_positions(self):
        self.assertIsNone(self.client.get_tracking_info("upstream"))
        self.assertEqual(1, self.append_one(tracking_info=TrackingInfo("upstream", 7)))
        self.assertEqual(7, self.client.get_tracking_info("upstream"))
        self.assertIsNone(self.client.get_tracking_info("other"))
        # The position must increase strictly; a refused append writes nothing.
        for position in (7, 6, 0):
            with self.subTest(position=position):
                with self.assertRaises(umadb.IntegrityError):
                    self.append_one(tracking_info=TrackingInfo("upstream", position))
        self.assertEqual(1, self.client.head())
        self.assertEqual(7, self.client.get_tracking_info("upstream"))
        self.assertEqual(2, self.append_one(tracking_info=TrackingInfo("upstream", 8)))
        self.assertEqual(8, self.client.get_tracking_info("upstream"))
        # Sources are independent.
        self.assertEqual(3, self.append_one(tracking_info=TrackingInfo("other", 1)))
        self.assertEqual(1, self.client.get_tracking_info("other"))
        self.assertEqual(8, self.client.get_tracking_info("upstream"))

    def test_events_carry_their_tracking_info(self):
        self.append_one(tracking_info=TrackingInfo("upstream", 5))
        self.append_one()
        first, second = self.client.read()
        self.assertEqual(TrackingInfo("upstream", 5), first.tracking_info)
        self.assertIsNone(second.tracking_info)

    def test_tracking_with_a_condition(self):
        tag = Query([QueryItem(tags=["x"])])
        self.assertEqual(
            1,
            self.append_one(
                tags=["x"], condition=AppendCondition(tag), tracking_info=TrackingInfo("s", 1)
            ),
        )
        # The condition fails: neither the event nor the tracking position is recorded.
        with self.assertRaises(umadb.IntegrityError):
            self.append_one(
                tags=["x"], condition=AppendCondition(tag), tracking_info=TrackingInfo("s", 2)
            )
        self.assertEqual(1, self.client.get_tracking_info("s"))
        self.assertEqual(1, self.client.head())


class TestSubscribe(FreshStoreTestCase):
    def subscribe(self, **kwargs):
        reader = StreamReader(self.client.subscribe(**kwargs))
        self.addCleanup(reader.stop)
        return reader

    def test_catch_up_then_live(self):
        self.client.append([Event("t", b"1"), Event("t", b"2"), Event("t", b"3")])
        reader = self.subscribe()
        for position in (1, 2, 3):
            self.assertEqual(
                position, reader.next_item(f"the stored event at position {position}").position
            )
        live = uuid.uuid4()
        self.client.append([Event("live", b"4", uuid=live, metadata={"m": "v"})])
        event = reader.next_item("the live event appended at position 4")
        self.assertEqual(
            (4, "live", b"4", live, {"m": "v"}),
            (
                event.position,
                event.event.event_type,
                event.event.data,
                event.event.uuid,
                event.event.metadata,
            ),
        )

    def test_after_is_exclusive(self):
        self.client.append([Event("t", b"1"), Event("t", b"2"), Event("t", b"3")])
        reader = self.subscribe(after=2)
        self.assertEqual(3, reader.next_item("the stored event at position 3 (after=2)").position)

    def test_subscription_to_an_empty_store_gets_the_first_event(self):
        reader = self.subscribe()
        self.append_one()
        self.assertEqual(
            1, reader.next_item("the first event, appended after subscribing").position
        )

    def test_query(self):
        self.client.append([Event("A", b"1"), Event("B", b"2", tags=["x"]), Event("A", b"3")])
        reader = self.subscribe(query=Query([QueryItem(types=["B"]), QueryItem(tags=["y"])]))
        self.assertEqual(2, reader.next_item("the stored B event at position 2").position)
        self.append_one("A")  # 4: does not match
        self.append_one("C", tags=["y", "z"])  # 5: matches the second item
        self.assertEqual(5, reader.next_item("the live event at position 5 (tag y)").position)

    def test_live_batch_arrives_whole_and_in_order(self):
        reader = self.subscribe(after=0)
        self.client.append([Event("t", str(i).encode()) for i in range(1, 101)])
        got = [reader.next_item(f"live event {i} of 100").position for i in range(1, 101)]
        self.assertEqual(list(range(1, 101)), got)


class TestHealth(FreshStoreTestCase):
    def test_check(self):
        self.assertEqual(umadb.ServingStatus.SERVING, self.client.check_health())
        self.assertEqual(umadb.ServingStatus.SERVING, self.client.check_health(""))
        self.assertEqual(umadb.ServingStatus.SERVING, self.client.check_health("umadb.v1.DCB"))

    def test_unknown_service(self):
        # gRPC's standard health service answers NOT_FOUND, which this client raises as a plain
        # Exception whose text is its description of that status code.
        with self.assertRaisesRegex(Exception, "(?i)not found"):
            self.client.check_health("no.such.Service")

    def test_watch(self):
        reader = StreamReader(self.client.watch_health(""))
        self.addCleanup(reader.stop)
        self.assertEqual(
            umadb.ServingStatus.SERVING, reader.next_item("the first health status of a watch")
        )


if __name__ == "__main__":
    unittest.main()
