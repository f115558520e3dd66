import Foundation
import EventStoreTesting

/// A self-signed certificate for 127.0.0.1 and localhost (valid until 2126) and its key, for the
/// TLS tests only; made with
/// `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500
/// -subj "/CN=esctl test" -addext "subjectAltName=IP:127.0.0.1,DNS:localhost"`.
enum TestCertificate {
    static let certificate = """
-----BEGIN CERTIFICATE-----
MIIBnDCCAUOgAwIBAgIUbs9cjFlf2TvomjTWG2B+uueddD4wCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKZXNjdGwgdGVzdDAgFw0yNjExMjcyMDAxNTJaGA8yMTI2MTEw
MzIwMDE1MlowFTETMBEGA1UEAwwKZXNjdGwgdGVzdDBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABCt6jEzKtlwiEz2O73KHJLWyvGRg7wAKnwcyyLlKaSl+L9f5q2YA
Aq32FD9n/2CK8BTkS049Jv5zaOwaebWnPcKjbzBtMB0GA1UdDgQWBBRSMUxWlc6s
F+vaM6PCZlHiLGeIlzAfBgNVHSMEGDAWgBRSMUxWlc6sF+vaM6PCZlHiLGeIlzAP
BgNVHRMBAf8EBTADAQH/MBoGA1UdEQQTMBGHBH8AAAGCCWxvY2FsaG9zdDAKBggq
hkjOPQQDAgNHADBEAiA3YBlpn4lmT8tkB2SnpJmrMsHpzUpnxL86RXRAv7p5VgIg
CrA7p+lWspe5J/Cjr9fX8YWBdk0hquAt2ipmFQ+wp4c=
-----END CERTIFICATE-----
"""

    static let key = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgwnB7y3jICnKjVnsI
yQwpo44g/su3CtgI5myO+ud9XTehRANCAAQreoxMyrZcIhM9ju9yhyS1srxkYO8A
Cp8HMsi5Smkpfi/X+atmAAKt9hQ/Z/9givAU5EtOPSb+c2jsGnm1pz3C
-----END PRIVATE KEY-----
"""

    /// Another key, which does not go with ``certificate``.
    static let otherKey = """
-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgCHwdxM/I89ggwsk5
2nqMgm8RvqSztHBhFV+U8t7pUD+hRANCAAQ2a9XRimB+wTxZHLTHOtLBKz1jJcsp
tq9iZHoFETa/yANhnBUx+Yt7mMaPOkGbUQLWT6MeIpiQFpHa28XsnyFr
-----END PRIVATE KEY-----
"""

    /// Writes the certificate, its key and the other key into `directory`; returns their paths.
    static func write(to directory: TemporaryDirectory) throws -> (certificate: String, key: String, otherKey: String) {
        let paths = (directory.appending("cert.pem"), directory.appending("key.pem"), directory.appending("other-key.pem"))
        try certificate.write(toFile: paths.0, atomically: true, encoding: .utf8)
        try key.write(toFile: paths.1, atomically: true, encoding: .utf8)
        try otherKey.write(toFile: paths.2, atomically: true, encoding: .utf8)
        return paths
    }
}
