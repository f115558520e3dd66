#!/usr/bin/env python3
"""The failover checker's own test: a run's history that passes, and each violation the
checker must find made in it once (scripts/failover_check.py verify). `make test` runs it.

  python3 scripts/failover_check_test.py
"""
import copy
import json
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import failover_check  # noqa: E402


def event(position, stream, version, event_id, kind="Checked", data=None, tags=None):
    line = {"position": position, "stream": stream, "version": version, "id": event_id, "type": kind, "data": data or {}}
    if tags:
        line["tags"] = tags
    return line


class History:
    """A small run: an appender's two acknowledged appends (one to its own stream, one to the
    shared one), two claimers racing for one slot, a processor's two reactions, a consumer's
    acknowledged delivery with its effect, a subscriber that saw it all, the fault healed before
    the last acknowledgement."""

    def __init__(self):
        self.events = [
            event(1, "app1-0", 1, "a1"),
            event(2, "shared", 1, "a2"),
            event(3, "claims-app1", 1, "c1", "Claimed", {"slot": 7}, ["slot:7"]),
            event(4, "reactions-app1", 1, "r1", "Reacted", {"to": 1}),
            event(5, "reactions-app1", 2, "r2", "Reacted", {"to": 2}),
            event(6, "effects", 1, "e1", "Handled", {"to": 3}),
        ]
        self.group = {"checkpoint": 6, "parked": 0}
        self.logs = {
            "appender-app1.jsonl": [
                {"id": "a1", "stream": "app1-0", "expected": 0, "version": 1, "position": 1, "at": 10.0},
                {"id": "a2", "stream": "shared", "expected": 0, "version": 1, "position": 2, "at": 30.0},
            ],
            "claimer-app1.jsonl": [{"slot": 7, "id": "c1", "won": True, "position": 3}],
            "claimer-app2.jsonl": [{"slot": 7, "id": "c2", "won": False}],
            "processor-app1.jsonl": [{"position": 1, "id": "r1", "status": 0}, {"position": 2, "id": "r2", "status": 0}],
            "consumer-app1.jsonl": [{"position": 3, "stream": "claims-app1", "outcome": "acknowledged"}],
            "subscriber-app1.jsonl": [{"position": e["position"], "id": e["id"]} for e in self.events],
            "rebuilder-app1.jsonl": [
                {"projection": "count-by-type", "status": 69, "stderr": "esctl: PostgreSQL is unreachable"},
                {"projection": "count-by-type", "status": 0, "result": {"name": "count-by-type", "checkpoint": 6}},
            ],
        }
        self.healed = 20.0
        self.liveness = True
        # The servers' live daemons at the head, and a deep verification that passed.
        self.projections = [{"name": "count-by-type", "checkpoint": 6, "eventsSkipped": 0, "building": False}]
        self.verified = {"ok": True, "problems": []}

    def verify(self):
        with tempfile.TemporaryDirectory() as logdir:
            for name, lines in self.logs.items():
                with open(os.path.join(logdir, name), "w") as log:
                    log.writelines(json.dumps(line) + "\n" for line in lines)
            with open(os.path.join(logdir, "healed"), "w") as healed:
                healed.write(str(self.healed))
            return failover_check.verify(self.events, self.group, logdir, check_liveness=self.liveness,
                                         projections=self.projections, verified=self.verified)


class CheckerTests(unittest.TestCase):
    def problems(self, change):
        history = History()
        change(history)
        return history.verify()[1]

    def assertFinds(self, change, words):
        problems = self.problems(change)
        self.assertTrue(any(words in problem for problem in problems), f"no problem says {words!r}: {problems}")

    def assertFigureWithoutLiveness(self, change, figure):
        """Without --liveness, what `change` makes wrong is counted in `figure`, not a violation."""
        history = History()
        change(history)
        history.liveness = False
        figures, problems = history.verify()
        self.assertEqual((figures[figure], problems), (1, []), f"without --liveness it is the figure {figure}")

    def test_a_good_history_passes(self):
        figures, problems = History().verify()
        self.assertEqual(problems, [])
        self.assertEqual((figures["acknowledged"], figures["lost"], figures["claims"], figures["reactions"], figures["effects"]), (2, 0, 2, 2, 1))
        self.assertEqual((figures["projections"], figures["deepVerified"], figures["rebuilds"], figures["rebuildsStopped"]), (1, True, 1, 1))

    def test_an_acknowledged_append_lost(self):
        def lose(h):
            h.events = [e for e in h.events if e["id"] != "a1"]
        self.assertFinds(lose, "acknowledged a1 is in the log 0 times")
        history = History()
        lose(history)
        self.assertEqual(history.verify()[0]["lost"], 1)

    def test_an_append_written_twice(self):
        self.assertFinds(lambda h: h.events.append(event(7, "app1-0", 2, "a1")), "acknowledged a1 is in the log 2 times")

    def test_an_append_out_of_place(self):
        self.assertFinds(lambda h: h.logs["appender-app1.jsonl"][0].update(position=9), "is in the log as app1-0@1 at 1")

    def test_a_lost_update(self):
        def based_on_nothing(h):
            h.logs["appender-app1.jsonl"][1]["expected"] = 5
        self.assertFinds(based_on_nothing, "lost update: a2 expected version 5")

    def test_a_gap_in_positions(self):
        self.assertFinds(lambda h: h.events[5].update(position=8), "positions are not 1..6")

    def test_a_gap_in_a_streams_versions(self):
        self.assertFinds(lambda h: h.events[4].update(version=3), "stream reactions-app1: versions")

    def test_a_subscriber_out_of_order(self):
        def swap(h):
            seen = h.logs["subscriber-app1.jsonl"]
            seen[1], seen[2] = seen[2], seen[1]
        self.assertFinds(swap, "the first that differs from the log is number 2")

    def test_a_subscriber_that_saw_events_a_failover_lost(self):
        def diverged(h):
            # The subscriber saw a3 at 7 on the dying primary; its appender wrote it again at 8.
            h.events += [event(7, "app1-1", 1, "x7"), event(8, "app1-0", 2, "a3")]
            h.projections[0]["checkpoint"] = 8
            h.logs["subscriber-app1.jsonl"] += [{"position": 7, "id": "a3"}, {"position": 8, "id": "a3"}]
        self.assertFinds(diverged, "the first that differs from the log is number 7 (1 seen before a failover lost them)")
        history = History()
        diverged(history)
        history.liveness = False
        figures, problems = history.verify()
        self.assertEqual((figures["readsLostAtFailover"], len(problems)), (1, 1), "without --liveness too, counted and a violation")

    def test_a_subscriber_that_saw_more_than_the_log(self):
        self.assertFinds(lambda h: h.logs["subscriber-app1.jsonl"].append({"position": 7, "id": "gone"}), "saw 7 events")

    def test_a_slot_claimed_twice(self):
        self.assertFinds(lambda h: h.events.append(event(7, "claims-app2", 1, "c2", "Claimed", {"slot": 7}, ["slot:7"])),
                         "slot:7 is claimed 2 times")

    def test_a_claim_told_it_won_that_did_not(self):
        self.assertFinds(lambda h: h.logs["claimer-app2.jsonl"][0].update(won=True), "slot 7 answered won, but its claim is c1")

    def test_a_processor_that_reacted_twice(self):
        self.assertFinds(lambda h: h.events.append(event(7, "reactions-app1", 3, "r3", "Reacted", {"to": 2})),
                         "the reactions are to [1, 2, 2]")

    def test_a_processor_reaction_missing(self):
        self.assertFinds(lambda h: h.logs["processor-app1.jsonl"].append({"position": 3, "id": "r3", "status": 0}),
                         "3 reactions answered, 2 in the log")

    def test_a_settled_delivery_without_its_effect(self):
        self.assertFinds(lambda h: h.events.__setitem__(5, event(6, "other", 1, "x1")), "claims the group settled without their effect: [3]")

    def test_a_delivery_acknowledged_twice(self):
        def twice(h):
            h.logs["consumer-app2.jsonl"] = [{"position": 3, "stream": "claims-app1", "outcome": "acknowledged"}]
        self.assertFinds(twice, "the group's delivery of 3 was acknowledged 2 times")

    def test_an_event_parked(self):
        self.assertFinds(lambda h: h.group.update(parked=1), "the group parked 1 events")

    def test_a_live_projection_behind_the_head(self):
        self.assertFinds(lambda h: h.projections[0].update(checkpoint=5),
                         "projection count-by-type stopped at 5, the head is 6: its live daemon did not catch up")

    def test_a_live_projection_that_passed_over_an_event(self):
        self.assertFinds(lambda h: h.projections[0].update(eventsSkipped=1), "projection count-by-type passed over 1 events")

    def test_no_projection_listed(self):
        self.assertFinds(lambda h: setattr(h, "projections", []), "no projection is listed")

    def test_a_projection_unlike_a_fold_of_the_log(self):
        def differs(h):
            h.verified = {"ok": False, "problems": [{"check": "projectionHash", "detail": "count-by-type differs"}]}
        self.assertFinds(differs, "verify --deep: projectionHash: count-by-type differs")
        self.assertFinds(lambda h: setattr(h, "verified", {"ok": False}), "verify --deep did not pass")

    def test_a_rebuild_that_failed_otherwise_than_by_a_fault(self):
        self.assertFinds(lambda h: h.logs["rebuilder-app1.jsonl"][0].update(status=70, stderr="internal"),
                         "rebuilder-app1.jsonl: a rebuild of count-by-type exited 70")
        self.assertFinds(lambda h: h.logs["rebuilder-app1.jsonl"][0].update(status=None, stderr="timed out"),
                         "a rebuild of count-by-type exited None")

    def test_no_answer_after_the_last_heal(self):
        def late(h):
            h.healed = 40.0
        self.assertFinds(late, "appender-app1.jsonl: nothing acknowledged after the last fault healed")
        self.assertFigureWithoutLiveness(late, "stalled")


if __name__ == "__main__":
    unittest.main(verbosity=1)
