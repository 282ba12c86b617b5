#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// File-system questions answered with POSIX calls, the same on Linux
/// (FoundationEssentials) and Apple platforms (Foundation).
@usableFromInline package enum FileSystem {
    /// Whether `path` names a directory (following a symbolic link).
    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// Writes all of `bytes` to `fd` with write(2), retrying interrupted
    /// writes. Not `FileHandle.write`, which traps on Linux when the reader has
    /// gone (a pipe into `head` that closed, with SIGPIPE ignored as SwiftNIO
    /// does). Returns false when the reader is gone or the write fails.
    /// Usable from inline: ``ManualUserAgent``'s public default writer calls it.
    @discardableResult @usableFromInline
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return false }
        }
        return true
    }

    /// Reads `fd` to its end (retrying interrupted reads).
    /// - Throws: the `errno` of a failed read, as a `POSIXError`.
    package static func readToEnd(_ fd: Int32) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: buffer[..<count])
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
    }
}
