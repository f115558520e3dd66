import Foundation

/// A client run as a child process (wrk, esbench's stream client) whose last line starting with
/// `marker` reports `key=value` figures.
enum ReportingChild {
    /// Runs `executable` with `arguments`, awaited (not waited for: a blocked cooperative thread
    /// would be one the server in this process lacks), and returns the figures of its report
    /// line. Throws naming `what` when it fails or prints no such line.
    static func run(_ what: String, executable: String, arguments: [String], marker: String) async throws -> [String: Double] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        // The clients print a few lines: they fit the pipe's buffer, so the child never waited on it.
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard status == 0, let line = text.split(separator: "\n").last(where: { $0.hasPrefix(marker + " ") }) else {
            throw Failure("\(what) exited with status \(status): \(text)")
        }
        var fields: [String: Double] = [:]
        for pair in line.split(separator: " ").dropFirst() {
            let parts = pair.split(separator: "=")
            if parts.count == 2, let value = Double(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }
}
