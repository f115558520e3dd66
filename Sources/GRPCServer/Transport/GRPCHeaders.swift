import Foundation
import GRPCCore
import NIOHPACK

/// gRPC's use of HTTP/2 headers (the gRPC over HTTP/2 specification): what a request's headers
/// say, and the headers of a response and of its trailers.
enum GRPCHeaders {
    /// What a request's HEADERS ask for, or the answer that refuses it.
    enum Request {
        case call(MethodDescriptor, Metadata)
        /// Refused before any call starts: these headers end the stream.
        case refused(HPACKHeaders)
    }

    /// Reads a request's headers: POST, a gRPC content type, a path `/service/method`, no
    /// compression (this server takes identity only, as grpc-swift's default did).
    static func request(_ headers: HPACKHeaders) -> Request {
        guard let contentType = headers.first(name: "content-type"), isGRPC(contentType: contentType) else {
            // Not gRPC at all: HTTP's answer, as the specification asks.
            return .refused([":status": "415", "content-type": "text/plain"])
        }
        guard headers.first(name: ":method") == "POST" else {
            return .refused(trailersOnly(Status(code: .invalidArgument, message: "A gRPC call is a POST.")))
        }
        guard let path = headers.first(name: ":path"), let descriptor = descriptor(path: path) else {
            return .refused(trailersOnly(Status(code: .unimplemented, message: "The path is not /service/method.")))
        }
        let encodings = headers[canonicalForm: "grpc-encoding"]
        if let encoding = encodings.first, encodings.count > 1 || encoding != "identity" {
            var refusal = trailersOnly(
                Status(code: .unimplemented, message: "Compression (\(encoding)) is not supported; send messages uncompressed."))
            refusal.add(name: "grpc-accept-encoding", value: "identity")
            return .refused(refusal)
        }
        return .call(descriptor, metadata(headers))
    }

    /// `application/grpc`, alone or with a suffix (`+proto`, `;charset=...`).
    static func isGRPC(contentType: String) -> Bool {
        guard contentType.hasPrefix("application/grpc") else { return false }
        let rest = contentType.utf8.dropFirst(16)
        return rest.isEmpty || rest.first == UInt8(ascii: "+") || rest.first == UInt8(ascii: ";")
    }

    /// The method a path names: `/package.Service/Method`.
    static func descriptor(path: String) -> MethodDescriptor? {
        let parts = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty,
            let service = String(parts[1]), let method = String(parts[2])
        else { return nil }
        return MethodDescriptor(fullyQualifiedService: service, method: method)
    }

    /// Every header as metadata, as grpc-swift gives it to the handlers: `-bin` values decoded
    /// from base64 (kept as text when they are not base64).
    static func metadata(_ headers: HPACKHeaders) -> Metadata {
        var metadata = Metadata()
        metadata.reserveCapacity(headers.count)
        for (name, value, _) in headers {
            if name.hasSuffix("-bin"), let bytes = base64Decoded(value) {
                metadata.addBinary(bytes, forKey: name)
            } else {
                metadata.addString(value, forKey: name)
            }
        }
        return metadata
    }

    /// The headers that open a response.
    static func responseHeaders(_ metadata: Metadata) -> HPACKHeaders {
        var headers: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
        add(metadata, to: &headers)
        return headers
    }

    /// The trailers that end a response whose headers were sent.
    static func trailers(_ status: Status, _ metadata: Metadata) -> HPACKHeaders {
        var headers = HPACKHeaders()
        addStatus(status, metadata, to: &headers)
        return headers
    }

    /// The one HEADERS frame of a response that sends nothing but its status.
    static func trailersOnly(_ status: Status, _ metadata: Metadata = [:]) -> HPACKHeaders {
        var headers: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
        addStatus(status, metadata, to: &headers)
        return headers
    }

    private static func addStatus(_ status: Status, _ metadata: Metadata, to headers: inout HPACKHeaders) {
        headers.add(name: "grpc-status", value: String(status.code.rawValue))
        if !status.message.isEmpty {
            headers.add(name: "grpc-message", value: percentEncoded(status.message))
        }
        add(metadata, to: &headers)
    }

    /// Custom metadata: lowercased names, binary values in base64; the names this transport
    /// writes itself are left out, so a handler cannot send a second status.
    private static func add(_ metadata: Metadata, to headers: inout HPACKHeaders) {
        for (key, value) in metadata {
            let name = key.lowercased()
            guard !name.hasPrefix(":"), !reserved.contains(name) else { continue }
            switch value {
            case .string(let text): headers.add(name: name, value: text)
            case .binary(let bytes): headers.add(name: name, value: Data(bytes).base64EncodedString())
            }
        }
    }

    private static let reserved: Set<String> = ["content-type", "grpc-status", "grpc-message", "te", "grpc-encoding", "grpc-accept-encoding"]

    /// gRPC's percent-encoding of a status message: bytes outside printable ASCII, and `%`.
    static func percentEncoded(_ message: String) -> String {
        let bytes = message.utf8
        guard bytes.contains(where: { $0 < 0x20 || $0 > 0x7E || $0 == UInt8(ascii: "%") }) else { return message }
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 3)
        for byte in bytes {
            if byte < 0x20 || byte > 0x7E || byte == UInt8(ascii: "%") {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Base64 with or without padding (gRPC's `-bin` values may omit it).
    static func base64Decoded(_ text: String) -> [UInt8]? {
        var padded = text
        let remainder = text.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { padded += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: padded).map { [UInt8]($0) }
    }
}
