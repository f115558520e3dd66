import Foundation
import HTTPServer
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

@Suite("The console's files: the page, its styles, scripts and icon, inside the binary")
struct ConsoleRouteTests {
    /// Sources/HTTPServer/Console, the files SwiftPM embeds.
    static var consoleDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/HTTPServer/Console")
    }

    static func contentType(of name: String) -> String {
        switch (name as NSString).pathExtension {
        case "html": "text/html; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "svg": "image/svg+xml"
        default: "unknown"
        }
    }

    @Test("GET / and /index.html serve the page, with a policy that allows this server's files only")
    func page() async throws {
        let file = try Data(contentsOf: Self.consoleDirectory.appendingPathComponent("index.html"))
        try await ServerFixture.with { _, client in
            for uri in ["/", "/index.html"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri)")
                    #expect(response.headers[.contentType] == "text/html; charset=utf-8", "\(uri)")
                    #expect(Data(buffer: response.body) == file, "\(uri) is not Console/index.html")
                    #expect(response.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'self'") == true, "\(uri)")
                    #expect(response.headers[.xContentTypeOptions] == "nosniff", "\(uri)")
                }
            }
        }
    }

    @Test("Every file of Sources/HTTPServer/Console is served at /console/NAME, byte for byte, with its type")
    func everyFileServed() async throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.consoleDirectory.path).sorted()
        #expect(names.count >= 10, "the console directory lists too few files: \(names)")
        try await ServerFixture.with { _, client in
            for name in names {
                let file = try Data(contentsOf: Self.consoleDirectory.appendingPathComponent(name))
                try await client.execute(uri: "/console/\(name)", method: .get) { response in
                    // When this fails for a new file, list it in Package.swift and ConsoleAssets.
                    #expect(response.status == .ok, "/console/\(name) is not served")
                    #expect(Data(buffer: response.body) == file, "/console/\(name) differs from the file")
                    #expect(response.headers[.contentType] == Self.contentType(of: name), "/console/\(name)")
                }
            }
        }
    }

    @Test("Every file the page and its scripts load is one the server serves")
    func referencesResolve() throws {
        // Given the page and its modules, when their references are collected, then each names a
        // file of the console directory (a missing one would fail in the browser only).
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: Self.consoleDirectory.path))
        var referenced: Set<String> = []
        for name in names where name.hasSuffix(".html") || name.hasSuffix(".js") {
            let text = try String(contentsOf: Self.consoleDirectory.appendingPathComponent(name), encoding: .utf8)
            for pattern in [#"/console/([A-Za-z0-9_.-]+)"#, #"from '\./([A-Za-z0-9_.-]+)'"#] {
                let expression = try NSRegularExpression(pattern: pattern)
                for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range(at: 1), in: text) { referenced.insert(String(text[range])) }
                }
            }
        }
        #expect(referenced.count >= 10, "too few references found: \(referenced.sorted())")
        // views.json is made by the server from the served apps' views (AppServerPartsTests).
        #expect(referenced.subtracting(names).subtracting(["views.json"]).sorted() == [], "referenced but not in the console directory")
        #expect(names.subtracting(referenced).subtracting(["index.html"]).sorted() == [], "in the console directory but never loaded")
    }

    @Test("GET /favicon.ico serves the icon; an unknown console file is a JSON 404")
    func iconAndUnknownFile() async throws {
        try await ServerFixture.with { _, client in
            try await client.execute(uri: "/favicon.ico", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "image/svg+xml")
                #expect(response.text.hasPrefix("<svg"))
            }
            try await client.execute(uri: "/console/nothing.js", method: .get) { response in
                #expect(response.status == .notFound)
                #expect(response.object["code"] as? String == "notFound")
            }
        }
    }

    @Test("With a token, the console's files are served without it; the data still needs it")
    func openWithoutToken() async throws {
        try await ServerFixture.with(options: ServerOptions(port: 0, token: "s3cret-0123456789")) { _, client in
            for uri in ["/", "/index.html", "/favicon.ico", "/console/main.js", "/console/console.css"] {
                try await client.execute(uri: uri, method: .get) { response in
                    #expect(response.status == .ok, "\(uri) needs no token")
                }
            }
            try await client.execute(uri: "/projections", method: .get) { response in
                #expect(response.status == .unauthorized)
            }
        }
    }
}
