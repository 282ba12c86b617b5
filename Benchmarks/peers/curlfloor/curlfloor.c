/*
 * The start-up cost of linking libcurl, for the floor rows of
 * Benchmarks/run-benchmarks: a C program that links Debian's libcurl (and,
 * through it, the thirty or so libraries Debian builds it with: GnuTLS,
 * OpenSSL, Kerberos, LDAP, RTMP, SSH2, …) and exits: what linking libcurl
 * costs every start. authkit used to pay it (through FoundationNetworking and
 * its own transport); it now loads libcurl with dlopen only when a command
 * sends a request, on a thread of its own during a sign-in.
 *
 *   curlfloor            exits at once (status 0)
 *   curlfloor version    prints curl_version(), proving the library is used
 */
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "version") == 0) {
        puts(curl_version());
    }
    return 0;
}
