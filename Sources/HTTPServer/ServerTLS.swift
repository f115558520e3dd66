import NIOSSL

/// The server's TLS: a certificate chain and its private key read from PEM files, checked when
/// the server is made, so a wrong path or a key that does not match fails at start with one
/// sentence, not at the first connection.
enum ServerTLS {
    /// The TLS configuration of `options`' certificate and key; nil without them. Throws
    /// ``ServerError`` with ``ServerError/Code/invalidConfiguration`` when a file cannot be read
    /// as PEM, holds no certificate, or the key does not go with the certificate.
    static func configuration(_ options: ServerOptions) throws(ServerError) -> TLSConfiguration? {
        guard let certificatePath = options.tlsCertificatePath, let keyPath = options.tlsKeyPath else { return nil }
        let chain: [NIOSSLCertificate]
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificatePath)
        } catch {
            throw ServerError(.invalidConfiguration, "Cannot read the TLS certificate '\(certificatePath)' as PEM (\(error)); give a PEM certificate file (--tls-cert).")
        }
        guard !chain.isEmpty else {
            throw ServerError(.invalidConfiguration, "The TLS certificate file '\(certificatePath)' holds no certificate; give a PEM certificate file (--tls-cert).")
        }
        let key: NIOSSLPrivateKey
        do {
            key = try NIOSSLPrivateKey(file: keyPath, format: .pem)
        } catch {
            throw ServerError(.invalidConfiguration, "Cannot read the TLS key '\(keyPath)' as an unencrypted PEM private key (\(error)); give its key file (--tls-key).")
        }
        var configuration = TLSConfiguration.makeServerConfiguration(certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        // A client that never answers close_notify must not hold a stop past its grace: the
        // service group traps when a service outlives grace and cancellation (4 s + 1 s).
        configuration.shutdownTimeout = .milliseconds(500)
        do {
            // Made once here so that a key that does not match its certificate fails now.
            _ = try NIOSSLContext(configuration: configuration)
        } catch {
            throw ServerError(.invalidConfiguration, "The TLS key '\(keyPath)' does not go with the certificate '\(certificatePath)' (\(error)); give the key the certificate was made for.")
        }
        return configuration
    }
}
