import GRPCCore
import NIOCore
import NIOPosix
import NIOHPACK
import Synchronization
import TestSupport
import Testing

@testable import GRPCServer

/// The face's own transport, in its parts: what a request's headers may be, the headers of an
/// answer, and a writer that waits for its client.
@Suite struct FrameTransportTests {
    @Test func aCallNeedsPostAGRPCContentTypeAPathAndNoCompression() throws {
        // Given a request as UmaDB's clients send it, then each way it can be wrong.
        let good: HPACKHeaders = [
            ":method": "POST", ":scheme": "http", ":path": "/umadb.v1.DCB/Append", "content-type": "application/grpc",
            "te": "trailers", "authorization": "Bearer k", "trace-bin": "AAEC",
        ]
        // When read, then the good one is a call of umadb.v1.DCB/Append with its metadata, a
        // `-bin` value decoded.
        guard case .call(let descriptor, let metadata) = GRPCHeaders.request(good) else {
            Issue.record("a good request was refused")
            return
        }
        #expect(descriptor == MethodDescriptor(fullyQualifiedService: "umadb.v1.DCB", method: "Append"))
        #expect(Array(metadata[stringValues: "authorization"]) == ["Bearer k"])
        #expect(Array(metadata[binaryValues: "trace-bin"]) == [[0, 1, 2]])

        func refusal(_ change: (inout HPACKHeaders) -> Void) -> (status: String?, grpcStatus: String?) {
            var headers = good
            change(&headers)
            guard case .refused(let answer) = GRPCHeaders.request(headers) else { return (nil, nil) }
            return (answer.first(name: ":status"), answer.first(name: "grpc-status"))
        }
        #expect(refusal { $0.replaceOrAdd(name: "content-type", value: "application/json") } == ("415", nil))
        #expect(refusal { $0.replaceOrAdd(name: "content-type", value: "application/grpcx") } == ("415", nil))
        #expect(refusal { $0.replaceOrAdd(name: ":method", value: "GET") } == ("200", "3"))
        #expect(refusal { $0.replaceOrAdd(name: ":path", value: "/umadb.v1.DCB") } == ("200", "12"))
        #expect(refusal { $0.replaceOrAdd(name: ":path", value: "//Append") } == ("200", "12"))
        #expect(refusal { $0.replaceOrAdd(name: "grpc-encoding", value: "gzip") } == ("200", "12"))
        // identity, and content types with a suffix, are taken.
        #expect(refusal { $0.replaceOrAdd(name: "grpc-encoding", value: "identity") } == (nil, nil))
        #expect(refusal { $0.replaceOrAdd(name: "content-type", value: "application/grpc+proto") } == (nil, nil))
    }

    @Test func answersCarryTheStatusItsMessagePercentEncodedAndBinaryMetadataInBase64() {
        // Given a status whose message is not plain ASCII, and a details trailer.
        var metadata = Metadata()
        metadata.addBinary([0xFF, 0x00], forKey: "grpc-status-details-bin")
        metadata.addString("x", forKey: "grpc-status")  // a handler cannot send a second status
        // When answered trailers-only, and as trailers after headers.
        let only = GRPCHeaders.trailersOnly(Status(code: .failedPrecondition, message: "50% café\n"), metadata)
        let trailers = GRPCHeaders.trailers(Status(code: .ok, message: ""), [:])
        // Then gRPC's encodings, and nothing else.
        #expect(only.map { "\($0.name): \($0.value)" } == [
            ":status: 200", "content-type: application/grpc", "grpc-status: 9", "grpc-message: 50%25 caf%C3%A9%0A",
            "grpc-status-details-bin: /wA=",
        ])
        #expect(trailers.map { "\($0.name): \($0.value)" } == ["grpc-status: 0"])
        #expect(GRPCHeaders.base64Decoded("/wA") == [0xFF, 0x00])
        #expect(GRPCHeaders.base64Decoded("/") == nil)
    }

    @Test func aWriterWaitsOnceItsUnsentBytesPassTheHighWaterMarkAndFailsWhenTheStreamCloses() async throws {
        // Given a writer whose event loop only counts the times it is asked to take the parts.
        let drains = Mutex(0)
        let outbound = RPCOutbound(eventLoop: MultiThreadedEventLoopGroup.singleton.any()) { drains.withLock { $0 += 1 } }
        let big = [UInt8](repeating: 1, count: RPCOutbound.highWater / 2)

        // When two messages under the mark are written: neither waits, and one drain is asked
        // for both (until the parts are taken, no other).
        try await outbound.write(.metadata([:]))
        try await outbound.write(.message(big))
        try await waitUntil("the event loop to be asked to take the parts") { drains.withLock { $0 } >= 1 }
        #expect(drains.withLock { $0 } == 1)
        #expect(outbound.take().count == 2)

        // Then a write past the mark (2 MiB unsent + 2 MiB) waits until bytes are sent, and
        // goes on once the unsent bytes are back under the mark.
        let finished = Mutex(false)
        let writer = Task {
            try await outbound.write(.message(big))
            finished.withLock { $0 = true }
        }
        try await waitUntil("the write past the mark to wait for room") { outbound.waiting }
        #expect(finished.withLock { $0 } == false)
        outbound.sent(big.count + 5)
        try await withTimeout(.seconds(10), "the waiting write to go on once bytes were sent") { try await writer.value }
        #expect(finished.withLock { $0 } == true)
        #expect(!outbound.waiting)

        // And once the stream closes, a waiting writer and every later write fail.
        let blocked = Task { try await outbound.write(.message(big)) }
        try await waitUntil("a write past the mark again to wait for room") { outbound.waiting }
        outbound.close()
        let closedWhileWaiting = try await withTimeout(.seconds(10), "the waiting write to fail when the stream closed") {
            await blocked.result
        }
        #expect(throws: RPCError.self) { try closedWhileWaiting.get() }
        await #expect(throws: RPCError.self) { try await outbound.write(.status(Status(code: .ok, message: ""), [:])) }
    }
}
