/*
 * liboauth-sign: liboauth's OAuth 1.0a HMAC-SHA1 signing rate, the peer of
 * `AuthKitBenchmark sign` and oauthlib_sign.py in Benchmarks/run-benchmarks.
 *
 *     liboauth-sign fixed|live SECONDS
 *
 * fixed: the example's published nonce and timestamp (checked first to give
 *        the published signature), so only signing is measured;
 * live:  liboauth draws a nonce and reads the clock on every signature, as
 *        a real client does (checked first by re-signing one live header's
 *        nonce and timestamp as fixed values and comparing).
 * Prints {"ops": N, "seconds": S} after a 0.2 s warm-up; exits 1 on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "twitter_request.h"

/* Signatures between clock reads: a few ms of work, so the clock is noise. */
#define BATCH 1000

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Copies the quoted value of `name` in a header into out; 0 if found. */
static int header_value(const char *header, const char *name, char *out, size_t cap) {
    char key[64];
    snprintf(key, sizeof key, "%s=\"", name);
    const char *v = strstr(header, key);
    if (!v)
        return -1;
    v += strlen(key);
    size_t len = strcspn(v, "\"");
    if (len >= cap)
        return -1;
    memcpy(out, v, len);
    out[len] = '\0';
    return 0;
}

/* The correctness check run before any timing. */
static int check(int live) {
    char *header = sign_twitter_example(EXAMPLE_NONCE, EXAMPLE_TIMESTAMP);
    int ok = header && strstr(header, EXAMPLE_SIGNATURE_PARAM);
    if (!ok)
        fprintf(stderr, "liboauth-sign: unexpected fixed signature: %s\n", header ? header : "(null)");
    free(header);
    if (!ok || !live)
        return ok ? 0 : -1;

    /* A live header must verify: the same nonce and timestamp given as fixed
     * values must give the same header, and two nonces must differ. */
    char *first = sign_twitter_example(NULL, NULL), *second = sign_twitter_example(NULL, NULL);
    char nonce[128], timestamp[32], nonce2[128];
    ok = first && second && header_value(first, "oauth_nonce", nonce, sizeof nonce) == 0 &&
         header_value(first, "oauth_timestamp", timestamp, sizeof timestamp) == 0 &&
         header_value(second, "oauth_nonce", nonce2, sizeof nonce2) == 0 && strcmp(nonce, nonce2) != 0;
    if (ok) {
        char *again = sign_twitter_example(nonce, timestamp);
        ok = again && strcmp(again, first) == 0;
        free(again);
    }
    if (!ok)
        fprintf(stderr, "liboauth-sign: live header does not verify: %s\n", first ? first : "(null)");
    free(first);
    free(second);
    return ok ? 0 : -1;
}

/* Signs until `seconds` have passed; returns the count, sets *elapsed. */
static long run(int live, double seconds, double *elapsed, size_t *checksum) {
    const char *nonce = live ? NULL : EXAMPLE_NONCE, *timestamp = live ? NULL : EXAMPLE_TIMESTAMP;
    double start = now(), t;
    long ops = 0;
    do {
        for (int i = 0; i < BATCH; i++) {
            char *header = sign_twitter_example(nonce, timestamp);
            if (!header) {
                fprintf(stderr, "liboauth-sign: signing failed\n");
                exit(1);
            }
            *checksum += strlen(header); /* use the result, so no work is skipped */
            free(header);
        }
        ops += BATCH;
        t = now();
    } while (t - start < seconds);
    *elapsed = t - start;
    return ops;
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[1], "fixed") != 0 && strcmp(argv[1], "live") != 0) || atof(argv[2]) <= 0) {
        fprintf(stderr, "usage: liboauth-sign fixed|live SECONDS\n");
        return 2;
    }
    int live = strcmp(argv[1], "live") == 0;
    if (check(live) != 0)
        return 1;
    double elapsed;
    size_t checksum = 0;
    run(live, 0.2, &elapsed, &checksum); /* warm-up */
    long ops = run(live, atof(argv[2]), &elapsed, &checksum);
    fprintf(stderr, "liboauth-sign: %ld signatures, checksum %zu\n", ops, checksum);
    printf("{\"ops\": %ld, \"seconds\": %.6f}\n", ops, elapsed);
    return 0;
}
