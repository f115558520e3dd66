import EventStoreCore
import Foundation
import GRPCCore
import GRPCProtobuf
import Synchronization

/// UmaDB's `umadb.v1.DCB` service on the store: Read, Subscribe, Append, Head and
/// GetTrackingInfo with UmaDB's semantics (docs/grpc.md), over any backend.
///
/// Every call first checks the API key when the server has one (`authorization: Bearer KEY`,
/// compared in constant time); a call without it fails with UNAUTHENTICATED before it reads
/// anything. Failures carry UmaDB's `ErrorResponse` (``DCBError``).
struct DCBService: RegistrableRPCService {
    let store: any LogAppending & LogReading
    let apiKey: String?
    let limits: GRPCLimits
    /// The highest head this face has seen: a condition's `after` at or below it is within the
    /// log (heads only grow), so the common conditional append asks the store nothing more.
    let seenHead = SeenHead()

    // MARK: Head and tracking

    func head(request: ServerRequest<Umadb_V1_HeadRequest>, context: ServerContext) async throws -> ServerResponse<Umadb_V1_HeadResponse> {
        try await calling {
            try authorize(request.metadata)
            var response = Umadb_V1_HeadResponse()
            let head = try await store.headPosition()
            if head > 0 { response.position = head }
            return ServerResponse(message: response)
        }
    }

    func getTrackingInfo(request: ServerRequest<Umadb_V1_TrackingRequest>, context: ServerContext) async throws
        -> ServerResponse<Umadb_V1_TrackingResponse>
    {
        try await calling {
            try authorize(request.metadata)
            var response = Umadb_V1_TrackingResponse()
            let position = try await store.trackingPosition(of: try Self.trackingName(request.message.source))
            if position > 0 { response.position = position }
            return ServerResponse(message: response)
        }
    }

    /// The store's tracking name of a DCB source. Throws ``DCBError`` for a source the store's
    /// names cannot hold.
    static func trackingName(_ source: String) throws(DCBError) -> String {
        let name = DCBEvents.trackingPrefix + source
        guard name.utf8.count <= Limits.maximumNameBytes else {
            throw DCBError(.invalidArgument, "tracking source too long (\(source.utf8.count) > \(Limits.maximumNameBytes - DCBEvents.trackingPrefix.utf8.count))")
        }
        return name
    }

    // MARK: Append

    func append(request: ServerRequest<Umadb_V1_AppendRequest>, context: ServerContext) async throws -> ServerResponse<Umadb_V1_AppendResponse> {
        try await calling {
            try authorize(request.metadata)
            let message = request.message
            let tracking: TrackingPosition?
            if message.hasTrackingInfo {
                let info = message.trackingInfo
                guard info.position > 0 else {
                    // UmaDB records 0 for a new source; this store records positions from 1.
                    let recorded = try await store.trackingPosition(of: try Self.trackingName(info.source))
                    guard recorded == 0 else {
                        throw DCBError(.integrity, "condition failed: non-increasing tracking position for source '\(info.source)': 0 <= \(recorded)")
                    }
                    throw DCBError(.invalidArgument, "tracking position 0: this server records tracking positions from 1")
                }
                tracking = TrackingPosition(name: try Self.trackingName(info.source), position: info.position, upstream: true)
            } else {
                tracking = nil
            }
            var condition: AppendCondition? =
                message.hasCondition
                ? AppendCondition(
                    failIfEventsMatch: DCBEvents.query(message.condition.hasFailIfEventsMatch ? message.condition.failIfEventsMatch : nil),
                    after: message.condition.hasAfter ? message.condition.after : nil)
                : nil
            // UmaDB takes any `after`; the store refuses one beyond the head (no read returned
            // it). Beyond the head, nothing can match yet: checking from the head read now
            // checks as much, and more only if events commit meanwhile (a refusal, never a
            // wrong pass).
            if let after = condition?.after, after > seenHead.value {
                let head = try await store.headPosition()
                seenHead.note(head)
                if after > head { condition?.after = head }
            }
            var response = Umadb_V1_AppendResponse()
            response.position = try await append(
                message.events, condition: condition, tracking: tracking, trackingInfo: message.hasTrackingInfo ? message.trackingInfo : nil)
            return ServerResponse(message: response)
        }
    }

    /// Appends the events (to ``DCBEvents/stream``) and returns the last position; 0 for no
    /// events. A conditional append whose condition fails is answered as recorded when every
    /// event has a uuid and the first events matching the condition after `after` are these
    /// events (same uuids, same order): UmaDB's idempotent retry.
    private func append(
        _ events: [Umadb_V1_Event], condition: AppendCondition?, tracking: TrackingPosition?, trackingInfo: Umadb_V1_TrackingInfo?
    ) async throws -> UInt64 {
        guard !events.isEmpty else {
            // No event: the condition is still checked (UmaDB 0.7.8 crashes on this case when
            // it matches), and the tracking position still recorded.
            if let condition {
                try condition.failIfEventsMatch.validate()
                let found = try await store.read(condition.failIfEventsMatch, after: condition.after ?? 0, limit: 1)
                if let first = found.events.first {
                    throw DCBError(.integrity, "condition failed: an event at position \(first.position) matches the condition")
                }
            }
            if let tracking { _ = try await store.append([], tracking: tracking) }
            return 0
        }
        var newEvents: [NewEvent] = []
        newEvents.reserveCapacity(events.count)
        for event in events { newEvents.append(try DCBEvents.newEvent(event, tracking: trackingInfo)) }
        let appends = [StreamAppend(stream: DCBEvents.stream, events: newEvents)]
        do {
            let results: [AppendResult]
            switch (condition, tracking) {
            case let (condition?, tracking?): results = try await store.append(appends, condition: condition, tracking: tracking)
            case let (condition?, nil): results = try await store.append(appends, condition: condition)
            case let (nil, tracking?): results = try await store.append(appends, tracking: tracking)
            case (nil, nil): results = try await store.append(appends)
            }
            let last = results.last?.positions.last ?? 0
            seenHead.note(last)
            return last
        } catch let error as EventStoreError where error.code == .conditionFailed || error.code == .alreadyProcessed {
            // A retry whose tracking position was recorded with it is refused by the tracking
            // check (the store's first) before the condition is seen: UmaDB answers it as
            // recorded all the same, and so does this.
            guard let condition, let position = try await recordedRetry(of: events, condition: condition) else { throw error }
            return position
        }
    }

    /// The last position of `events` when they are the first events after the condition's
    /// position that match its query (an append that committed, retried); nil otherwise.
    private func recordedRetry(of events: [Umadb_V1_Event], condition: AppendCondition) async throws -> UInt64? {
        var uuids: [String] = []
        for event in events {
            guard let uuid = try DCBEvents.uuid(event.uuid) else { return nil }
            uuids.append(uuid.lowercasedString)
        }
        let found = try await store.read(condition.failIfEventsMatch, after: condition.after ?? 0, limit: events.count)
        guard found.events.count == events.count, found.events.map(DCBEvents.uuidText(of:)) == uuids else { return nil }
        return found.events.last?.position
    }

    // MARK: Read

    func read(request: ServerRequest<Umadb_V1_ReadRequest>, context: ServerContext) async throws -> StreamingServerResponse<EncodedResponse> {
        let plan = try calling {
            try authorize(request.metadata)
            let message = request.message
            if message.hasSubscribe && message.subscribe {
                throw DCBError(
                    .invalidArgument, "The `subscribe` argument of `read()` has been deprecated. Please call the `subscribe()` method instead.")
            }
            let plan = ReadPlan(
                query: DCBEvents.query(message.hasQuery ? message.query : nil), start: message.hasStart ? message.start : nil,
                backwards: message.hasBackwards && message.backwards, limit: message.hasLimit ? message.limit : nil,
                batchSize: limits.batchSize(message.hasBatchSize ? message.batchSize : nil))
            try plan.query.validate()
            return plan
        }
        return StreamingServerResponse { [store, limits] writer in
            try await calling {
                try await plan.run(on: store, limits: limits) { response in try await writer.write(response) }
            }
            return [:]
        }
    }

    // MARK: Subscribe

    func subscribe(request: ServerRequest<Umadb_V1_SubscribeRequest>, context: ServerContext) async throws
        -> StreamingServerResponse<EncodedResponse>
    {
        let message = request.message
        let query = try calling {
            try authorize(request.metadata)
            let query = DCBEvents.query(message.hasQuery ? message.query : nil)
            try query.validate()
            return query
        }
        let batchSize = limits.batchSize(message.hasBatchSize ? message.batchSize : nil)
        let start = message.hasAfter ? message.after : 0
        guard let lease = limits.subscriptions.acquire() else {
            throw RPCError(
                code: .resourceExhausted,
                message: "This server follows \(limits.subscriptions.capacity) subscriptions already (--max-subscribers); try again later.")
        }
        return StreamingServerResponse { [store, limits] writer in
            defer { lease.release() }
            try await untilCancelled(context) {
                try await calling {
                    var after = start
                    // UmaDB's own answer to the last position: nothing can follow it.
                    guard after < .max else { return }
                    var batch = limits.batchSizer(upTo: batchSize)
                    while true {
                        try Task.checkCancellation()
                        let limit = batch.current
                        var responses = EncodedResponses(budgetBytes: limits.responseChunkBytes)
                        var last: UInt64?
                        let head = try await store.forEachEvent(matching: query, after: after, limit: limit) { event in
                            responses.append(event)
                            last = event.position
                        }
                        if let last {
                            batch.observe(count: responses.appendedCount, bytes: responses.appendedBytes)
                            for response in responses.takeFull() { try await writer.write(response) }
                            try await writer.write(responses.takeCurrent())
                            after = last
                            if responses.appendedCount == limit { continue }
                        }
                        // Everything up to the head this read saw has been looked at: wait for more.
                        after = max(after, head)
                        _ = try await store.waitForCommit(after: after)
                    }
                }
            }
            return [:]
        }
    }

    // MARK: Registration

    /// The five methods, as the generated `Umadb_V1_DCB.ServiceProtocol` registers them, but
    /// Read's and Subscribe's responses written by ``EncodedResponse`` rather than built as
    /// messages.
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
        typealias Method = Umadb_V1_DCB.Method
        router.registerHandler(
            forMethod: Method.Read.descriptor, deserializer: ProtobufDeserializer<Umadb_V1_ReadRequest>(),
            serializer: EncodedResponseSerializer()
        ) { request, context in
            try await self.read(request: ServerRequest(stream: request), context: context)
        }
        router.registerHandler(
            forMethod: Method.Subscribe.descriptor, deserializer: ProtobufDeserializer<Umadb_V1_SubscribeRequest>(),
            serializer: EncodedResponseSerializer()
        ) { request, context in
            try await self.subscribe(request: ServerRequest(stream: request), context: context)
        }
        router.registerHandler(
            forMethod: Method.Append.descriptor, deserializer: ProtobufDeserializer<Umadb_V1_AppendRequest>(),
            serializer: ProtobufSerializer<Umadb_V1_AppendResponse>()
        ) { request, context in
            StreamingServerResponse(single: try await self.append(request: ServerRequest(stream: request), context: context))
        }
        router.registerHandler(
            forMethod: Method.Head.descriptor, deserializer: ProtobufDeserializer<Umadb_V1_HeadRequest>(),
            serializer: ProtobufSerializer<Umadb_V1_HeadResponse>()
        ) { request, context in
            StreamingServerResponse(single: try await self.head(request: ServerRequest(stream: request), context: context))
        }
        router.registerHandler(
            forMethod: Method.GetTrackingInfo.descriptor, deserializer: ProtobufDeserializer<Umadb_V1_TrackingRequest>(),
            serializer: ProtobufSerializer<Umadb_V1_TrackingResponse>()
        ) { request, context in
            StreamingServerResponse(single: try await self.getTrackingInfo(request: ServerRequest(stream: request), context: context))
        }
    }

    // MARK: Support

    /// Refuses a call without the server's API key (when it has one).
    private func authorize(_ metadata: Metadata) throws {
        guard let apiKey else { return }
        let given = metadata[stringValues: "authorization"].first(where: { _ in true })
        guard let given, ConstantTime.equal(given, "Bearer " + apiKey) else {
            throw DCBError(.authentication, "missing or invalid API key")
        }
    }
}

/// Runs `body` until it ends or the RPC is cancelled (the client went away, or the server is
/// stopping), and then returns: gRPC tells a handler so through its context, not by cancelling
/// its task, so a subscription that waits for commits would otherwise hold its slot and its
/// memory until the next commit.
func untilCancelled(_ context: ServerContext, _ body: @escaping @Sendable () async throws -> Void) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await body() }
        group.addTask { try await context.cancellation.cancelled }
        defer { group.cancelAll() }
        _ = try await group.next()
    }
}

/// Runs `body`, giving any error it throws in its DCB form (``DCBError/rpcError(for:)``).
func calling<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        throw DCBError.rpcError(for: error)
    }
}

/// Runs `body`, giving any error it throws in its DCB form.
func calling<T>(_ body: () throws -> T) throws -> T {
    do {
        return try body()
    } catch {
        throw DCBError.rpcError(for: error)
    }
}

/// The highest position a face has seen the head at, shared by its calls.
final class SeenHead: Sendable {
    private let highest = Mutex<UInt64>(0)

    var value: UInt64 { highest.withLock { $0 } }

    func note(_ head: UInt64) {
        highest.withLock { $0 = max($0, head) }
    }
}
