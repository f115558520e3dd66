import AppModules
import ArgumentParser
import Commands
import ConsumerGroups
import EventStore
import Projections
import WireFormat

/// esctl's exit codes: the same for every command, so scripts can act on them. Documented in
/// docs/esctl.md ("Exit codes") and in `esctl --help`; keep all three in step.
public enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    /// A domain rule rejected the command (or recorded it as invalid).
    case rejected = 1
    /// The command line or the input was invalid (argument-parser's own usage errors use 64 too).
    case invalidInput = 64
    /// An expected version did not hold, a tracking position was already recorded, or an
    /// append's condition failed (an event matching its query was recorded after its position).
    case versionConflict = 65
    /// An event id is already recorded with other content.
    case idempotencyConflict = 66
    /// Something named does not exist (a stream, a projection).
    case notFound = 67
    /// The store cannot be opened or used, or is damaged.
    case storeUnavailable = 69
    /// An unexpected internal failure.
    case internalError = 70
    /// A wait ran out of time (`subscribe --timeout`, `query --min-position`).
    case timedOut = 75
    /// Interrupted by Ctrl-C (SIGINT).
    case interrupted = 130
    /// Stopped by SIGTERM (a service manager, `kill`).
    case terminated = 143

    var summary: String {
        switch self {
        case .success: return "success"
        case .rejected: return "rejected by a domain rule"
        case .invalidInput: return "usage error or invalid input"
        case .versionConflict: return "version or condition conflict (or a tracking position already recorded)"
        case .idempotencyConflict: return "idempotency conflict (same event id, other content)"
        case .notFound: return "not found (stream, projection, store to read, ...)"
        case .storeUnavailable: return "store unavailable or damaged"
        case .internalError: return "internal error"
        case .timedOut: return "timed out"
        case .interrupted: return "interrupted (Ctrl-C, SIGINT)"
        case .terminated: return "terminated (SIGTERM)"
        }
    }

    /// The exit code table as help text.
    static var helpText: String {
        allCases.map { "  \(String($0.rawValue).padded(to: 4)) \($0.summary)" }
            .joined(separator: "\n")
    }

    /// The status an error of `category` exits with: each error says its own category
    /// (``CodedError``), so no error type is listed here.
    init(_ category: ErrorCategory) {
        self = ExitStatus(rawValue: category.exitCode) ?? .internalError
    }

}

/// An error esctl itself reports: one sentence and the exit status it leads to.
public struct CLIError: Error {
    /// The status the process exits with.
    public let status: ExitStatus
    /// One sentence, printed on standard error after `esctl: `.
    public let message: String

    /// An error that exits with `status`, saying `message`.
    public init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }
}

/// Runs a command's work, turning every failure into one sentence on standard error and the
/// documented exit code.
public func reportingErrors(_ work: () async throws -> Void) async throws {
    do {
        try await work()
        Console.flush()
    } catch let error as CLIError {
        Console.error(error.message)
        throw ExitCode(error.status.rawValue)
    } catch let error as any AppRefusal {
        Console.error(AppHints.sentence(for: error))
        throw ExitCode(ExitStatus(error.category).rawValue)
    } catch let error as EventStoreError {
        // With its cause (the LMDB or SQLSTATE code underneath), when it has one.
        Console.error(error.description)
        throw ExitCode(ExitStatus(error.category).rawValue)
    } catch let error as any CodedError {
        Console.error(error.message)
        throw ExitCode(ExitStatus(error.category).rawValue)
    } catch let error as ExitCode {
        Console.flush()
        throw error
    } catch is CancellationError {
        Console.flush()
        throw ExitCode(Interrupts.exitStatus.rawValue)
    } catch {
        Console.error("unexpected failure: \(error)")
        throw ExitCode(ExitStatus.internalError.rawValue)
    }
}

/// The pointers esctl adds to the apps' refusals: where to see what exists.
enum AppHints {
    /// The error's sentence, with the esctl command that lists what exists when it names
    /// something unknown.
    static func sentence(for error: any AppRefusal) -> String {
        guard let listing = error.listing else { return error.message }
        let base = error.message.hasSuffix(".") ? String(error.message.dropLast()) : error.message
        return "\(base); `esctl query \(listing.projection)` (with the same --\(listing.parameter)) lists them."
    }
}
