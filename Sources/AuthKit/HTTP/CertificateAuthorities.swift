#if canImport(CAuthKitLinux)
    #if canImport(FoundationEssentials)
        import FoundationEssentials
    #else
        import Foundation
    #endif
    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #endif

    /// Which certificate authorities the Linux transport trusts.
    ///
    /// The system's (Debian's `ca-certificates`), unless `SSL_CERT_FILE` names
    /// a PEM file or `SSL_CERT_DIR` a directory of hashed certificates: these
    /// are OpenSSL's own variables, which Go's `crypto/x509`, Python's `ssl`
    /// and `gh` honor too, so an authority a company (or a test) installs for
    /// those tools is trusted by AuthKit in the same way, and replaces the
    /// system's the same way. They are read once per process.
    ///
    /// Only the authorities change: the host name is still checked against
    /// the certificate (RFC 9110 §4.3.4), and redirects are still refused.
    package struct CertificateAuthorities: Sendable, Equatable {
        /// A PEM file of authorities (`CURLOPT_CAINFO`), or nil for the system's.
        package var file: String?
        /// Directories of authorities named by hash, separated by `:`
        /// (`CURLOPT_CAPATH`), or nil.
        package var directory: String?

        /// The process's, from `SSL_CERT_FILE` and `SSL_CERT_DIR`.
        package static let environment = CertificateAuthorities(
            file: Self.variable("SSL_CERT_FILE"), directory: Self.variable("SSL_CERT_DIR"))

        /// ``problem`` of ``environment``, checked once (as the variables are read).
        package static let environmentProblem = environment.problem

        /// Why an HTTPS request cannot be sent with these authorities, said
        /// before libcurl would answer "problem with the SSL CA cert" for a file
        /// that is not there; nil when each named path can be read.
        package var problem: String? {
            if let file, access(file, R_OK) != 0 {
                return "SSL_CERT_FILE names \(file), which cannot be read (\(String(cString: strerror(errno)))): "
                    + "point it at a PEM file of certificate authorities, or unset it to trust the system's"
            }
            // A list of directories, separated by colons, as OpenSSL (whose
            // X509_LOOKUP_add_dir libcurl hands CURLOPT_CAPATH to) and Go read it.
            for part in directory?.split(separator: ":") ?? [] where access(String(part), R_OK | X_OK) != 0 {
                return "SSL_CERT_DIR names \(part), which cannot be read (\(String(cString: strerror(errno)))): "
                    + "point it at directories of certificate authorities (separated by ':'), or unset it to trust the system's"
            }
            return nil
        }

        private static func variable(_ name: String) -> String? {
            guard let value = getenv(name), value.pointee != 0 else { return nil }
            return String(cString: value)
        }
    }
#endif
