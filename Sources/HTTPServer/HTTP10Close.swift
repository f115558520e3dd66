import NIOCore
import NIOHTTP1
import NIOHTTPTypesHTTP1

/// An HTTP/1.0 request without `Connection: keep-alive` is the connection's last (RFC 9112,
/// 9.3): this handler, before the codec that turns requests into HTTP types (which drops the
/// version), marks it `Connection: close`, so the server closes the connection after the
/// answer. Without it, an HTTP/1.0 client that reads until the connection closes waited for the
/// idle timeout.
final class HTTP10Close: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case var .head(head) = unwrapInboundIn(data), head.version.major == 1, head.version.minor == 0,
            !head.headers[canonicalForm: "connection"].contains(where: { $0.lowercased() == "keep-alive" })
        else {
            context.fireChannelRead(data)
            return
        }
        head.headers.replaceOrAdd(name: "connection", value: "close")
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }

    /// Puts the handler before `context`'s pipeline's HTTP-types codec (Hummingbird's HTTP/1
    /// channel adds the server's own handlers after it, where the version is gone).
    static func install(in context: ChannelHandlerContext) {
        let pipeline = context.pipeline.syncOperations
        guard let codec = try? pipeline.handler(type: HTTP1ToHTTPServerCodec.self) else { return }
        try? pipeline.addHandler(HTTP10Close(), position: .before(codec))
    }
}
