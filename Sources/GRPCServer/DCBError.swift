import EventStoreCore
import GRPCCore

/// A failure of a DCB call as UmaDB's clients read it: a gRPC status code, and UmaDB's own
/// `ErrorResponse` (its message and error type) in the `grpc-status-details-bin` trailer, which
/// UmaDB's clients decode to raise their own exceptions (an integrity error, a value error, ...).
struct DCBError: Error, Sendable {
    /// The kinds of UmaDB's errors, each with the status code and the error type UmaDB sends.
    enum Kind: Sendable {
        case invalidArgument, integrity, corruption, authentication, internalFailure, unavailable

        var code: RPCError.Code {
            switch self {
            case .invalidArgument: return .invalidArgument
            case .integrity: return .failedPrecondition
            case .corruption: return .dataLoss
            case .authentication: return .unauthenticated
            case .internalFailure: return .internalError
            case .unavailable: return .unavailable
            }
        }

        var errorType: Umadb_V1_ErrorResponse.ErrorType {
            switch self {
            case .invalidArgument: return .invalidArgument
            case .integrity: return .integrity
            case .corruption: return .corruption
            case .authentication: return .authentication
            case .internalFailure: return .internal
            case .unavailable: return .io
            }
        }

        /// The words UmaDB's messages start with for this kind.
        var prefix: String {
            switch self {
            case .invalidArgument: return "invalid argument"
            case .integrity: return "integrity error"
            case .corruption: return "deserialization error"
            case .authentication: return "authentication error"
            case .internalFailure: return "internal error"
            case .unavailable: return "io error"
            }
        }
    }

    let kind: Kind
    /// What went wrong, one sentence (the prefix is added).
    let detail: String

    init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    /// The message sent, as UmaDB words it: "integrity error: ...".
    var message: String { "\(kind.prefix): \(detail)" }

    /// The status sent: the code, the message, and the details trailer.
    var rpcError: RPCError {
        var details = Umadb_V1_ErrorResponse()
        details.message = message
        details.errorType = kind.errorType
        var metadata = Metadata()
        // Serializing a message of two plain fields cannot fail; an empty details trailer is
        // still read by the client from the status code alone.
        let bytes: [UInt8] = (try? details.serializedBytes()) ?? []
        metadata.addBinary(bytes, forKey: "grpc-status-details-bin")
        return RPCError(code: kind.code, message: message, metadata: metadata)
    }

    /// The DCB form of any error a call met: a store error by its code, a DCB error as it is,
    /// cancellation as cancelled, anything else an internal error (named, never hidden).
    static func rpcError(for error: any Error) -> RPCError {
        if let error = error as? DCBError { return error.rpcError }
        if let error = error as? RPCError { return error }
        if error is CancellationError { return RPCError(code: .cancelled, message: "The call was cancelled.") }
        guard let error = error as? EventStoreError else {
            return DCBError(.internalFailure, "\(error)").rpcError
        }
        switch error.code {
        case .invalidInput:
            return DCBError(.invalidArgument, error.message).rpcError
        case .conditionFailed, .alreadyProcessed, .versionConflict, .idempotencyConflict, .streamTombstoned:
            return DCBError(.integrity, "condition failed: \(error.message)").rpcError
        case .damaged:
            return DCBError(.corruption, error.message).rpcError
        case .closed, .storeUnavailable, .storageFull, .outcomeUnknown:
            return DCBError(.unavailable, error.message).rpcError
        default:
            return DCBError(.internalFailure, error.message).rpcError
        }
    }
}
