import Foundation

/// S7's client of `POST /append/stream`: a child process of esbench (`--child s7-stream`) that
/// holds `connections` streamed requests open on loopback and keeps `pipeline` appends in flight
/// on each, one event a line, for `seconds` seconds, with plain sockets and `poll` on one thread
/// (no HTTP library: its cost per append is a write and a read shared by many answers).
///
/// It prints one line, `S7STREAM answers=N duration_us=D p50_us=A p99_us=B`: the answers that
/// came within the duration, and their latencies (from the line's send to its answer's end).
enum StreamClient {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// One connection's state.
    private struct Connection {
        let socket: Int32
        /// When each line in flight was sent, oldest first.
        var sent: [UInt64] = []
        var first = 0
        /// The byte before this read's first: an answer line ends with `}\n`.
        var last: UInt8 = 0
        var output: [UInt8] = []
        var open = true
    }

    static func run(port: Int, connections count: Int, pipeline: Int, seconds: Int, streams: Int, eventType: String) throws {
        var connections = try (0..<count).map { _ in Connection(socket: try connect(port: port)) }
        let head = "POST /append/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n"
        // Each stream's line made once (the workload's shape of event, 200 bytes of data): the
        // client's own cost per append stays a copy, a write and a read shared by many answers.
        let lines: [[UInt8]] = (0..<max(1, streams)).map { stream in
            var data = #"{"n":\#(stream),"stream":\#(stream),"kind":"reading","note":""#
            data += String(repeating: "x", count: max(0, 200 - data.utf8.count - 2)) + #""}"#
            let text = #"{"stream":"stream-\#(stream)","type":"\#(eventType)","data":\#(data)}"# + "\n"
            return Array((String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n").utf8)
        }
        var next = 0
        let start = now()
        let deadline = start + UInt64(seconds) * 1_000_000_000
        var latencies: [UInt32] = []
        latencies.reserveCapacity(min(seconds * 200_000, 4_000_000))
        var answered = 0
        var total = 0
        for index in connections.indices {
            connections[index].output = Array(head.utf8)
        }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var polls = connections.map { pollfd(fd: $0.socket, events: 0, revents: 0) }
        var stopping = false
        // The run, then a drain of what is in flight (bounded: 30 s more at most).
        while now() < deadline + 30_000_000_000 {
            let time = now()
            if !stopping && time >= deadline {
                stopping = true
                for index in connections.indices { connections[index].output += Array("0\r\n\r\n".utf8) }
            }
            for index in connections.indices where !stopping {
                while connections[index].sent.count - connections[index].first < pipeline {
                    connections[index].output += lines[next % lines.count]
                    next &+= 1
                    connections[index].sent.append(time)
                }
            }
            var anyOpen = false
            for index in connections.indices {
                polls[index].events = Int16(POLLIN) | (connections[index].output.isEmpty ? 0 : Int16(POLLOUT))
                polls[index].revents = 0
                // A closed connection's descriptor is left out (negative: poll skips it).
                polls[index].fd = connections[index].open ? connections[index].socket : -1
                anyOpen = anyOpen || connections[index].open
            }
            if !anyOpen { break }
            guard poll(&polls, nfds_t(polls.count), 100) >= 0 else { throw Failure(description: "poll failed: errno \(errno)") }
            for index in connections.indices where connections[index].open {
                let events = polls[index].revents
                if events & Int16(POLLOUT) != 0 && !connections[index].output.isEmpty {
                    let written = connections[index].output.withUnsafeBytes { write(connections[index].socket, $0.baseAddress, $0.count) }
                    if written == connections[index].output.count {
                        connections[index].output.removeAll(keepingCapacity: true)
                    } else if written > 0 {
                        connections[index].output.removeFirst(written)
                    }
                }
                if events & (Int16(POLLIN) | Int16(POLLHUP) | Int16(POLLERR)) != 0 {
                    let read = buffer.withUnsafeMutableBytes { Glibc.read(connections[index].socket, $0.baseAddress, $0.count) }
                    if read <= 0 {
                        connections[index].open = false
                        continue
                    }
                    let arrived = now()
                    var previous = connections[index].last
                    for byte in buffer[0..<read] {
                        if byte == UInt8(ascii: "\n") && previous == UInt8(ascii: "}") {
                            let index2 = connections[index].first
                            guard index2 < connections[index].sent.count else { throw Failure(description: "an answer came for no line sent") }
                            if arrived <= deadline {
                                answered += 1
                                if latencies.count < latencies.capacity {
                                    latencies.append(UInt32(clamping: (arrived - connections[index].sent[index2]) / 1000))
                                }
                            }
                            connections[index].first += 1
                            total += 1
                        }
                        previous = byte
                    }
                    connections[index].last = previous
                    // Keep the list of send times short.
                    if connections[index].first > 4096 {
                        connections[index].sent.removeFirst(connections[index].first)
                        connections[index].first = 0
                    }
                    // The answer ends with the last chunk once the body ended and all is answered.
                    if stopping && connections[index].first == connections[index].sent.count {
                        close(connections[index].socket)
                        connections[index].open = false
                    }
                }
            }
        }
        for connection in connections where connection.open { close(connection.socket) }
        latencies.sort()
        func percentile(_ p: Double) -> UInt32 { latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
        print("S7STREAM answers=\(answered) total=\(total) duration_us=\((deadline - start) / 1000) p50_us=\(percentile(0.5)) p99_us=\(percentile(0.99))")
    }

    private static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    private static func connect(port: Int) throws -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket failed: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to port \(port) failed: errno \(errno)") }
        var one: Int32 = 1
        setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
        return socket
    }
}
