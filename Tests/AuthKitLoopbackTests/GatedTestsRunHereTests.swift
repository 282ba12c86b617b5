import AuthKitTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Some tests need what not every machine has, and skip quietly without it:
/// root (chown, mount, unshare), the IPv6 loopback (nobody else can take
/// `[::1]` on the listener's port), an address other than loopback (the
/// listener is reached on loopback alone, RFC 8252 §8.3). Where CI asks for
/// all of them (`AUTHKIT_REQUIRE_PRIVILEGED=1`, which `.ci/run` sets), a
/// missing one fails here, instead of those tests passing by not running.
@Suite(
    .enabled(
        if: ProcessInfo.processInfo.environment["AUTHKIT_REQUIRE_PRIVILEGED"] == "1",
        "AUTHKIT_REQUIRE_PRIVILEGED is not set (.ci/run sets it)"))
struct GatedTestsRunHereTests {
    @Test func everyGatedTestRunsOnThisMachine() {
        #expect(getuid() == 0, "the tests that need root are skipped")
        #expect(RawHTTP.ipv6Available, "the tests of [::1] are skipped")
        #expect(ListenerAbuseTests.nonLoopbackAddress != nil, "the loopback-only test is skipped")
        #expect(FileManager.default.isExecutableFile(atPath: "/bin/mount"), "the full-disk tests are skipped")
        #expect(FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "the no-network tests are skipped")
    }
}
