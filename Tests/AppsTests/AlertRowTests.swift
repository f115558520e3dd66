@testable import Apps
import Projections
import Testing

/// `AlertQueue` and `Alert` as `Codable` writes them: what their hand-written row encodings must
/// match byte for byte.
private struct CodableAlert: Codable, RowValue, Equatable {
    var name: AlertName?
    var text: String
    var severity: Severity
}

private struct CodableAlertQueue: Codable, RowValue, Equatable {
    var alerts: [CodableAlert]
}

@Suite("Alert rows")
struct AlertRowTests {
    @Test("the hand-written encoding is the Codable one, byte for byte, and decodes back")
    func sameBytes() throws {
        let queues = [
            AlertQueue(), AlertQueue(alerts: [Alert(name: .caughtByNessie, text: "Caught!", severity: .bad), Alert(text: "", severity: .good)]),
        ]
        for queue in queues {
            // Given a queue, when encoded by hand and through Codable, then the bytes agree and decode back
            let codable = CodableAlertQueue(alerts: queue.alerts.map { CodableAlert(name: $0.name, text: $0.text, severity: $0.severity) })
            #expect(queue.encoded == codable.encoded)
            #expect(try AlertQueue(decoding: queue.encoded) == queue)
        }
        // An unknown severity or alert name is refused
        #expect(throws: RowDecodingError.self) { try Alert(decoding: [0] + "x".encoded + "ugly".encoded) }
        #expect(throws: RowDecodingError.self) { try Alert(decoding: [1] + "nope".encoded + "x".encoded + "good".encoded) }
    }
}
