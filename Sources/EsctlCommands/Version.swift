/// esctl's version, as `esctl --version` prints it, with the newest store format it writes.
enum EsctlVersion {
    static let number = "0.4.0"
    static let text = "esctl \(number) (store format 4)"
}
