import HTTPTypes

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

extension HTTPFields {
    /// The fields to send, without those that frame the body or name the host.
    ///
    /// `Content-Length` and `Transfer-Encoding` are the transport's to set
    /// from the body it sends (RFC 9112 §6). One from the caller that
    /// disagrees with the body — a mistake, or an attempt to smuggle a second
    /// request into a kept-alive connection — was sent by libcurl (and so by
    /// URLSession on Linux) as given: with `Content-Length: 3`, the server
    /// read three bytes of the body and the rest as another request. Apple's
    /// URLSession reserves both headers the same way.
    package var withoutFraming: HTTPFields {
        var fields = self
        fields[.contentLength] = nil
        fields[.transferEncoding] = nil
        // The URL's authority names the host (RFC 9112 §3.2), and the
        // transport writes it from the URL. One from the caller went as
        // given (libcurl, AsyncHTTPClient): a request whose URL passed the
        // API-origin check named another virtual host of that server, which
        // got the credential.
        fields[HTTPField.Name("Host")!] = nil
        return fields
    }
}
