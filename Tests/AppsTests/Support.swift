import Apps
import Commands
import EventStore
import Foundation
import Projections
import Testing
import TestSupport

extension DeciderOutcome {
    /// Expects the command refused by the apps' rules with `code` (and `message`, when given).
    func thenRefused(_ code: AppError.Code, _ message: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        thenThrows(AppError.self, sourceLocation: sourceLocation) { error in
            #expect(error.code == code, sourceLocation: sourceLocation)
            if let message { #expect(error.message == message, sourceLocation: sourceLocation) }
        }
    }
}
