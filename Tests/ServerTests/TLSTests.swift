import Apps
import AsyncHTTPClient
import EventStoreTesting
import Foundation
import HTTPServer
import HummingbirdTesting
import NIOCore
import NIOSSL
import Projections
import Testing

/// HTTPS with --tls-cert and --tls-key: the server speaks TLS only, its cookie is Secure, and a
/// certificate or key it cannot use stops it at start.
@Suite("the server over TLS")
struct TLSTests {
    @Test("with a certificate and key the server answers HTTPS, its session cookie is Secure, and plain HTTP gets no answer")
    func servesHTTPS() async throws {
        // Given a server with a certificate for 127.0.0.1, its key and a token
        let directory = try TemporaryDirectory(prefix: "esctl-tls")
        let files = try TestCertificate.write(to: directory)
        let token = "a-token-for-the-tls-test-0123"
        var options = ServerOptions(port: 0, token: token)
        options.tlsCertificatePath = files.certificate
        options.tlsKeyPath = files.key
        try await ServerFixture.with(options: options, testing: .live) { _, client in
            let port = try #require(client.port, "the live test client has a port")
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMBytes(Array(TestCertificate.certificate.utf8)))
            let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: HTTPClient.Configuration(tlsConfiguration: tls))
            do {
                // When a client that trusts the certificate asks over HTTPS
                let health = try await http.execute(HTTPClientRequest(url: "https://127.0.0.1:\(port)/health"), timeout: .seconds(30))
                // Then it is answered
                #expect(health.status == .ok)
                // And the session cookie it opens is Secure (and still HttpOnly, SameSite=Strict)
                var session = HTTPClientRequest(url: "https://127.0.0.1:\(port)/session")
                session.method = .POST
                session.headers.add(name: "Authorization", value: "Bearer \(token)")
                let opened = try await http.execute(session, timeout: .seconds(30))
                #expect(opened.status == .noContent)
                let cookie = opened.headers["Set-Cookie"].first ?? ""
                #expect(cookie.contains("Secure") && cookie.contains("HttpOnly"), "\(cookie)")
            } catch {
                try await http.shutdown()
                throw error
            }
            try await http.shutdown()
            // And a plain HTTP request gets no HTTP answer
            let plain = try await RawConnection.exchange(port: port, RawConnection.request("GET", "/health"))
            #expect(RawConnection.status(plain) == 0, "\(plain.prefix(200))")
        }
    }

    @Test("a certificate without its key, an unreadable file, or a key that does not go with the certificate stops the server at start with one sentence")
    func badCertificatesRefused() async throws {
        let directory = try TemporaryDirectory(prefix: "esctl-tls")
        let files = try TestCertificate.write(to: directory)
        let cases: [(String, String?, String?, String)] = [
            ("a certificate alone", files.certificate, nil, "--tls-cert and --tls-key together"),
            ("a missing certificate file", directory.appending("none.pem"), files.key, "Cannot read the TLS certificate"),
            ("a key that is not PEM", files.certificate, files.certificate, "Cannot read the TLS key"),
            ("another certificate's key", files.certificate, files.otherKey, "does not go with the certificate"),
        ]
        var configuration = TemporaryStore.deterministicConfiguration()
        configuration.upcasters = AppCatalog.upcasters
        try await TemporaryStore.with(configuration: configuration) { store in
            let runner = try await ProjectionRunner(store: store, projections: [])
            for (what, certificate, key, sentence) in cases {
                var options = ServerOptions(port: 0)
                options.tlsCertificatePath = certificate
                options.tlsKeyPath = key
                let error = #expect(throws: ServerError.self, "\(what)") { try Server(store: store, runner: runner, options: options) }
                #expect(error?.code == .invalidConfiguration, "\(what)")
                #expect(error?.message.contains(sentence) == true, "\(what): \(error?.message ?? "")")
            }
        }
    }
}
