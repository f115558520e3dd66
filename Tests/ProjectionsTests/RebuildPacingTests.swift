@testable import Projections
import Dispatch
import Foundation
import Synchronization
import Testing

/// A pacer on a test clock: rests advance the clock instead of sleeping; `work` advances it as a
/// fold's work would, and `others` counts the writes of others.
private final class PacedFixture: Sendable {
    let clock = Mutex<Duration>(.zero)
    let writes = Atomic<UInt64>(0)
    let rests = Mutex<[Duration]>([])

    func pacer(_ pacing: RebuildPacing) -> RebuildPacer {
        RebuildPacer(
            pacing, ownWrites: 2, writes: { [self] in writes.load(ordering: .relaxed) }, now: { [self] in clock.withLock { $0 } },
            rest: { [self] duration in
                rests.withLock { $0.append(duration) }
                clock.withLock { $0 += duration }
            })
    }

    /// One event folded: `duration` of work, and `others` writes completed meanwhile.
    func work(_ pace: inout FoldPace, _ duration: Duration, others: UInt64) {
        clock.withLock { $0 += duration }
        writes.add(others, ordering: .relaxed)
        pace.step()
    }

    var rested: Duration { rests.withLock { $0.reduce(.zero, +) } }
}

/// Whether a lane on another thread held the turn.
private final class HeldFlag: Sendable {
    let value = Atomic<Bool>(false)
}

@Suite("A rebuild's pacing while others write")
struct RebuildPacingTests {
    @Test("while others write, a fold rests so that it works its share of the time, and folds holding the turn")
    func restsItsShare() {
        // Given a pacer at half a core, looking every 2 ms
        let fixture = PacedFixture()
        let pacer = fixture.pacer(RebuildPacing(share: 0.5, quantum: .milliseconds(2)))
        var pace = pacer.lane()
        // When a fold works 6,400 events of 50 µs (320 ms) while others write an append each
        for _ in 0..<6_400 { fixture.work(&pace, .microseconds(50), others: 1) }
        // Then it rested after every 64 events (3.2 ms of work), each time as long as it worked
        let rests = fixture.rests.withLock { $0 }
        #expect(rests.count == 100)
        #expect(rests.first == .microseconds(3_200) && rests.allSatisfy { $0 == .microseconds(3_200) })
        #expect(fixture.rested == .milliseconds(320))
        let restCount = pacer.restCount.load(ordering: .relaxed)
        #expect(restCount == 100)
        // And it holds the turn after each rest, until it gives it back
        #expect(pace.holdsTurn)
        pace.yieldTurn()
        #expect(!pace.holdsTurn)
    }

    @Test("a tenth of a core rests nine times as long as it works")
    func smallerShare() {
        let fixture = PacedFixture()
        let pacer = fixture.pacer(RebuildPacing(share: 0.1, quantum: .milliseconds(4)))
        var pace = pacer.lane()
        for _ in 0..<640 { fixture.work(&pace, .microseconds(100), others: 5) }
        // 64 ms of work, looked at every 6.4 ms: ten rests of 57.6 ms
        #expect(fixture.rests.withLock { $0 } == Array(repeating: .microseconds(57_600), count: 10))
        #expect(fixture.rested == .milliseconds(576))
        pace.yieldTurn()
    }

    @Test("a stall timed as work owes at most the longest rest, 25 quanta")
    func longestRest() {
        // Given a pacer at half a core, looking every 2 ms, while others write
        let fixture = PacedFixture()
        let pacer = fixture.pacer(RebuildPacing(share: 0.5, quantum: .milliseconds(2)))
        var pace = pacer.lane()
        // When one event of 63 takes a second (a stall: a round trip, the thread preempted)
        for n in 0..<64 { fixture.work(&pace, n == 0 ? .seconds(1) : .microseconds(50), others: 1) }
        // Then the fold rests 50 ms, not a second
        #expect(fixture.rests.withLock { $0 } == [.milliseconds(50)])
        #expect(RebuildPacing.default.longestRest == .milliseconds(50))
        pace.yieldTurn()
    }

    @Test("the writes before a fold began are not counted as others'")
    func windowStartsWithTheFold() {
        // Given a pacer that saw 100 writes (the runner's own commits) after it was made
        let fixture = PacedFixture()
        let pacer = fixture.pacer(.default)
        fixture.writes.add(100, ordering: .relaxed)
        // When a fold begins after them and works 640 events with no other write
        var pace = pacer.lane()
        for _ in 0..<640 { fixture.work(&pace, .microseconds(100), others: 0) }
        // Then it never rests
        #expect(fixture.rests.withLock { $0.isEmpty } && !pacer.othersWriting)
    }

    @Test("with no other writes a fold never rests nor takes the turn; nor when unpaced")
    func noOthers() {
        // Given a pacer, and only the runner's own writes (at most 2 a look)
        let fixture = PacedFixture()
        let pacer = fixture.pacer(.default)
        var pace = pacer.lane()
        // When a fold works 640 events of 100 µs with a write every 64
        for n in 0..<640 { fixture.work(&pace, .microseconds(100), others: n % 64 == 0 ? 1 : 0) }
        // Then it never rested, and holds no turn
        #expect(fixture.rests.withLock { $0.isEmpty })
        #expect(!pace.holdsTurn && !pacer.othersWriting)
        // And unpaced pacing never rests at all (the runner makes no pacer)
        #expect(!RebuildPacing.unpaced.rests && RebuildPacing.default.rests)
        #expect(RebuildPacing(share: 0).share == 0.01 && RebuildPacing(share: .nan).share == 1 && RebuildPacing(share: 7).share == 1)
    }

    @Test("one lane folds at a time while others write: a second waits for the turn until the first gives it back")
    func oneAtATime() async throws {
        // Given lane A holding the turn while others write
        let fixture = PacedFixture()
        let pacer = fixture.pacer(RebuildPacing(share: 0.5, quantum: .milliseconds(2)))
        var a = pacer.lane()
        for _ in 0..<64 { fixture.work(&a, .microseconds(50), others: 1) }
        #expect(a.holdsTurn && pacer.othersWriting)
        // When lane B steps on another thread
        let bHeld = HeldFlag()
        let bFinished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            var b = pacer.lane()
            for _ in 0..<64 { b.step() }
            bHeld.value.store(b.holdsTurn, ordering: .releasing)
            b.yieldTurn()
            bFinished.signal()
        }
        // Then it has not finished while A holds the turn
        #expect(bFinished.wait(timeout: .now() + .milliseconds(200)) == .timedOut, "lane B folded while lane A held the turn")
        // And once A gives it back, B takes it and finishes
        a.yieldTurn()
        #expect(bFinished.wait(timeout: .now() + 30) == .success, "lane B never took the turn A gave back")
        let bTookTheTurn = bHeld.value.load(ordering: .acquiring)
        #expect(bTookTheTurn, "lane B finished without the turn")
    }

    @Test("a rebuild left as far or further behind the head eight batches in a row, or brought no closer than it had come in 32, runs away (folds on unpaced); a batch that gains starts the count again")
    func fallingBehind() {
        // Given a rebuild whose every batch folds 100 events while the head moves on by 100 or more
        var behind = FallingBehind()
        var head: UInt64 = 1_000
        var reached: UInt64 = 0
        var counts: [Int] = []
        for _ in 0..<8 {
            head += 100
            reached += 100
            // When each batch is counted
            #expect(behind.record(head: head, reached: reached) == 1_000)
            counts.append(behind.batches)
        }
        // Then the first only sets the lag, and it runs away at the eighth batch that did not gain (the ninth counted)
        #expect(counts == [0, 1, 2, 3, 4, 5, 6, 7])
        #expect(!behind.isRunningAway)
        head += 150
        reached += 100
        #expect(behind.record(head: head, reached: reached) == 1_050)
        #expect(behind.batches == 8 && behind.isRunningAway)
        // And a batch that gains on the head, once the rule applies again, starts the count afresh
        var again = FallingBehind()
        again.record(head: 2_000, reached: 1_000)
        again.record(head: 2_100, reached: 1_050)
        again.record(head: 2_200, reached: 1_100)
        #expect(again.batches == 2)
        again.record(head: 2_200, reached: 1_500)
        #expect(again.batches == 0 && !again.isRunningAway)
        // (a head behind the rebuild's position counts as none behind, not an overflow)
        #expect(again.record(head: 10, reached: 20) == 0)
        // And a rebuild that loses ground on average but gains now and then (the lag up 100,
        // down 50, batch after batch), which the first rule never calls running away, runs away
        // at the 32nd batch after its closest approach
        var noisy = FallingBehind()
        var lag: UInt64 = 1_000
        var runsAway: [Bool] = []
        for batch in 0...FallingBehind.window {
            lag = batch == 0 ? lag : (batch % 2 == 1 ? lag + 100 : lag - 50)
            noisy.record(head: 10_000 + lag, reached: 10_000)
            runsAway.append(noisy.isRunningAway)
            #expect(noisy.batches <= 1, "the first rule counted \(noisy.batches) batches in a row")
        }
        #expect(runsAway == Array(repeating: false, count: FallingBehind.window) + [true], "the lags \(runsAway)")
        #expect(noisy.sinceClosest == FallingBehind.window)
        // And one that comes closer than ever, by a little, batch after batch, never does
        var steady = FallingBehind()
        for batch in 0..<100 { steady.record(head: 5_000 + UInt64(batch) * 99, reached: UInt64(batch) * 100) }
        #expect(steady.batches == 0 && steady.sinceClosest == 0 && !steady.isRunningAway)
    }
}
