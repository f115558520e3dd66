import Dispatch
import Foundation
import Synchronization

/// How much CPU a rebuild's folds take while other writes (appends) go on: about ``share`` of
/// one core (its work timed by the wall clock), each lane resting between quanta of work and,
/// on LMDB, folding while it holds a turn that one lane at a time takes. When nothing else
/// writes, lanes fold at once and never rest. Others write when more than two writes completed
/// through the runner's store handle (its writer statistics' `completedWrites`) since a fold
/// began or last looked: a rebuild in one process does not see another process's appends, and
/// is not paced by them. A rebuild that falls behind the head (eight batches in a row that lose
/// ground, or 32 that come no closer than it had come: `FallingBehind`) folds on unpaced, so that
/// it finishes however busy the appends.
///
/// Why: an append's latency is mostly its commit's flush, and on a machine whose cores a rebuild
/// keeps busy the flush itself slows (a virtual machine's disk is served from the same CPU
/// budget): two spinning threads at nice 19 raised S9's quiet p99 from 4 to 18.5 ms, one from 4
/// to 6.8 (BENCHMARKS.md, "S9: a budget for the rebuild"). No priority inside the machine helps;
/// leaving cores idle does.
public struct RebuildPacing: Sendable, Equatable {
    /// The share of one core, above 0 and at most 1, the rebuild's folds take while others
    /// write; 1 never rests (and lanes fold at once).
    public let share: Double
    /// How long a fold works between looks at the writer: the grain of its rests.
    public let quantum: Duration

    /// Pacing at `share` (clamped to 0.01...1) of one core, looking every `quantum` (at least
    /// 100 µs).
    public init(share: Double, quantum: Duration = .milliseconds(2)) {
        self.share = share.isNaN ? 1 : min(1, max(0.01, share))
        self.quantum = max(quantum, .microseconds(100))
    }

    /// Half of one core while others write (what S9 measured: BENCHMARKS.md).
    public static let `default` = RebuildPacing(share: 0.5)
    /// Never rests: a rebuild takes what the lanes can fold.
    public static let unpaced = RebuildPacing(share: 1)

    /// Whether a fold ever rests.
    var rests: Bool { share < 1 }
    /// The longest a fold rests at once: 25 quanta (a stall timed as work owes no more).
    var longestRest: Duration { quantum * 25 }
}

/// The budget one runner's rebuild lanes share (see ``RebuildPacing``): a bucket of CPU time that
/// fills at ``RebuildPacing/share`` of the wall clock and that work while others write empties,
/// and the turn that lets one lane fold at a time meanwhile.
final class RebuildPacer: Sendable {
    let pacing: RebuildPacing
    /// The store's completed writes so far (``WriterStatistics/completedWrites``).
    private let writes: @Sendable () -> UInt64
    /// How many writes in a look's window may be the runner's own (its other lanes' commits)
    /// before others count as writing.
    private let ownWrites: UInt64
    /// The time since some origin: the pacer's clock (a test's own in tests).
    let now: @Sendable () -> Duration
    /// Waits `duration` on the calling thread (a fold thread of the process's own).
    let rest: @Sendable (Duration) -> Void
    /// Held by the lane that folds while others write. A semaphore, not a lock: a lane may give
    /// it back from another of the fold threads than the one that took it.
    private let turn = DispatchSemaphore(value: 1)
    /// How many times a lane rested (for tests and statistics).
    let restCount = Atomic<Int>(0)

    private struct Budget {
        /// CPU time left (negative: owed), at `updated`.
        var balance: Duration = .zero
        var updated: Duration
        /// The writes seen at the last look, and whether others were writing then.
        var writesSeen: UInt64
        var othersWriting = false
    }
    private let budget: Mutex<Budget>

    init(
        _ pacing: RebuildPacing, ownWrites: Int, writes: @escaping @Sendable () -> UInt64,
        now: (@Sendable () -> Duration)? = nil, rest: (@Sendable (Duration) -> Void)? = nil
    ) {
        self.pacing = pacing
        self.writes = writes
        self.ownWrites = UInt64(max(0, ownWrites))
        let origin = ContinuousClock.now
        let now = now ?? { ContinuousClock.now - origin }
        self.now = now
        self.rest = rest ?? { duration in
            let (seconds, attoseconds) = duration.components
            Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        }
        budget = Mutex(Budget(updated: now(), writesSeen: writes()))
    }

    /// A fold's pace, for one fold of one lane, made as its read begins: the writes before it
    /// (the runner's own commits among them) are not counted as others'.
    func lane() -> FoldPace {
        let completed = writes()
        budget.withLock { $0.writesSeen = completed }
        return FoldPace(pacer: self, started: now())
    }

    /// Whether others were writing at the last look of any lane.
    var othersWriting: Bool { budget.withLock { $0.othersWriting } }

    /// A lane worked `worked` up to `at`: looks at the writer and, when others write, takes the
    /// work from the budget. Returns how long the lane rests (zero for none) and whether others
    /// write.
    func spend(_ worked: Duration, at time: Duration) -> (rest: Duration, othersWriting: Bool) {
        let completed = writes()
        return budget.withLock { budget in
            let others = completed &- budget.writesSeen > ownWrites
            budget.writesSeen = completed
            budget.othersWriting = others
            // The bucket fills at the share of the time gone by, up to one quantum (the burst a
            // lane may work before its first rest).
            let elapsed = max(.zero, time - budget.updated)
            budget.updated = max(budget.updated, time)
            budget.balance = min(pacing.quantum, budget.balance + elapsed * pacing.share)
            guard others else { return (.zero, false) }
            // The work is timed by the wall clock (a thread's CPU clock would not follow a fold
            // across threads): a stall counted as work owes at most one longest rest.
            budget.balance = max(budget.balance - worked, pacing.longestRest * (-pacing.share))
            guard budget.balance < .zero else { return (.zero, true) }
            return (budget.balance * (-1 / pacing.share), true)
        }
    }

    func takeTurn() { turn.wait() }
    func giveTurn() { turn.signal() }
}

/// One fold's pace: counts its steps, looks at the writer every quantum of work, rests as the
/// budget says, and takes the turn before folding on while others write. Used by one fold, on
/// the thread it runs on; gives the turn back before every suspension (``yieldTurn()``).
struct FoldPace {
    let pacer: RebuildPacer
    var started: Duration
    private(set) var holdsTurn = false
    private var steps = 0

    init(pacer: RebuildPacer, started: Duration) {
        self.pacer = pacer
        self.started = started
    }

    /// Called for each event folded: every 64th looks at the clock, and while others write a
    /// lane folds only holding the turn.
    mutating func step() {
        steps &+= 1
        if steps & 63 == 0 { look(takingTurn: true) }
    }

    /// Looks at the clock (a chunk's end: without taking the turn, since a suspension follows).
    mutating func look(takingTurn: Bool) {
        let time = pacer.now()
        let worked = time - started
        if worked >= pacer.pacing.quantum {
            yieldTurn()
            let (rest, others) = pacer.spend(worked, at: time)
            if rest > .zero {
                pacer.restCount.add(1, ordering: .relaxed)
                pacer.rest(rest)
            }
            if others && takingTurn { take() }
            started = pacer.now()
        } else if takingTurn && !holdsTurn && pacer.othersWriting {
            take()
            started = pacer.now()
        }
    }

    /// Gives the turn back, if held: before a suspension, and when the fold ends.
    mutating func yieldTurn() {
        guard holdsTurn else { return }
        holdsTurn = false
        pacer.giveTurn()
    }

    private mutating func take() {
        pacer.takeTurn()
        holdsTurn = true
    }
}
