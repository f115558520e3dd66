import Hummingbird
import NIOCore

/// The request context of every route: Hummingbird's core, and the body limit the server's
/// middleware sets from its options.
public struct ServerContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The largest body a route reads (``ServerOptions/maxBodyBytes``); Hummingbird's own
    /// decoding honours it too, answering 413.
    public var maxBodyBytes: Int = ServerOptions.defaultMaxBodyBytes

    /// The client's IP address (without its port), when the connection has one: what the token
    /// throttle counts by.
    public var clientAddress: String?

    public init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        clientAddress = source.channel.remoteAddress?.ipAddress
    }

    public var maxUploadSize: Int { maxBodyBytes }
}

extension Request {
    /// The whole body, refusing one over the context's limit with 413 as soon as it passes the
    /// limit (a `Content-Length` over it is refused before a byte is read).
    public mutating func collectBody(_ context: ServerContext) async throws -> ByteBuffer {
        if let length = headers[.contentLength].flatMap(Int.init), length > context.maxBodyBytes {
            throw ServerError(.payloadTooLarge, "The request body (\(length) bytes) is over the server's limit of \(context.maxBodyBytes) bytes (--max-body).")
        }
        do {
            return try await collectBody(upTo: context.maxBodyBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw ServerError(.payloadTooLarge, "The request body is over the server's limit of \(context.maxBodyBytes) bytes (--max-body).")
        } catch is NIOTooManyBytesError {
            // A chunked body has no length to check first: it is refused once it passes the limit.
            throw ServerError(.payloadTooLarge, "The request body is over the server's limit of \(context.maxBodyBytes) bytes (--max-body).")
        }
    }
}
